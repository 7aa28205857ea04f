//! Results side by side: the workloads they share, each figure normalised so that the best result
//! is 100% (for figures where less is better, such as latency, the ratio is inverted so that a
//! higher percentage is still better). Results whose settings would make the comparison unfair are
//! refused, with the differing settings named.

use super::html::esc;
use crate::result::ResultDoc;
use crate::result::metrics::{self, Better};
use comfy_table::{CellAlignment, ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};
use serde_json::Value;
use std::fmt::Write;

/// Every setting of `v` that changes what a figure means, as (path, value in words).
fn fairness_settings(v: &Value, out: &mut Vec<(String, String)>) {
    for (path, key, x) in crate::result::fairness::settings(v) {
        out.push((path, setting_words(key, x)));
    }
}

/// A setting's value as a warning names it: a simulated device by its name, the real disk as
/// such, a format as it is written (`48k/24/mono`), a butler by its kind; never a JSON dump.
fn setting_words(key: &str, v: &Value) -> String {
    match (key, v) {
        ("device_model", Value::Null) => "the real disk".into(),
        ("device_model", d) => d
            .get("name")
            .and_then(Value::as_str)
            .map_or_else(|| d.to_string(), |n| format!("simulated {n}")),
        ("format", f) => serde_json::from_value::<crate::audio::Format>(f.clone())
            .map_or_else(|_| f.to_string(), |f| f.to_string()),
        (_, Value::String(s)) => s.clone(),
        (_, Value::Null) => "(not set)".into(),
        (_, Value::Object(o)) if o.get("kind").is_some_and(Value::is_string) => {
            let mut w = o["kind"].as_str().unwrap_or_default().to_string();
            for (k, x) in o.iter().filter(|(k, _)| *k != "kind") {
                w.push_str(&format!(" {k}={}", setting_words(k, x)));
            }
            w
        }
        (_, x) => x.to_string(),
    }
}

/// The workloads every document ran, in the first one's order.
fn shared_workloads(docs: &[(String, ResultDoc)]) -> Vec<String> {
    let Some((_, first)) = docs.first() else {
        return Vec::new();
    };
    first
        .sections
        .iter()
        .map(|s| s.workload.clone())
        .filter(|w| {
            docs.iter()
                .all(|(_, d)| d.sections.iter().any(|s| &s.workload == w))
        })
        .collect()
}

/// The settings in which the shared workloads differ, one line each ("play: spec.policy.chunk_bytes
/// is 262144 in A, 65536 in B"). Empty when the comparison is fair.
pub fn unfair_differences(docs: &[(String, ResultDoc)]) -> Vec<String> {
    let mut out = Vec::new();
    // A studio's figures are each workstation's, with the others streaming beside it: against
    // one computer alone, or a studio of another size, they answer another question.
    let workstations: Vec<u32> = docs
        .iter()
        .map(|(_, d)| d.studio.as_ref().map_or(1, |s| s.ranks))
        .collect();
    if workstations.iter().any(|&n| n != workstations[0]) {
        let each: Vec<String> = workstations
            .iter()
            .zip(docs)
            .map(|(n, (name, _))| format!("{n} in {name}"))
            .collect();
        out.push(format!(
            "workstations streaming at once: {}",
            each.join(", ")
        ));
    }
    for w in shared_workloads(docs) {
        let per_doc: Vec<Vec<(String, String)>> = docs
            .iter()
            .map(|(_, d)| {
                let mut v = Vec::new();
                if let Some(s) = d.sections.iter().find(|s| s.workload == w) {
                    fairness_settings(&s.settings, &mut v);
                }
                v
            })
            .collect();
        let mut keys: Vec<&String> = per_doc.iter().flatten().map(|(k, _)| k).collect();
        keys.sort();
        keys.dedup();
        for k in keys {
            let values: Vec<String> = per_doc
                .iter()
                .map(|v| {
                    v.iter()
                        .find(|(p, _)| p == k)
                        .map_or("(not set)".to_string(), |(_, x)| x.clone())
                })
                .collect();
            if values.iter().any(|x| x != &values[0]) {
                let each: Vec<String> = values
                    .iter()
                    .zip(docs)
                    .map(|(x, (name, _))| format!("{x} in {name}"))
                    .collect();
                out.push(format!("{w}: {k} is {}", each.join(", ")));
            }
        }
    }
    out
}

