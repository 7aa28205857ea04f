//! `completions` and `man`: what a package installs beside the binary, generated from the
//! command line's own definition (so they never name a flag the build does not have).

use crate::cli::{Cli, CompletionsArgs, ManArgs};
use anyhow::{Context, Result};
use clap::CommandFactory;
use std::io::Write;
use std::process::ExitCode;

/// Prints the completion script for `a.shell`.
pub fn completions(a: &CompletionsArgs) -> Result<ExitCode> {
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "trackbench", &mut out);
    std::io::stdout()
        .write_all(&out)
        .context("writing the completions to stdout")?;
    Ok(ExitCode::SUCCESS)
}

/// Prints the manual page as roff, or writes every command's page into `a.dir`.
pub fn man(a: &ManArgs) -> Result<ExitCode> {
    let cmd = Cli::command();
    match &a.dir {
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            clap_mangen::generate_to(cmd, dir)
                .with_context(|| format!("writing the manual pages into {}", dir.display()))?;
            let pages = std::fs::read_dir(dir)?
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().ends_with(".1"))
                .count();
            println!("{pages} manual pages in {}", dir.display());
        }
        None => {
            let mut out = Vec::new();
            clap_mangen::Man::new(cmd)
                .render(&mut out)
                .context("rendering the manual page")?;
            std::io::stdout()
                .write_all(&out)
                .context("writing the manual page to stdout")?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
