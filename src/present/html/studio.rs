//! A studio's run in the HTML report: how many workstations played how many tracks each at
//! once, and each host's row.

use super::{Page, esc};
use crate::error::Result;
use crate::present::charts::{self, BarSeries};
use crate::present::studio::StudioSection;
use crate::result::ResultDoc;
use crate::units::fmt_figure;
use std::fmt::Write;

/// A studio run: each section's answer for the studio, each host's row, and a chart of what
/// each host streamed.
pub(super) fn studio(p: &mut Page, doc: &ResultDoc) -> Result<()> {
    let Some(intro) = crate::present::studio::intro(doc) else {
        return Ok(());
    };
    let _ = writeln!(
        p.html,
        "<section id=\"studio\"><h2>The studio</h2>\n<p>{}</p>",
        esc(&intro)
    );
    for sec in crate::present::studio::sections(doc) {
        let _ = writeln!(
            p.html,
            "<h3>{}</h3>\n<p class=\"big\">{}</p>",
            esc(&sec.title),
            esc(&sec.words)
        );
        if !sec.totals.is_empty() {
            let _ = writeln!(
                p.html,
                "<p>The storage delivered, all hosts together: {}</p>",
                esc(&crate::present::studio::total_words(&sec.totals))
            );
        }
        if sec.hosts.is_empty() {
            continue;
        }
        hosts_table(p, &sec);
        hosts_chart(p, &sec)?;
    }
    p.push("</section>\n");
    Ok(())
}

/// Each host's row of a studio's section.
fn hosts_table(p: &mut Page, sec: &StudioSection) {
    let (header, rows) = crate::present::studio::table(sec);
    p.push("<table class=\"hosts\"><thead><tr>");
    for h in &header {
        let _ = write!(p.html, "<th>{}</th>", esc(h));
    }
    p.push("</tr></thead><tbody>");
    for r in &rows {
        p.push("<tr>");
        for c in r {
            let _ = write!(p.html, "<td>{}</td>", esc(c));
        }
        p.push("</tr>");
    }
    p.push("</tbody></table>\n");
}

/// What each host of a studio's section streamed, in MB/s each way, as bars.
fn hosts_chart(p: &mut Page, sec: &StudioSection) -> Result<()> {
    let cats: Vec<String> = sec
        .hosts
        .iter()
        .map(|h| format!("rank {} ({})", h.rank, h.hostname))
        .collect();
    let colors = [charts::BLUE, charts::ORANGE, charts::GREEN];
    let series: Vec<BarSeries> = sec
        .totals
        .iter()
        .filter(|(d, _)| d.unit == "MB/s")
        .zip(colors)
        .map(|((d, _), color)| {
            let values: Vec<f64> = sec
                .hosts
                .iter()
                .map(|h| {
                    h.figures
                        .iter()
                        .find(|f| f.0.name == d.name)
                        .map_or(0.0, |f| f.1)
                })
                .collect();
            BarSeries {
                name: d.header.into(),
                color,
                labels: values.iter().map(|v| fmt_figure(*v)).collect(),
                values,
            }
        })
        .collect();
    if series.is_empty() {
        return Ok(());
    }
    p.chart(
        "studio",
        charts::bars(&format!("Each host: {}", sec.title), &cats, "MB/s", &series),
        "What each workstation streamed from the shared storage (at the studio's answer, for a search)",
    )
}

/// The device or filesystem a result was measured on, in a few words.
pub(super) fn device_words(doc: &ResultDoc) -> String {
    let t = &doc.target;
    if let Some(name) = &t.simulated {
        return format!("simulated device {name}");
    }
    match &t.device {
        Some(d) => {
            let mut s = d.model.clone().unwrap_or_else(|| d.name.clone());
            if let Some(r) = d.rotational {
                s.push_str(if r { ", rotational" } else { ", solid state" });
            }
            s
        }
        None => t
            .fs_type
            .clone()
            .map_or("unknown device".into(), |f| format!("{f} filesystem")),
    }
}
