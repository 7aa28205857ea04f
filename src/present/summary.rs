//! What a result says in a user's words: the standard suite's summary (the real-time answer
//! first, the naive count beside it) and the one-line headline a stored result is listed by.
//! Every presenter uses these, so the terminal, the reports and `history` say the same thing.

use super::answer::Answer;
use crate::result::metrics::{self as m, Def};
use crate::result::search::SearchLimit;
use crate::result::{Detail, ResultDoc, Section};
use crate::units::{fmt_figure, fmt_size};
use crate::workloads::realtime::{HDR_ROW, PLAY_ROW, RECORD_ROW};

fn median(s: Option<&Section>, row: &str, fig: &Def) -> Option<f64> {
    s?.row(row)?.get(fig).map(|f| f.spread.median)
}

/// What stopped the search behind `row` of a searching section short of a failing count.
pub fn limit_of(s: &Section, row: &str) -> Option<SearchLimit> {
    match s.detail.as_ref()? {
        Detail::RealTime(r) => {
            match row {
                PLAY_ROW => r.play.as_ref(),
                RECORD_ROW => r.record.as_ref(),
                HDR_ROW => r.hdr.as_ref(),
                _ => None,
            }?
            .limited_by
        }
        Detail::Search(d) => d.searches.iter().find(|x| x.label == row)?.limited_by,
        _ => None,
    }
}

/// The standard suite's summary, for a `run` result (None for other commands, or a document
/// too old to say its format).
pub fn summary(doc: &ResultDoc) -> Option<String> {
    if !doc.is_suite() {
        return None;
    }
    let format = doc.format()?;
    let sec = |w: &str| doc.sections.iter().find(|s| s.workload == w);
    let mut lines = vec![format!(
        "Summary ({format}, {} kB/s per track)",
        format.bytes_per_second() / 1000
    )];
    let seq_read = (
        median(sec("seq"), "read", &m::RATE_MB_PER_S),
        median(sec("seq"), "read", &m::NAIVE_TRACKS),
    );
    if let Some(rt) = sec("realtime") {
        lines.extend(realtime_lines(rt, &format.to_string(), seq_read));
    }
    lines.extend(daw_lines(doc));
    if let (Some(mb), Some(t)) = seq_read {
        lines.push(format!("  sequential read   {} MB/s: {} tracks if streaming cost nothing (the naive, video-style count)", fmt_figure(mb), fmt_figure(t)));
    }
    if let Some(mb) = median(sec("seq"), "write", &m::RATE_MB_PER_S) {
        lines.push(format!("  sequential write  {} MB/s", fmt_figure(mb)));
    }
    if let Some(s) = sec("sweep") {
        // The most tracks whose buffers fit in memory (a block size whose count needs more
        // than the process may pin is counted at what fits).
        let best = crate::workloads::sweep::best_block(s);
        let small = s
            .rows
            .first()
            .and_then(|r| Some((r, r.get(&m::TRACKS)?.spread.median)));
        if let (Some((b, bt)), Some((sm, st))) = (best, small) {
            let ram = bt * b.median(&m::RAM_PER_TRACK_BYTES).unwrap_or(0.0);
            lines.push(format!(
                "  8 files streamed  {} tracks at {} blocks ({} of buffers); {} at {}",
                fmt_figure(bt),
                b.label,
                fmt_size(ram as u64),
                fmt_figure(st),
                sm.label
            ));
        }
    }
    if let Some(s) = sec("seek").and_then(|s| s.rows.first())
        && let (Some(i), Some(a)) = (s.get(&m::IOPS), s.get(&m::ACCESS_MS_MEAN))
    {
        lines.push(format!(
            "  random access     {} seeks/s, {} ms each",
            fmt_figure(i.spread.median),
            fmt_figure(a.spread.median)
        ));
    }
    lines.push(
        "  (the classic figures' tracks are throughput ÷ per-track rate, with no real-time deadlines checked)"
            .into(),
    );
    Some(lines.join("\n") + "\n")
}

