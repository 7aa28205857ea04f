//! A disk's series: stored results grouped by the disk they measured and the question they
//! answered, oldest first, one figure each; and the steps found in them, with what came with
//! each (the filesystem's fill, the drive's own health).
//!
//! A disk is known by its drive (model, serial or WWN), its filesystem (UUID, else what is
//! mounted) and the folder within it, so that a mount point renamed stays the same disk and a
//! replaced drive starts a new series; a simulated device by its name. A question is the
//! workload, the row and the settings that change what a figure means
//! ([`crate::result::fairness`]): only like is compared with like.

use super::steps::{self, Point, Rule, Step};
use crate::error::Result;
use crate::health::Health;
use crate::present::html::over_time::{DiskSeries, SeriesRun, SeriesStep};
use crate::result::metrics::{self as m, Def};
use crate::result::{Detail, ResultDoc, Section};
use crate::store::{Filter, Store, Stored};
use crate::target::TargetInfo;

/// One result's point in a series.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub id: i64,
    pub started_at: String,
    pub point: Point,
    /// How full the filesystem was (0-1), where the result says.
    pub fill: Option<f64>,
    pub health: Option<Health>,
}

/// One figure of one disk at like settings, oldest first.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// The disk in words: its model (or the simulated device) and the folder.
    pub disk: String,
    /// The question in words: "playback tracks", "run: record tracks", "sampler voices".
    pub what: String,
    pub unit: &'static str,
    pub(crate) key: String,
    pub entries: Vec<Entry>,
}

/// A step in a series, with what came with it.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub step: Step,
    /// The result at the new level, and the one before it.
    pub id: i64,
    pub since: String,
    /// What changed with it that could explain it, in words.
    pub causes: Vec<String>,
}

/// The figures a disk is watched by, per workload.
fn watched(workload: &str) -> &'static [&'static Def] {
    match workload {
        "realtime" | "play" | "record" | "hdr" => &[&m::TRACKS],
        "sampler" => &[&m::VOICES],
        "load" => &[&m::LOAD_S],
        "seq" => &[&m::RATE_MB_PER_S],
        "seek" => &[&m::IOPS],
        _ => &[],
    }
}

/// The disk a target is, as a key and in words.
pub fn disk_of(t: &TargetInfo) -> (String, String) {
    if let Some(name) = &t.simulated {
        return (
            format!("simulated:{name}"),
            format!("simulated device {name}"),
        );
    }
    let d = t.device.as_ref();
    let drive = [
        d.and_then(|d| d.model.clone()),
        d.and_then(|d| d.serial.clone().or(d.wwn.clone())),
    ];
    let fs = t.fs_uuid.clone().or(t.mount_source.clone());
    // The folder within its filesystem: the same wherever the filesystem is mounted.
    let folder = match &t.mount_point {
        Some(m) => t
            .path
            .strip_prefix(m)
            .unwrap_or(&t.path)
            .display()
            .to_string(),
        None => t.path.display().to_string(),
    };
    let key = format!(
        "{}|{}|{}|{folder}",
        drive[0].as_deref().unwrap_or(""),
        drive[1].as_deref().unwrap_or(""),
        fs.as_deref().unwrap_or("")
    );
    let words = format!(
        "{} ({})",
        t.path.display(),
        drive[0]
            .as_deref()
            .or(fs.as_deref())
            .unwrap_or("unknown disk")
    );
    (key, words)
}

/// The spread a section's point carries: a search's answer its bisection's tolerance (2%),
/// a figure over several runs its coefficient of variation, the larger.
fn spread_of(s: &Section, cv: f64) -> f64 {
    let searched = matches!(s.detail, Some(Detail::Search(_) | Detail::RealTime(_)));
    if searched { cv.max(0.02) } else { cv }
}

