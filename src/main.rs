//! The trackbench binary: parses the command line and runs the command's handler
//! (`commands`), which shows progress, prints and writes what the library measured. All
//! measuring happens in the library.

mod browser;
mod cli;
mod commands;

use clap::Parser;
use cli::Cli;
use cli::process::{install_interrupt_handlers, raise_open_file_limit};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use trackbench::error::Error;

fn main() -> ExitCode {
    trackbench::engine::real_time::ALLOCATIONS_COUNTED.store(true, Ordering::Relaxed);
    raise_open_file_limit();
    let cli = Cli::parse();
    cli::set_view(cli.wide);
    let cancel = Arc::new(AtomicBool::new(false));
    install_interrupt_handlers(&cancel);
    let ask_less = cli.command.space_hint();
    match commands::dispatch(cli, &cancel) {
        Ok(code) => code,
        Err(e) => {
            let no_space = e.chain().any(|c| {
                c.downcast_ref::<Error>()
                    .is_some_and(|x| matches!(x, Error::NoSpace { .. }))
            });
            let hint = match ask_less {
                Some(h) if no_space => format!(", or ask for less: {h}"),
                _ => String::new(),
            };
            eprintln!("error: {e:#}{hint}");
            ExitCode::FAILURE
        }
    }
}
