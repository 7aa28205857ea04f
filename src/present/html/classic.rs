//! The classic workloads' charts in the HTML report: a figure per row, the sweep's block
//! sizes, the zones' curve.

use super::Page;
use crate::error::Result;
use crate::present::charts::{self, BarSeries, Line};
use crate::result::Section;
use crate::result::metrics::{self as m, Def};
use crate::units::fmt_size;

fn medians(s: &Section, def: &Def) -> Vec<f64> {
    s.rows
        .iter()
        .map(|r| r.get(def).map_or(0.0, |f| f.spread.median))
        .collect()
}

/// One figure of every row as bars.
pub(super) fn rows_chart(
    p: &mut Page,
    s: &Section,
    def: &'static Def,
    kind: &str,
    title: &str,
    caption: &str,
    label: fn(f64) -> String,
) -> Result<()> {
    let cats: Vec<String> = s.rows.iter().map(|r| r.label.clone()).collect();
    let values = medians(s, def);
    if values.iter().all(|v| *v == 0.0) {
        return Ok(());
    }
    p.chart(
        kind,
        charts::bars(
            title,
            &cats,
            def.unit,
            &[BarSeries {
                name: def.header.into(),
                color: charts::BLUE,
                labels: values.iter().map(|v| label(*v)).collect(),
                values,
            }],
        ),
        caption,
    )
}

/// The sweep: MB/s by block size, and the tracks each carries with the RAM they cost.
pub(super) fn sweep_charts(p: &mut Page, s: &Section) -> Result<()> {
    let cats: Vec<String> = s.rows.iter().map(|r| r.label.clone()).collect();
    let rate = medians(s, &m::RATE_MB_PER_S);
    p.chart(
        "sweep-rate",
        charts::bars(
            "Transfer rate by block size",
            &cats,
            "MB/s",
            &[BarSeries {
                name: "MB/s".into(),
                color: charts::BLUE,
                labels: rate.iter().map(|v| format!("{v:.0}")).collect(),
                values: rate,
            }],
        ),
        "Files read round robin at each block size.",
    )?;
    let tracks = medians(s, &m::TRACKS);
    let ram = medians(s, &m::RAM_TOTAL_BYTES);
    p.chart(
        "sweep-tracks",
        charts::bars(
            "Tracks by block size, and the buffer RAM they cost",
            &cats,
            "tracks",
            &[BarSeries {
                name: "tracks".into(),
                color: charts::GREEN,
                labels: tracks
                    .iter()
                    .zip(&ram)
                    .map(|(t, r)| format!("{t:.0} · {}", fmt_size(*r as u64)))
                    .collect(),
                values: tracks,
            }],
        ),
        "Tracks: the rate ÷ the per-track rate (no deadlines checked). Above each bar: the buffer RAM all of them need at that block size.",
    )
}

/// The zones curve: rate against position.
pub(super) fn zones_chart(p: &mut Page, s: &Section) -> Result<()> {
    let pts: Vec<(f64, f64)> = s
        .rows
        .iter()
        .filter_map(|r| {
            Some((
                r.get(&m::POSITION_PCT)?.spread.median,
                r.get(&m::RATE_MB_PER_S)?.spread.median,
            ))
        })
        .collect();
    if pts.is_empty() {
        return Ok(());
    }
    let top = pts.iter().map(|p| p.1).fold(0.0f64, f64::max);
    p.chart(
        "zones",
        charts::lines(
            "Transfer rate from start to end",
            ("position, % of the span", 0.0..100.0),
            ("MB/s", 0.0..(top * 1.15).max(1.0)),
            &[Line {
                name: "MB/s".into(),
                color: charts::BLUE,
                points: pts,
            }],
            &[],
            &[],
        ),
        "On a disk device, outer tracks (the start) pass under the head faster than inner ones.",
    )
}
