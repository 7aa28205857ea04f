//! The Markdown report: the same content as the HTML one in text a forum post takes as it is —
//! the answer first, a table per workload with its findings, text charts (buffer fill, the
//! sweep, the zones curve) in code blocks, and the settings folded away.

use super::summary::{headline, summary};
use super::terminal::{column_header, columns};
use super::{shown, words::words};
use crate::error::Result;
use crate::result::metrics::{self as m, Def};
use crate::result::{Detail, ResultDoc, Section};
use crate::units::fmt_size;
use std::fmt::Write;

/// The Markdown presenter.
pub struct Markdown;

impl super::Presenter for Markdown {
    fn name(&self) -> &'static str {
        "markdown"
    }
    fn extension(&self) -> &'static str {
        "md"
    }
    fn render(&self, doc: &ResultDoc) -> Result<String> {
        Ok(document(doc))
    }
}

/// A table cell: pipes would end it.
fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

/// Eighths of a block, for text bars and sparklines.
const BLOCKS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// `values` (0..=top) as a sparkline of at most `width` characters, each the lowest value of
/// its stretch (a dip must not be averaged away).
pub fn sparkline(values: &[f64], top: f64, width: usize) -> String {
    if values.is_empty() || top <= 0.0 {
        return String::new();
    }
    let per = values.len().div_ceil(width.max(1));
    values
        .chunks(per)
        .map(|c| {
            let v = c.iter().copied().fold(f64::INFINITY, f64::min);
            let k = ((v / top).clamp(0.0, 1.0) * 7.0).round() as usize;
            BLOCKS[k]
        })
        .collect()
}

/// A horizontal text bar of `width` characters at most for `v` of `top`.
fn bar(v: f64, top: f64, width: usize) -> String {
    let eighths = if top > 0.0 {
        ((v / top).clamp(0.0, 1.0) * (width * 8) as f64).round() as usize
    } else {
        0
    };
    let mut s = "█".repeat(eighths / 8);
    if eighths % 8 > 0 {
        s.push(['▏', '▎', '▍', '▌', '▋', '▊', '▉'][eighths % 8 - 1]);
    }
    s
}

/// The whole report.
pub fn document(doc: &ResultDoc) -> String {
    let mut o = String::new();
    let t = &doc.target;
    let _ = writeln!(o, "# trackbench: {}\n", headline(doc));
    let device = t
        .device
        .as_ref()
        .map(|d| d.model.clone().unwrap_or_else(|| d.name.clone()))
        .or_else(|| t.fs_type.clone())
        .unwrap_or_else(|| "unknown".into());
    let _ = writeln!(
        o,
        "**Target:** `{}` ({device}) · **Host:** {}, {} CPUs · {}{}\n",
        t.path.display(),
        doc.host.cpu_model.as_deref().unwrap_or("unknown CPU"),
        doc.host.cpus,
        doc.started_at.replace('T', " ").replace('Z', " UTC"),
        if doc.interrupted {
            " · **interrupted**"
        } else {
            ""
        }
    );
    if let Some(s) = summary(doc) {
        let _ = writeln!(o, "```text\n{}```\n", s);
    }
    for w in &doc.warnings {
        let _ = writeln!(o, "> **warning:** {w}\n");
    }
    studio(&mut o, doc);
    for s in &doc.sections {
        section(&mut o, doc, s);
    }
    let _ = writeln!(
        o,
        "<sub>trackbench {} · `{}`</sub>",
        doc.tool.version,
        doc.command.join(" ")
    );
    o
}

/// A studio run: each section's answer for the studio and a table of its hosts.
fn studio(o: &mut String, doc: &ResultDoc) {
    let Some(intro) = super::studio::intro(doc) else {
        return;
    };
    let _ = writeln!(o, "## The studio\n\n{intro}\n");
    for sec in super::studio::sections(doc) {
        let _ = writeln!(o, "### {}\n\n**{}**\n", sec.title, sec.words);
        if !sec.totals.is_empty() {
            let _ = writeln!(
                o,
                "The storage delivered, all hosts together: {}\n",
                super::studio::total_words(&sec.totals)
            );
        }
        if sec.hosts.is_empty() {
            continue;
        }
        let (header, rows) = super::studio::table(&sec);
        let _ = writeln!(o, "| {} |", header.join(" | "));
        let _ = writeln!(o, "|{}", "---|".repeat(header.len()));
        for r in rows {
            let _ = writeln!(o, "| {} |", r.join(" | "));
        }
        o.push('\n');
    }
}

