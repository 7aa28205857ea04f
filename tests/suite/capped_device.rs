//! The capacity promise on a device whose rate is known exactly: a loop device (on a file in a
//! temporary directory, with its own ext4) whose reads or writes the kernel caps through a
//! cgroup v1 blkio group (`blkio.throttle.*_bps_device`). The measuring process is moved into
//! the group by a small wrapper (`echo $$ > cgroup.procs; exec trackbench ...`); O_DIRECT keeps
//! every transfer inside the cap (v1 does not throttle buffered writeback). The exact bound is
//! cap ÷ per-track rate, and `--find-max` must land in [0.9, 1.0] of it, never above, whatever
//! the ring size.
//!
//! As root a fixture that cannot be built fails the test; as an ordinary user the tests are
//! skipped with the reason printed. The tests run side by side, each on its own loop device and
//! group: a search on a capped device waits on the device, not on the CPU (issue 18: the lock
//! that ran them one at a time made this file take ten minutes).

#![cfg(target_os = "linux")]

use serde_json::Value;

use crate::common;

use common::capped::{Capped, fixture};

/// A fixture leaves nothing behind, even while a process in its group still holds the mount
/// when the test ends (an interrupted run's cleaner did, and the unmount failed once, leaving an
/// ext4 on a loop device over a deleted image).
/// A suite killed with its fixtures up (no `Drop` runs) leaves a mount, a loop device, an image
/// and a group: the next test process's first fixture removes them, and nothing of a live
/// process's.
#[test]
fn what_a_killed_suites_fixture_left_is_removed_by_the_next() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: a capped loop device needs root");
        return;
    }
    let mut gone = std::process::Command::new("true").spawn().unwrap();
    gone.wait().unwrap();
    let dead = common::capped::Capped::owned_by(gone.id(), 64 << 20, Some(21_000_000), None)
        .unwrap_or_else(|e| panic!("cannot build the fixture: {e}"));
    let live = fixture(Some(21_000_000), None).expect("root builds fixtures");
    let (dir, mnt, dev, group) = (
        dead.dir.path().to_path_buf(),
        dead.mnt.to_str().unwrap().to_string(),
        dead.loop_dev().to_string(),
        dead.cgroup().to_path_buf(),
    );
    // As a killed process leaves it: nothing undone.
    std::mem::forget(dead);
    let removed = common::capped::reap_leftovers();
    common::capped::assert_released(
        &mnt,
        &dev,
        dir.to_str().unwrap(),
        &group,
        &format!(" (removed: {removed:?})"),
    );
    assert!(!dir.exists(), "{} is left", dir.display());
    // The live process's fixture is untouched.
    assert!(live.cgroup().exists() && live.mnt.exists());
    let live_mnt = live.mnt.to_str().unwrap().to_string();
    assert!(
        std::fs::read_to_string("/proc/mounts")
            .unwrap()
            .lines()
            .any(|l| l.split(' ').nth(1) == Some(live_mnt.as_str())),
        "the live fixture's mount was taken"
    );
}

#[test]
fn the_fixture_leaves_no_mount_loop_device_or_group_behind() {
    let Some(c) = fixture(Some(21_000_000), None) else {
        return;
    };
    let (mnt, dev, group, img) = (
        c.mnt.to_str().unwrap().to_string(),
        c.loop_dev().to_string(),
        c.cgroup().to_path_buf(),
        c.dir.path().join("disk.img").display().to_string(),
    );
    // A process in the group with its working directory on the mount, for a second.
    let procs = group.join("cgroup.procs");
    let holder = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "echo $$ > '{}' && cd '{mnt}' && sleep 1",
            procs.display()
        ))
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(200));
    drop(c);
    let mut holder = holder;
    let _ = holder.wait();
    common::capped::assert_released(&mnt, &dev, &img, &group, "");
}

