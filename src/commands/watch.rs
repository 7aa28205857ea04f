//! `watch`: after the suite ran and was stored, whether this disk changed beyond its noise —
//! one sentence, each figure's line, the steps the history now marks at this run — and the exit
//! status a script can act on.

use anyhow::{Context, Result};
use std::process::ExitCode;
use trackbench::result::ResultDoc;
use trackbench::store::{self, Stored};
use trackbench::watch::latest::{self, Latest, LatestRule};
use trackbench::watch::series;
use trackbench::watch::steps::Rule;

/// A figure got worse beyond its noise.
pub const EXIT_SLOWER: u8 = 3;
/// Figures changed beyond their noise, and only for the better.
pub const EXIT_FASTER: u8 = 4;

/// What `watch` says of a run: its lines and its exit status.
pub struct Said {
    pub lines: Vec<String>,
    pub status: ExitCode,
}

/// The store's results with the run among them: as stored (`id`), or, not stored
/// (`--no-store`), added as the newest.
fn with_the_run(db: Option<&str>, doc: &ResultDoc, id: Option<i64>) -> Result<(Vec<Stored>, i64)> {
    let mut s = store::open(db)?;
    let mut rows = s
        .history(&store::Filter {
            limit: 0,
            ..Default::default()
        })
        .with_context(|| format!("reading the stored results in {}", s.location()))?;
    let id = match id {
        Some(id) => id,
        None => {
            let newest = rows.iter().map(|r| r.id).max().unwrap_or(0) + 1;
            rows.push(Stored {
                id: newest,
                started_at: doc.started_at.clone(),
                target: doc.target.path.display().to_string(),
                device: String::new(),
                workloads: Vec::new(),
                headline: String::new(),
                interrupted: doc.interrupted,
                document: Some(doc.clone()),
            });
            newest
        }
    };
    Ok((rows, id))
}

/// The exit status of figures judged: worse beats better beats unchanged.
fn status(judged: &[Latest]) -> ExitCode {
    if judged.iter().any(Latest::worse) {
        ExitCode::from(EXIT_SLOWER)
    } else if judged.iter().any(|l| l.beyond) {
        ExitCode::from(EXIT_FASTER)
    } else {
        ExitCode::SUCCESS
    }
}

/// Judges the run `doc` (stored as `id`, if it was) against the same disk's last `last` runs
/// at the same settings in the store `db`.
pub fn judge(doc: &ResultDoc, id: Option<i64>, db: Option<&str>, last: usize) -> Result<Said> {
    let (rows, id) = with_the_run(db, doc, id)?;
    let (all, _) = series::series(&rows);
    let rule = LatestRule {
        last,
        ..LatestRule::default()
    };
    let judged = latest::of_result(&all, id, &rule);
    let mut lines = vec![latest::verdict(&judged)];
    lines.extend(judged.iter().map(|l| format!("  {}", latest::line(l))));
    let steps: Vec<String> = all
        .iter()
        .filter(|s| s.entries.last().is_some_and(|e| e.id == id))
        .flat_map(|s| {
            // A step needs two runs at its new level: the one this run confirms began at the
            // run before it.
            let rule = Rule::default();
            let confirmed = s.entries.len().saturating_sub(rule.min_side);
            series::changes(s, &rule)
                .into_iter()
                .filter(move |c| c.step.at == confirmed)
                .map(move |c| format!("  {}", series::words(s, &c)))
        })
        .collect();
    if !steps.is_empty() {
        lines.push("The history now marks a step, confirmed by this run:".into());
        lines.extend(steps);
    }
    Ok(Said {
        lines,
        status: status(&judged),
    })
}
