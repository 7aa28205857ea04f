//! A studio run in a user's words: how many workstations played how many tracks each at once,
//! what the shared storage delivered in all, and each host's row beside it. The terminal, the
//! HTML and Markdown reports all take their lines and rows from here.

use crate::result::metrics::{self as m, Def};
use crate::result::search::CapacityReport;
use crate::result::{Detail, ResultDoc, Section, Studio};
use crate::units::fmt_figure;
use crate::verdict::Verdict;

/// The figures a host's row shows, in this order, where the host has them.
const HOST_FIGURES: [&Def; 13] = [
    &m::XRUNS,
    &m::DROPOUTS,
    &m::WORST_HEADROOM_PCT,
    &m::SHORTFALL_PCT,
    &m::READ_MB_PER_S,
    &m::WRITE_MB_PER_S,
    &m::STREAMED_MB_PER_S,
    &m::RATE_MB_PER_S,
    &m::IOPS,
    &m::STONEWALL_MB_PER_S,
    &m::STONEWALL_IOPS,
    &m::READ_LATENCY_US_P99,
    &m::LATENCY_US_P99,
];

/// What the storage delivered in all: these figures add up over the hosts. A classic
/// transfer's total is the stonewalled one (while every host was running): after the first host
/// finished, the others had the storage to fewer.
const TOTALS: [&Def; 5] = [
    &m::READ_MB_PER_S,
    &m::WRITE_MB_PER_S,
    &m::STREAMED_MB_PER_S,
    &m::STONEWALL_MB_PER_S,
    &m::STONEWALL_IOPS,
];

