//! `history`: the stored results, newest first, with the figure each is known by.

use super::db_flag;
use crate::cli::HistoryArgs;
use anyhow::Result;
use std::process::ExitCode;
use trackbench::watch::series;
use trackbench::{present, store};

/// The lines under the table: each step beyond the noise, by disk, then the results left out of
/// the series and why.
fn said(m: &series::Marks) -> Vec<String> {
    let mut out = Vec::new();
    if !m.steps.is_empty() {
        out.push("Steps beyond the noise, by disk:".to_string());
        out.extend(m.steps.iter().cloned());
    }
    out.extend(
        m.skipped
            .iter()
            .map(|s| format!("left out of the series: {s}")),
    );
    out
}

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
    let view = crate::cli::view();
    let marks = series::marks(&rows);
    print!("{}", present::terminal::history(&rows, &marks.by_id, &view));
    for line in said(&marks) {
        print!("{}", view.wrap(&line, "  ", "    "));
    }
    let footer = format!(
        "{} result(s) from {}; trackbench show ID{} shows one",
        rows.len(),
        s.location(),
        db_flag(&a.store)
    );
    print!("{}", crate::cli::view().wrap(&footer, "", "  "));
    Ok(ExitCode::SUCCESS)
}