/// The main search's answer in tracks.
fn answer(v: &Value) -> f64 {
    let s = &v["sections"][0]["detail"]["searches"][0];
    assert_eq!(s["capacity"]["confirmed"], true, "{s}");
    assert!(s["limited_by"].is_null(), "the search hit a limit: {s}");
    // Confirmed means the answer's own confirmation run passed (a confirmation above it may
    // have failed after it, closing the bracket).
    let probes = s["capacity"]["probes"].as_array().expect("probes");
    // What each probe's verdict rested on, for a failure's output: the rings' trend, its
    // noise and the butler's idle share, and how long it streamed.
    for p in probes {
        let e = &p["evidence"];
        eprintln!(
            "  {}{} {}: streamed {:.1} s, trend {:.3}% ± {:.3}%, idle {:.1}%",
            if p["confirmation"] == true {
                "confirm "
            } else {
                ""
            },
            p["count"],
            p["verdict"].as_str().unwrap_or("?"),
            p["ran_s"].as_f64().unwrap_or(f64::NAN),
            e["shortfall_pct"].as_f64().unwrap_or(f64::NAN),
            e["noise_pct"].as_f64().unwrap_or(f64::NAN),
            e["idle_pct"].as_f64().unwrap_or(f64::NAN),
        );
    }
    // A steering probe that ended before the others' full length either could no longer pass
    // (an xrun, a ring below the margin), or showed its verdict beyond doubt by the rule's
    // shortest run: a pass, or its butler never idle (under half a percent).
    let steady: Vec<&Value> = probes
        .iter()
        .filter(|p| p["steady_start"] == true)
        .collect();
    let full = steady
        .iter()
        .filter_map(|p| p["ran_s"].as_f64())
        .fold(0.0, f64::max);
    for p in &steady {
        let (ran, kind) = (
            p["ran_s"].as_f64().unwrap_or(full),
            p["shortcoming"]["kind"].as_str().unwrap_or(""),
        );
        if p["verdict"] != "pass" && ran < full - 0.5 {
            let idle = p["evidence"]["idle_pct"].as_f64().unwrap_or(f64::NAN);
            assert!(
                matches!(kind, "xruns" | "below_margin") || idle < 0.5,
                "a probe ended early at {ran} s of {full}, {kind}, idle {idle}%: {p}"
            );
        }
    }
    assert!(
        probes.iter().any(|p| p["confirmation"] == true
            && p["verdict"] == "pass"
            && p["count"] == s["capacity"]["answer"]),
        "no passed confirmation at the answer: {s}"
    );
    for p in probes {
        assert_eq!(
            p["shortcoming"]["kind"].is_string(),
            p["verdict"] != "pass",
            "a probe says why it fell short, and only then: {p}"
        );
    }
    (s["play_tracks"].as_u64().unwrap() + s["record_tracks"].as_u64().unwrap()) as f64
}

fn bytes_per_s(format: &str) -> f64 {
    trackbench::audio::Format::parse(format)
        .unwrap()
        .bytes_per_second() as f64
}

