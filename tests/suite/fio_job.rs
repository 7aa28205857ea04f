//! `--fio-job FILE`: every classic measurement written as a fio job file beside the run, which
//! fio itself accepts and runs (Debian's `fio`, installed by `.ci/run`), reading and writing
//! only its own files in the target and removing them.

use crate::common;

use common::tb;
use predicates::prelude::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn fio_available() -> Result<(), String> {
    match Command::new("fio").arg("--version").output() {
        Ok(o) if o.status.success() => Ok(()),
        _ => Err("no fio on the PATH".into()),
    }
}

fn job_file(args: &[&str], dir: &Path, name: &str) -> String {
    let f = dir.join(name);
    tb().args(args)
        .arg("--fio-job")
        .arg(&f)
        .args(["-q", "--no-store"])
        .assert()
        .success()
        .stderr(predicate::str::contains("fio job file:"));
    std::fs::read_to_string(&f).unwrap()
}

#[test]
fn every_classic_measurement_has_its_fio_job_and_fio_runs_it() {
    let t = tempfile::tempdir().unwrap();
    let target = t.path().join("disk");
    std::fs::create_dir(&target).unwrap();
    let d = target.to_str().unwrap();
    let jobs = t.path().join("jobs");
    std::fs::create_dir(&jobs).unwrap();
    // Each command's own jobs, with its sizes, patterns and queue depth.
    let seq = job_file(
        &["seq", d, "--size", "8M", "--block", "256K"],
        &jobs,
        "seq.fio",
    );
    assert!(
        seq.contains("[seq-write]\nrw=write\nbs=256k\nfilename=trackbench-fio.dat\nfilesize=8m\n"),
        "{seq}"
    );
    assert!(
        seq.contains("[seq-read]\nstonewall\nrw=read\nbs=256k\nsize=8m\n"),
        "{seq}"
    );
    assert!(
        seq.contains("ioengine=psync\niodepth=1\ndirect=1\n"),
        "{seq}"
    );
    let seek = job_file(
        &[
            "seek",
            d,
            "--size",
            "8M",
            "--duration",
            "200ms",
            "--qd",
            "4",
        ],
        &jobs,
        "seek.fio",
    );
    assert!(seek.contains("ioengine=io_uring\niodepth=4\n"), "{seek}");
    assert!(
        seek.contains("rw=randread\nbs=4k\nnorandommap=1\ntime_based\nruntime=200ms\n"),
        "{seek}"
    );
    let access = job_file(
        &["access", d, "--size", "8M", "--duration", "200ms"],
        &jobs,
        "access.fio",
    );
    assert!(
        access.contains("[access-same-sector]") && access.contains("size=64k\n"),
        "{access}"
    );
    let mix = job_file(
        &["mix", d, "--size", "8M", "--duration", "200ms"],
        &jobs,
        "mix.fio",
    );
    assert!(
        mix.contains("rw=randrw\nbs=8k") && mix.contains("rwmixread=70"),
        "{mix}"
    );
    let zones = job_file(
        &[
            "zones",
            d,
            "--size",
            "8M",
            "--points",
            "4",
            "--per-point",
            "1M",
            "--duration",
            "200ms",
        ],
        &jobs,
        "zones.fio",
    );
    assert!(
        zones.contains("[zone-4]") && zones.contains("offset=7340032\n"),
        "{zones}"
    );
    let sweep = job_file(
        &[
            "sweep",
            d,
            "--files",
            "3",
            "--file-size",
            "4M",
            "--blocks",
            "64K,1M",
            "--duration",
            "200ms",
        ],
        &jobs,
        "sweep.fio",
    );
    assert!(sweep.contains("[sweep-64k]") && sweep.contains("nrfiles=3\nfilesize=4m\nsize=12m\nfilename_format=trackbench-sweep.$filenum\nfile_service_type=roundrobin:1"), "{sweep}");
    let bounce = job_file(
        &["bounce", d, "--tracks", "10", "--duration", "2s"],
        &jobs,
        "bounce.fio",
    );
    assert!(
        bounce.contains("[bounce-render]") && bounce.contains("nrfiles=10\nfilesize=384000\n"),
        "{bounce}"
    );
    assert!(bounce.contains("direct=0\nend_fsync=1\n"), "{bounce}");
    assert!(!target.join("trackbench-data").exists());
    // The streaming commands have none: fio cannot keep deadlines.
    tb().args(["play", d, "--fio-job", "x.fio"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("--fio-job"));

    if let Err(why) = fio_available() {
        return common::missing("fio", &why);
    }
    for (name, text) in [
        ("seq", &seq),
        ("seek", &seek),
        ("access", &access),
        ("mix", &mix),
        ("zones", &zones),
        ("sweep", &sweep),
    ] {
        let f = jobs.join(format!("{name}.fio"));
        let out = Command::new("fio")
            .arg("--output-format=json")
            .arg(&f)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "fio {name}: {}\n{text}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        // fio may print notes before its JSON.
        let v: Value = serde_json::from_str(&stdout[stdout.find('{').unwrap()..]).unwrap();
        for j in v["jobs"].as_array().unwrap() {
            let bytes =
                j["read"]["io_bytes"].as_u64().unwrap() + j["write"]["io_bytes"].as_u64().unwrap();
            assert!(
                bytes > 0,
                "fio {name} job {} moved nothing: {j}",
                j["jobname"]
            );
        }
        // fio removed what it laid out; trackbench's data directory was never there.
        let left: Vec<_> = std::fs::read_dir(&target)
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert!(left.is_empty(), "fio {name} left {left:?}");
    }
}

#[cfg(unix)] // the signal is sent with kill(2)
#[test]
fn run_writes_every_classic_measurement_into_one_job_file_that_fio_accepts() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("run.fio");
    let d = t.path().join("disk");
    std::fs::create_dir(&d).unwrap();
    // Interrupted at once: the job file is written before anything is measured.
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("trackbench"))
        .env("XDG_DATA_HOME", common::store_home())
        .arg("run")
        .arg(&d)
        .args(["--no-store", "--no-report", "-q", "--fio-job"])
        .arg(&out)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while !out.exists() && start.elapsed().as_secs() < 20 {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // SAFETY: a child of ours.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    child.wait().unwrap();
    let text = std::fs::read_to_string(&out).unwrap();
    for job in [
        "[seq-write]",
        "[seq-read]",
        "[seek]",
        "[access-random]",
        "[mix-random]",
        "[zone-16]",
        "[sweep-1m]",
    ] {
        assert!(text.contains(job), "{job} missing:\n{text}");
    }
    common::wait_clean(&d);
    if let Err(why) = fio_available() {
        return common::missing("fio", &why);
    }
    let o = Command::new("fio")
        .arg("--parse-only")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}