/// Percent of the best for each value, higher always better; `None` where a value cannot be
/// scored (the figure says nothing about better or worse, the best is zero, or the value is no
/// answer: NaN).
fn percents(values: &[f64], better: Better) -> Vec<Option<f64>> {
    let scored: Vec<f64> = values.iter().copied().filter(|v| !v.is_nan()).collect();
    let ranked = ranked(&scored, better);
    let mut it = ranked.into_iter();
    values
        .iter()
        .map(|v| {
            if v.is_nan() {
                None
            } else {
                it.next().flatten()
            }
        })
        .collect()
}

/// [`percents`] of values that are all answers.
fn ranked(values: &[f64], better: Better) -> Vec<Option<f64>> {
    match better {
        Better::Neither => vec![None; values.len()],
        Better::More => {
            let best = values.iter().copied().fold(f64::MIN, f64::max);
            values
                .iter()
                .map(|v| (best > 0.0).then(|| 100.0 * v / best))
                .collect()
        }
        Better::Less => {
            let best = values.iter().copied().fold(f64::MAX, f64::min);
            values
                .iter()
                .map(|v| match v {
                    v if *v == best => Some(100.0),
                    v if *v > 0.0 && best >= 0.0 => Some(100.0 * best / v),
                    _ => None,
                })
                .collect()
        }
    }
}

/// A compared value as shown: "no answer" for a search stopped before it had one.
fn shown_or_none(def: &metrics::Def, v: f64) -> String {
    if v.is_nan() {
        "no answer".into()
    } else {
        super::shown(def, v)
    }
}

/// One compared figure: a row of a shared workload, every result's median and its percentage
/// of the best.
pub struct Compared {
    pub row: String,
    pub def: &'static metrics::Def,
    pub values: Vec<f64>,
    pub percents: Vec<Option<f64>>,
    /// Each result's lowest and highest value and how many runs (searches) gave them.
    pub ranges: Vec<(f64, f64, usize)>,
}

/// The shared workloads (name, title and compared figures), each figure scored across the
/// results: every (row label, figure) that every result has, figures that describe rather than
/// score left out.
pub fn comparison(docs: &[(String, ResultDoc)]) -> Vec<(String, String, Vec<Compared>)> {
    let mut out = Vec::new();
    for w in shared_workloads(docs) {
        let sections: Vec<_> = docs
            .iter()
            .filter_map(|(_, d)| d.sections.iter().find(|s| s.workload == w))
            .collect();
        // A search stopped before its answer is not ranked: its figures are no answer.
        let unanswered: Vec<bool> = docs
            .iter()
            .zip(&sections)
            .map(|((_, d), s)| super::answer::of(d, s).is_some_and(|a| !a.answered))
            .collect();
        let mut figures = Vec::new();
        for row in &sections[0].rows {
            for fig in &row.figures {
                let Some(def) = metrics::lookup(&fig.name) else {
                    continue;
                };
                if def.better == Better::Neither {
                    continue;
                }
                let spreads: Option<Vec<&crate::stats::Spread>> = sections
                    .iter()
                    .map(|s| s.row(&row.label)?.get(def).map(|f| &f.spread))
                    .collect();
                let Some(spreads) = spreads else { continue };
                // A count is whole: a repeated search's is its median rounded down, as its
                // answer says it (never above the middle of an even number of searches).
                let count = COUNTS.iter().any(|d| d.name == def.name);
                let mut values: Vec<f64> = spreads
                    .iter()
                    .map(|f| if count { f.median.floor() } else { f.median })
                    .collect();
                let ranges = spreads
                    .iter()
                    .map(|f| (f.min, f.max, f.runs.len()))
                    .collect();
                for (v, _) in values.iter_mut().zip(&unanswered).filter(|(_, u)| **u) {
                    *v = f64::NAN;
                }
                figures.push(Compared {
                    row: row.label.clone(),
                    def,
                    percents: percents(&values, def.better),
                    values,
                    ranges,
                });
            }
        }
        if !figures.is_empty() {
            out.push((w, sections[0].title.clone(), figures));
        }
    }
    out
}

