//! A studio on one shared storage: trackbench under mpirun, every rank a workstation. Run with
//! the `mpi` feature (`cargo test --features mpi --test suite studio::`); `.ci/run` installs OpenMPI
//! and requires it. The NAS fixture is the capped loop device with every rank in its one blkio
//! group: the storage's total rate is known exactly, so the studio's total must land in
//! [0.9, 1.0] of the bound, and each workstation's count near a third of it.

#![cfg(all(feature = "mpi", target_os = "linux"))]

use crate::common;

use common::capped::fixture;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One test at a time: three ranks already share this machine's two cores, and a search on the
/// capped device must not compete with another test's ranks for them.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// mpirun and the flags to run `np` ranks on this one machine (as root too), or None (the
/// test is skipped, or fails where CI requires MPI).
fn mpirun(np: u32) -> Option<Vec<String>> {
    let found = Command::new("mpirun")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        common::missing("mpi", "mpirun is not installed (Debian: openmpi-bin)");
        return None;
    }
    Some(
        ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np"]
            .iter()
            .map(|s| s.to_string())
            .chain([np.to_string()])
            .collect(),
    )
}

fn bin() -> std::path::PathBuf {
    assert_cmd::cargo::cargo_bin("trackbench")
}

/// `mpirun … trackbench ARGS DIR --json J -q` on a plain directory: the exit status, stdout,
/// stderr and the document (if written).
fn studio(np: u32, args: &[&str], dir: &Path) -> Option<(bool, String, String, Option<Value>)> {
    let launcher = mpirun(np)?;
    let json = dir.join("result.json");
    let out = Command::new(&launcher[0])
        .args(&launcher[1..])
        .arg(bin())
        .args(args)
        .arg(dir.join("target"))
        .arg("--json")
        .arg(&json)
        .arg("-q")
        .env("XDG_DATA_HOME", common::store_home())
        .output()
        .expect("mpirun runs");
    let doc = std::fs::read(&json)
        .ok()
        .map(|b| serde_json::from_slice(&b).expect("a JSON document"));
    let _ = std::fs::remove_file(&json);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    Some((out.status.success(), stdout, stderr, doc))
}

fn target_dir() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir(d.path().join("target")).unwrap();
    d
}

fn answer_each(v: &Value) -> f64 {
    let s = &v["sections"][0]["detail"]["searches"][0];
    assert_eq!(s["capacity"]["confirmed"], true, "{s}");
    assert!(s["limited_by"].is_null(), "the search hit a limit: {s}");
    (s["play_tracks"].as_u64().unwrap() + s["record_tracks"].as_u64().unwrap()) as f64
}

