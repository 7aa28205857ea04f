//! `compare`: results side by side, each figure as a percentage of the best; refused where
//! their settings make the figures incomparable, unless asked.

use super::load_results;
use crate::cli::CompareArgs;
use anyhow::{Result, bail};
use std::process::ExitCode;
use trackbench::present;
use trackbench::present::output::Output;

/// Compares the results `a` names, in the terminal and, with `--output`, as HTML.
pub fn compare(a: &CompareArgs) -> Result<ExitCode> {
    let html_out = a
        .output
        .as_deref()
        .map(|p| Output::prepare(p, "the comparison (--output)"))
        .transpose()?;
    let docs = load_results(&a.results, &a.store)?;
    let unfair = present::compare::unfair_differences(&docs);
    if !unfair.is_empty() && !a.unfair {
        bail!(
            "these results ran with different settings, so their figures do not compare:\n  {}\n(--unfair compares them anyway)",
            unfair.join("\n  ")
        );
    }
    let view = crate::cli::view();
    print!("{}", present::compare::terminal(&docs, &view));
    for u in &unfair {
        print!("{}", view.wrap(u, "warning: compared although ", "  "));
    }
    if let Some(o) = html_out {
        o.write(&present::compare::html(&docs, &unfair)?)?;
        println!(
            "comparison: {} (one HTML file with charts)",
            o.path().display()
        );
    }
    Ok(ExitCode::SUCCESS)
}