/// The shared workloads as tables: a row per (row label, figure) every result has, a column per
/// result with its value and its percentage of the best.
pub fn terminal(docs: &[(String, ResultDoc)], view: &super::terminal::View) -> String {
    let mut out = String::new();
    let simulated = docs.iter().all(|(_, d)| d.target.simulated.is_some());
    for (workload, title, figures) in comparison(docs) {
        let notes = spread_notes(&workload, &figures, docs, simulated);
        let mut t = Table::new();
        t.load_style(UTF8_FULL_CONDENSED)
            .set_content_arrangement(ContentArrangement::Dynamic);
        if !view.wide {
            t.set_width(u16::try_from(view.width).unwrap_or(u16::MAX));
        }
        let mut header = vec![String::new()];
        header.extend(docs.iter().map(|(name, _)| name.clone()));
        t.set_header(header);
        for c in &figures {
            let mut cells = vec![format!("{} · {}", c.row, c.def.header)];
            for (v, p) in c.values.iter().zip(&c.percents) {
                let shown = shown_or_none(c.def, *v);
                cells.push(match p {
                    Some(p) => format!("{shown} ({p:.0}%)"),
                    None => shown,
                });
            }
            t.add_row(cells);
        }
        for i in 1..=docs.len() {
            if let Some(c) = t.column_mut(i) {
                c.set_cell_alignment(CellAlignment::Right);
            }
        }
        out.push_str(&view.wrap(&title, "", "  "));
        out.push_str(&format!("{t}\n"));
        for n in &notes {
            out.push_str(&view.wrap(n, "  • ", "    "));
        }
        out.push('\n');
    }
    if out.is_empty() {
        out.push_str("these results share no workload with figures to compare\n");
    } else {
        out.push_str(&view.wrap("(each figure as a percentage of the best result: 100% is best, higher is better, latencies and times inverted; a search stopped before its answer is not ranked)", "", " "));
    }
    out
}

/// The counts a search answers: compared, they are said to lie within each other's spread or
/// not.
const COUNTS: [&metrics::Def; 4] = [
    &metrics::TRACKS,
    &metrics::PLAY_TRACKS,
    &metrics::RECORD_TRACKS,
    &metrics::VOICES,
];

/// Whether two results' counts differ by more than their searches' own spread, for each pair
/// of results and each count they share: repeated searches (`--runs N`) whose ranges meet lie
/// within each other's spread, and their difference is not the disks'; ranges apart are a
/// difference the repetitions show. Results of one search each say how to tell (on a simulated
/// device, which answers the same every time, nothing is said).
fn spread_notes(
    workload: &str,
    figures: &[Compared],
    docs: &[(String, ResultDoc)],
    simulated: bool,
) -> Vec<String> {
    let mut out = Vec::new();
    let searched = docs.iter().all(|(_, d)| {
        d.sections.iter().any(|s| {
            s.workload == workload
                && matches!(
                    s.detail,
                    Some(crate::result::Detail::Search(_) | crate::result::Detail::RealTime(_))
                )
        })
    });
    if !searched {
        return out;
    }
    for c in figures
        .iter()
        .filter(|c| COUNTS.iter().any(|d| d.name == c.def.name))
    {
        let what = format!("{} · {}", c.row, c.def.header);
        for i in 0..docs.len() {
            for j in i + 1..docs.len() {
                let (a, b) = (c.values[i], c.values[j]);
                if a.is_nan() || b.is_nan() {
                    continue;
                }
                let (ra, rb) = (c.ranges[i], c.ranges[j]);
                let (na, nb) = (&docs[i].0, &docs[j].0);
                let apart = 100.0 * (a - b).abs() / a.max(b).max(1.0);
                let range = |r: (f64, f64, usize)| {
                    if r.0 == r.1 {
                        format!("{:.0} in each of {} searches", r.0, r.2)
                    } else {
                        format!("{:.0} to {:.0} over {} searches", r.0, r.1, r.2)
                    }
                };
                if ra.2 >= 2 && rb.2 >= 2 {
                    let meet = ra.0 <= rb.1 && rb.0 <= ra.1;
                    out.push(if meet {
                        format!(
                            "{what}: {na} {a:.0} ({}) and {nb} {b:.0} ({}) lie within each other's spread: the {apart:.0}% between them is no more than the search's own",
                            range(ra),
                            range(rb)
                        )
                    } else {
                        format!(
                            "{what}: {na} {a:.0} ({}) and {nb} {b:.0} ({}): their ranges do not meet: the {apart:.0}% between them is more than either search's own spread",
                            range(ra),
                            range(rb)
                        )
                    });
                } else if !simulated {
                    out.push(format!(
                        "{what}: {apart:.0}% apart, from one search {}; `--runs 3` on both measures whether that is more than a search's own spread",
                        if ra.2 < 2 && rb.2 < 2 { "each" } else { "on one side" }
                    ));
                }
            }
        }
    }
    out
}

