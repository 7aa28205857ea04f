//! `load` and `bounce` through the binary on temporary directories: a template load's four
//! passes, and an offline export whose 24-bit files are valid WAV holding exactly the normalised
//! conversion of what was rendered; and the takes a page-cache profile plays, laid out as recorded.

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
    let _disk = crate::common::busy_disk();
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

/// A page-cache profile's play files are laid out as a recording writes its takes (every
/// track's next 30 s, then flushed, pass after pass), so the filesystem places them as it
/// places a recorded session's: on ext4 a take of 12 MB comes out in extents of up to 8 MiB,
/// as Ardour's do, where files written and flushed at once come out in one piece each. Checked
/// with `filefrag` where the temporary directory is ext4 and e2fsprogs is installed.
#[test]
#[cfg(target_os = "linux")]
fn page_cache_play_files_are_laid_out_as_recorded_takes() {
    let dir = tempfile::tempdir().unwrap();
    let fs = std::process::Command::new("stat")
        .args(["-f", "-c", "%T"])
        .arg(dir.path())
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    let filefrag = std::process::Command::new("filefrag").arg("-V").output();
    if fs != "ext2/ext3" || filefrag.is_err() {
        eprintln!("skipped: {fs:?} is not ext4, or filefrag is missing");
        return;
    }
    crate::common::tb()
        .arg("play")
        .arg(dir.path())
        .args([
            "--profile",
            "ardour-large",
            "--format",
            "48k/32f/mono",
            "--tracks",
            "6",
            "--duration",
            "5s",
            "--keep",
            "--no-store",
            "-q",
        ])
        .assert()
        .success();
    let data = dir.path().join("trackbench-data");
    let mut extents = Vec::new();
    for i in 0..6 {
        let f = data.join(format!("play-{i:04}.wav"));
        assert!(
            f.metadata().unwrap().len() > 9 << 20,
            "{f:?} shorter than two passes"
        );
        let out = std::process::Command::new("filefrag")
            .arg(&f)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        let n: u32 = text
            .rsplit(':')
            .next()
            .and_then(|s| s.split_whitespace().next())
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("filefrag said {text:?}"));
        extents.push(n);
    }
    assert!(
        extents.iter().filter(|&&n| n >= 2).count() >= 4,
        "takes in one piece: {extents:?} extents"
    );
    crate::common::tb()
        .arg("clean")
        .arg(dir.path())
        .assert()
        .success();
    assert!(!data.exists());
}
