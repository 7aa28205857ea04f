//! `load` and `bounce` through the binary on temporary directories: a template load's four
//! passes, and an offline export whose 24-bit files are valid WAV holding exactly the normalised
//! conversion of what was rendered.

use crate::common;

use common::tb;
use predicates::prelude::*;
use serde_json::Value;
use trackbench::audio::{f32_to_i24, normalise_gain};

/// A run with `args`, its document written in `dir`, nothing stored.
fn run_json(args: &[&str], dir: &std::path::Path) -> Value {
    common::run_json(dir, &[args, &["--no-store"]].concat())
}

fn figure(row: &Value, name: &str) -> f64 {
    row["figures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {row}"))["median"]
        .as_f64()
        .unwrap()
}

#[test]
fn a_template_loads_cold_and_warm_with_one_and_many_threads() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("disk");
    std::fs::create_dir(&d).unwrap();
    let ds = d.to_str().unwrap();
    let v = run_json(&["load", ds, "--files", "120", "--threads", "4"], t.path());
    let s = &v["sections"][0];
    let labels: Vec<&str> = s["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["label"].as_str().unwrap())
        .collect();
    assert_eq!(
        labels,
        [
            "cold · 1 thread",
            "cold · 4 threads",
            "warm · 1 thread",
            "warm · 4 threads"
        ]
    );
    for r in s["rows"].as_array().unwrap() {
        assert!(figure(r, "files_per_s") > 0.0);
        let pct = figure(r, "open_pct");
        assert!((0.0..=100.0).contains(&pct), "{pct}");
        // Header and 60K of each file.
        let mb = figure(r, "rate_mb_per_s") * figure(r, "load_s");
        assert!((mb - 120.0 * 65_536.0 / 1e6).abs() < 0.1, "{mb} MB");
    }
    let findings = s["findings"].to_string();
    assert!(findings.contains("template_load") && findings.contains("cold_means"));
    assert!(!d.join("trackbench-data").exists());
    // As root the whole cache can go, and the result says so.
    if trackbench::platform::is_root() {
        let v = run_json(&["load", ds, "--files", "20", "--drop-caches"], t.path());
        assert!(
            v["sections"][0]["findings"]
                .to_string()
                .contains("open() cold too")
        );
    } else {
        tb().args(["load", ds, "--drop-caches"])
            .assert()
            .failure()
            .stderr(predicate::str::contains("needs root"));
    }
}

#[test]
fn an_export_renders_normalises_and_writes_valid_24_bit_files() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("disk");
    std::fs::create_dir(&d).unwrap();
    let ds = d.to_str().unwrap();
    let v = run_json(
        &["bounce", ds, "--tracks", "6", "--duration", "3s", "--keep"],
        t.path(),
    );
    let s = &v["sections"][0];
    for r in s["rows"].as_array().unwrap() {
        assert!(figure(r, "x_real_time") > 1.0, "{r}");
        assert!(figure(r, "stage_s") > 0.0);
    }
    let data = d.join("trackbench-data");
    for track in 0..6 {
        let render = hound::WavReader::open(data.join(format!("render-{track:04}.wav"))).unwrap();
        assert_eq!(
            (render.spec().bits_per_sample, render.spec().sample_format),
            (32, hound::SampleFormat::Float)
        );
        let float: Vec<f32> = render.into_samples::<f32>().map(|x| x.unwrap()).collect();
        assert_eq!(float.len(), 3 * 48_000);
        let out = hound::WavReader::open(data.join(format!("bounce-{track:04}.wav"))).unwrap();
        assert_eq!(
            (out.spec().bits_per_sample, out.spec().sample_rate),
            (24, 48_000)
        );
        let pcm: Vec<i32> = out.into_samples::<i32>().map(|x| x.unwrap()).collect();
        let peak = float.iter().fold(0.0f32, |a, x| a.max(x.abs()));
        let gain = normalise_gain(peak);
        assert!(
            pcm.iter().any(|&x| x.abs() >= 8_388_606),
            "normalised to full scale"
        );
        for (x, y) in float.iter().zip(&pcm) {
            assert_eq!(f32_to_i24(*x, gain), *y);
        }
    }
    tb().arg("clean").arg(&d).assert().success();
    assert!(!data.exists());
}

#[test]
fn load_and_bounce_flags_are_checked() {
    for (args, says) in [
        (&["load", "/tmp", "--files", "0"][..], "files"),
        (&["load", "/tmp", "--threads", "0"], "threads"),
        (&["load", "/tmp", "--preload", "1"], "preload"),
        (&["load", "/tmp", "--lengths", "2s"], "MIN..MAX"),
        (&["bounce", "/tmp", "--tracks", "0"], "tracks"),
        (&["bounce", "/tmp", "--duration", "0s"], "duration"),
    ] {
        tb().args(args)
            .assert()
            .failure()
            .stderr(predicate::str::contains(says));
    }
}