#[test]
fn a_studio_search_shares_the_capped_storages_bound_and_its_model_agrees() {
    let _one = one_at_a_time();
    let cap = 21_000_000u64;
    let Some(launcher) = mpirun(3) else {
        return;
    };
    let Some(c) = fixture(Some(cap), None) else {
        return;
    };
    let launcher: Vec<&str> = launcher.iter().map(String::as_str).collect();
    let v = c.run_under(&launcher, &["play", "--find-max"]);
    let bound = cap as f64 / 144_000.0;
    let each = answer_each(&v);
    let total = 3.0 * each;
    eprintln!(
        "studio: 3 x {each} = {total} tracks, exact bound {bound:.1} ({:.3})",
        total / bound
    );
    assert!(
        total <= bound && total >= 0.9 * bound,
        "3 workstations x {each} = {total}: outside [0.9, 1.0] of the storage's {bound:.1}"
    );
    // Every host is in the document, and every probe says what each rank saw.
    let st = &v["studio"];
    assert_eq!(st["ranks"], 3);
    let hosts = st["hosts"].as_array().unwrap();
    assert_eq!(hosts.len(), 3);
    for (i, h) in hosts.iter().enumerate() {
        assert_eq!(h["rank"], i);
        assert!(h["start_skew_ms_max"].as_f64().unwrap() >= 0.0);
    }
    let probes = v["sections"][0]["detail"]["searches"][0]["capacity"]["probes"]
        .as_array()
        .unwrap();
    assert!(
        probes
            .iter()
            .all(|p| p["ranks"].as_array().unwrap().len() == 3)
    );
    for p in probes {
        assert_eq!(
            p["shortcoming"]["kind"].is_string(),
            p["verdict"] != "pass",
            "a studio's probe says why it fell short, and only then: {p}"
        );
    }
    // At the answer, every workstation passed, and together they read no more than the cap.
    let last = probes.last().unwrap();
    assert_eq!(last["count"].as_f64().unwrap(), each);
    let mut read = 0.0;
    for r in last["ranks"].as_array().unwrap() {
        assert_eq!(r["verdict"], "pass", "{r}");
        read += r["figures"]["read_mb_per_s"].as_f64().unwrap();
    }
    assert!(read * 1e6 <= cap as f64 * 1.02, "read {read} MB/s in all");
    // The shared-storage model of the same storage, in virtual time, agrees.
    let out = Command::new(bin())
        .args([
            "play",
            "--find-max",
            "--device-model",
            &format!("nas:bw={cap},clients=3"),
            "--no-store",
            "-q",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    let model: f64 = text
        .lines()
        .find_map(|l| {
            l.split("3 workstations × ")
                .nth(1)?
                .split(' ')
                .next()?
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("the model's answer for 3 workstations: {text}"));
    eprintln!("model: 3 x {model}; real: 3 x {each}");
    assert!(
        model <= bound / 3.0 && model >= 0.97 * bound / 3.0,
        "model {model}"
    );
    assert!(
        each <= model + 1.0 && each >= 0.9 * model,
        "real {each} against the model's {model}"
    );
}

#[test]
fn one_rank_is_a_single_computer() {
    let _one = one_at_a_time();
    let d = target_dir();
    let Some((ok, stdout, stderr, doc)) =
        studio(1, &["play", "--tracks", "4", "--duration", "2s"], d.path())
    else {
        return;
    };
    assert!(ok, "{stderr}");
    let doc = doc.expect("rank 0 writes the document");
    assert!(doc.get("studio").is_none(), "one rank is no studio");
    assert!(!stdout.contains("Studio:"), "{stdout}");
    assert!(!d.path().join("target/trackbench-data").exists());
    // The same search alone and as the only rank: the same answer.
    let args = ["play", "--find-max", "--device-model", "sata-ssd"];
    let (_, _, _, one) = studio(1, &args, d.path()).unwrap();
    let alone = Command::new(bin())
        .args(args)
        .arg(d.path().join("target"))
        .args(["--json", "-", "--no-store", "-q"])
        .output()
        .unwrap();
    let alone: Value = serde_json::from_slice(&alone.stdout).unwrap();
    assert_eq!(answer_each(&one.unwrap()), answer_each(&alone));
}

#[test]
fn every_rank_measures_at_once_in_its_own_directory_and_roles_differ() {
    let _one = one_at_a_time();
    let d = target_dir();
    let Some((ok, stdout, stderr, doc)) = studio(
        3,
        &[
            "play",
            "--roles",
            "play:2,record:1",
            "--tracks",
            "4",
            "--duration",
            "2s",
        ],
        d.path(),
    ) else {
        return;
    };
    assert!(ok, "{stderr}");
    let doc = doc.unwrap();
    let hosts = doc["studio"]["hosts"].as_array().unwrap();
    let roles: Vec<&str> = hosts
        .iter()
        .map(|h| h["sections"][0]["workload"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["play", "play", "record"]);
    assert!(stdout.contains("3 workstations ran it at once"), "{stdout}");
    assert!(stdout.contains("the storage delivered"), "{stdout}");
    assert!(!d.path().join("target/trackbench-data").exists());

    // A classic measurement: every rank's transfer starts together, and the totals add up.
    let (ok, stdout, stderr, doc) =
        studio(3, &["seek", "--duration", "1s", "--size", "64M"], d.path()).unwrap();
    assert!(ok, "{stderr}");
    let doc = doc.unwrap();
    let iops: Vec<f64> = doc["studio"]["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            h["sections"][0]["rows"][0]["figures"]
                .as_array()
                .unwrap()
                .iter()
                .find(|f| f["name"] == "iops")
                .unwrap()["median"]
                .as_f64()
                .unwrap()
        })
        .collect();
    assert!(iops.len() == 3 && iops.iter().all(|&x| x > 0.0), "{iops:?}");
    assert!(stdout.contains("IOPS"), "{stdout}");
    assert!(!d.path().join("target/trackbench-data").exists());

    // The sampler's voices, on every rank.
    let (ok, _, stderr, doc) = studio(
        3,
        &[
            "sampler",
            "--voices",
            "4",
            "--files",
            "20",
            "--lengths",
            "1s..2s",
            "--duration",
            "2s",
        ],
        d.path(),
    )
    .unwrap();
    assert!(ok, "{stderr}");
    assert_eq!(doc.unwrap()["studio"]["hosts"].as_array().unwrap().len(), 3);
    assert!(!d.path().join("target/trackbench-data").exists());
}

#[test]
fn ranks_given_different_settings_refuse_before_writing_anything() {
    let _one = one_at_a_time();
    let d = target_dir();
    let Some(launcher) = mpirun(1) else {
        return;
    };
    let t = d.path().join("target");
    let out = Command::new(&launcher[0])
        .args(&launcher[1..])
        .arg(bin())
        .args(["play", "--tracks", "4", "--duration", "2s", "-q"])
        .arg(&t)
        .arg(":")
        .args(["-np", "1"])
        .arg(bin())
        .args(["play", "--tracks", "5", "--duration", "2s", "-q"])
        .arg(&t)
        .env("XDG_DATA_HOME", common::store_home())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("rank 1 was given") && stderr.contains("--tracks 5"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(!t.join("trackbench-data").exists(), "nothing is written");
    // --roles must name every rank.
    let (ok, _, stderr, _) = studio(2, &["play", "--roles", "play:3"], d.path()).unwrap();
    assert!(
        !ok && stderr.contains("they name 3 workstations, but 2 are running"),
        "{stderr}"
    );
    assert!(!t.join("trackbench-data").exists());
}

/// The pid in a rank's lock file, once the rank holds it.
fn rank_pid(dir: &Path, rank: u32) -> Option<i32> {
    let lock = dir.join(format!("trackbench-data/rank-{rank:03}/lock"));
    std::fs::read_to_string(lock)
        .ok()?
        .lines()
        .next()?
        .trim()
        .parse()
        .ok()
}

/// The process still runs: it exists and is not a zombie waiting for the launcher to reap it.
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X")
    })
}

#[test]
fn a_killed_rank_stops_the_others_within_two_seconds_and_is_named() {
    let _one = one_at_a_time();
    let d = target_dir();
    let Some(launcher) = mpirun(3) else {
        return;
    };
    let t = d.path().join("target");
    let json = d.path().join("result.json");
    let job = Command::new(&launcher[0])
        .args(&launcher[1..])
        .arg(bin())
        .args(["play", "--tracks", "8", "--duration", "60s", "-q"])
        .arg(&t)
        .arg("--json")
        .arg(&json)
        .env("XDG_DATA_HOME", common::store_home())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until every rank holds its directory and the run has started.
    let start = Instant::now();
    let pids = loop {
        let p: Vec<Option<i32>> = (0..3).map(|r| rank_pid(&t, r)).collect();
        if p.iter().all(Option::is_some) {
            break p.into_iter().flatten().collect::<Vec<_>>();
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "ranks did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    std::thread::sleep(Duration::from_secs(3));
    // SAFETY: a process of this test's job.
    unsafe { libc::kill(pids[1], libc::SIGKILL) };
    let killed = Instant::now();
    while alive(pids[0]) || alive(pids[2]) {
        assert!(
            killed.elapsed() < Duration::from_secs(10),
            "the other ranks still run"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let stopped = killed.elapsed();
    let out = job.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("the other ranks stopped {stopped:?} after rank 1 was killed");
    assert!(
        stopped <= Duration::from_secs(2),
        "the others stopped only after {stopped:?}: {stderr}"
    );
    assert!(!out.status.success());
    // Rank 0 saved the result, interrupted, naming the rank that died.
    let doc = std::fs::read(&json)
        .unwrap_or_else(|e| panic!("no document at {} ({e}): {stderr}", json.display()));
    let doc: Value = serde_json::from_slice(&doc).unwrap();
    assert_eq!(doc["interrupted"], true);
    assert_eq!(doc["studio"]["lost_ranks"], serde_json::json!([1]));
    assert!(
        doc["warnings"].as_array().unwrap().iter().any(|w| w
            .as_str()
            .unwrap()
            .contains("rank 1 stopped without cleaning up")),
        "{doc}"
    );
    // The survivors leave nothing of theirs; the dead rank's files wait for clean.
    let data = t.join("trackbench-data");
    let gone = Instant::now();
    while (data.join("rank-000").exists() || data.join("rank-002").exists())
        && gone.elapsed() < Duration::from_secs(15)
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!data.join("rank-000").exists() && !data.join("rank-002").exists());
    assert!(data.join("rank-001").exists());
    let c = common::tb().arg("clean").arg(&t).output().unwrap();
    assert!(c.status.success());
    assert!(!data.exists(), "clean leaves nothing");
}
