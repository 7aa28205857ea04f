//! `history`: the stored results, newest first, with the figure each is known by.

use super::db_flag;
use crate::cli::HistoryArgs;
use anyhow::Result;
use std::collections::HashMap;
use std::process::ExitCode;
use trackbench::watch::series;
use trackbench::watch::steps::Rule;
use trackbench::{present, store};

/// Where the listed results' series stepped beyond their noise: a mark for each result at a new
/// level ("▼15% playback tracks"), and the sentences that say each step and what came with it,
/// then the results left out of the series and why.
fn steps_of(rows: &[store::Stored]) -> (HashMap<i64, String>, Vec<String>) {
    let (series, skipped) = series::series(rows);
    let mut marks: HashMap<i64, String> = HashMap::new();
    let mut said = Vec::new();
    for s in &series {
        for c in series::changes(s, &Rule::default()) {
            let arrow = if c.step.change < 0.0 { "▼" } else { "▲" };
            let mark = format!("{arrow}{:.0}% {}", 100.0 * c.step.change.abs(), s.what);
            marks
                .entry(c.id)
                .and_modify(|m| m.push_str(&format!(", {mark}")))
                .or_insert(mark);
            said.push(format!("{}: {}", s.disk, series::words(s, &c)));
        }
    }
    if !said.is_empty() {
        said.insert(0, "Steps beyond the noise, by disk:".into());
    }
    said.extend(
        skipped
            .into_iter()
            .map(|s| format!("left out of the series: {s}")),
    );
    (marks, said)
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
    let (marks, said) = steps_of(&rows);
    print!("{}", present::terminal::history(&rows, &marks, &view));
    for line in said {
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
