//! `history`: the stored results, newest first, with the figure each is known by.

use super::db_flag;
use crate::cli::HistoryArgs;
use anyhow::Result;
use std::process::ExitCode;
use trackbench::{present, store};

/// Lists the stored results `a`'s filters select.
pub fn history(a: &HistoryArgs) -> Result<ExitCode> {
    let mut s = store::open(a.store.db.as_deref())?;
    let rows = s.history(&store::Filter {
        target: a.target.clone(),
        device: a.device.clone(),
        workload: a.workload.clone(),
        since: a.since.clone(),
        limit: a.limit,
    })?;
    if rows.is_empty() {
        println!("no stored results match, in {}", s.location());
        return Ok(ExitCode::SUCCESS);
    }
    print!("{}", present::terminal::history(&rows, &crate::cli::view()));
    let footer = format!(
        "{} result(s) from {}; trackbench show ID{} shows one",
        rows.len(),
        s.location(),
        db_flag(&a.store)
    );
    print!("{}", crate::cli::view().wrap(&footer, "", "  "));
    Ok(ExitCode::SUCCESS)
}
