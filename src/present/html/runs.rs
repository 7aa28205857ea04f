//! The charts of a streaming run in the HTML report: the rings' fill over time, the latencies
//! of its I/O and the tick's lateness; a sampler's first reads too; and a classic transfer's
//! latencies.

use super::Page;
use crate::engine::{FillPoint, StreamSpec};
use crate::error::Result;
use crate::present::charts::{self, Line, Rule};
use crate::result::{Section, Transfers};
use crate::stats::Histogram;
use crate::verdict::tracks::StreamOutcome;
use plotters::style::RGBColor;

/// The axes of a latency histogram.
const LATENCY_AXES: (&str, &str) = ("latency", "% of requests");

/// A streaming run's charts: buffer fill over time, its latencies, and the tick's lateness.
pub(super) fn stream_charts(p: &mut Page, s: &Section, o: &StreamOutcome) -> Result<()> {
    let margin_pct = s
        .settings
        .get("spec")
        .and_then(|v| serde_json::from_value::<StreamSpec>(v.clone()).ok())
        .map_or(20.0, |spec| spec.margin * 100.0);
    fill_chart(
        p,
        &o.fill,
        FillChart {
            title: "Buffer fill over time",
            y_desc: "headroom, % of the ring",
            lines: ("mean of all rings", "worst ring"),
            rules: vec![Rule {
                at: margin_pct,
                label: format!("margin {margin_pct:.0}%"),
                color: charts::ORANGE,
            }],
            marks: xrun_marks(o),
            caption: format!(
                "Headroom of the rings (playback: audio left; capture: room left) after each audio period: {} xrun(s){}. Verdict: {}.",
                o.underruns + o.overruns,
                o.first_xrun_ms.map_or(String::new(), |t| format!(
                    ", the first at {:.2} s",
                    t / 1000.0
                )),
                o.verdict.word()
            ),
        },
    )?;
    let hist: Vec<(String, RGBColor, &Histogram)> = [
        ("reads", charts::BLUE, &o.histograms.read),
        ("writes", charts::ORANGE, &o.histograms.write),
    ]
    .into_iter()
    .filter_map(|(n, c, h)| h.as_ref().map(|h| (n.to_string(), c, h)))
    .collect();
    if !hist.is_empty() {
        p.chart(
            "latency",
            charts::histograms("The butler's I/O latency", LATENCY_AXES, &hist),
            "Each request's time from submission to completion, as a share of all requests.",
        )?;
    }
    if let Some(h) = &o.histograms.tick_lateness {
        let how = if o.realtime {
            ", running SCHED_FIFO"
        } else {
            ", not real-time"
        };
        lateness_chart(
            p,
            h,
            &format!(
                "How late the audio thread woke for each period (scheduling, not the disk){how}."
            ),
        )?;
    }
    Ok(())
}

/// A mark at each track's first xrun (to the hundredth of a second, at most 60 of them).
fn xrun_marks(o: &StreamOutcome) -> Vec<Rule> {
    let mut xruns: Vec<f64> = o
        .tracks
        .iter()
        .filter_map(|t| t.first_xrun_ms)
        .map(|ms| (ms / 10.0).round() / 100.0)
        .collect();
    xruns.sort_by(f64::total_cmp);
    xruns.dedup();
    xruns
        .iter()
        .take(60)
        .enumerate()
        .map(|(i, &t)| Rule {
            at: t,
            label: if i == 0 {
                "xrun (a track's first)".into()
            } else {
                String::new()
            },
            color: charts::RED,
        })
        .collect()
}

