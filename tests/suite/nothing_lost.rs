//! Nothing lost, ever: the binary on temporary directories where a user's files sit under the
//! names trackbench gives its own, behind a link, or named by a forged manifest. Each test
//! compares the user's files byte for byte before and after.

use assert_cmd::Command;
use predicates::prelude::*;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// The result store every trackbench in these tests writes to: under target/, never the user's.
fn store_home() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("xdg-data")
}
fn tb() -> Command {
    let mut c = Command::cargo_bin("trackbench").expect("binary built");
    c.env("XDG_DATA_HOME", store_home());
    c
}

/// Every regular file under `dir` (following no links) with its content.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap().flatten() {
            let t = e.file_type().unwrap();
            if t.is_dir() {
                stack.push(e.path());
            } else if t.is_file() {
                out.insert(e.path(), fs::read(e.path()).unwrap());
            }
        }
    }
    out
}

/// The names trackbench lays out, as a careless user's takes.
const OUR_NAMES: [&str; 9] = [
    "seq.wav",
    "play-0000.wav",
    "rec-0000.wav",
    "span-0000.wav",
    "sweep-0000.wav",
    "play-0001.wav",
    "sample-0000.wav",
    "render-0000.wav",
    "bounce-0000.wav",
];

/// The commands that write, each short.
fn writing_commands(p: &str) -> Vec<Vec<String>> {
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    vec![
        s(&["seq", p, "--size", "16M"]),
        s(&["mix", p, "--size", "16M", "--duration", "300ms"]),
        s(&[
            "sweep",
            p,
            "--files",
            "2",
            "--file-size",
            "1M",
            "--blocks",
            "64K",
        ]),
        s(&["play", p, "--tracks", "2", "--duration", "1s"]),
        s(&["record", p, "--tracks", "2", "--duration", "1s"]),
        s(&[
            "sampler",
            p,
            "--files",
            "2",
            "--voices",
            "2",
            "--duration",
            "1s",
        ]),
        s(&["load", p, "--files", "2"]),
        s(&["bounce", p, "--tracks", "1", "--duration", "1s"]),
    ]
}

#[test]
fn a_users_files_under_our_names_in_a_directory_not_ours_are_never_touched() {
    let t = tempfile::tempdir().unwrap();
    let data = t.path().join("trackbench-data");
    fs::create_dir(&data).unwrap();
    for n in OUR_NAMES {
        fs::write(data.join(n), format!("take {n}")).unwrap();
    }
    let before = snapshot(t.path());
    let p = t.path().to_str().unwrap();
    for args in writing_commands(p) {
        tb().args(&args)
            .arg("-q")
            .assert()
            .failure()
            .stderr(predicate::str::contains("not trackbench's"));
        assert_eq!(snapshot(t.path()), before, "{args:?} changed a user's file");
    }
    tb().args(["clean", p])
        .assert()
        .success()
        .stdout(predicate::str::contains("left alone"));
    assert_eq!(snapshot(t.path()), before);
}

#[test]
fn a_users_file_beside_ours_stops_the_run_and_is_left_alone() {
    let t = tempfile::tempdir().unwrap();
    let p = t.path().to_str().unwrap();
    // Make the directory trackbench's: a kept run leaves its manifest.
    tb().args(["seq", p, "--size", "8M", "--keep", "-q"])
        .assert()
        .success();
    let data = t.path().join("trackbench-data");
    assert!(data.join("manifest.json").exists());
    for n in OUR_NAMES.iter().filter(|n| **n != "seq.wav") {
        fs::write(data.join(n), format!("take {n}")).unwrap();
    }
    let users: BTreeMap<PathBuf, Vec<u8>> = snapshot(t.path())
        .into_iter()
        .filter(|(k, _)| {
            let n = k.file_name().unwrap().to_str().unwrap();
            n != "seq.wav" && n != "manifest.json" && n != "lock"
        })
        .collect();
    // With --keep, so that each failed run leaves the directory trackbench's for the next.
    for args in writing_commands(p).into_iter().skip(1) {
        tb().args(&args)
            .args(["-q", "--keep"])
            .assert()
            .failure()
            .stderr(predicate::str::contains("trackbench did not create it"));
        let now = snapshot(t.path());
        for (k, v) in &users {
            assert_eq!(now.get(k), Some(v), "{args:?} changed {}", k.display());
        }
    }
    // The kept file is trackbench's; clean removes it and nothing else.
    tb().args(["clean", p]).assert().success();
    assert!(!data.join("seq.wav").exists());
    let now = snapshot(t.path());
    for (k, v) in &users {
        assert_eq!(now.get(k), Some(v));
    }
}