/// One workstation's row for one section: its verdict (for a search, at the studio's answer)
/// and its figures.
#[derive(Debug, Clone, PartialEq)]
pub struct HostRow {
    pub rank: u32,
    pub hostname: String,
    /// What this workstation ran (`play`, `record` … : its roles may differ).
    pub role: String,
    pub verdict: Option<Verdict>,
    pub figures: Vec<(&'static Def, f64)>,
    pub skew_ms_median: f64,
    pub skew_ms_max: f64,
}

/// One section of a studio run: its answer in words and every host's row.
#[derive(Debug, Clone, PartialEq)]
pub struct StudioSection {
    pub title: String,
    pub words: String,
    pub hosts: Vec<HostRow>,
    /// The figures that add up over the hosts, added up.
    pub totals: Vec<(&'static Def, f64)>,
}

/// The main search of a searching section.
fn main_search(s: &Section) -> Option<&CapacityReport> {
    match s.detail.as_ref()? {
        Detail::Search(d) => d.searches.first(),
        _ => None,
    }
}

/// The studio's sections: one per section of rank 0's document.
pub fn sections(doc: &ResultDoc) -> Vec<StudioSection> {
    let Some(st) = &doc.studio else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, s) in doc.sections.iter().enumerate() {
        if main_search(s).is_some() || s.rows.len() <= 1 {
            out.push(section(st, i, s, 0));
        } else {
            // A classic section's rows are measurements of their own (write, then read; each
            // block size): each has its hosts and its total.
            for k in 0..s.rows.len() {
                let mut sec = section(st, i, s, k);
                sec.title = format!("{}: {}", s.title, s.rows[k].label);
                out.push(sec);
            }
        }
    }
    out
}

/// Section `i` of a studio's run (its row `k` for a classic workload): what the workstations
/// did together, each host's row, and the totals.
fn section(st: &Studio, i: usize, s: &Section, k: usize) -> StudioSection {
    let n = st.ranks;
    let (words, hosts) = match main_search(s) {
        Some(search) => search_hosts(st, i, s, search),
        None => (
            format!("{n} workstations ran it at once; each host's row:"),
            run_hosts(st, i, k),
        ),
    };
    let totals = TOTALS
        .iter()
        .filter_map(|d| {
            let vals: Vec<f64> = hosts
                .iter()
                .filter_map(|h| h.figures.iter().find(|f| f.0.name == d.name).map(|f| f.1))
                .collect();
            (!vals.is_empty() && vals.len() == hosts.len()).then(|| (*d, vals.iter().sum()))
        })
        .collect();
    StudioSection {
        title: s.title.clone(),
        words,
        hosts,
        totals,
    }
}

/// A search's answer for the studio in words, and each host at the answer: the last probe
/// there, the confirmation if there was one.
fn search_hosts(
    st: &Studio,
    i: usize,
    s: &Section,
    search: &CapacityReport,
) -> (String, Vec<HostRow>) {
    let n = st.ranks;
    let unit = if s.workload == "sampler" {
        "voices"
    } else {
        "tracks"
    };
    let each = search.play_tracks + search.record_tracks;
    let cap = &search.capacity;
    let at_least = if search.limited_by.is_some() {
        "at least "
    } else {
        ""
    };
    let mut words = if cap.answer == 0 {
        format!("{n} workstations: not even 1 {unit} each passed on every one at once")
    } else {
        format!(
            "{n} workstations × {at_least}{each} {unit} = {at_least}{} {unit} at once, with no dropout on any of them ({})",
            u64::from(n) * u64::from(each),
            search.label
        )
    };
    let mut hosts = Vec::new();
    if let Some(p) = cap.probes.iter().rev().find(|p| p.count == cap.answer) {
        if let Some(storage) = p.storage {
            words.push_str(&storage_words(&storage));
        }
        for r in &p.ranks {
            let figures = HOST_FIGURES
                .iter()
                .filter_map(|d| r.figures.get(d.name).map(|v| (*d, *v)))
                .collect();
            hosts.push(host_row(st, i, r.rank, Some(r.verdict), figures));
        }
    }
    (words, hosts)
}

/// Each host's row `k` of section `i`, its verdict read from the row's label.
fn run_hosts(st: &Studio, i: usize, k: usize) -> Vec<HostRow> {
    let mut hosts = Vec::new();
    for h in &st.hosts {
        let Some(hs) = h.sections.get(i) else {
            continue;
        };
        for r in hs.rows.iter().skip(k).take(1) {
            let figures = HOST_FIGURES
                .iter()
                .filter_map(|d| r.get(d).map(|f| (*d, f.spread.median)))
                .collect();
            let verdict = r.label.rsplit(": ").next().and_then(|w| {
                [
                    Verdict::Pass,
                    Verdict::TooShort,
                    Verdict::Marginal,
                    Verdict::Fail,
                ]
                .into_iter()
                .find(|v| v.word() == w)
            });
            hosts.push(host_row(st, i, h.rank, verdict, figures));
        }
    }
    hosts
}

/// A host's row: its name, its part in section `i`, its verdict and figures, and how far its
/// clock's starts were from the others'.
fn host_row(
    st: &Studio,
    i: usize,
    rank: u32,
    verdict: Option<Verdict>,
    figures: Vec<(&'static Def, f64)>,
) -> HostRow {
    let host = st.hosts.get(rank as usize);
    let (skew_ms_median, skew_ms_max) = host.map_or((0.0, 0.0), |h| {
        (h.start_skew_ms_median, h.start_skew_ms_max)
    });
    HostRow {
        rank,
        hostname: host.map_or_else(|| format!("rank {rank}"), |h| h.host.hostname.clone()),
        role: host
            .and_then(|h| h.sections.get(i))
            .map_or_else(String::new, |s| s.workload.clone()),
        verdict,
        figures,
        skew_ms_median,
        skew_ms_max,
    }
}

/// How the storage kept up with every workstation's rings together, at a search's answer (the
/// evidence the studio's verdict judged: see `crate::verdict::evidence::CapacityEvidence::pooled`).
fn storage_words(st: &crate::verdict::evidence::CapacityEvidence) -> String {
    let mut parts = Vec::new();
    if let Some(s) = st.shortfall_pct {
        parts.push(format!(
            "mean shortfall {s:.2}% of the demand (noise {:.2}%)",
            st.noise_pct
        ));
    }
    if let Some(i) = st.idle_pct {
        parts.push(format!("every butler idle at least {i:.1}% of the time"));
    }
    if parts.is_empty() {
        return String::new();
    }
    format!(
        "; the storage judged on every workstation's rings together: {}",
        parts.join(", ")
    )
}

/// The studio's first lines: how many workstations, launched how, and what stopped it if
/// something did.
pub fn intro(doc: &ResultDoc) -> Option<String> {
    let st = doc.studio.as_ref()?;
    let mut s = format!(
        "Studio: {} workstations on one shared storage ({}), started by {}",
        st.ranks,
        doc.target.path.display(),
        if st.launcher.is_empty() {
            "an MPI launcher"
        } else {
            &st.launcher
        }
    );
    if doc.interrupted {
        s.push_str("; interrupted");
        if !st.lost_ranks.is_empty() {
            let ranks: Vec<String> = st.lost_ranks.iter().map(|r| r.to_string()).collect();
            s.push_str(&format!(
                " when rank {} stopped without cleaning up (killed, or its host lost)",
                ranks.join(", ")
            ));
        }
    }
    Some(s)
}

/// A total in words: "19.6 MB/s read".
pub fn total_words(totals: &[(&'static Def, f64)]) -> String {
    totals
        .iter()
        .map(|(d, v)| format!("{} {}", fmt_figure(*v), d.header))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A host row's column headers (the figures any host has), and each row's cells.
pub fn table(sec: &StudioSection) -> (Vec<String>, Vec<Vec<String>>) {
    let defs: Vec<&Def> = HOST_FIGURES
        .iter()
        .copied()
        .filter(|d| {
            sec.hosts
                .iter()
                .any(|h| h.figures.iter().any(|f| f.0.name == d.name))
        })
        .collect();
    let roles = sec.hosts.iter().any(|h| h.role != sec.hosts[0].role);
    let mut header = vec!["rank".to_string(), "host".into()];
    if roles {
        header.push("role".into());
    }
    header.push("verdict".into());
    header.extend(defs.iter().map(|d| d.header.to_string()));
    header.push("start skew ms (median / max)".into());
    let rows = sec
        .hosts
        .iter()
        .map(|h| {
            let mut r = vec![h.rank.to_string(), h.hostname.clone()];
            if roles {
                r.push(h.role.clone());
            }
            r.push(h.verdict.map_or("-".into(), |v| v.word().to_string()));
            r.extend(defs.iter().map(|d| {
                h.figures
                    .iter()
                    .find(|f| f.0.name == d.name)
                    .map_or("-".into(), |f| super::shown(d, f.1))
            }));
            r.push(format!(
                "{} / {}",
                fmt_figure(h.skew_ms_median),
                fmt_figure(h.skew_ms_max)
            ));
            r
        })
        .collect();
    (header, rows)
}
