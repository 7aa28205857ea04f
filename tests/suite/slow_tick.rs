//! A machine whose audio thread cannot keep up: the real tick, held by the kernel to a sliver of a
//! CPU, falls behind its schedule while the butler and the disk have all they need. Before the
//! rule, such a run passed: its tick asked for less audio than the count needs, and the rings
//! held on the lighter demand.

use serde_json::Value;
use std::path::{Path, PathBuf};

/// A cgroup v1 cpu group of its own whose real-time threads may run `runtime_us` of every
/// 100 ms (`cpu.rt_runtime_us`), removed on drop (root only). trackbench's tick asks for
/// SCHED_FIFO, which the group grants, and the kernel then holds it to that share; its other
/// threads are ordinary ones the group does not limit.
struct RtGroup(PathBuf);

impl RtGroup {
    fn new(runtime_us: u64) -> Option<RtGroup> {
        let v1 = Path::new("/sys/fs/cgroup/cpu");
        if !trackbench::platform::is_root() || !v1.join("cpu.rt_runtime_us").exists() {
            eprintln!("skipped: needs root and the cgroup v1 cpu controller with real-time groups");
            return None;
        }
        for g in crate::common::reap_test_groups(v1) {
            eprintln!(
                "removed what a test process that no longer runs left: {}",
                g.display()
            );
        }
        let g = RtGroup(v1.join(format!("trackbench-test-{}-rt", std::process::id())));
        std::fs::create_dir(&g.0).expect("creates the group");
        std::fs::write(g.0.join("cpu.rt_period_us"), "100000").expect("sets the period");
        std::fs::write(g.0.join("cpu.rt_runtime_us"), runtime_us.to_string())
            .expect("sets the real-time share");
        Some(g)
    }
}

impl Drop for RtGroup {
    fn drop(&mut self) {
        // The run has ended (its process was waited for); its group empties as it exits.
        for _ in 0..100 {
            if std::fs::remove_dir(&self.0).is_ok() || !self.0.exists() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }
}

#[test]
fn a_tick_held_to_a_sliver_of_a_cpu_falls_behind_and_cannot_pass() {
    // 2% of a CPU for the tick: 100 tracks at 16-frame periods (3000 ticks a second) took 6% of
    // one on this machine, so the tick kept up with about a third of the demand (68.6% behind),
    // and one three times as fast would still fall behind.
    let Some(g) = RtGroup::new(2_000) else {
        return;
    };
    let t = tempfile::tempdir().unwrap();
    let json = t.path().join("result.json");
    let out = crate::common::tb_in_group(&g.0)
        .args([
            "play", "--tracks", "100", "--period", "16", "--chunk", "64K",
        ])
        .args(["--duration", "7s", "-q", "--json"])
        .arg(&json)
        .arg(t.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let o = &v["sections"][0]["detail"];
    let why = &o["shortcoming"];
    assert_eq!(o["verdict"], "marginal", "{o:#}");
    assert_eq!(why["kind"], "tick_behind", "{why:#}");
    let behind = why["behind_pct"].as_f64().unwrap();
    assert!(behind > 10.0 && behind < 100.0, "{behind}");
    assert_eq!(o["tick_behind_pct"].as_f64(), Some(behind));
    // The storage had all it needed: no xrun, and the rings never came near the margin.
    assert_eq!(o["underruns"], 0, "{o:#}");
    assert!(
        stdout.contains("the audio tick fell behind its schedule"),
        "{stdout}"
    );
    assert!(!t.path().join("trackbench-data").exists());
}

#[test]
fn a_group_that_a_killed_test_process_left_is_removed_and_a_live_ones_is_not() {
    let v1 = Path::new("/sys/fs/cgroup/cpu");
    if !trackbench::platform::is_root() || !v1.is_dir() {
        eprintln!("skipped: needs root and the cgroup v1 cpu controller");
        return;
    }
    // A process that has ended: its group is what a killed suite leaves.
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let left = v1.join(format!("trackbench-test-{dead}-rt"));
    let live = v1.join(format!("trackbench-test-{}-live", std::process::id()));
    std::fs::create_dir(&left).unwrap();
    std::fs::create_dir(&live).unwrap();
    let removed = crate::common::reap_test_groups(v1);
    let (left_stays, live_stays) = (left.exists(), live.exists());
    let _ = std::fs::remove_dir(&live);
    let _ = std::fs::remove_dir(&left);
    // Gone (by this reaping, or by the other test's, which reaps as it starts beside this one).
    assert!(!left_stays, "{} left; removed {removed:?}", left.display());
    assert!(live_stays);
}