/// A sampler run's charts: how much of its preload each note's first read left, the voices'
/// rings over time, the reads' latency and the tick's lateness.
pub(super) fn sampler_charts(
    p: &mut Page,
    o: &crate::verdict::voices::SamplerOutcome,
) -> Result<()> {
    if let Some(h) = &o.first_read_slack_hist {
        p.chart(
            "slack",
            charts::histograms(
                "First reads: time to spare before the preload ran out",
                ("time to spare", "% of notes"),
                &[("notes".into(), charts::GREEN, h)],
            ),
            &format!(
                "Each note plays its first {:.0} ms from RAM; its stream's first read must land before that. {} of {} first reads were late{}.",
                o.preload_ms,
                o.late_first_reads,
                o.first_read_slack_hist.as_ref().map_or(0, |h| h.total()) + o.late_first_reads,
                o.first_read_slack_min_ms
                    .map_or(String::new(), |m| format!("; the tightest had {m:.1} ms to spare"))
            ),
        )?;
    }
    let first_dropout = o.first_dropout_ms.map(|t| Rule {
        at: t / 1000.0,
        label: "first dropout".into(),
        color: charts::RED,
    });
    fill_chart(
        p,
        &o.fill,
        FillChart {
            title: "Voices' rings over time",
            y_desc: "% of what the ring could hold of the rest",
            lines: ("mean of the streaming voices", "worst voice"),
            rules: Vec::new(),
            marks: first_dropout.into_iter().collect(),
            caption: format!(
                "{} voices, {} notes, {} dropout(s). Verdict: {}.",
                o.voices,
                o.notes,
                o.dropouts,
                o.verdict.word()
            ),
        },
    )?;
    if let Some(h) = &o.read_latency_hist {
        p.chart(
            "latency",
            charts::histograms(
                "The disk thread's read latency",
                LATENCY_AXES,
                &[("reads".into(), charts::BLUE, h)],
            ),
            "Each read's time from submission to completion, as a share of all reads.",
        )?;
    }
    if let Some(h) = &o.tick_lateness_hist {
        lateness_chart(
            p,
            h,
            "How late the audio thread woke for each period (scheduling, not the disk).",
        )?;
    }
    Ok(())
}

/// A fill chart's words and rules ([`fill_chart`]).
struct FillChart<'a> {
    title: &'a str,
    y_desc: &'a str,
    /// The names of the mean's line and the worst's.
    lines: (&'a str, &'a str),
    /// Rules across (a margin) and marks down (xruns, a dropout).
    rules: Vec<Rule>,
    marks: Vec<Rule>,
    caption: String,
}

/// The rings' fill over time, the mean of them and the worst, where the run kept any.
fn fill_chart(p: &mut Page, fill: &[FillPoint], c: FillChart<'_>) -> Result<()> {
    if fill.is_empty() {
        return Ok(());
    }
    let end = fill.last().map_or(1.0, |f| f.t_ms / 1000.0);
    let pts = |f: fn(&FillPoint) -> f64| {
        fill.iter()
            .map(|x| (x.t_ms / 1000.0, f(x)))
            .collect::<Vec<_>>()
    };
    let lines = [
        Line {
            name: c.lines.0.into(),
            color: charts::BLUE,
            points: pts(|f| f.mean_pct),
        },
        Line {
            name: c.lines.1.into(),
            color: charts::RED,
            points: pts(|f| f.worst_pct),
        },
    ];
    p.chart(
        "fill",
        charts::lines(
            c.title,
            ("seconds", charts::padded(0.0, end)),
            (c.y_desc, 0.0..105.0),
            &lines,
            &c.rules,
            &c.marks,
        ),
        &c.caption,
    )
}

/// The audio tick's wake-up lateness, as a distribution.
fn lateness_chart(p: &mut Page, h: &Histogram, caption: &str) -> Result<()> {
    p.chart(
        "lateness",
        charts::histograms(
            "The audio tick's wake-up lateness",
            ("lateness", "% of periods"),
            &[("lateness".into(), charts::PURPLE, h)],
        ),
        caption,
    )
}

/// A classic workload's latency distributions, one series per row and direction.
pub(super) fn latency_chart(p: &mut Page, s: &Section, t: &Transfers) -> Result<()> {
    let mut series: Vec<(String, RGBColor, &Histogram)> = Vec::new();
    for r in &t.rows {
        let both = r.read.is_some() && r.write.is_some();
        for (way, h) in [("read", &r.read), ("write", &r.write)] {
            if let Some(h) = h {
                let name = if both {
                    format!("{} · {way}", r.label)
                } else {
                    r.label.clone()
                };
                let color = charts::SERIES[series.len() % charts::SERIES.len()];
                series.push((name, color, h));
            }
        }
    }
    if series.is_empty() {
        return Ok(());
    }
    p.chart(
        "latency",
        charts::histograms(
            &format!("{}: request latency", s.workload),
            LATENCY_AXES,
            &series,
        ),
        "Each request's time from submission to completion (last run), as a share of the row's requests.",
    )
}
