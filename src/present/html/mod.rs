//! The HTML report: one self-contained file (inline CSS and SVG, no network, no script) that
//! shows a result as a forum post or a studio's notes would want it — the answer and its naive
//! counterpart first, then each workload's table, findings and charts (buffer fill over time,
//! a search's probes, latency histograms, the sweep and the zones curve), then the target, the
//! host and every setting.

mod classic;
pub mod over_time;
mod runs;
mod search;
mod studio;

use classic::{rows_chart, sweep_charts, zones_chart};
use runs::{latency_chart, sampler_charts, stream_charts};
use search::{headline_chart, probe_chart};
use studio::device_words;

use super::summary::{headline, summary};
use super::terminal::{column_header, columns};
use super::{shown, words::words};
use crate::error::Result;
use crate::result::metrics::{self as m, Def};
use crate::result::{Detail, ResultDoc, Section};
use crate::workloads::realtime::{HDR_ROW, PLAY_ROW, RECORD_ROW};
use std::fmt::Write;

/// The HTML report presenter.
pub struct Html;

impl super::Presenter for Html {
    fn name(&self) -> &'static str {
        "html"
    }
    fn extension(&self) -> &'static str {
        "html"
    }
    fn render(&self, doc: &ResultDoc) -> Result<String> {
        document(doc)
    }
}

