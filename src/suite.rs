//! The standard suite of `trackbench run` and its summary: what a newcomer's first run measures
//! and the few lines that say it in tracks. Library code, so that every presenter (terminal,
//! document, report) sees the same thing.

use crate::audio::Format;
use crate::metrics::{self as m, Def};
use crate::result::{ResultDoc, Section};
use crate::units::{fmt_figure, fmt_size};
use crate::workloads::Workload;
use crate::workloads::access::Access;
use crate::workloads::mix::Mix;
use crate::workloads::realtime::{self, HDR_ROW, PLAY_ROW, RECORD_ROW, RealTime};
use crate::workloads::seek::Seek;
use crate::workloads::seq::{Seq, SeqMode};
use crate::workloads::stream::SearchLimit;
use crate::workloads::sweep::{DEFAULT_BLOCKS, Sweep};
use crate::workloads::zones::Zones;

/// The standard suite of `trackbench run`: the real-time answer first (the default engine's
/// most playback, record, and playback-while-recording tracks), then every classic measurement,
/// shortened to about a minute.
pub fn standard(format: Format) -> Vec<Box<dyn Workload>> {
    const SPAN: u64 = 1 << 30;
    vec![
        // Capped so that run stays within minutes on fast disks (uncapped, this machine's disk
        // took 35 min at ~9500 tracks); the summary says "at least" when it stops there.
        Box::new(RealTime {
            format,
            max_tracks: Some(1000),
        }),
        Box::new(Seq {
            block: 1 << 20,
            size: 512 << 20,
            mode: SeqMode::Both,
        }),
        Box::new(Seek {
            block: 4096,
            duration: std::time::Duration::from_secs(5),
            size: SPAN,
            rpm: None,
        }),
        Box::new(Access {
            block: 64 << 10,
            duration: std::time::Duration::from_secs(2),
            size: SPAN,
        }),
        Box::new(Mix {
            seq_block: 32 << 10,
            random_block: 8 << 10,
            read_pct: 70,
            duration: std::time::Duration::from_secs(3),
            size: SPAN,
        }),
        Box::new(Zones {
            points: 16,
            block: 1 << 20,
            bytes_per_point: 32 << 20,
            duration: std::time::Duration::from_millis(500),
            size: SPAN,
        }),
        Box::new(Sweep {
            files: 8,
            blocks: DEFAULT_BLOCKS.to_vec(),
            duration: std::time::Duration::from_millis(1500),
            file_size: 64 << 20,
            buffer: std::time::Duration::from_secs(2),
        }),
    ]
}

fn median(s: Option<&Section>, row: &str, fig: &Def) -> Option<f64> {
    s?.row(row)?.get(fig).map(|f| f.spread.median)
}

/// The suite's headline: what the figures mean in tracks, the real-time answer first.
pub fn summary(doc: &ResultDoc, format: &Format) -> String {
    let sec = |w: &str| doc.sections.iter().find(|s| s.workload == w);
    let mut lines = vec![format!(
        "Summary ({format}, {} kB/s per track)",
        format.bytes_per_second() / 1000
    )];
    if let Some(rt) = sec("realtime") {
        lines.extend(realtime_lines(rt, format));
    }
    if let (Some(mb), Some(t)) = (
        median(sec("seq"), "read", &m::RATE_MB_PER_S),
        median(sec("seq"), "read", &m::NAIVE_TRACKS),
    ) {
        lines.push(format!("  sequential read   {} MB/s: {} tracks if streaming cost nothing (the naive, video-style count)", fmt_figure(mb), fmt_figure(t)));
    }
    if let Some(mb) = median(sec("seq"), "write", &m::RATE_MB_PER_S) {
        lines.push(format!("  sequential write  {} MB/s", fmt_figure(mb)));
    }
    if let Some(s) = sec("sweep") {
        let best = s
            .rows
            .iter()
            .filter_map(|r| Some((r, r.get(&m::TRACKS)?.spread.median)))
            .max_by(|a, b| a.1.total_cmp(&b.1));
        let small = s
            .rows
            .first()
            .and_then(|r| Some((r, r.get(&m::TRACKS)?.spread.median)));
        if let (Some((b, bt)), Some((sm, st))) = (best, small) {
            let ram = b.get(&m::RAM_TOTAL_BYTES).map_or(0.0, |f| f.spread.median);
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
    lines.join("\n") + "\n"
}

/// The real-time answer in a user's words, with the naive count beside it.
fn realtime_lines(rt: &Section, format: &Format) -> Vec<String> {
    let mut lines = Vec::new();
    let fig = |row: &str, f: &Def| median(Some(rt), row, f);
    let none = serde_json::Value::Null;
    let extra = rt.extra.as_ref().unwrap_or(&none);
    let max_tracks = rt.settings.get("max_tracks").and_then(|m| m.as_u64());
    let mut limits: Vec<String> = Vec::new();
    let mut count = |row: &str, f: &Def, key: &str| -> Option<String> {
        let n = fig(row, f)?;
        Some(match realtime::limited_by(extra, key) {
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
        .and_then(|s| serde_json::from_value::<crate::stream::StreamSpec>(s.clone()).ok());
    let rings = ring.map_or(String::new(), |s| {
        format!(
            " ({} rings = {:.1} s, one read at a time)",
            fmt_size(s.ring_bytes()),
            s.ring_s()
        )
    });
    let play = count(PLAY_ROW, &m::TRACKS, "play");
    let record = count(RECORD_ROW, &m::TRACKS, "record");
    let hdr = count(HDR_ROW, &m::PLAY_TRACKS, "hdr");
    match (play, record) {
        (Some(p), Some(r)) => lines.push(format!(
            "  This folder plays {p} tracks and records {r} of {format} in real time{rings}."
        )),
        (Some(p), None) => lines.push(format!(
            "  This folder plays {p} tracks of {format} in real time{rings}."
        )),
        _ => {}
    }
    if let Some(naive) = fig(PLAY_ROW, &m::NAIVE_TRACKS) {
        lines.push(format!(
            "  A sequential-MB/s benchmark would promise {naive:.0}."
        ));
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
