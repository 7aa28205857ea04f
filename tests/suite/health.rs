//! The drive's health beside each result, for real: the machine's own smartctl on the disk the
//! tests run on (what it says, or why it cannot), every whole disk of the machine, and a run
//! that goes on with "health not available" when smartctl is missing, lacks privileges, prints
//! something unexpected or does not answer.

#![cfg(target_os = "linux")]

use crate::common::tb;
use serde_json::Value;
use std::path::Path;
use std::time::{Duration, Instant};

/// `seq --size 1M` on a fresh folder with `PATH` as given (None: the machine's): the document's
/// `target.health`, and how long the run took.
fn health_of_a_run(path: Option<&Path>) -> (Value, Duration) {
    let t = tempfile::tempdir().unwrap();
    let json = t.path().join("r.json");
    let dir = t.path().join("d");
    std::fs::create_dir(&dir).unwrap();
    let mut c = tb();
    c.arg("seq")
        .arg(&dir)
        .args(["--size", "1M", "-q", "--no-store", "--no-report", "--json"])
        .arg(&json);
    if let Some(p) = path {
        c.env("PATH", p);
    }
    let started = Instant::now();
    let out = c.output().unwrap();
    let took = started.elapsed();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    (v["target"]["health"].clone(), took)
}

/// A folder holding one executable `smartctl`, the shell script `body`.
fn fake_smartctl(body: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("smartctl");
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    d
}

#[test]
fn the_machines_smartctl_says_each_disks_health_or_why_not() {
    if std::process::Command::new("smartctl")
        .arg("--version")
        .output()
        .is_err()
    {
        return crate::common::missing("smartctl", "smartmontools is not installed");
    }
    // The disk the tests run on, through a real run.
    let (h, _) = health_of_a_run(None);
    let said = h["unavailable"].as_str().map(str::to_string);
    match said {
        Some(why) => assert!(!why.trim().is_empty(), "{h}"),
        None => {
            assert!(
                h["source"]
                    .as_str()
                    .is_some_and(|s| s.starts_with("smartctl ")),
                "{h}"
            );
            assert!(h["passed"].is_boolean(), "{h}");
        }
    }
    eprintln!("this machine's disk: {h}");
    // Every whole disk of the machine.
    for e in std::fs::read_dir("/sys/block").unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if ["loop", "ram", "zram", "dm-", "md", "sr"]
            .iter()
            .any(|p| name.starts_with(p))
        {
            continue;
        }
        let h = trackbench::health::read(&Path::new("/dev").join(&name), Duration::from_secs(15));
        eprintln!("{name}: {}", h.words());
        match &h.unavailable {
            Some(why) => assert!(!why.trim().is_empty(), "{name}: {h:?}"),
            None => assert!(
                h.source.is_some() && h.passed.is_some(),
                "{name} answered without a self-assessment: {h:?}"
            ),
        }
    }
}

#[test]
fn a_run_goes_on_when_smartctl_is_missing_refuses_prints_junk_or_hangs() {
    let none = tempfile::tempdir().unwrap();
    let (h, _) = health_of_a_run(Some(none.path()));
    assert_eq!(
        h["unavailable"], "smartctl is not installed (smartmontools)",
        "{h}"
    );
    // What smartctl prints as an ordinary user on a drive it must open (its JSON, exit 2).
    let denied = fake_smartctl(
        r#"echo '{"smartctl":{"version":[7,3],"messages":[{"string":"Smartctl open device: /dev/sda failed: Permission denied","severity":"error"}],"exit_status":2}}'; exit 2"#,
    );
    let (h, _) = health_of_a_run(Some(denied.path()));
    assert!(
        h["unavailable"]
            .as_str()
            .is_some_and(|w| w.contains("Permission denied")),
        "{h}"
    );
    let junk = fake_smartctl("echo 'smartctl: unrecognized option --json'; exit 1");
    let (h, _) = health_of_a_run(Some(junk.path()));
    assert_eq!(
        h["unavailable"], "smartctl printed something other than its JSON",
        "{h}"
    );
    let hangs = fake_smartctl("exec /bin/sleep 120");
    let (h, took) = health_of_a_run(Some(hangs.path()));
    assert_eq!(
        h["unavailable"], "smartctl did not answer within 15 s",
        "{h}"
    );
    assert!(took < Duration::from_secs(60), "{took:?}");
}