#[cfg(unix)]
#[test]
fn a_linked_data_directory_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let elsewhere = t.path().join("elsewhere");
    fs::create_dir(&elsewhere).unwrap();
    fs::write(elsewhere.join("seq.wav"), b"a take elsewhere").unwrap();
    let target = t.path().join("target");
    fs::create_dir(&target).unwrap();
    std::os::unix::fs::symlink(&elsewhere, target.join("trackbench-data")).unwrap();
    let before = snapshot(t.path());
    let p = target.to_str().unwrap();
    for args in writing_commands(p) {
        tb().args(&args)
            .arg("-q")
            .assert()
            .failure()
            .stderr(predicate::str::contains("symbolic link"));
    }
    tb().args(["clean", p])
        .assert()
        .failure()
        .stderr(predicate::str::contains("symbolic link"));
    assert_eq!(snapshot(t.path()), before);
    assert_eq!(fs::read_dir(&elsewhere).unwrap().count(), 1);
}

#[test]
fn a_forged_manifest_cannot_reach_outside_the_data_directory() {
    let t = tempfile::tempdir().unwrap();
    let p = t.path().to_str().unwrap();
    tb().args(["seq", p, "--size", "8M", "--keep", "-q"])
        .assert()
        .success();
    let data = t.path().join("trackbench-data");
    let outside = t.path().join("user.wav");
    fs::write(&outside, b"outside").unwrap();
    let inside = data.join("notes.txt");
    fs::write(&inside, b"inside").unwrap();
    let manifest = data.join("manifest.json");
    let mut m: serde_json::Value = serde_json::from_slice(&fs::read(&manifest).unwrap()).unwrap();
    let files = m["files"].as_array_mut().unwrap();
    let forged = |name: &str| serde_json::json!({"name": name, "key": "k", "size_bytes": 1, "content_id": 99, "complete": true});
    for name in [
        "../user.wav",
        outside.to_str().unwrap(),
        "notes.txt",
        "lock",
        "manifest.json",
    ] {
        files.push(forged(name));
    }
    fs::write(&manifest, m.to_string()).unwrap();
    // An ordinary run drops the forged entries with a note and deletes none of their files.
    tb().args(["seq", p, "--size", "8M", "-q"])
        .assert()
        .success()
        .stderr(predicate::str::contains("left alone"));
    assert_eq!(fs::read(&outside).unwrap(), b"outside");
    assert_eq!(fs::read(&inside).unwrap(), b"inside");
    // The run deleted its own seq.wav; the directory stays for the user's notes.txt.
    assert!(!data.join("seq.wav").exists());
    tb().args(["clean", p]).assert().success();
    assert_eq!(fs::read(&outside).unwrap(), b"outside");
    assert_eq!(fs::read(&inside).unwrap(), b"inside");
}

