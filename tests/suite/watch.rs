//! A disk watched over time, for real: a capped loop device measured several times at one rate
//! and then at a rate 15% lower; the history marks the run where it stepped, and no other.

#![cfg(target_os = "linux")]

use crate::common::capped::fixture;
use std::time::Duration;

#[test]
fn a_capped_disk_made_fifteen_percent_slower_steps_in_the_history_at_that_run() {
    let Some(c) = fixture(Some(20_000_000), Some(20_000_000)) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let json = c.dir.path().join("seq.json");
    for run in 1..=7 {
        if run == 5 {
            c.set_bps(17_000_000);
        }
        let out = c
            .command(&[], &["seq", "--size", "48M"], &json)
            .env("XDG_DATA_HOME", home.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "run {run}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = crate::common::tb()
        .env("XDG_DATA_HOME", home.path())
        .env("COLUMNS", "100")
        .arg("history")
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    eprintln!("{text}");
    let said = text.replace("\n    ", " ");
    assert!(said.contains("Steps beyond the noise, by disk:"), "{text}");
    for row in ["read", "write"] {
        assert!(
            said.contains(&format!("result 5: seq {row} MB/s fell 15%")),
            "{row} stepped at run 5: {text}"
        );
    }
    for earlier in 1..5 {
        assert!(!said.contains(&format!("result {earlier}: ")), "{text}");
    }
    for later in 6..=7 {
        assert!(!said.contains(&format!("result {later}: ")), "{text}");
    }
    // The table marks the run where the disk stepped.
    let marked: Vec<&str> = text.lines().filter(|l| l.contains('▼')).collect();
    assert!(
        !marked.is_empty() && marked[0].starts_with("│ 5 "),
        "{text}"
    );
}
