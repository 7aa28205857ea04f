//! The HTML report: one self-contained file (inline CSS and SVG, no network, no script) that
//! shows a result as a forum post or a studio's notes would want it — the answer and its naive
//! counterpart first, then each workload's table, findings and charts (buffer fill over time,
//! a search's probes, latency histograms, the sweep and the zones curve), then the target, the
//! host and every setting.

use super::charts::{self, BarSeries, Line, ProbePoint, Rule};
use super::summary::{headline, summary};
use super::terminal::{column_header, columns};
use super::{shown, words::words};
use crate::engine::{FillPoint, StreamSpec};
use crate::error::Result;
use crate::result::metrics::{self as m, Def};
use crate::result::search::CapacityReport;
use crate::result::search::Probe;
use crate::result::{Detail, ResultDoc, Section, Transfers};
use crate::stats::Histogram;
use crate::units::{fmt_figure, fmt_size};
use crate::verdict::Verdict;
use crate::verdict::tracks::StreamOutcome;
use crate::workloads::realtime::{HDR_ROW, PLAY_ROW, RECORD_ROW};
use plotters::style::RGBColor;
use std::fmt::Write;

/// The axes of a latency histogram.
const LATENCY_AXES: (&str, &str) = ("latency", "% of requests");

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
struct Page {
    html: String,
    charts: usize,
}

impl Page {
    fn push(&mut self, s: &str) {
        self.html.push_str(s);
    }