/// The figures a comparison draws as charts (every scored figure is in its tables): the ones a
/// reader compares disks by.
const CHARTED: [&metrics::Def; 6] = [
    &metrics::TRACKS,
    &metrics::PLAY_TRACKS,
    &metrics::RATE_MB_PER_S,
    &metrics::IOPS,
    &metrics::ACCESS_MS_MEAN,
    &metrics::LATENCY_US_P99,
];

/// The comparison as an HTML page: for each shared workload a table of every scored figure
/// (value and percentage of the best) and, for the main figures, bars of each result's
/// percentage per row; the settings that differ when compared anyway.
pub fn html(docs: &[(String, ResultDoc)], unfair: &[String]) -> crate::error::Result<String> {
    let names: Vec<&str> = docs.iter().map(|(n, _)| n.as_str()).collect();
    let mut o = super::html::head(&format!("trackbench: {}", names.join(" vs ")));
    html_heading(&mut o, docs, &names, unfair);
    let mut chart_no = 0;
    let simulated = docs.iter().all(|(_, d)| d.target.simulated.is_some());
    for (workload, title, figures) in comparison(docs) {
        let _ = write!(
            o,
            "<section><h2>{}</h2>\n<table><thead><tr><th></th>",
            esc(&title)
        );
        for n in &names {
            let _ = write!(o, "<th>{}</th>", esc(n));
        }
        o.push_str("</tr></thead><tbody>");
        for c in &figures {
            let _ = write!(o, "<tr><td>{} · {}</td>", esc(&c.row), esc(c.def.header));
            for (v, p) in c.values.iter().zip(&c.percents) {
                let shown = shown_or_none(c.def, *v);
                let _ = match p {
                    Some(p) => write!(o, "<td>{} ({p:.0}%)</td>", esc(&shown)),
                    None => write!(o, "<td>{}</td>", esc(&shown)),
                };
            }
            o.push_str("</tr>");
        }
        o.push_str("</tbody></table>\n");
        for n in spread_notes(&workload, &figures, docs, simulated) {
            let _ = writeln!(o, "<p class=\"note\">{}</p>", esc(&n));
        }
        for def in CHARTED {
            chart_no += html_chart(
                &mut o,
                (&workload, &title),
                def,
                &figures,
                &names,
                chart_no + 1,
            )?;
        }
        o.push_str("</section>\n");
    }
    let _ = writeln!(
        o,
        "<footer>trackbench {}</footer>\n</body>\n</html>",
        env!("CARGO_PKG_VERSION")
    );
    Ok(o)
}

/// The comparison page's heading: the results compared (target, device, when, headline), how
/// to read the percentages, and the settings that differ when compared anyway.
fn html_heading(o: &mut String, docs: &[(String, ResultDoc)], names: &[&str], unfair: &[String]) {
    let _ = writeln!(
        o,
        "<header><h1>trackbench comparison</h1><p class=\"sub\">{}</p></header>",
        esc(&names.join(" · "))
    );
    o.push_str("<table><thead><tr><th>result</th><th>target</th><th>device</th><th>started</th><th>headline</th></tr></thead><tbody>");
    for (n, d) in docs {
        let dev = d
            .target
            .device
            .as_ref()
            .map(|x| x.model.clone().unwrap_or_else(|| x.name.clone()))
            .unwrap_or_default();
        let _ = write!(
            o,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(n),
            esc(&d.target.path.display().to_string()),
            esc(&dev),
            esc(&d.started_at),
            esc(&super::summary::headline(d))
        );
    }
    o.push_str("</tbody></table>\n<p class=\"sub\">Each figure as a percentage of the best result: 100% is best, higher is better; for latencies and times the ratio is inverted.</p>\n");
    if !unfair.is_empty() {
        o.push_str(
            "<div class=\"warn\"><strong>Compared although the settings differ</strong><ul>",
        );
        for u in unfair {
            let _ = write!(o, "<li>{}</li>", esc(u));
        }
        o.push_str("</ul></div>\n");
    }
}