/// The points one document adds, by series key, with the series' words.
fn points_of(doc: &ResultDoc) -> Vec<(String, String, &'static str, Point)> {
    let (disk, _) = disk_of(&doc.target);
    let mut out = Vec::new();
    for s in doc.sections.iter().filter(|s| !s.interrupted) {
        let open = crate::present::answer::unanswered_rows(doc, s);
        let settings = crate::result::fairness::fingerprint(&s.settings);
        for row in s
            .rows
            .iter()
            .filter(|r| !open.iter().any(|(l, _)| *l == r.label))
        {
            for def in watched(&s.workload) {
                let Some(f) = row.get(def).filter(|f| f.spread.median > 0.0) else {
                    continue;
                };
                let key = format!(
                    "{disk}#{}#{}#{}#{settings}",
                    s.workload, row.label, def.name
                );
                let what = if s.workload == row.label || s.workload == "realtime" {
                    format!("{} {}", row.label, def.unit)
                } else {
                    format!("{} {} {}", s.workload, row.label, def.unit)
                };
                let point = Point {
                    value: f.spread.median,
                    spread: spread_of(s, f.spread.cv),
                };
                out.push((key, what, def.unit, point));
            }
        }
    }
    out
}

/// Every series the stored results make, and the results skipped, each with why (no document
/// that reads back: a damaged row, a schema this build cannot read).
pub fn series(stored: &[Stored]) -> (Vec<Series>, Vec<String>) {
    let mut skipped = Vec::new();
    let mut rows: Vec<&Stored> = stored.iter().collect();
    rows.sort_by(|a, b| a.started_at.cmp(&b.started_at).then(a.id.cmp(&b.id)));
    let mut out: Vec<Series> = Vec::new();
    for r in rows {
        let Some(doc) = &r.document else {
            skipped.push(format!("result {}: its document does not read back", r.id));
            continue;
        };
        let t = &doc.target;
        let fill = match (t.total_bytes, t.free_bytes) {
            (Some(total), Some(free)) if total > 0 => Some(1.0 - free as f64 / total as f64),
            _ => None,
        };
        for (key, what, unit, point) in points_of(doc) {
            let entry = Entry {
                id: r.id,
                started_at: r.started_at.clone(),
                point,
                fill,
                health: t.health.clone(),
            };
            match out.iter_mut().find(|s| s.key == key) {
                Some(s) => s.entries.push(entry),
                None => out.push(Series {
                    disk: disk_of(t).1,
                    what,
                    unit,
                    key,
                    entries: vec![entry],
                }),
            }
        }
    }
    (out, skipped)
}

/// The steps of a series, each with what came with it: the fill level and the drive's health
/// on either side of it.
pub fn changes(s: &Series, rule: &Rule) -> Vec<Change> {
    let points: Vec<Point> = s.entries.iter().map(|e| e.point).collect();
    steps::steps(&points, rule)
        .into_iter()
        .map(|step| {
            let (before, after) = (&s.entries[step.at - 1], &s.entries[step.at]);
            Change {
                step,
                id: after.id,
                since: before.started_at.clone(),
                causes: causes_between(before, after),
            }
        })
        .collect()
}

/// What changed between two results of a disk that could explain a change in its answers: the
/// fill level (when it moved 5 points or more) and the drive's health.
pub fn causes_between(before: &Entry, after: &Entry) -> Vec<String> {
    let mut causes = Vec::new();
    if let (Some(a), Some(b)) = (before.fill, after.fill)
        && (b - a).abs() >= 0.05
    {
        causes.push(format!(
            "the disk went from {:.0}% to {:.0}% full",
            100.0 * a,
            100.0 * b
        ));
    }
    if let (Some(a), Some(b)) = (&before.health, &after.health) {
        causes.extend(b.changes_since(a));
    }
    causes
}

/// A change in a sentence: "result 7: playback tracks fell 15% (144 → 123), beyond its noise of
/// ±2%; the disk went from 40% to 85% full".
pub fn words(s: &Series, c: &Change) -> String {
    let dir = if c.step.change < 0.0 { "fell" } else { "rose" };
    // Counts as counts; other figures as every presenter shows them.
    let shown = |v: f64| match s.unit {
        "tracks" | "voices" => format!("{v:.0}"),
        _ => crate::units::fmt_figure(v),
    };
    let mut w = format!(
        "result {}: {} {dir} {:.0}% ({} → {}), beyond its noise of ±{}%",
        c.id,
        s.what,
        100.0 * c.step.change.abs(),
        shown(c.step.before),
        shown(c.step.after),
        crate::units::fmt_figure(100.0 * c.step.noise)
    );
    for cause in &c.causes {
        w.push_str("; ");
        w.push_str(cause);
    }
    w
}