/// `answer` of `args` run on `c`, run again (three runs at most) while it falls below `low` of
/// `bound` and the run itself found the device short of its cap by more than a tenth (its
/// sequential transfer, or what a probe that fell short delivered) or had a probe below that
/// fail without telling what the device delivered. The fixture's image lies
/// on the host's disk, which under the suite's other tests does not always give a throttled
/// device its whole rate (a fresh clone's 10 s-ring search answered 130 of 145.8 when its
/// sequential read measured 16 MB/s on the 21 MB/s cap; a record search beside the real-disk
/// searches found 132 tracks short of spare capacity, 130 confirmed, and 145 alone). An
/// answer above the bound is never run again. Returns the answer and the last run's document.
fn answer_at_full_rate(c: &Capped, args: &[&str], bound: f64, low: f64) -> (f64, Value) {
    let mut runs = 0;
    loop {
        runs += 1;
        let v = c.run(args);
        let found = answer(&v);
        let detail = &v["sections"][0]["detail"];
        let naive = detail["naive_tracks"].as_f64().expect("the naive count");
        let failed: Vec<&Value> = detail["searches"][0]["capacity"]["probes"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|p| p["verdict"] != "pass")
            .collect();
        // The least a probe that fell short delivered, in tracks.
        let delivered = failed
            .iter()
            .filter_map(|p| p["estimate"].as_f64())
            .fold(f64::INFINITY, f64::min);
        // A failure below `low` of the bound that could not tell what the device delivered
        // (a ring below the margin before the steady part: 129 tracks of 1 s rings, 1.4 s into
        // a probe, beside the suite's other tests) may have been the host's stall as well.
        let blind = failed.iter().any(|p| {
            p["estimate"].is_null() && p["count"].as_f64().is_some_and(|n| n < low * bound)
        });
        let rate = naive.min(delivered);
        if found >= low * bound || (rate >= 0.9 * bound && !blind) || runs == 3 {
            return (found, v);
        }
        eprintln!(
            "{args:?}: {found} below {low} of {bound:.1} with the device at {:.2} of its cap (naive {naive:.1}, the least a failed probe delivered {delivered:.1}{}): run again",
            rate / bound,
            if blind {
                ", a failure below it telling nothing"
            } else {
                ""
            }
        );
    }
}

fn assert_within(found: f64, bound: f64, what: &str) {
    assert_between(found, bound, 0.9, what);
}

fn assert_between(found: f64, bound: f64, low: f64, what: &str) {
    eprintln!(
        "{what}: found {found}, exact bound {bound:.1} ({:.3})",
        found / bound
    );
    assert!(
        found <= bound && found >= low * bound,
        "{what}: found {found}, exact bound {bound:.1}: outside [{low}, 1.0]"
    );
}

#[test]
fn play_find_max_lands_just_under_the_bound_at_two_caps_and_formats() {
    // The two caps on two fixtures at once.
    std::thread::scope(|s| {
        // At 14 MB/s the bound is an upper one for tracks in phase: every ring asks for its
        // chunk at once each 1.49 s, the butler reads them in 1.42 s and waits ~0.06 s, time the
        // throttle does not lend back (fio's serial reader, never waiting, gets the whole 14.0
        // MB/s on the same files). At 76 tracks (0.957) the butler idled 9.7% and
        // the rings still lost 1.2%; the search answers 71-79 (0.895-0.995; docs/lab/capped-devices.md).
        for (cap, format, low) in [
            (21_000_000u64, "48k/24/mono", 0.9),
            (14_000_000, "44.1k/16/stereo", 0.85),
        ] {
            s.spawn(move || {
                let Some(c) = fixture(Some(cap), None) else {
                    return;
                };
                let bound = cap as f64 / bytes_per_s(format);
                let real = answer(&c.run(&["play", "--find-max", "--format", format]));
                assert_between(real, bound, low, &format!("play at {cap} B/s, {format}"));
                // The simulator with the same rate lands in the same place, closer to the
                // bound: it has none of the host's noise (a real search's answer moves within
                // [0.92, 0.995] of the bound from run to run on this shared virtual disk;
                // docs/lab/capped-devices.md).
                let sim = answer(&c.run(&[
                    "play",
                    "--find-max",
                    "--format",
                    format,
                    "--device-model",
                    &format!("bw={cap}"),
                ]));
                assert!(
                    sim <= bound && sim >= 0.97 * bound,
                    "simulated {sim} (real {real}) at {cap} B/s: outside [0.97, 1.0] of {bound:.1}"
                );
            });
        }
    });
}