/// A chart of `def`'s percentages per row and result, numbered `no`, where the workload has the
/// figure: how many it drew (0 or 1).
fn html_chart(
    o: &mut String,
    (workload, title): (&str, &str),
    def: &metrics::Def,
    figures: &[Compared],
    names: &[&str],
    no: usize,
) -> crate::error::Result<usize> {
    let bars: Vec<(String, f64, String)> = figures
        .iter()
        .filter(|c| c.def.name == def.name)
        .flat_map(|c| {
            names
                .iter()
                .zip(&c.values)
                .zip(&c.percents)
                .filter_map(|((n, v), p)| {
                    Some((format!("{} · {n}", c.row), (*p)?, super::shown(c.def, *v)))
                })
        })
        .collect();
    if bars.is_empty() {
        return Ok(0);
    }
    let svg = super::charts::percent_bars(&format!("{workload}: {}", def.header), &bars)?;
    let _ = writeln!(
        o,
        "<figure class=\"chart\" id=\"chart-{no}\" data-chart=\"compare\">{svg}<figcaption>{}: {} as a percentage of the best, per row; the best is green.</figcaption></figure>",
        esc(title),
        esc(def.header)
    );
    Ok(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{Figure, Row, Section};
    use crate::stats::Spread;

    fn doc(chunk: u64, mb: f64, p99: f64) -> ResultDoc {
        let mut d: ResultDoc = serde_json::from_value(serde_json::json!({
            "schema_version": 4, "tool": {"name": "trackbench", "version": "0"}, "command": [],
            "started_at": "", "finished_at": "", "cached": false, "interrupted": false,
            "sections": [], "warnings": [],
            "target": {"path": "/x", "kind": "directory", "fs_type": null, "mount_point": null,
                "mount_options": null, "mount_source": null, "device": null, "total_bytes": null,
                "free_bytes": null, "size_bytes": null},
            "host": {"hostname": "h", "cpu_model": null, "cpus": 1, "memory_bytes": null,
                "kernel": "k", "os": "linux"}
        }))
        .unwrap();
        let fig = |name: &str, unit: &str, v: f64| Figure {
            name: name.into(),
            unit: unit.into(),
            spread: Spread::of(&[v]),
        };
        d.push(Section {
            workload: "seq".into(),
            title: "Sequential transfer".into(),
            settings: serde_json::json!({"block_bytes": chunk, "size_bytes": 1}),
            cached: false,
            interrupted: false,
            runs: 1,
            rows: vec![Row {
                label: "read".into(),
                figures: vec![
                    fig("rate_mb_per_s", "MB/s", mb),
                    fig("latency_us_p99", "µs", p99),
                    fig("span_bytes", "bytes", 5.0),
                ],
            }],
            findings: vec![],
            detail: None,
        });
        d
    }

    #[test]
    fn the_best_is_100_percent_and_latency_is_inverted() {
        let docs = vec![
            ("A".to_string(), doc(1 << 20, 500.0, 2000.0)),
            ("B".to_string(), doc(1 << 20, 250.0, 1000.0)),
        ];
        assert!(unfair_differences(&docs).is_empty());
        let t = terminal(&docs, &super::super::terminal::View::wide());
        assert!(t.contains("500 (100%)") && t.contains("250 (50%)"), "{t}");
        // p99 of 2 ms against 1 ms: B is best.
        assert!(t.contains("2 (50%)") && t.contains("1 (100%)"), "{t}");
        assert!(!t.contains("span"), "descriptions are not scored: {t}");
        assert_eq!(
            percents(&[0.0, 5.0], Better::Less),
            [Some(100.0), Some(0.0)]
        );
    }

    #[test]
    fn a_studio_and_one_computer_are_named_as_unfair() {
        let one = doc(262_144, 100.0, 1.0);
        let mut studio = doc(262_144, 100.0, 1.0);
        studio.studio = Some(crate::result::Studio {
            launcher: "mpirun".into(),
            ranks: 3,
            hosts: Vec::new(),
            lost_ranks: Vec::new(),
        });
        let d = unfair_differences(&[("A".into(), one), ("B".into(), studio)]);
        assert_eq!(d, ["workstations streaming at once: 1 in A, 3 in B"]);
    }

    #[test]
    fn results_with_different_block_sizes_are_named_as_unfair() {
        let docs = vec![
            ("A".to_string(), doc(1 << 20, 500.0, 2000.0)),
            ("B".to_string(), doc(65536, 250.0, 1000.0)),
        ];
        let d = unfair_differences(&docs);
        assert_eq!(d, ["seq: block_bytes is 1048576 in A, 65536 in B"]);
    }

    /// A document of `doc`'s with a search's section whose searches answered `answers`.
    fn searched(answers: &[f64], simulated: bool) -> ResultDoc {
        let mut d = doc(1 << 20, 100.0, 1.0);
        if simulated {
            d.target.simulated = Some("bw=200M".into());
        }
        d.push(Section {
            workload: "play".into(),
            title: "Most playback tracks".into(),
            settings: serde_json::json!({}),
            cached: false,
            interrupted: false,
            runs: answers.len() as u32,
            rows: vec![Row {
                label: "trackbench · serial".into(),
                figures: vec![Figure {
                    name: "tracks".into(),
                    unit: "tracks".into(),
                    spread: Spread::of(answers),
                }],
            }],
            findings: vec![],
            detail: Some(crate::result::Detail::Search(
                crate::result::search::SearchDetail {
                    wave_share: 1.0,
                    naive_tracks: 0.0,
                    first_guess_tracks: 0.0,
                    first_guess_parallel_tracks: 0.0,
                    rates_bytes_per_s: Default::default(),
                    searches: Vec::new(),
                    repetitions: Vec::new(),
                },
            )),
        });
        d
    }

    #[test]
    fn repeated_answers_are_said_to_lie_within_each_others_spread_or_not() {
        let view = super::super::terminal::View::wide();
        let t = terminal(
            &[
                ("A".into(), searched(&[104.0, 97.0, 106.0], false)),
                ("B".into(), searched(&[95.0, 98.0, 101.0], false)),
            ],
            &view,
        );
        assert!(
            t.contains("A 104 (97 to 106 over 3 searches) and B 98 (95 to 101 over 3 searches) lie within each other's spread"),
            "{t}"
        );
        let t = terminal(
            &[
                ("A".into(), searched(&[144.0, 144.0], false)),
                ("B".into(), searched(&[130.0, 131.0], false)),
            ],
            &view,
        );
        assert!(
            t.contains("A 144 (144 in each of 2 searches) and B 130 (130 to 131 over 2 searches): their ranges do not meet: the 10% between them"),
            "{t}"
        );
        let t = terminal(
            &[
                ("A".into(), searched(&[104.0], false)),
                ("B".into(), searched(&[98.0, 99.0], false)),
            ],
            &view,
        );
        assert!(
            t.contains("6% apart, from one search on one side; `--runs 3` on both"),
            "{t}"
        );
        // A simulated device answers the same every time: nothing to say.
        let t = terminal(
            &[
                ("A".into(), searched(&[104.0], true)),
                ("B".into(), searched(&[98.0], true)),
            ],
            &view,
        );
        assert!(!t.contains("spread") && !t.contains("apart"), "{t}");
        // The page says it too.
        let h = html(
            &[
                ("A".into(), searched(&[104.0, 97.0, 106.0], false)),
                ("B".into(), searched(&[95.0, 98.0, 101.0], false)),
            ],
            &[],
        )
        .unwrap();
        assert!(
            h.contains("lie within each other&#39;s spread")
                || h.contains("lie within each other's spread"),
            "{h}"
        );
    }
}
