//! `show`: one stored result, as when it ran (or its whole document).

use crate::cli::ShowArgs;
use anyhow::Result;
use std::process::ExitCode;
use trackbench::{present, store};

/// Prints the stored result `a.id` with the terminal presenter, or as JSON.
pub fn show(a: &ShowArgs) -> Result<ExitCode> {
    let mut s = store::open(a.store.db.as_deref())?;
    let doc = s.load(a.id)?;
    let text = if a.json {
        present::json::to_string(&doc)?
    } else {
        present::terminal::document(&doc, &crate::cli::view())
    };
    print!("{text}");
    if !text.ends_with('\n') {
        println!();
    }
    Ok(ExitCode::SUCCESS)
}
