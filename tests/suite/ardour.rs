//! A profile against the program it names (issue 17): `play --find-max --profile ardour-medium`
//! (Ardour's default preset) on the capped-device fixture (a loop device with its own ext4,
//! reads capped at 21 MB/s by a blkio group, its read-ahead at the kernel's default of 128 KiB),
//! then Ardour 7 itself (Debian's `ardour`, `/usr/lib/ardour7/luasession` with the Dummy backend,
//! in real time) playing a session it recorded, cold, for a minute, from both sides of the
//! prediction: Ardour must hold 0.9 of it and must not hold 1.2 times it (docs/lab/profiles.md has the
//! table for every preset and format). `bench/ardour.py --check` does the work (the same harness
//! as docs/lab/profiles.md's table); this test runs it and reads its line. The record side
//! (`bench/ardour.py --record-at`) runs after it on a fixture of its own: one at a time, because
//! two real-time Ardour engines on this 2-core machine take each other's CPU (CI once failed the
//! playback check with two of three rolls at 0.9 of the prediction behind the wall clock and no
//! dropout, the record side's 300 tracks beside it). A roll Ardour's engine lost that way is not
//! counted for or against the prediction; the harness repeats it and says so in its line.
//!
//! There is no check at this VM's own loop-device read-ahead (2560 KiB): there Ardour's count
//! moves with the host by a third (56 to 74 tracks held on different days) while the prediction
//! sits inside that spread (67 to 75), so "never more than Ardour" failed `.ci/run` twice (at 75
//! and at 67 tracks) without the profile being wrong by the issue's measure (docs/lab/profiles.md, "The
//! check at this VM's read-ahead retired").
//!
//! Needs root (loop devices, mounts, blkio) and Ardour; skipped with a line on stderr without
//! them, failed instead where `TRACKBENCH_TEST_REQUIRE` names `ardour` (.ci/run installs it).
//! Ignored by a plain `cargo test`: Ardour rolls in real time for about fifteen minutes,
//! longer than the rest of the suite together, so `.ci/run` runs these two as a step of their own
//! (`cargo test --test suite ardour:: -- --ignored --test-threads=1`), as it runs the studio's
//! under mpirun.
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

/// The harness's check line, by field.
struct Check {
    line: String,
    fields: std::collections::HashMap<String, String>,
}

impl Check {
    /// `bench/ardour.py --check` for ardour-medium on 24-bit tracks, a 21 MB/s cap and 60 s
    /// rolls, with `extra` arguments; None where this machine cannot run it.
    fn medium(extra: &[&str]) -> Option<Check> {
        let common = [
            "--check",
            "--presets",
            "Medium",
            "--formats",
            "int24",
            "--cap-bps",
            "21000000",
            "--roll",
            "60",
        ];
        let (stdout, stderr) = harness(&[&common[..], extra].concat())?;
        let line = stdout
            .lines()
            .find(|l| l.starts_with("check "))
            .unwrap_or_else(|| panic!("no check line:\n{stdout}\n{stderr}"))
            .to_string();
        eprintln!("{line}");
        let fields = line
            .split_whitespace()
            .filter_map(|kv| kv.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Some(Check { line, fields })
    }

    fn number(&self, k: &str) -> u64 {
        self.fields
            .get(k)
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no {k} in {}", self.line))
    }

    /// Ardour held the count it had to hold (twice before failing twice; rolls its engine lost to
    /// the CPU not counted) and did not hold the count it had to fail (a dropout or a saturated
    /// device); `held` and `failed` say what each means.
    fn assert_ardour_holds_and_drops(&self, held: &str, failed: &str) {
        let line = &self.line;
        assert!(
            self.number("predicted") >= 10,
            "a prediction of {} tracks is no answer: {line}",
            self.number("predicted")
        );
        let reason = |k: &str| self.fields.get(k).map(String::as_str).unwrap_or("");
        // A roll Ardour's engine lost (behind the wall clock with no dropout and the device not
        // saturated) is the CPU's, not the disk's: the harness repeats it, and where every roll
        // was lost the machine could not judge the prediction, which is said as such.
        assert!(
            self.number("ardour_passed") >= 2 || self.number("ardour_failed") >= 2,
            "Ardour's engine did not keep real time at {} tracks in enough rolls to judge the \
             prediction (the CPU, not the disk: reasons {}): {line}",
            self.number("hold_tracks"),
            reason("hold_reasons")
        );
        assert!(
            self.number("ardour_passed") >= 2,
            "Ardour could not play {} tracks (failed twice before it passed twice): {held}: {line}",
            self.number("hold_tracks")
        );
        assert!(
            !reason("fail_reason").starts_with("engine:"),
            "Ardour's engine did not keep real time at {} tracks (the CPU, not the disk), so the \
             device was not shown to bind: {line}",
            self.number("fail_tracks")
        );
        assert_eq!(
            self.number("fail_passed"),
            0,
            "Ardour played {} tracks without a dropout or a saturated device: {failed}: {line}",
            self.number("fail_tracks")
        );
    }
}

/// The prediction near Ardour's own maximum (issue 17), at the kernel's default read-ahead of
/// 128 KiB, where docs/lab/profiles.md measured ardour-medium's 24-bit answer at 1.00 of Ardour's
/// (98 and 98): Ardour must hold 0.9 of the prediction (pass twice before failing twice) and
/// must not hold 1.2 times it (a dropout, or the device saturated). So the prediction is within about
/// 0.83-1.11 of what Ardour plays, which leaves room for Ardour's spread from trial to trial
/// and for the search's; the table's [0.9, 1.05] is measured, not asserted.
#[test]
#[ignore = "Ardour in real time, 16 minutes: its own CI step (cargo test --test suite ardour:: -- --ignored)"]
fn ardour_plays_near_what_its_profile_predicts_at_the_default_read_ahead() {
    let Some(c) = Check::medium(&[
        "--read-ahead-kb",
        "128",
        "--hold-share",
        "0.9",
        "--fail-share",
        "1.2",
    ]) else {
        return;
    };
    assert!(
        c.number("predicted") >= 40,
        "ardour-medium predicted {} tracks where Ardour plays about 98: {}",
        c.number("predicted"),
        c.line
    );
    c.assert_ardour_holds_and_drops(
        "that is 0.9 of ardour-medium's prediction, which promises too much",
        "that is 1.2 times ardour-medium's prediction, which promises too little",
    );
}

/// The record side (issue 17), on a fixture of its own whose *writes* the kernel caps at 21 MB/s
/// (the bound: 145.8 tracks of 24-bit): Ardour records 300 tracks for a minute with its Medium
/// buffers, and `record --tracks 300 --profile ardour-medium` runs as long on the same fixture.
/// They must agree: the profile passes exactly where Ardour kept every sample (both write
/// through the page cache, which holds a minute of 300 tracks; docs/lab/profiles.md has the table for
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