#[test]
fn memory_beyond_the_budget_is_refused_before_anything_is_written() {
    let t = tempfile::tempdir().unwrap();
    let p = t.path().to_str().unwrap();
    for args in [
        vec!["seq", p, "--size", "64M", "--block", "32M", "--qd", "2"],
        vec!["play", p, "--tracks", "100"],
        vec!["record", p, "--tracks", "100"],
    ] {
        tb().args(&args)
            .args(["--max-memory", "16M", "-q"])
            .assert()
            .failure()
            .stderr(predicate::str::contains("--max-memory limit"));
        assert!(
            !t.path().join("trackbench-data").exists(),
            "{args:?} left data behind"
        );
    }
    // Two float rings of Ardour's Medium (2 MiB each) fit; a parallel butler's own buffers
    // for its whole refills, 64 of at most a ring each (128 MiB), do not.
    tb().args(["play", p, "--tracks", "2", "--profile", "ardour-medium"])
        .args(["--format", "48k/32f/mono", "--butler", "parallel:64"])
        .args(["--max-memory", "64M", "-q"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("the butler's 64 read buffers"))
        .stderr(predicate::str::contains("--max-memory limit"));
    assert!(!t.path().join("trackbench-data").exists());
    tb().args(["seq", p, "--max-memory", "0", "-q"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("invalid max-memory"));
}

#[test]
fn a_json_path_that_cannot_be_written_fails_before_measuring() {
    let t = tempfile::tempdir().unwrap();
    let p = t.path().to_str().unwrap();
    let inside = t.path().join("trackbench-data").join("r.json");
    let missing = t.path().join("no").join("r.json");
    for dest in [
        t.path().to_str().unwrap(),
        "/dev/full",
        inside.to_str().unwrap(),
        missing.to_str().unwrap(),
    ] {
        let started = std::time::Instant::now();
        let out = tb()
            .args(["play", p, "--find-max", "--json", dest, "-q"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{dest}: {err}");
        assert!(
            err.contains("cannot hold the result document"),
            "{dest}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "one line: {err}");
        assert!(
            started.elapsed().as_secs_f64() < 5.0,
            "{dest}: refused only after {:?}",
            started.elapsed()
        );
        assert!(!t.path().join("trackbench-data").exists());
    }
}

#[cfg(unix)]
#[test]
fn a_path_that_is_not_utf8_is_measured_and_recorded() {
    use std::os::unix::ffi::OsStrExt;
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join(std::ffi::OsStr::from_bytes(b"take-\xff\xfe"));
    fs::create_dir(&dir).unwrap();
    let json = t.path().join("r.json");
    tb().arg("seq")
        .arg(&dir)
        .args(["--size", "8M", "-q", "--json"])
        .arg(&json)
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_slice(&fs::read(&json).unwrap()).unwrap();
    assert!(v["command"][2].as_str().unwrap().contains("take-\u{fffd}"));
    assert_eq!(
        fs::read_dir(&dir).unwrap().count(),
        0,
        "nothing left behind"
    );
}

#[test]
fn edge_values_of_every_numeric_flag_never_panic_the_binary() {
    // A path that does not exist: whatever the flags, nothing is measured.
    let t = tempfile::tempdir().unwrap();
    let missing = t.path().join("missing");
    let p = missing.to_str().unwrap();
    let numeric: [(&str, &[&str]); 10] = [
        (
            "seq",
            &["--block", "--size", "--qd", "--runs", "--max-memory"],
        ),
        ("seek", &["--block", "--duration", "--size", "--rpm"]),
        ("mix", &["--seq-block", "--random-block", "--read-pct"]),
        ("zones", &["--points", "--per-point"]),
        ("sweep", &["--files", "--blocks", "--file-size", "--buffer"]),
        (
            "play",
            &[
                "--tracks",
                "--buffer",
                "--chunk",
                "--period",
                "--duration",
                "--margin",
                "--max-tracks",
            ],
        ),
        ("hdr", &["--play", "--record", "--chunk", "--period"]),
        (
            "sampler",
            &[
                "--voices",
                "--notes-per-s",
                "--files",
                "--preload",
                "--period",
                "--duration",
                "--margin",
                "--max-voices",
                "--seed",
            ],
        ),
        ("load", &["--files", "--preload", "--threads", "--seed"]),
        ("bounce", &["--tracks", "--duration"]),
    ];
    for (cmd, flags) in numeric {
        for flag in flags {
            for v in [
                "0",
                "1",
                "-1",
                "18446744073709551616",
                "1e400",
                "NaN",
                "4294967296",
            ] {
                let out = tb().args([cmd, p, flag, v, "-q"]).output().unwrap();
                let err = String::from_utf8_lossy(&out.stderr);
                assert!(
                    out.status.code().is_some_and(|c| c == 1 || c == 2)
                        && !err.contains("panicked"),
                    "{cmd} {flag} {v}: {:?} {err}",
                    out.status
                );
            }
        }
    }
}

/// Overwrites bytes 100..108 of every 4 KiB block of audio (after the header): the tags stay.
fn corrupt_payload(path: &Path) {
    use trackbench::platform::FileAt;
    let f = fs::OpenOptions::new().write(true).open(path).unwrap();
    let len = f.metadata().unwrap().len();
    let mut at = 4096;
    while at + 4096 <= len {
        f.write_all_at(b"XXXXXXXX", at + 100).unwrap();
        at += 4096;
    }
}

#[test]
fn a_kept_file_whose_payload_was_overwritten_fails_verification() {
    let t = tempfile::tempdir().unwrap();
    let p = t.path().to_str().unwrap();
    let data = t.path().join("trackbench-data");
    // Streaming: the tick compares every byte it plays.
    let play = [
        "play",
        p,
        "--tracks",
        "2",
        "--duration",
        "8s",
        "--chunk",
        "64K",
        "-q",
        "--keep",
    ];
    tb().args(play).assert().success();
    corrupt_payload(&data.join("play-0000.wav"));
    tb().args(play)
        .assert()
        .failure()
        .stderr(predicate::str::contains("not what was written"));
    // Classic reads: every tag, and one whole block per request (random 4K: one 512-byte slice
    // of it, the next each time; this corruption is in the first).
    let seek = [
        "seek",
        p,
        "--size",
        "8M",
        "--duration",
        "300ms",
        "-q",
        "--keep",
    ];
    tb().args(seek).assert().success();
    corrupt_payload(&data.join("span-0000.wav"));
    tb().args(seek)
        .assert()
        .failure()
        .stderr(predicate::str::contains("noise differs"));
    tb().args(["clean", p]).assert().success();
    assert!(!data.exists());
}

/// A memory control group of its own, removed on drop (root only).
struct MemoryGroup(PathBuf);
impl Drop for MemoryGroup {
    fn drop(&mut self) {
        let _ = fs::remove_dir(&self.0);
    }
}

#[test]
fn a_memory_limited_group_is_the_budget_not_the_machines_ram() {
    let v1 = Path::new("/sys/fs/cgroup/memory");
    if !trackbench::platform::is_root() || !v1.is_dir() {
        eprintln!("skipped: needs root and the cgroup v1 memory controller");
        return;
    }
    for g in crate::common::reap_test_groups(v1) {
        eprintln!(
            "removed what a test process that no longer runs left: {}",
            g.display()
        );
    }
    let g = MemoryGroup(v1.join(format!("trackbench-test-{}", std::process::id())));
    fs::create_dir(&g.0).unwrap();
    fs::write(g.0.join("memory.limit_in_bytes"), "1073741824").unwrap();
    let t = tempfile::tempdir().unwrap();
    // 800 tracks' rings (800M) fit half of the machine's RAM but not half of the group's 1G.
    let out = crate::common::tb_in_group(&g.0)
        .args(["play", "--tracks", "800", "-q"])
        .arg(t.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("would pin 800M") && err.contains("1G of memory this process may use"),
        "{err}"
    );
    assert!(!t.path().join("trackbench-data").exists());
}