#[test]
fn never_above_the_bound_for_small_and_large_rings() {
    let cap = 21_000_000u64;
    let bound = cap as f64 / bytes_per_s("48k/24/mono");
    // 1 s rings need a smaller chunk to stay short (four 64K chunks: 1.8 s); 10 s rings (Ardour's
    // Medium) hold far more than a probe drains (a count 2% over the bound drains a fifth of a
    // second in a probe's steady part): only measured spare capacity keeps the answer honest.
    // Each on its own fixture, at once. (20 s rings ask the same and took 281 s, the suite's
    // longest test: each probe's locate alone is a ring's worth of the capped device's time.)
    std::thread::scope(|s| {
        for args in [
            &["play", "--find-max", "--buffer", "1s", "--chunk", "64K"][..],
            &["play", "--find-max", "--buffer", "10s", "--chunk", "64K"],
        ] {
            s.spawn(move || {
                let Some(c) = fixture(Some(cap), None) else {
                    return;
                };
                let (found, _) = answer_at_full_rate(&c, args, bound, 0.9);
                assert_within(found, bound, &format!("{args:?}"));
            });
        }
    });
}

#[test]
fn record_find_max_on_a_write_capped_device() {
    let cap = 21_000_000u64;
    let Some(c) = fixture(None, Some(cap)) else {
        return;
    };
    let bound = cap as f64 / bytes_per_s("48k/24/mono");
    let (found, v) = answer_at_full_rate(&c, &["record", "--find-max"], bound, 0.9);
    assert_within(found, bound, "record at 21 MB/s");
    // The naive count and the first guess come from write rates, not the uncapped reads.
    let naive = v["sections"][0]["detail"]["naive_tracks"].as_f64().unwrap();
    assert!(
        naive < 1.5 * bound,
        "naive {naive} from a write rate near {bound:.0}"
    );
}

/// One streaming loop for real and simulated runs: the same scenario, on the capped device and
/// on a model of its rate, gives the same verdict and the same figures within the device's
/// noise, below the bound and above it.
#[test]
fn the_same_scenario_agrees_on_the_capped_device_and_its_model() {
    let cap = 21_000_000u64;
    let Some(c) = fixture(Some(cap), None) else {
        return;
    };
    let bound = cap as f64 / bytes_per_s("48k/24/mono");
    let figure = |v: &Value, name: &str| -> f64 {
        let figs = v["sections"][0]["rows"][0]["figures"].as_array().unwrap();
        figs.iter()
            .find(|f| f["name"] == name)
            .unwrap_or_else(|| panic!("no {name}"))["median"]
            .as_f64()
            .unwrap()
    };
    for (tracks, passes) in [((0.8 * bound) as u32, true), ((1.15 * bound) as u32, false)] {
        let n = tracks.to_string();
        let args = ["play", "--tracks", &n, "--duration", "20s"];
        let real = c.run(&args);
        let model = format!("bw={cap}");
        let mut sim_args = args.to_vec();
        sim_args.extend(["--device-model", &model]);
        let sim = c.run(&sim_args);
        let verdict = |v: &Value| {
            v["sections"][0]["detail"]["verdict"]
                .as_str()
                .unwrap()
                .to_string()
        };
        eprintln!(
            "{tracks} tracks: real {} idle {:.1}% {:.2} MB/s; simulated {} idle {:.1}% {:.2} MB/s",
            verdict(&real),
            figure(&real, "butler_idle_pct"),
            figure(&real, "read_mb_per_s"),
            verdict(&sim),
            figure(&sim, "butler_idle_pct"),
            figure(&sim, "read_mb_per_s"),
        );
        assert_eq!(verdict(&real) == "pass", passes, "real at {tracks}");
        assert_eq!(verdict(&sim) == "pass", passes, "simulated at {tracks}");
        if passes {
            // What the tracks asked for, delivered on both paths; the spare time agrees within
            // what the throttle lends after a gap.
            let (r, s) = (
                figure(&real, "read_mb_per_s"),
                figure(&sim, "read_mb_per_s"),
            );
            assert!((r - s).abs() <= 0.05 * s, "read {r} MB/s against {s}");
            let (ri, si) = (
                figure(&real, "butler_idle_pct"),
                figure(&sim, "butler_idle_pct"),
            );
            assert!((ri - si).abs() <= 8.0, "idle {ri}% against {si}%");
        } else {
            // Saturated: both deliver about the device's rate.
            let (r, s) = (
                figure(&real, "read_mb_per_s"),
                figure(&sim, "read_mb_per_s"),
            );
            assert!(
                r <= 1.05 * cap as f64 / 1e6 && s <= 1.05 * cap as f64 / 1e6,
                "{r} {s}"
            );
        }
    }
}