/// Where stored results' series stepped beyond their noise: a mark for each result at a new
/// level ("▼15% playback tracks"), each step in a sentence with its disk, and the results left
/// out of the series and why.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Marks {
    pub by_id: std::collections::HashMap<i64, String>,
    pub steps: Vec<String>,
    pub skipped: Vec<String>,
}

/// The marks of `rows`' series ([`Marks`]).
pub fn marks(rows: &[Stored]) -> Marks {
    let (all, skipped) = series(rows);
    let mut m = Marks {
        skipped,
        ..Marks::default()
    };
    for s in &all {
        for c in changes(s, &Rule::default()) {
            let arrow = if c.step.change < 0.0 { "▼" } else { "▲" };
            let mark = format!("{arrow}{:.0}% {}", 100.0 * c.step.change.abs(), s.what);
            m.by_id
                .entry(c.id)
                .and_modify(|old| old.push_str(&format!(", {mark}")))
                .or_insert(mark);
            m.steps.push(format!("{}: {}", s.disk, words(s, &c)));
        }
    }
    m
}

/// The series the result `id` belongs to that have earlier runs, as the report draws them: at
/// most the last 100 runs up to and including it, its steps in words.
pub fn over_time(rows: &[Stored], id: i64) -> Vec<DiskSeries> {
    let (all, _) = series(rows);
    all.into_iter()
        .filter_map(|mut s| {
            let end = s.entries.iter().position(|e| e.id == id)? + 1;
            s.entries.truncate(end);
            s.entries.drain(..end.saturating_sub(100));
            (s.entries.len() >= 2).then_some(s)
        })
        .map(|s| {
            let steps = changes(&s, &Rule::default())
                .iter()
                .map(|c| SeriesStep {
                    at: c.step.at,
                    before: c.step.before,
                    after: c.step.after,
                    words: words(&s, c),
                })
                .collect();
            DiskSeries {
                runs: s
                    .entries
                    .iter()
                    .map(|e| SeriesRun {
                        id: e.id,
                        started_at: e.started_at.clone(),
                        value: e.point.value,
                        spread: e.point.spread,
                        this: e.id == id,
                    })
                    .collect(),
                disk: s.disk,
                what: s.what,
                unit: s.unit.to_string(),
                steps,
            }
        })
        .collect()
}

