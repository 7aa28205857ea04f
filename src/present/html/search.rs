//! A search in the HTML report: its probes over time and in a table with what each verdict
//! rested on, and the headline chart of the answer beside the naive count.

use super::{Page, esc};
use crate::error::Result;
use crate::present::charts::{self, BarSeries, ProbePoint};
use crate::result::ResultDoc;
use crate::result::metrics as m;
use crate::result::search::{CapacityReport, Probe};
use crate::verdict::Verdict;
use plotters::style::RGBColor;
use std::fmt::Write;

fn verdict_color(v: Verdict) -> RGBColor {
    match v {
        Verdict::Pass => charts::GREEN,
        Verdict::TooShort => charts::GREY,
        Verdict::Marginal => charts::ORANGE,
        Verdict::Fail => charts::RED,
    }
}

/// A search's probes over time: count against when each probe ended, by verdict.
pub(super) fn probe_chart(p: &mut Page, c: &CapacityReport, workload: &str) -> Result<()> {
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
        let verdict = crate::present::words::probe_verdict(pr.verdict, pr.shortcoming);
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

/// The real-time answers beside the naive counts, for every row that has both: tracks, and
/// sampler voices.
pub(super) fn headline_chart(p: &mut Page, doc: &ResultDoc) -> Result<()> {
    let answers = answers_beside_naive(doc);
    let cats: Vec<String> = answers.iter().map(|a| a.0.clone()).collect();
    let real: Vec<f64> = answers.iter().map(|a| a.1).collect();
    let naive: Vec<f64> = answers.iter().map(|a| a.2).collect();
    let real_words: Vec<String> = answers.into_iter().map(|a| a.3).collect();
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

/// Every row with a real-time count (tracks or voices) beside its naive count: its name, the
/// two counts, and the real one in words ("≥ " where a limit stopped the search).
fn answers_beside_naive(doc: &ResultDoc) -> Vec<(String, f64, f64, String)> {
    let mut out = Vec::new();
    for s in &doc.sections {
        for r in &s.rows {
            let pair = [
                (&m::TRACKS, &m::NAIVE_TRACKS),
                (&m::VOICES, &m::NAIVE_VOICES),
            ]
            .into_iter()
            .find_map(|(a, b)| Some((a, r.get(a)?, r.get(b)?)));
            let Some((def, t, n)) = pair else {
                continue;
            };
            // A search stopped by a limit found at least its answer.
            let at_least = crate::present::summary::limit_of(s, &r.label).is_some();
            let real = format!("{}{:.0}", if at_least { "≥ " } else { "" }, t.spread.median);
            let what = if doc.sections.len() > 1 && s.workload != "realtime" {
                format!("{} {}", s.workload, r.label)
            } else {
                r.label.clone()
            };
            let cat = if def.name == m::VOICES.name {
                format!("{what} (voices)")
            } else {
                what
            };
            out.push((cat, t.spread.median, n.spread.median, real));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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
