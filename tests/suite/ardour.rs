//! A profile against the program it names (issue 17): `play --find-max --profile ardour-medium`
//! (Ardour's default preset) on the capped-device fixture (a loop device with its own ext4,
//! reads capped at 21 MB/s by a blkio group), then Ardour 7 itself (Debian's `ardour`,
//! `/usr/lib/ardour7/luasession` with the Dummy backend, in real time) playing that many tracks
//! of a session it recorded, cold, for a minute: the profile must never promise more tracks than
//! Ardour plays without a dropout, and Ardour must drop out at the cap's bound (the fixture
//! binds it, so the first check says something). Within [0.9, 1.05] of Ardour's maximum is the
//! aim (issue 17) and not met: on this fixture the prediction is about half of what Ardour
//! plays, and Ardour's own maximum moves with the host and the device's read-ahead
//! (BENCHMARKS.md has the table, and why). `bench/ardour.py --check` does the work (the same
//! harness as BENCHMARKS.md's table); this test runs it and reads its line. The record side
//! (`bench/ardour.py --record-at`) runs beside it on a fixture of its own.
//!
//! Needs root (loop devices, mounts, blkio) and Ardour; skipped with a line on stderr without
//! them, failed instead where `TRACKBENCH_TEST_REQUIRE` names `ardour` (.ci/run installs it).
//! Ignored by a plain `cargo test`: Ardour rolls in real time for about eight minutes, longer
//! than the rest of the suite together, so `.ci/run` runs these two as a step of their own
//! (`cargo test --test suite ardour:: -- --ignored`), as it runs the studio's under mpirun.
//! Leaves nothing: the harness removes its fixture, and its trials run in their own group.

#![cfg(target_os = "linux")]

use crate::common;

use std::path::Path;
use std::process::Command;

const LUASESSION: &str = "/usr/lib/ardour7/luasession";

/// Runs `bench/ardour.py` with `args` and returns what it printed (stdout, stderr); None when
/// this machine cannot run it (no Ardour, not root: said by `common::missing`). Fails the test
/// when the harness fails.
fn harness(args: &[&str]) -> Option<(String, String)> {
    if !Path::new(LUASESSION).exists() {
        common::missing("ardour", "/usr/lib/ardour7/luasession is not installed");
        return None;
    }
    if !trackbench::platform::is_root() {
        common::missing("ardour", "the fixture needs root (loop devices, blkio)");
        return None;
    }
    let out = Command::new("python3")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/bench/ardour.py"))
        .args(args)
        .env("TRACKBENCH_BIN", env!("CARGO_BIN_EXE_trackbench"))
        .env("XDG_DATA_HOME", common::store_home())
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "the harness failed:\n{stdout}\n{stderr}"
    );
    Some((stdout, stderr))
}

#[test]
#[ignore = "Ardour in real time, 8 minutes: its own CI step (cargo test --test suite ardour:: -- --ignored)"]
fn ardour_plays_what_its_profile_predicts() {
    let Some((stdout, stderr)) = harness(&[
        "--check",
        "--presets",
        "Medium",
        "--formats",
        "int24",
        "--cap-bps",
        "21000000",
        "--roll",
        "60",
    ]) else {
        return;
    };
    let line = stdout
        .lines()
        .find(|l| l.starts_with("check "))
        .unwrap_or_else(|| panic!("no check line:\n{stdout}\n{stderr}"));
    eprintln!("{line}");
    let field = |k: &str| -> u64 {
        line.split_whitespace()
            .find_map(|kv| kv.strip_prefix(&format!("{k}=")))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no {k} in {line}"))
    };
    let (predicted, passed) = (field("predicted"), field("ardour_passed"));
    assert!(
        predicted >= 10,
        "a prediction of {predicted} tracks is no answer: {line}"
    );
    assert!(
        passed >= 2,
        "Ardour could not play the {predicted} tracks ardour-medium predicted (twice out of three): {line}"
    );
    assert!(
        field("bound_dropouts") > 0,
        "Ardour played {} tracks, the cap's bound, without a dropout: the fixture does not bind it: {line}",
        field("bound_tracks")
    );
}

/// The record side (issue 17), on a fixture of its own whose *writes* the kernel caps at 21 MB/s
/// (the bound: 145.8 tracks of 24-bit): Ardour records 300 tracks for a minute with its Medium
/// buffers, and `record --tracks 300 --profile ardour-medium` runs as long on the same fixture.
/// They must agree: the profile passes exactly where Ardour kept every sample (both write
/// through the page cache, which holds a minute of 300 tracks; BENCHMARKS.md has the table for
/// every preset). The default engine's direct writes beside them must fail: the cap binds what
/// reaches the device, so the agreement says something.
#[test]
#[ignore = "Ardour in real time, 8 minutes: its own CI step (cargo test --test suite ardour:: -- --ignored)"]
fn ardour_and_its_profile_record_alike_on_a_write_capped_device() {
    let Some((stdout, stderr)) = harness(&[
        "--record-at",
        "300",
        "--presets",
        "Medium",
        "--cap-bps",
        "21000000",
        "--roll",
        "60",
    ]) else {
        return;
    };
    let row = stdout
        .lines()
        .find(|l| l.starts_with("| 300 | Medium |"))
        .unwrap_or_else(|| panic!("no row for 300 tracks:\n{stdout}\n{stderr}"));
    eprintln!("{row}");
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    // ["", "300", "Medium", "K of F (R s rolled)", "verdict (N overruns)", "verdict (…)", ""]
    let (ardour, profile, default) = (cells[3], cells[4], cells[5]);
    let lost: u32 = ardour
        .split_whitespace()
        .next()
        .and_then(|k| k.parse().ok())
        .unwrap_or_else(|| panic!("no count in {ardour:?}: {row}"));
    let files: u32 = ardour
        .split_whitespace()
        .nth(2)
        .and_then(|k| k.parse().ok())
        .unwrap_or_else(|| panic!("no file count in {ardour:?}: {row}"));
    assert_eq!(files, 300, "Ardour recorded {files} files, not 300: {row}");
    assert_eq!(
        profile.starts_with("pass"),
        lost == 0,
        "ardour-medium says {profile} where Ardour lost samples on {lost} of 300 tracks: {row}"
    );
    assert!(
        default.starts_with("fail"),
        "direct writes of 300 tracks passed a 21 MB/s write cap (bound 145.8): {row}"
    );
}