/// The HTML report of the stored result `id` (`doc`), with the disk's series from `store`; a
/// store that cannot list its results gives the report without them.
pub fn report_with_history(store: &mut dyn Store, doc: &ResultDoc, id: i64) -> Result<String> {
    let rows = store
        .history(&Filter {
            limit: 0,
            ..Filter::default()
        })
        .unwrap_or_default();
    crate::present::html::document_with_history(doc, &over_time(&rows, id))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    const TEMPLATE: &str = include_str!("../../tests/fixtures/schema-5/play-find-max-sim.json");

    /// A stored search of `tracks` on a disk of `model`, `full` (0-1), on day `day`, its
    /// drive's health `realloc` sectors reallocated.
    fn stored(id: i64, day: u32, tracks: f64, full: f64, model: &str, realloc: u64) -> Stored {
        let mut v: Value = serde_json::from_str(TEMPLATE).unwrap();
        let started = format!("2026-11-{day:02}T10:00:00Z");
        v["started_at"] = json!(started);
        v["target"]["device"]["model"] = json!(model);
        v["target"]["free_bytes"] = json!((270553174016.0 * (1.0 - full)) as u64);
        v["target"]["health"] = json!({"source": "smartctl 7.3", "reallocated_sectors": realloc});
        for f in v["sections"][0]["rows"][0]["figures"]
            .as_array_mut()
            .unwrap()
        {
            if f["name"] == "tracks" {
                f["median"] = json!(tracks);
            }
        }
        let doc: ResultDoc = serde_json::from_value(v).unwrap();
        Stored {
            id,
            started_at: started,
            target: "/var/tmp/fx.pIFv".into(),
            device: model.into(),
            workloads: vec!["play".into()],
            headline: String::new(),
            interrupted: false,
            document: Some(doc),
        }
    }

    #[test]
    fn a_disk_that_filled_and_reallocated_steps_with_both_named() {
        let mut rows: Vec<Stored> = [144.0, 145.0, 143.0, 144.0, 123.0, 122.0, 124.0]
            .iter()
            .enumerate()
            .map(|(i, &t)| {
                let late = i >= 4;
                let id = i as i64 + 1;
                stored(
                    id,
                    id as u32,
                    t,
                    if late { 0.85 } else { 0.40 },
                    "Disk A",
                    if late { 12 } else { 0 },
                )
            })
            .collect();
        // Another disk, a result that does not read back, newest first as the store lists them.
        rows.push(stored(20, 3, 90.0, 0.5, "Disk B", 0));
        let mut damaged = stored(21, 4, 1.0, 0.5, "Disk A", 0);
        damaged.document = None;
        rows.push(damaged);
        rows.reverse();
        let (series, skipped) = series(&rows);
        assert_eq!(skipped, ["result 21: its document does not read back"]);
        assert_eq!(series.len(), 2, "disk A and disk B apart");
        let a = series.iter().find(|s| s.disk.contains("Disk A")).unwrap();
        assert_eq!(a.entries.len(), 7);
        let ids: Vec<i64> = a.entries.iter().map(|e| e.id).collect();
        assert_eq!(ids, [1, 2, 3, 4, 5, 6, 7], "oldest first");
        let c = changes(a, &Rule::default());
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!(c[0].id, 5);
        assert_eq!(
            c[0].causes,
            [
                "the disk went from 40% to 85% full",
                "12 more sectors reallocated"
            ]
        );
        let w = words(a, &c[0]);
        assert!(
            w.starts_with("result 5: play trackbench · serial tracks fell 15% (144 → 123)"),
            "{w}"
        );
        let b = series.iter().find(|s| s.disk.contains("Disk B")).unwrap();
        assert!(changes(b, &Rule::default()).is_empty());
    }

    #[test]
    fn a_mount_point_renamed_is_the_same_disk_and_other_settings_another_series() {
        let one = stored(1, 1, 144.0, 0.4, "Disk A", 0);
        let mut moved = stored(2, 2, 144.0, 0.4, "Disk A", 0);
        let doc = moved.document.as_mut().unwrap();
        doc.target.mount_point = Some("/mnt/audio".into());
        doc.target.path = "/mnt/audio/var/tmp/fx.pIFv".into();
        let mut other = stored(3, 3, 144.0, 0.4, "Disk A", 0);
        other.document.as_mut().unwrap().sections[0].settings["spec"]["policy"]["chunk_bytes"] =
            json!(65536);
        let (s, _) = series(&[one, moved, other]);
        assert_eq!(s.len(), 2, "{s:?}");
        assert_eq!(s.iter().map(|s| s.entries.len()).max(), Some(2));
    }

    #[test]
    fn a_thousand_results_are_analysed_well_under_a_second() {
        let rows: Vec<Stored> = (0..1000)
            .map(|i| {
                stored(
                    i,
                    1 + (i % 28) as u32,
                    if i < 600 { 144.0 } else { 122.0 },
                    0.5,
                    "Disk A",
                    0,
                )
            })
            .collect();
        let t = std::time::Instant::now();
        let (s, _) = series(&rows);
        let c = changes(&s[0], &Rule::default());
        let took = t.elapsed();
        assert!(!c.is_empty());
        // A generous bound for a shared machine; the measured time is in the note.
        assert!(took.as_secs_f64() < 5.0, "{took:?}");
        eprintln!("1000 results analysed in {took:?}");
    }
}