/// Text safe inside HTML elements and attributes.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// The page's style: readable on screen and in print, no external resource.
pub const STYLE: &str = "
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:0 auto;max-width:1000px;padding:0 18px 40px;color:#1d1d1f;background:#fff;line-height:1.45}
header{border-bottom:3px solid #0072b2;margin-bottom:18px}
h1{font-size:1.7em;margin:18px 0 4px}h2{font-size:1.3em;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
h3{font-size:1.05em;margin:18px 0 6px}
.sub{color:#555;margin:0 0 12px}
pre.summary{background:#f3f8fc;border-left:4px solid #0072b2;padding:10px 14px;white-space:pre-wrap;font-size:.95em}
p.big{font-size:1.25em;font-weight:600}
.card{border:1px solid #cfe0ee;border-radius:10px;padding:12px 16px;margin:10px 0;background:#f8fbfe}
.card .count{font-size:2.2em;font-weight:700;line-height:1.1}.card .range{color:#555}.card .count small{font-size:.45em;font-weight:400;color:#555;margin-left:6px}
.card .verdict{display:inline-block;padding:1px 10px;border-radius:12px;color:#fff;background:#1f8a4c;font-size:.85em;margin:4px 0}
.card .verdict.open{background:#b7791f}
.card .sentence{font-size:1.15em;margin:6px 0}
.card dl{display:grid;grid-template-columns:auto 1fr;gap:2px 14px;margin:6px 0}.card dt{color:#555}.card dd{margin:0;font-weight:600}
.card .how{color:#555;font-size:.92em;margin:2px 0}
p.answer{font-size:1.1em;margin:4px 0 10px}
table{border-collapse:collapse;margin:8px 0 12px;font-size:.88em}
th,td{border:1px solid #d8d8d8;padding:3px 8px;text-align:right;vertical-align:top}
th:first-child,td:first-child{text-align:left}
thead th{background:#f4f4f4}
table.kv td:last-child{text-align:left;font-family:ui-monospace,Menlo,Consolas,monospace;word-break:break-all}
ul.findings li{margin:3px 0}ul.findings li.caution{color:#a34100}
figure.chart{margin:12px 0 18px}figure.chart svg{max-width:100%;height:auto;display:block}
figcaption{color:#555;font-size:.85em;margin-top:2px}
.tag{display:inline-block;background:#eee;border-radius:3px;padding:0 6px;font-size:.8em;margin-left:6px;vertical-align:middle}
.warn{background:#fff4e5;border-left:4px solid #e69f00;padding:8px 12px}
nav ul{columns:2;font-size:.9em}
footer{margin-top:30px;color:#777;font-size:.8em}
";

/// A page under construction: its HTML and how many charts it holds.
pub(super) struct Page {
    pub(super) html: String,
    pub(super) charts: usize,
}

impl Page {
    pub(super) fn push(&mut self, s: &str) {
        self.html.push_str(s);
    }

    /// A chart with its caption; `kind` names what it shows (for the page's own checks).
    pub(super) fn chart(&mut self, kind: &str, svg: Result<String>, caption: &str) -> Result<()> {
        let svg = svg?;
        self.charts += 1;
        let _ = writeln!(
            self.html,
            "<figure class=\"chart\" id=\"chart-{}\" data-chart=\"{kind}\">{svg}<figcaption>{}</figcaption></figure>",
            self.charts,
            esc(caption)
        );
        Ok(())
    }
}

/// The opening of a report page.
pub fn head(title: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<meta name=\"generator\" content=\"trackbench {}\">\n<title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        env!("CARGO_PKG_VERSION"),
        esc(title)
    )
}

/// The whole report for one result.
pub fn document(doc: &ResultDoc) -> Result<String> {
    document_with_history(doc, &[])
}

/// The whole report for one result, with the disk's series over its earlier runs
/// (`over_time::DiskSeries`, which `watch::series::over_time` finds in the store) after the
/// answer.
pub fn document_with_history(doc: &ResultDoc, history: &[over_time::DiskSeries]) -> Result<String> {
    let mut p = Page {
        html: head(&format!("trackbench: {}", headline(doc))),
        charts: 0,
    };
    let t = &doc.target;
    let _ = writeln!(
        p.html,
        "<header><h1>trackbench report</h1><p class=\"sub\">{} · {} · {}{}</p></header>",
        esc(&t.path.display().to_string()),
        esc(&device_words(doc)),
        esc(&doc.started_at.replace('T', " ").replace('Z', " UTC")),
        if doc.interrupted {
            " · <strong>interrupted</strong>"
        } else {
            ""
        }
    );
    p.push("<section id=\"answer\"><h2>The answer</h2>\n");
    for (i, s) in doc.sections.iter().enumerate() {
        if let Some(a) = super::answer::of(doc, s) {
            answer_card(&mut p, &a, i);
        }
    }
    match summary(doc) {
        Some(s) => {
            let _ = writeln!(p.html, "<pre class=\"summary\">{}</pre>", esc(s.trim_end()));
        }
        None => {
            let _ = writeln!(p.html, "<p class=\"big\">{}</p>", esc(&headline(doc)));
        }
    }
    headline_chart(&mut p, doc)?;
    if !doc.warnings.is_empty() {
        p.push("<div class=\"warn\"><strong>Warnings</strong><ul>");
        for w in &doc.warnings {
            let _ = write!(p.html, "<li>{}</li>", esc(w));
        }
        p.push("</ul></div>\n");
    }
    p.push("</section>\n");
    over_time::section(&mut p, history)?;
    studio::studio(&mut p, doc)?;
    if doc.sections.len() > 1 {
        p.push("<nav><ul>");
        for (i, s) in doc.sections.iter().enumerate() {
            let _ = write!(p.html, "<li><a href=\"#s{i}\">{}</a></li>", esc(&s.title));
        }
        p.push("</ul></nav>\n");
    }
    for (i, s) in doc.sections.iter().enumerate() {
        section(&mut p, doc, i, s)?;
    }
    context(&mut p, doc);
    let _ = writeln!(
        p.html,
        "<footer>trackbench {} · result schema {} · {}</footer>\n</body>\n</html>",
        esc(&doc.tool.version),
        doc.schema_version,
        esc(&doc.verification)
    );
    Ok(p.html)
}

/// An answer as a card: the count and its verdict, the sentence, the figures that decide, what
/// it depends on and how sure it is, and a link to how it was measured (section `i`).
fn answer_card(p: &mut Page, a: &super::answer::Answer, i: usize) {
    let _ = write!(
        p.html,
        "<div class=\"card\"><div class=\"count\">{}<small>{}</small></div>{}<span class=\"verdict{}\">{}</span><p class=\"sentence\">{}</p>",
        esc(&a.count),
        esc(a.unit),
        a.range.as_ref().map_or(String::new(), |r| format!(
            "<div class=\"range\">{}</div>",
            esc(r)
        )),
        if a.answered { "" } else { " open" },
        esc(&a.verdict),
        esc(&a.sentence)
    );
    if !a.figures.is_empty() {
        p.push("<dl>");
        for (k, v) in &a.figures {
            let _ = write!(p.html, "<dt>{}</dt><dd>{}</dd>", esc(k), esc(v));
        }
        p.push("</dl>");
    }
    let _ = writeln!(
        p.html,
        "<p class=\"how\">Depends on: {}</p><p class=\"how\">How sure: {}</p><p class=\"how\"><a href=\"#s{i}\">How this was measured</a></p></div>",
        esc(&a.depends_on),
        esc(&a.how_sure)
    );
}

/// One figure's cell: the median (as declared to be shown, or `raw` in its stored unit), with
/// its spread over several runs.
fn cell(def: &Def, f: &crate::result::Figure, raw: bool) -> String {
    let mut text = if raw {
        crate::units::fmt_figure(f.spread.median)
    } else {
        shown(def, f.spread.median)
    };
    if f.spread.runs.len() > 1 && f.spread.median != 0.0 {
        let _ = write!(text, " ±{:.1}%", 100.0 * f.spread.cv);
    }
    esc(&text)
}

/// A table of `defs` for every row of `s`: under their headers as the terminal shows them, or
/// `raw`, under their names in the document, in their stored units.
pub(super) fn figure_table(p: &mut Page, s: &Section, defs: &[&'static Def], raw: bool) {
    p.push("<table><thead><tr><th></th>");
    for d in defs {
        if raw {
            let _ = write!(
                p.html,
                "<th>{}<br><small>{}</small></th>",
                esc(d.name),
                esc(d.unit)
            );
        } else {
            let _ = write!(p.html, "<th>{}</th>", esc(column_header(&s.workload, d)));
        }
    }
    p.push("</tr></thead><tbody>");
    for r in &s.rows {
        let _ = write!(p.html, "<tr><td>{}</td>", esc(&r.label));
        for d in defs {
            match r.get(d) {
                Some(f) => {
                    let _ = write!(p.html, "<td>{}</td>", cell(d, f, raw));
                }
                None => p.push("<td>–</td>"),
            }
        }
        p.push("</tr>");
    }
    p.push("</tbody></table>\n");
}

/// One workload's section: its table (every figure, in the document's units, behind a
/// summary), its findings, its charts and its settings.
fn section(p: &mut Page, doc: &ResultDoc, i: usize, s: &Section) -> Result<()> {
    let _ = write!(p.html, "<section id=\"s{i}\"><h2>{}", esc(&s.title));
    if s.cached {
        p.push("<span class=\"tag\">cached</span>");
    }
    if s.interrupted {
        p.push("<span class=\"tag\">interrupted</span>");
    }
    p.push("</h2>\n");
    if let Some(a) = super::answer::of(doc, s) {
        let _ = writeln!(p.html, "<p class=\"answer\">{}</p>", esc(&a.sentence));
    }
    section_tables(p, s);
    findings_list(p, s);
    workload_charts(p, s)?;
    detail_charts(p, s)?;
    settings_table(p, "Settings", &s.settings);
    p.push("</section>\n");
    Ok(())
}

/// A section's table of the figures its workload shows, and every other figure it holds
/// (declared, or from an older document) behind a summary.
fn section_tables(p: &mut Page, s: &Section) {
    let shown_defs: Vec<&'static Def> = columns(&s.workload)
        .iter()
        .copied()
        .filter(|d| s.rows.iter().any(|r| r.get(d).is_some()))
        .collect();
    figure_table(p, s, &shown_defs, false);
    if s.runs > 1 {
        let _ = writeln!(
            p.html,
            "<p class=\"sub\">median of {} runs; ± is the coefficient of variation</p>",
            s.runs
        );
    }
    let mut all: Vec<&'static Def> = Vec::new();
    for r in &s.rows {
        for f in &r.figures {
            if let Some(d) = m::lookup(&f.name)
                && !all.iter().any(|x| x.name == d.name)
            {
                all.push(d);
            }
        }
    }
    if all.len() > shown_defs.len() {
        p.push("<details><summary>every figure, in the document's units</summary>\n");
        figure_table(p, s, &all, true);
        p.push("</details>\n");
    }
}

/// A section's findings, the cautions set apart.
fn findings_list(p: &mut Page, s: &Section) {
    if s.findings.is_empty() {
        return;
    }
    p.push("<ul class=\"findings\">");
    for f in &s.findings {
        let class = if f.is_caution() {
            " class=\"caution\""
        } else {
            ""
        };
        let _ = write!(p.html, "<li{class}>{}</li>", esc(&words(f)));
    }
    p.push("</ul>\n");
}

/// The charts of a workload's rows: the sweep's, the zones', the load's and the export's.
fn workload_charts(p: &mut Page, s: &Section) -> Result<()> {
    match s.workload.as_str() {
        "sweep" => sweep_charts(p, s),
        "zones" => zones_chart(p, s),
        "load" => rows_chart(
            p,
            s,
            &m::LOAD_S,
            "load",
            "Template load time",
            "Opening every sample and reading its header and preload: cold and warm, one loader thread and several. Shorter is better.",
            |v| format!("{} s", crate::units::fmt_figure(v)),
        ),
        "bounce" => rows_chart(
            p,
            s,
            &m::X_REAL_TIME,
            "bounce",
            "Offline export: times faster than real time",
            "Each stage's audio ÷ its time, fsyncs included. Taller is better.",
            |v| format!("{v:.0}x"),
        ),
        _ => Ok(()),
    }
}

/// The charts of a section's detail: a run's fill and latencies, a search's probes (each of the
/// real-time answer's searches), a transfer's latencies, a sampler run's.
fn detail_charts(p: &mut Page, s: &Section) -> Result<()> {
    match &s.detail {
        Some(Detail::Stream(o)) => stream_charts(p, s, o)?,
        Some(Detail::Search(d)) => {
            for c in &d.searches {
                probe_chart(p, c, &s.workload)?;
            }
        }
        Some(Detail::RealTime(r)) => {
            for (row, search) in [
                (PLAY_ROW, &r.play),
                (RECORD_ROW, &r.record),
                (HDR_ROW, &r.hdr),
            ] {
                if let Some(c) = search
                    .as_ref()
                    .and_then(|x| x.search.as_ref())
                    .and_then(|d| d.searches.first())
                {
                    let mut c = c.clone();
                    c.label = row.to_string();
                    probe_chart(p, &c, if row == HDR_ROW { "hdr" } else { "play" })?;
                }
            }
        }
        Some(Detail::Transfers(t)) => latency_chart(p, s, t)?,
        Some(Detail::Sampler(o)) => sampler_charts(p, o)?,
        None => {}
    }
    Ok(())
}

/// Every leaf of a settings object, by its path.
fn flatten(v: &serde_json::Value, path: &str, out: &mut Vec<(String, String)>) {
    match v {
        serde_json::Value::Object(map) => {
            for (k, x) in map {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                flatten(x, &p, out);
            }
        }
        serde_json::Value::String(s) => out.push((path.to_string(), s.clone())),
        other => out.push((path.to_string(), other.to_string())),
    }
}

pub(super) fn kv_table(p: &mut Page, rows: &[(String, String)]) {
    p.push("<table class=\"kv\"><tbody>");
    for (k, v) in rows {
        let _ = write!(p.html, "<tr><td>{}</td><td>{}</td></tr>", esc(k), esc(v));
    }
    p.push("</tbody></table>\n");
}

pub(super) fn settings_table(p: &mut Page, title: &str, v: &serde_json::Value) {
    let mut rows = Vec::new();
    flatten(v, "", &mut rows);
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(
        p.html,
        "<details><summary>{} ({})</summary>",
        esc(title),
        rows.len()
    );
    kv_table(p, &rows);
    p.push("</details>\n");
}

/// The target, the host and the session's settings.
fn context(p: &mut Page, doc: &ResultDoc) {
    p.push("<section id=\"context\"><h2>Where and how</h2>\n<h3>Target</h3>\n");
    let mut rows = Vec::new();
    flatten(
        &serde_json::to_value(&doc.target).unwrap_or_default(),
        "",
        &mut rows,
    );
    kv_table(p, &rows);
    p.push("<h3>Host</h3>\n");
    let mut rows = Vec::new();
    flatten(
        &serde_json::to_value(&doc.host).unwrap_or_default(),
        "",
        &mut rows,
    );
    kv_table(p, &rows);
    p.push("<h3>Session</h3>\n");
    let mut rows = vec![
        ("command".to_string(), doc.command.join(" ")),
        ("started".to_string(), doc.started_at.clone()),
        ("finished".to_string(), doc.finished_at.clone()),
        ("cached".to_string(), doc.cached.to_string()),
        ("interrupted".to_string(), doc.interrupted.to_string()),
    ];
    if let Some(s) = &doc.session {
        flatten(&serde_json::to_value(s).unwrap_or_default(), "", &mut rows);
    }
    kv_table(p, &rows);
    p.push("</section>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped() {
        assert_eq!(
            esc("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }
}
