//! The result store through the binary: every result kept by default, `history`, `show` and
//! `compare` on it — the same tests on an SQLite file and on a real PostgreSQL server.

use crate::common;

use common::postgres::Server;
use common::tb;
use predicates::prelude::*;
use serde_json::Value;
use std::path::Path;

/// A result goes to the default store (XDG_DATA_HOME) unless --no-store; a store that cannot be
/// used costs a warning, not the run.
#[test]
fn results_go_to_the_default_store_and_a_bad_store_costs_a_warning() {
    let home = tempfile::tempdir().unwrap();
    let t = tempfile::tempdir().unwrap();
    let d = t.path().to_str().unwrap();
    let tbh = || {
        let mut c = tb();
        c.env("XDG_DATA_HOME", home.path());
        c
    };
    let out = tbh()
        .args(["seq", d, "--size", "8M", "-q"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("stored as result 1 in") && err.contains("trackbench show 1"),
        "{err}"
    );
    assert!(home.path().join("trackbench/results.sqlite").is_file());
    tbh()
        .args(["seq", d, "--size", "8M", "-q", "--no-store"])
        .assert()
        .success();
    tbh()
        .arg("history")
        .assert()
        .success()
        .stdout(predicate::str::contains("1 result(s)"));
    // Stores that cannot be used: the run still succeeds and says why nothing was kept.
    for bad in [d, "postgres://trackbench@127.0.0.1:1/none"] {
        tbh()
            .args([
                "seek",
                d,
                "--duration",
                "100ms",
                "--size",
                "4M",
                "-q",
                "--db",
                bad,
            ])
            .assert()
            .success()
            .stdout(predicate::str::contains("warning: not stored"));
    }
    assert!(!t.path().join("trackbench-data").exists());
}

/// Everything a user does with a store, against the store `db` names: results kept with their
/// ids, listed newest first with their headline and filters, shown again (tables and the whole
/// document), compared (ids and files, refused where settings differ unless --unfair).
fn store_commands(db: &str) {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().to_str().unwrap();
    let with_db = |args: &[&str]| {
        let mut c = tb();
        c.args(args).args(["--db", db]);
        c
    };
    let out = with_db(&["seq", d, "--size", "8M", "-q"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("stored as result 1") && err.contains(&format!("trackbench show 1 --db {db}")),
        "{err}"
    );
    with_db(&["play", d, "--device-model", "bw=20M", "--tracks", "8", "-q"])
        .assert()
        .success();
    let listed = with_db(&["history"]).output().unwrap();
    let text = String::from_utf8_lossy(&listed.stdout);
    assert!(listed.status.success(), "{text}");
    assert!(text.contains("2 result(s)"), "{text}");
    assert!(
        text.contains("seq write:") && text.contains("MB/s"),
        "{text}"
    );
    assert!(text.contains("(simulated: bw=20M)"), "{text}");
    assert!(
        text.find("simulated").unwrap() < text.find("seq write").unwrap(),
        "newest first: {text}"
    );
    assert!(text.contains("play") && text.contains("seq"), "{text}");
    with_db(&["history", "--workload", "play"])
        .assert()
        .success()
        .stdout(predicate::str::contains("1 result(s)"));
    with_db(&["history", "--target", &d.to_uppercase()])
        .assert()
        .success()
        .stdout(predicate::str::contains("2 result(s)"));
    with_db(&["history", "--limit", "1"])
        .assert()
        .success()
        .stdout(predicate::str::contains("1 result(s)").and(predicate::str::contains("simulated")));
    with_db(&["history", "--since", "2999-01-01"])
        .assert()
        .success()
        .stdout(predicate::str::contains("no stored results match"));
    with_db(&["history", "--target", "/no/such/place"])
        .assert()
        .success()
        .stdout(predicate::str::contains("no stored results match"));
    with_db(&["history", "--since", "last tuesday"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("2026-11-23"));
    with_db(&["show", "1"]).assert().success().stdout(
        predicate::str::contains("Sequential transfer")
            .and(predicate::str::contains("tracks (naive)")),
    );
    let shown = with_db(&["show", "2", "--json"]).output().unwrap();
    let v: Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(v["sections"][0]["workload"], "play");
    assert_eq!(v["schema_version"], trackbench::result::SCHEMA_VERSION);
    assert_eq!(v["session"]["command"], "play");
    with_db(&["show", "99"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("\"99\"").and(predicate::str::contains("history")));

    // compare: stored ids and result files side by side, the best at 100%; different block
    // sizes are refused with the setting named, unless --unfair.
    let json = t.path().join("seq-256k.json");
    let j = json.to_str().unwrap();
    with_db(&[
        "seq", d, "--size", "8M", "--block", "256K", "-q", "--json", j,
    ])
    .assert()
    .success();
    with_db(&["compare", "1", j]).assert().failure().stderr(
        predicate::str::contains("seq: block_bytes is 1048576 in #1, 262144 in seq-256k.json")
            .and(predicate::str::contains("--unfair")),
    );
    let out = with_db(&["compare", "1", j, "--unfair"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("read · MB/s") && text.contains("(100%)"),
        "{text}"
    );
    assert!(
        text.contains("warning: compared although seq: block_bytes"),
        "{text}"
    );
    with_db(&["seq", d, "--size", "8M", "-q"])
        .assert()
        .success();
    let out = with_db(&["compare", "1", "4"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("#1") && text.contains("#4") && !text.contains("warning"),
        "{text}"
    );
    with_db(&["compare", "1", "no-such-result"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("no-such-result is neither"));

    // The disk's series, as the store gives it back: results 1 and 4 ran alike.
    let page = t.path().join("r4.html");
    with_db(&["report", "4", "-o", page.to_str().unwrap()])
        .assert()
        .success();
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("<h2>This disk over time</h2>") && html.contains("(results 1, 4)"),
        "{html}"
    );
    // watch reads the same store: the suite's sequential part ran as results 1 and 4 did
    // (its size changes nothing a figure means), two earlier runs of three needed.
    let out = with_db(&["watch", d, "--only", "seq", "-q", "--no-report"])
        .env("COLUMNS", "100")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains(
            "Too few earlier runs of this disk at these settings to know its noise: 2 of 3"
        ),
        "{text}"
    );
    assert!(!Path::new(d).join("trackbench-data").exists());
}

#[test]
fn history_show_and_compare_on_an_sqlite_file() {
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("studio.sqlite");
    store_commands(db.to_str().unwrap());
}

#[test]
fn history_show_and_compare_on_a_real_postgresql_server() {
    let mut server = match Server::start() {
        Ok(s) => s,
        Err(why) => return common::missing("postgres", &why),
    };
    let url = server.database();
    store_commands(&url);
    // The tables are the store's own, at its schema version, and a second trackbench (another
    // machine of the studio) finds the results there.
    let listed = tb().args(["history", "--db", &url]).output().unwrap();
    assert!(String::from_utf8_lossy(&listed.stdout).contains("5 result(s)"));
    let _ = server.dir();
}