/// The sampler, the template load and the export in a user's words.
fn daw_lines(doc: &ResultDoc) -> Vec<String> {
    let sec = |w: &str| doc.sections.iter().find(|s| s.workload == w);
    [
        sec("sampler").and_then(|s| sampler_line(doc, s)),
        sec("load").and_then(load_line),
        sec("bounce").and_then(bounce_line),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// The sampler's most voices, beside the naive count.
fn sampler_line(doc: &ResultDoc, s: &Section) -> Option<String> {
    let row = s.rows.first()?;
    let v = row.get(&m::VOICES)?;
    let notes = s
        .settings
        .get("notes_per_s")
        .and_then(|n| n.as_f64())
        .unwrap_or(0.0);
    let limit = limit_of(s, &row.label);
    Some(format!(
        "  It streams {}{:.0} sampler voices at {notes} notes/s ({} preloads){}, where sequential MB/s would promise {}.",
        if limit.is_some() {
            "at least "
        } else {
            "about "
        },
        v.spread.median,
        s.settings
            .get("preload_bytes")
            .and_then(|p| p.as_u64())
            .map_or("?".into(), fmt_size),
        match limit {
            Some(SearchLimit::MaxTracks) if doc.is_suite() =>
                " (the suite stops there; `trackbench sampler --find-max` searches further)"
                    .to_string(),
            Some(w) => format!(" (the search stopped at {})", w.words()),
            None => String::new(),
        },
        row.get(&m::NAIVE_VOICES)
            .map_or("?".into(), |n| format!("{:.0}", n.spread.median))
    ))
}

/// The template load, cold and cached.
fn load_line(s: &Section) -> Option<String> {
    let cold = s.rows.first()?.get(&m::LOAD_S)?;
    let files = s
        .settings
        .get("library")
        .and_then(|l| l.get("files"))
        .and_then(|f| f.as_u64())
        .unwrap_or(0);
    let warm = s
        .rows
        .iter()
        .find(|r| r.label.starts_with("warm"))
        .and_then(|r| r.get(&m::LOAD_S));
    Some(format!(
        "  It loads a {files}-sample template in {} s cold{}.",
        fmt_figure(cold.spread.median),
        warm.map_or(String::new(), |w| format!(
            " ({} s when cached)",
            fmt_figure(w.spread.median)
        ))
    ))
}

/// The export, against real time.
fn bounce_line(s: &Section) -> Option<String> {
    let r = s
        .row(crate::workloads::bounce::RENDER_ROW)?
        .get(&m::X_REAL_TIME)?;
    let e = s
        .row(crate::workloads::bounce::EXPORT_ROW)?
        .get(&m::X_REAL_TIME)?;
    let tracks = s
        .settings
        .get("tracks")
        .and_then(|t| t.as_u64())
        .unwrap_or(0);
    Some(format!(
        "  It bounces {tracks} tracks {:.0} times faster than real time, and normalises them to 24-bit {:.0} times faster.",
        r.spread.median, e.spread.median
    ))
}

/// The real-time answer in a user's words, with the naive count beside it: the sequential read
/// the suite measured where it did, else the search's own estimate.
fn realtime_lines(
    rt: &Section,
    format: &str,
    (seq_mb, seq_tracks): (Option<f64>, Option<f64>),
) -> Vec<String> {
    let mut lines = Vec::new();
    let fig = |row: &str, f: &Def| median(Some(rt), row, f);
    let max_tracks = rt.settings.get("max_tracks").and_then(|m| m.as_u64());
    let mut limits: Vec<String> = Vec::new();
    let mut count = |row: &str, f: &Def| -> Option<String> {
        let n = fig(row, f)?;
        Some(match limit_of(rt, row) {
            Some(w) => {
                let words = match (w, max_tracks) {
                    (SearchLimit::MaxTracks, Some(m)) => format!("the suite's limit of {m} tracks"),
                    _ => w.words().to_string(),
                };
                if !limits.contains(&words) {
                    limits.push(words);
                }
                format!("at least {n:.0}")
            }
            None => format!("{n:.0}"),
        })
    };
    let ring = rt
        .settings
        .get("spec")
        .and_then(|s| serde_json::from_value::<crate::engine::StreamSpec>(s.clone()).ok());
    let rings = ring.map_or(String::new(), |s| {
        format!(
            " ({} rings = {:.1} s, one read at a time)",
            fmt_size(s.ring_bytes()),
            s.ring_s()
        )
    });
    let play = count(PLAY_ROW, &m::TRACKS);
    let record = count(RECORD_ROW, &m::TRACKS);
    let hdr = count(HDR_ROW, &m::PLAY_TRACKS);
    match (play, record) {
        (Some(p), Some(r)) => lines.push(format!(
            "  This folder plays {p} tracks and records {r} of {format} in real time{rings}."
        )),
        (Some(p), None) => lines.push(format!(
            "  This folder plays {p} tracks of {format} in real time{rings}."
        )),
        _ => {}
    }
    match (seq_mb, seq_tracks, fig(PLAY_ROW, &m::NAIVE_TRACKS)) {
        (Some(mb), Some(t), _) => lines.push(format!(
            "  A sequential-MB/s benchmark would promise {t:.0} (its sequential read, {} MB/s, ÷ the per-track rate).",
            fmt_figure(mb)
        )),
        (_, _, Some(naive)) => lines.push(format!(
            "  A sequential-MB/s benchmark would promise {naive:.0}."
        )),
        _ => {}
    }
    if let (Some(p), Some(m)) = (hdr, fig(HDR_ROW, &m::RECORD_TRACKS)) {
        lines.push(format!("  While recording {m:.0} tracks it plays {p}."));
    }
    for w in limits {
        lines.push(format!(
            "  (\"at least\": the search stopped at {w}; `trackbench play|record|hdr --find-max` searches further)"
        ));
    }
    lines
}

/// The figure a result is known by, in a few words: the real-time answer where there is one,
/// else the first section's main figure. A search stopped by a limit says "at least".
/// A stored result's headline as this build words it, from its document: a result saved by an
/// earlier build (before a search stopped at a limit said "at least") reads as a new one would.
/// The saved headline stands where the document cannot be read back.
pub fn stored_headline(r: &crate::store::Stored) -> String {
    r.document
        .as_ref()
        .map_or_else(|| r.headline.clone(), headline)
}

pub fn headline(doc: &ResultDoc) -> String {
    let line = single_headline(doc);
    match &doc.studio {
        Some(st) => {
            let each = super::studio::sections(doc)
                .into_iter()
                .find(|s| s.words.contains(" × "))
                .map(|s| s.words);
            match each {
                Some(w) => format!("studio: {w}"),
                None => format!("studio of {}: {line}", st.ranks),
            }
        }
        None => line,
    }
}

/// A section's headline `line` as the history lists it: a search stopped before its answer says
/// so ("no answer, stopped after 23 s"), never a count; a repeated one gives its median and
/// range; a simulated device is named.
fn as_stored(doc: &ResultDoc, s: &Section, what: &str, line: String) -> String {
    let searched = matches!(s.detail, Some(Detail::Search(_) | Detail::RealTime(_)));
    let line = match super::answer::of(doc, s) {
        Some(a) if searched && !a.answered => {
            let after = super::answer::ran_s(doc)
                .map_or(String::new(), |t| format!(", stopped after {t:.0} s"));
            format!("{what}: {}{after}", a.count)
        }
        // A repeated search is known by its median and range, never an even number's mean.
        Some(Answer {
            range: Some(range),
            count,
            unit,
            ..
        }) if searched => format!("{what}: {count} {unit} ({range})"),
        _ => line,
    };
    match super::answer::simulated(doc, s) {
        Some(name) => format!("{line} (simulated: {name})"),
        None => line,
    }
}

fn single_headline(doc: &ResultDoc) -> String {
    const MAIN: [&Def; 6] = [
        &m::TRACKS,
        &m::VOICES,
        &m::LOAD_S,
        &m::X_REAL_TIME,
        &m::RATE_MB_PER_S,
        &m::IOPS,
    ];
    // Sections with a count of tracks or voices first: a suite's sequential transfer runs
    // before its real-time answer, which is still what the result is known by.
    let counts = |s: &&Section| {
        s.rows
            .iter()
            .any(|r| r.get(&m::TRACKS).is_some() || r.get(&m::VOICES).is_some())
    };
    let ordered = doc
        .sections
        .iter()
        .filter(counts)
        .chain(doc.sections.iter().filter(|s| !counts(s)));
    for s in ordered {
        for row in &s.rows {
            if let Some((def, f)) = MAIN.iter().find_map(|d| row.get(d).map(|f| (*d, f))) {
                let what = if s.workload == "realtime" || row.label.starts_with(&s.workload) {
                    row.label.clone()
                } else {
                    format!("{} {}", s.workload, row.label)
                };
                let at_least = if limit_of(s, &row.label).is_some() {
                    "at least "
                } else {
                    ""
                };
                // A streaming row's label already says its count and verdict ("4 tracks: PASS").
                let line = if (def.name == m::TRACKS.name && row.label.contains("tracks"))
                    || (def.name == m::VOICES.name && row.label.contains("voices"))
                {
                    what.clone()
                } else {
                    format!(
                        "{what}: {at_least}{} {}",
                        fmt_figure(f.spread.median),
                        def.unit
                    )
                };
                return as_stored(doc, s, &what, line);
            }
        }
    }
    if doc.sections.is_empty() {
        "no figures".into()
    } else {
        doc.sections[0].title.clone()
    }
}