    /// A chart with its caption; `kind` names what it shows (for the page's own checks).
    fn chart(&mut self, kind: &str, svg: Result<String>, caption: &str) -> Result<()> {
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
    studio(&mut p, doc)?;
    if doc.sections.len() > 1 {
        p.push("<nav><ul>");
        for (i, s) in doc.sections.iter().enumerate() {
            let _ = write!(p.html, "<li><a href=\"#s{i}\">{}</a></li>", esc(&s.title));
        }
        p.push("</ul></nav>\n");
    }
    for (i, s) in doc.sections.iter().enumerate() {
        section(&mut p, i, s)?;
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

/// A studio run: each section's answer for the studio, each host's row, and a chart of what
/// each host streamed.
fn studio(p: &mut Page, doc: &ResultDoc) -> Result<()> {
    let Some(intro) = super::studio::intro(doc) else {
        return Ok(());
    };
    let _ = writeln!(
        p.html,
        "<section id=\"studio\"><h2>The studio</h2>\n<p>{}</p>",
        esc(&intro)
    );
    for sec in super::studio::sections(doc) {
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
                esc(&super::studio::total_words(&sec.totals))
            );
        }
        if sec.hosts.is_empty() {
            continue;
        }
        let (header, rows) = super::studio::table(&sec);
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
        if !series.is_empty() {
            p.chart(
                "studio",
                charts::bars(&format!("Each host: {}", sec.title), &cats, "MB/s", &series),
                "What each workstation streamed from the shared storage (at the studio's answer, for a search)",
            )?;
        }
    }
    p.push("</section>\n");
    Ok(())
}

/// The device or filesystem a result was measured on, in a few words.
fn device_words(doc: &ResultDoc) -> String {
    let t = &doc.target;
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

/// The real-time answers beside the naive counts, for every row that has both: tracks, and
/// sampler voices.
fn headline_chart(p: &mut Page, doc: &ResultDoc) -> Result<()> {
    let mut cats = Vec::new();
    let (mut real, mut naive, mut real_words) = (Vec::new(), Vec::new(), Vec::new());
    for s in &doc.sections {
        for r in &s.rows {
            let pair = [
                (&m::TRACKS, &m::NAIVE_TRACKS),
                (&m::VOICES, &m::NAIVE_VOICES),
            ]
            .into_iter()
            .find_map(|(a, b)| Some((a, r.get(a)?, r.get(b)?)));
            if let Some((def, t, n)) = pair {
                // A search stopped by a limit found at least its answer.
                let at_least = super::summary::limit_of(s, &r.label).is_some();
                real_words.push(format!(
                    "{}{:.0}",
                    if at_least { "≥ " } else { "" },
                    t.spread.median
                ));
                let what = if doc.sections.len() > 1 && s.workload != "realtime" {
                    format!("{} {}", s.workload, r.label)
                } else {
                    r.label.clone()
                };
                cats.push(if def.name == m::VOICES.name {
                    format!("{what} (voices)")
                } else {
                    what
                });
                real.push(t.spread.median);
                naive.push(n.spread.median);
            }
        }
    }
    if cats.is_empty() {
        return Ok(());
    }
    let labels = |v: &[f64]| v.iter().map(|x| format!("{x:.0}")).collect::<Vec<_>>();
    let series = [
        BarSeries {
            name: "in real time (measured)".into(),
            color: charts::GREEN,
            labels: real_words,
            values: real,
        },
        BarSeries {
            // Named by its one measurement where the result holds it (a suite's seq).
            name: match doc
                .sections
                .iter()
                .find_map(crate::workloads::Sequential::of)
                .and_then(|s| s.read)
            {
                Some(r) => format!(
                    "naive (sequential read, {} MB/s, ÷ per-stream rate)",
                    crate::units::fmt_figure(r / 1e6)
                ),
                None => "naive (sequential MB/s ÷ per-stream rate)".into(),
            },
            color: charts::GREY,
            labels: labels(&naive),
            values: naive,
        },
    ];
    p.chart(
        "headline",
        charts::bars(
            "Measured against the naive count",
            &cats,
            "tracks, voices",
            &series,
        ),
        "The most tracks (and sampler voices) that passed in real time, beside what the sequential transfer rate alone would promise.",
    )
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
fn figure_table(p: &mut Page, s: &Section, defs: &[&'static Def], raw: bool) {
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
fn section(p: &mut Page, i: usize, s: &Section) -> Result<()> {
    let _ = write!(p.html, "<section id=\"s{i}\"><h2>{}", esc(&s.title));
    if s.cached {
        p.push("<span class=\"tag\">cached</span>");
    }
    if s.interrupted {
        p.push("<span class=\"tag\">interrupted</span>");
    }
    p.push("</h2>\n");
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

fn verdict_color(v: Verdict) -> RGBColor {
    match v {
        Verdict::Pass => charts::GREEN,
        Verdict::TooShort => charts::GREY,
        Verdict::Marginal => charts::ORANGE,
        Verdict::Fail => charts::RED,
    }
}

/// A search's probes over time: count against when each probe ended, by verdict.
fn probe_chart(p: &mut Page, c: &CapacityReport, workload: &str) -> Result<()> {
    let probes: &[Probe] = &c.capacity.probes;
    if probes.is_empty() {
        return Ok(());
    }
    let mut t = 0.0;
    let points: Vec<ProbePoint> = probes
        .iter()
        .map(|pr| {
            t += pr.elapsed_s;
            ProbePoint {
                t_s: t,
                count: f64::from(pr.count),
                color: verdict_color(pr.verdict),
                confirmation: pr.confirmation,
            }
        })
        .collect();
    let mut legend: Vec<(String, RGBColor)> = Vec::new();
    for v in [
        Verdict::Pass,
        Verdict::TooShort,
        Verdict::Marginal,
        Verdict::Fail,
    ] {
        if probes.iter().any(|pr| pr.verdict == v) {
            legend.push((v.word().to_lowercase(), verdict_color(v)));
        }
    }
    let y = match workload {
        "hdr" => "playback tracks",
        "sampler" => "voices",
        _ => "tracks",
    };
    let answer = c.capacity.answer;
    p.chart(
        "probes",
        charts::probes(
            &format!("{}: the search's probes", c.label),
            y,
            &points,
            (answer > 0).then_some(f64::from(answer)),
            &legend,
        ),
        &format!(
            "{} probes, {:.0} s in all; answer {answer}{}{}. Rings: confirmation runs.",
            probes.len(),
            t,
            if c.capacity.confirmed {
                ", confirmed"
            } else {
                ", not confirmed"
            },
            c.limited_by
                .map_or(String::new(), |w| format!(", stopped at {}", w.words()))
        ),
    )?;
    probe_table(p, probes, y);
    Ok(())
}

/// A search's probes one by one: what each verdict rested on (the rings' fill trend, its
/// noise, the butler's idle share) and how long each probe streamed, where the probe says.
fn probe_table(p: &mut Page, probes: &[Probe], y: &str) {
    let num =
        |v: Option<f64>, digits: usize| v.map_or("–".to_string(), |v| format!("{v:.digits$}"));
    let _ = writeln!(
        p.html,
        "<table class=\"probes\"><thead><tr><th>{}</th><th>run</th><th>verdict</th><th>took, s</th><th>streamed, s</th><th>rings' shortfall, % of the demand</th><th>butler idle, %</th></tr></thead><tbody>",
        esc(y)
    );
    for pr in probes {
        let ev = pr.evidence.or(pr.storage);
        let verdict = super::words::probe_verdict(pr.verdict, pr.shortcoming);
        let trend = ev
            .and_then(|e| e.shortfall_pct)
            .map_or("–".to_string(), |s| {
                let noise = ev.map_or(0.0, |e| e.noise_pct);
                if noise > 0.0 {
                    format!("{s:.3} ± {noise:.3}")
                } else {
                    format!("{s:.3}")
                }
            });
        let _ = writeln!(
            p.html,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.1}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            pr.count,
            if pr.confirmation {
                "confirmation"
            } else if pr.steady_start {
                "probe, steady start"
            } else {
                "probe"
            },
            esc(&verdict),
            pr.elapsed_s,
            num(pr.ran_s, 1),
            esc(&trend),
            num(ev.and_then(|e| e.idle_pct), 1),
        );
    }
    p.push("</tbody></table>\n");
}

/// A streaming run's charts: buffer fill over time, its latencies, and the tick's lateness.
fn stream_charts(p: &mut Page, s: &Section, o: &StreamOutcome) -> Result<()> {
    let margin_pct = s
        .settings
        .get("spec")
        .and_then(|v| serde_json::from_value::<StreamSpec>(v.clone()).ok())
        .map_or(20.0, |spec| spec.margin * 100.0);
    let mut xruns: Vec<f64> = o
        .tracks
        .iter()
        .filter_map(|t| t.first_xrun_ms)
        .map(|ms| (ms / 10.0).round() / 100.0)
        .collect();
    xruns.sort_by(f64::total_cmp);
    xruns.dedup();
    let marks: Vec<Rule> = xruns
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
        .collect();
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
            marks,
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

/// A sampler run's charts: how much of its preload each note's first read left, the voices'
/// rings over time, the reads' latency and the tick's lateness.
fn sampler_charts(p: &mut Page, o: &crate::verdict::voices::SamplerOutcome) -> Result<()> {
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
fn latency_chart(p: &mut Page, s: &Section, t: &Transfers) -> Result<()> {
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

fn medians(s: &Section, def: &Def) -> Vec<f64> {
    s.rows
        .iter()
        .map(|r| r.get(def).map_or(0.0, |f| f.spread.median))
        .collect()
}

/// One figure of every row as bars.
fn rows_chart(
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
fn sweep_charts(p: &mut Page, s: &Section) -> Result<()> {
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
fn zones_chart(p: &mut Page, s: &Section) -> Result<()> {
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

fn kv_table(p: &mut Page, rows: &[(String, String)]) {
    p.push("<table class=\"kv\"><tbody>");
    for (k, v) in rows {
        let _ = write!(p.html, "<tr><td>{}</td><td>{}</td></tr>", esc(k), esc(v));
    }
    p.push("</tbody></table>\n");
}

fn settings_table(p: &mut Page, title: &str, v: &serde_json::Value) {
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

    #[test]
    fn the_probe_table_says_what_each_verdict_rested_on() {
        use crate::engine::Sustain;
        use crate::verdict::Shortcoming;
        use crate::verdict::evidence::CapacityEvidence;
        let sustain = |s: f64, n: f64| Sustain {
            shortfall_pct: s,
            margin_in_s: None,
            noise_pct: n,
            from_ms: 3640.0,
            to_ms: 9100.0,
        };
        let probe = |count, confirmation, verdict, evidence| Probe {
            count,
            elapsed_s: 12.25,
            verdict,
            shortcoming: (verdict != Verdict::Pass).then_some(Shortcoming::NoSpareCapacity {
                idle_pct: 1.5,
                needed_pct: 2.0,
            }),
            worst_headroom_pct: 40.0,
            xruns: 0,
            confirmation,
            program_locate: false,
            estimate: None,
            ranks: Vec::new(),
            storage: None,
            steady_start: !confirmation,
            ran_s: Some(9.4),
            evidence,
        };
        let probes = [
            probe(
                138,
                false,
                Verdict::Pass,
                Some(CapacityEvidence::of_stream(
                    Some(sustain(-0.5, 0.03)),
                    Some(18.7),
                    false,
                )),
            ),
            probe(
                146,
                true,
                Verdict::Marginal,
                Some(CapacityEvidence::of_stream(
                    Some(sustain(0.04, 0.06)),
                    Some(1.5),
                    false,
                )),
            ),
            probe(145, true, Verdict::Pass, None),
        ];
        let mut p = Page {
            html: String::new(),
            charts: 0,
        };
        probe_table(&mut p, &probes, "tracks");
        let rows: Vec<&str> = p
            .html
            .lines()
            .filter(|l| l.starts_with("<tr><td>"))
            .collect();
        assert_eq!(rows.len(), 3, "{}", p.html);
        assert_eq!(
            rows[0],
            "<tr><td>138</td><td>probe, steady start</td><td>pass</td><td>12.2</td><td>9.4</td><td>-0.500 ± 0.030</td><td>18.7</td></tr>"
        );
        assert!(
            rows[1].contains("<td>confirmation</td><td>marginal (no spare capacity)</td>")
                && rows[1].contains("<td>0.040 ± 0.060</td><td>1.5</td>"),
            "{}",
            rows[1]
        );
        // A probe without evidence (an older document, a workload that does not measure it).
        assert!(
            rows[2].ends_with("<td>–</td><td>–</td></tr>"),
            "{}",
            rows[2]
        );
    }
}
