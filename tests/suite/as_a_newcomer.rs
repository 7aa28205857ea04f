//! The newcomer's `run`, the README's first command, checked as its first-time user reads it:
//! the standard suite's document and summary (its report and store: report.rs).
//!
//! The module's name puts it first: libtest starts tests in name order, and this is the longest
//! of the suite (the run alone takes three to four minutes here, its real-time searches the first
//! two of them). Started with the others it began after the first capped-device tests, beside
//! find_max_real's searches and wine's tests, whose bursts on the one disk took its playback
//! search from 1000 tracks down to 124 in 12 probes and the run to 342 s (2026-11-29).

use serde_json::Value;

use crate::cli::{assert_clean, figure_in};

#[test]
fn run_is_the_standard_suite_with_a_summary() {
    // The newcomer's run, shared with report.rs's test of its report and store.
    let run = crate::common::newcomer_run();
    let (stdout, target, json) = (&run.stdout, &run.target, &run.json);
    assert!(run.success, "{}", run.stderr);
    // Printed to a pipe, where no terminal says its width: fitted to 100 columns.
    for line in stdout.lines() {
        assert!(line.chars().count() <= 100, "{line}\n\n{stdout}");
    }
    // Sentences read whole, wherever a line was wrapped.
    let stdout = &stdout.replace("\n    ", " ");
    assert!(
        stdout.contains("Summary (48k/24/mono, 144 kB/s per track)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("tracks if streaming cost nothing"),
        "{stdout}"
    );
    // The real-time answer comes first, in tracks, with the naive count beside it.
    assert!(stdout.contains("This folder plays "), "{stdout}");
    assert!(stdout.contains(" in real time ("), "{stdout}");
    assert!(
        stdout.contains("A sequential-MB/s benchmark would promise"),
        "{stdout}"
    );
    assert!(stdout.contains("While recording "), "{stdout}");
    let v: Value = serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap();
    let strings = |list: &Value, key: &str| -> Vec<String> {
        list.as_array()
            .unwrap()
            .iter()
            .map(|x| x[key].as_str().unwrap().to_string())
            .collect()
    };
    let names = strings(&v["sections"], "workload");
    assert_eq!(
        names,
        [
            "seq", "realtime", "sampler", "load", "bounce", "seek", "access", "mix", "zones",
            "sweep"
        ]
    );
    assert!(
        stdout.contains(" sampler voices at 100 notes/s"),
        "{stdout}"
    );
    assert!(stdout.contains("-sample template in "), "{stdout}");
    assert!(stdout.contains("It bounces 100 tracks "), "{stdout}");
    let rt = &v["sections"][1];
    // One naive count, from one sequential measurement (seq's read, which runs first): the
    // searches and the sampler take it instead of transfers of their own.
    let seq_naive = figure_in(&v["sections"][0], "read", "naive_tracks");
    let seq_rate = figure_in(&v["sections"][0], "read", "rate_mb_per_s");
    assert_eq!(figure_in(rt, "playback", "naive_tracks"), seq_naive, "{rt}");
    let sampler_seq = v["sections"][2]["detail"]["rates_bytes_per_s"]["sequential_read"]
        .as_f64()
        .unwrap();
    assert!(
        (sampler_seq / 1e6 - seq_rate).abs() < 1e-6 * seq_rate,
        "sampler {sampler_seq} B/s, seq {seq_rate} MB/s"
    );
    assert!(
        stdout.contains(&format!("would promise {seq_naive:.0} ")),
        "{stdout}"
    );
    let rows = strings(&rt["rows"], "label");
    assert_eq!(
        rows,
        ["playback", "record", "playback while recording"],
        "{rt}"
    );
    for r in rt["rows"].as_array().unwrap() {
        // The hdr row's count is its playback tracks; the others' is "tracks".
        let figs = r["figures"].as_array().unwrap();
        let named = |name: &str| figs.iter().find(|f| f["name"] == name);
        let tracks = named("play_tracks")
            .or_else(|| named("tracks"))
            .unwrap_or_else(|| panic!("a track count in {r}"));
        let n = tracks["median"].as_f64().unwrap();
        assert!((1.0..=1000.0).contains(&n), "{n} tracks in {r}");
    }
    assert_eq!(
        v["sections"][9]["rows"].as_array().unwrap().len(),
        9,
        "sweep covers 4K..1M"
    );
    // The current directory is the default target.
    assert_eq!(
        v["target"]["path"],
        std::fs::canonicalize(target).unwrap().to_str().unwrap()
    );
    assert_clean(target);
}