/// A program opens each file before it plays it, and parsing the header reads the file's first
/// page: the kernel then reads ahead of the audio's first read as of a stream from the file's
/// start. A page-cache profile must open its files so (`engine::read_headers`): without it,
/// ardour-small's 85 float tracks on a 21 MB/s cap with the kernel's default read-ahead ran dry
/// 5.33 s in, as their first rings ran out, where Ardour plays 95-104 (docs/lab/profiles.md); with it
/// they pass with the butler idle about two thirds of the run.
#[test]
fn a_page_cache_profile_opens_its_files_as_its_program_does() {
    let cap = 21_000_000u64;
    let Some(c) = fixture(Some(cap), None) else {
        return;
    };
    c.set_read_ahead_kb(128);
    let v = c.run(&[
        "play",
        "--tracks",
        "85",
        "--profile",
        "ardour-small",
        "--format",
        "48k/32f/mono",
        "--duration",
        "15s",
        "--no-store",
    ]);
    let d = &v["sections"][0]["detail"];
    let what = |d: &Value| {
        format!(
            "verdict {}, {} underruns from {} ms, butler idle {}%, locate {} ms, rings and read-ahead {}",
            d["verdict"],
            d["underruns"],
            d["first_xrun_ms"],
            d["butler_idle_pct"],
            d["locate_ms"],
            d["buffered_sustain"]
        )
    };
    assert_eq!(d["underruns"], 0, "{}", what(d));
    assert_eq!(d["verdict"], "pass", "{}", what(d));
    // The head start can hide a device that cannot keep up from the rings: 111 tracks, 1.5%
    // over what the cap carries, kept their rings above 20% for 34 s from what the kernel
    // had read ahead, while the device's own counters showed the lead being eaten (1.59% of
    // the demand, noise 0.16%). 112 tracks for 30 s: not a pass; where the rings held (here,
    // worst 14.5%), the device's shortfall is measured near what the cap says (2.4%). On a
    // busier machine (CI, beside wine) the rings ran dry instead, from 10.6 s: a failure, and
    // then the trend against what played (less than the demand) says nothing.
    let v = c.run(&[
        "play",
        "--tracks",
        "112",
        "--profile",
        "ardour-small",
        "--format",
        "48k/32f/mono",
        "--duration",
        "30s",
        "--no-store",
    ]);
    let d = &v["sections"][0]["detail"];
    assert_ne!(d["verdict"], "pass", "{}", what(d));
    if d["underruns"] == 0 {
        let behind = d["buffered_sustain"]["shortfall_pct"].as_f64();
        assert!(behind.is_some_and(|s| s > 1.0), "{}", what(d));
    }
}

/// Through the page cache a program's tracks refill in phase from the read-ahead, and a probe's
/// fill trend carries that wave: on a device capped at 100 reads a second (128 KiB read-ahead:
/// its reads 384 KiB, about 200 float tracks' worth), 60 ardour-small tracks for a probe's 12.4 s
/// "lost" 2.42% of the demand with a standard error of 1.22% while the butler was idle 99.8%,
/// which the 2% draining rule alone called marginal (and a search answered 99-102 where Ardour
/// played 225 on the same fixture). A drain there counts only beyond three standard errors too.
#[test]
fn a_page_cache_probe_is_not_called_draining_by_its_refill_wave() {
    let Some(c) = fixture(None, None) else {
        return;
    };
    c.set_read_iops(100);
    c.set_read_ahead_kb(128);
    let v = c.run(&[
        "play",
        "--tracks",
        "60",
        "--profile",
        "ardour-small",
        "--format",
        "48k/32f/mono",
        "--duration",
        "12.4s",
        "--no-store",
    ]);
    let d = &v["sections"][0]["detail"];
    let what = format!(
        "verdict {}, {} underruns, butler idle {}%, rings' trend {}, shortcoming {}",
        d["verdict"], d["underruns"], d["butler_idle_pct"], d["sustain"], d["shortcoming"]
    );
    assert_eq!(d["page_cache"], true, "{what}");
    assert_eq!(d["verdict"], "pass", "{what}");
    assert!(
        d["butler_idle_pct"].as_f64().is_some_and(|i| i > 50.0),
        "{what}"
    );
}

