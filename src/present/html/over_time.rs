//! The report's "This disk over time" section: each figure the result shares with earlier runs
//! of the same disk at the same settings, as a chart of its runs with the steps marked, and the
//! steps in words. What the series hold is found in `watch`; this draws what it is given.

use super::{Page, esc};
use crate::error::Result;
use crate::present::charts::{self, Level, RED, Rule, RunPoint};
use std::fmt::Write;

/// One of a disk's series, as the report draws it.
#[derive(Debug, Clone, PartialEq)]
pub struct DiskSeries {
    /// The disk and the question in words ("playback tracks"), and the figure's unit.
    pub disk: String,
    pub what: String,
    pub unit: String,
    /// Its runs, oldest first.
    pub runs: Vec<SeriesRun>,
    pub steps: Vec<SeriesStep>,
}

/// One run of a series.
#[derive(Debug, Clone, PartialEq)]
pub struct SeriesRun {
    pub id: i64,
    pub started_at: String,
    pub value: f64,
    /// Its own spread, relative (0.02: ±2%).
    pub spread: f64,
    /// Whether it is the result the report is about.
    pub this: bool,
}

/// A step: the index of the first run at the new level, the levels, and the step in words.
#[derive(Debug, Clone, PartialEq)]
pub struct SeriesStep {
    pub at: usize,
    pub before: f64,
    pub after: f64,
    pub words: String,
}

/// The levels a series held between its steps.
fn levels(s: &DiskSeries) -> Vec<Level> {
    let mut out = Vec::new();
    let mut from = 0;
    for st in &s.steps {
        out.push(Level {
            from: from as f64 + 1.0,
            to: st.at as f64,
            value: st.before,
        });
        from = st.at;
    }
    if let Some(st) = s.steps.last() {
        out.push(Level {
            from: from as f64 + 1.0,
            to: s.runs.len() as f64,
            value: st.after,
        });
    }
    out
}

/// One series' chart and its steps in words.
fn series(p: &mut Page, s: &DiskSeries) -> Result<()> {
    let points: Vec<RunPoint> = s
        .runs
        .iter()
        .enumerate()
        .map(|(i, r)| RunPoint {
            x: i as f64 + 1.0,
            value: r.value,
            err: r.spread * r.value.abs(),
            this: r.this,
        })
        .collect();
    let marks: Vec<Rule> = s
        .steps
        .iter()
        .map(|st| Rule {
            at: st.at as f64 + 0.5,
            label: format!(
                "step at run {}: {:+.0}%",
                st.at + 1,
                100.0 * (st.after - st.before) / st.before.abs().max(f64::MIN_POSITIVE)
            ),
            color: RED,
        })
        .collect();
    let day = |r: &SeriesRun| r.started_at.get(..10).unwrap_or(&r.started_at).to_string();
    let caption = format!(
        "{} on {}: {} runs from {} to {} (results {}); dashed, the levels between steps",
        s.what,
        s.disk,
        s.runs.len(),
        s.runs.first().map(day).unwrap_or_default(),
        s.runs.last().map(day).unwrap_or_default(),
        s.runs
            .iter()
            .map(|r| r.id.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let svg = charts::over_time(&s.what, &s.unit, &points, &levels(s), &marks);
    p.chart("over-time", svg, &caption)?;
    if !s.steps.is_empty() {
        p.push("<ul class=\"findings\">");
        for st in &s.steps {
            let _ = write!(p.html, "<li class=\"caution\">{}</li>", esc(&st.words));
        }
        p.push("</ul>\n");
    }
    Ok(())
}

/// The section, when the result has earlier runs to be seen among.
pub(super) fn section(p: &mut Page, history: &[DiskSeries]) -> Result<()> {
    if history.is_empty() {
        return Ok(());
    }
    let stepped = history.iter().filter(|s| !s.steps.is_empty()).count();
    let _ = writeln!(
        p.html,
        "<section id=\"over-time\"><h2>This disk over time</h2>\n<p>{}</p>",
        esc(&format!(
            "Each figure this result shares with earlier runs of the same disk at the same settings; {}",
            match stepped {
                0 => "none stepped beyond its noise.".to_string(),
                n => format!(
                    "{n} stepped beyond {} noise (marked in red).",
                    if n == 1 { "its" } else { "their" }
                ),
            }
        ))
    );
    for s in history {
        series(p, s)?;
    }
    p.push("</section>\n");
    Ok(())
}