fn section(o: &mut String, doc: &ResultDoc, s: &Section) {
    let mut title = s.title.clone();
    if s.cached {
        title.push_str(" [cached]");
    }
    if s.interrupted {
        title.push_str(" [interrupted]");
    }
    let _ = writeln!(o, "## {title}\n");
    if let Some(a) = super::answer::of(doc, s) {
        let _ = writeln!(
            o,
            "**{}**\n\n- depends on: {}\n- how sure: {}\n",
            a.sentence, a.depends_on, a.how_sure
        );
    }
    let defs: Vec<&'static Def> = columns(&s.workload)
        .iter()
        .copied()
        .filter(|d| s.rows.iter().any(|r| r.get(d).is_some()))
        .collect();
    o.push_str("| |");
    for d in &defs {
        let _ = write!(o, " {} |", cell(column_header(&s.workload, d)));
    }
    o.push_str("\n|---|");
    for _ in &defs {
        o.push_str("---:|");
    }
    o.push('\n');
    for r in &s.rows {
        let _ = write!(o, "| {} |", cell(&r.label));
        for d in &defs {
            let v = r.get(d).map_or("–".to_string(), |f| {
                let mut t = shown(d, f.spread.median);
                if f.spread.runs.len() > 1 && f.spread.median != 0.0 {
                    let _ = write!(t, " ±{:.1}%", 100.0 * f.spread.cv);
                }
                t
            });
            let _ = write!(o, " {} |", cell(&v));
        }
        o.push('\n');
    }
    o.push('\n');
    for f in &s.findings {
        let mark = if f.is_caution() { "⚠ " } else { "" };
        let _ = writeln!(o, "- {mark}{}", words(f));
    }
    if !s.findings.is_empty() {
        o.push('\n');
    }
    text_charts(o, s);
    let _ = writeln!(
        o,
        "<details><summary>settings</summary>\n\n```json\n{}\n```\n</details>\n",
        serde_json::to_string_pretty(&s.settings).unwrap_or_default()
    );
}

/// The charts a text can hold: the buffer fill's sparklines, the sweep's and the zones' bars.
fn text_charts(o: &mut String, s: &Section) {
    if let Some(Detail::Stream(st)) = &s.detail
        && !st.fill.is_empty()
    {
        let worst: Vec<f64> = st.fill.iter().map(|f| f.worst_pct).collect();
        let mean: Vec<f64> = st.fill.iter().map(|f| f.mean_pct).collect();
        let end = st.fill.last().map_or(0.0, |f| f.t_ms / 1000.0);
        let _ = writeln!(
            o,
            "Buffer fill over {end:.1} s (headroom of the rings, 0–100%):\n```text\nmean  {}\nworst {}\n```\n",
            sparkline(&mean, 100.0, 60),
            sparkline(&worst, 100.0, 60)
        );
    }
    let rows_bar = |o: &mut String, title: &str, values: Vec<(String, f64, String)>| {
        let top = values.iter().map(|v| v.1).fold(0.0f64, f64::max);
        let w = values
            .iter()
            .map(|v| v.0.chars().count())
            .max()
            .unwrap_or(0);
        let _ = writeln!(o, "{title}:\n```text");
        for (label, v, words) in &values {
            let _ = writeln!(o, "{label:>w$} {:<40} {words}", bar(*v, top, 40));
        }
        o.push_str("```\n\n");
    };
    let median = |r: &crate::result::Row, d: &Def| r.get(d).map(|f| f.spread.median);
    match s.workload.as_str() {
        "sweep" => rows_bar(
            o,
            "Tracks by block size (and the buffer RAM they cost)",
            s.rows
                .iter()
                .filter_map(|r| {
                    let t = median(r, &m::TRACKS)?;
                    let ram = median(r, &m::RAM_TOTAL_BYTES).unwrap_or(0.0);
                    Some((
                        r.label.clone(),
                        t,
                        format!("{t:.0} tracks, {}", fmt_size(ram as u64)),
                    ))
                })
                .collect(),
        ),
        "zones" => rows_bar(
            o,
            "Transfer rate from start to end",
            s.rows
                .iter()
                .filter_map(|r| {
                    let mb = median(r, &m::RATE_MB_PER_S)?;
                    Some((r.label.clone(), mb, format!("{mb:.0} MB/s")))
                })
                .collect(),
        ),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparklines_keep_dips_and_bars_scale() {
        assert_eq!(sparkline(&[100.0, 100.0, 0.0, 100.0], 100.0, 2), "█▁");
        assert_eq!(sparkline(&[100.0, 50.0], 100.0, 10), "█▅");
        assert_eq!(bar(50.0, 100.0, 4), "██");
        assert_eq!(bar(100.0, 100.0, 4), "████");
        assert_eq!(bar(1.0, 100.0, 4), "");
        assert_eq!(bar(3.0, 100.0, 4), "▏");
    }
}