/// Sampler voices on the capped device: the most voices with no dropout stay within what the
/// device carries (every note played to its end, so the bound is exact: cap ÷ (stereo rate ×
/// the share of each note streamed past its preload)).
#[test]
fn sampler_voices_stay_within_the_capped_devices_bound() {
    use trackbench::engine::voices::{Library, library_lengths};
    let cap = 21_000_000u64;
    let Some(c) = fixture(Some(cap), None) else {
        return;
    };
    let format = trackbench::audio::Format::parse("48k/24/stereo").unwrap();
    let lens = library_lengths(200, 1.0, 10.0, &format, 1);
    let share = Library::new(lens, vec![0; 200], 60 << 10, 1).streamed_share();
    let bound = cap as f64 / (format.bytes_per_second() as f64 * share);
    let args = [
        "sampler",
        "--find-max",
        "--files",
        "200",
        "--notes-per-s",
        "0",
    ];
    // Run again (three runs at most) while the answer falls short and the search's own trail
    // shows the rate it was given moving: a count that failed below one that passed before.
    // A fresh clone's suite answered 54 (0.70) when 79 passed a probe and then 73 and 67 lost
    // notes, beside the suite's Windows tests.
    let mut runs = 0;
    let (v, found) = loop {
        runs += 1;
        let v = c.run(&args);
        let found = answer(&v);
        let probes = v["sections"][0]["detail"]["searches"][0]["capacity"]["probes"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let passed = probes
            .iter()
            .filter(|p| p["verdict"] == "pass")
            .filter_map(|p| p["count"].as_f64())
            .fold(0.0, f64::max);
        let moved = probes
            .iter()
            .any(|p| p["verdict"] != "pass" && p["count"].as_f64().is_some_and(|n| n < passed));
        if found >= 0.85 * bound || !moved || runs == 3 {
            break (v, found);
        }
        eprintln!("sampler: {found} voices, the rate moved during the search: run again");
    };
    eprintln!(
        "sampler: found {found} voices, bound {bound:.1} ({:.3})",
        found / bound
    );
    // The answer is confirmed by a run long enough for the throttle to stop lending: 79 voices
    // once passed a 7 s probe and its confirmation alike.
    let probes = &v["sections"][0]["detail"]["searches"][0]["capacity"]["probes"];
    let confirm = probes
        .as_array()
        .and_then(|p| p.iter().rev().find(|p| p["confirmation"] == true))
        .expect("a confirmation probe");
    let secs = confirm["elapsed_s"].as_f64().unwrap();
    assert!(
        secs >= trackbench::verdict::voices::CONFIRM_RUN_S,
        "the confirmation ran {secs:.1} s: {confirm}"
    );
    // The bound is the library's long-run demand at the cap's nominal rate. A run's notes
    // stream 0.2-0.3% less than the library's share (93.7-93.8% against 93.96%: notes its end
    // cuts short have played their preloads, not their tails), and the throttle passes 64 KiB
    // reads at 21.07 MB/s (dd, iflag=direct), so the device carries about 78.0 voices: the
    // answer may exceed 77.6 by that, no more.
    assert!(
        found <= 1.01 * bound && found >= 0.85 * bound,
        "found {found} voices, bound {bound:.1}: outside [0.85, 1.01] of it"
    );
}
