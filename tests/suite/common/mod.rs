//! Helpers shared by the integration tests: the binary with its store under target/, what a test
//! may require of the machine, and a private PostgreSQL server.
#![allow(dead_code)]

#[cfg(target_os = "linux")]
pub mod capped;
pub mod postgres;
pub mod webdriver;

use assert_cmd::Command;
use std::path::PathBuf;

/// The result store every trackbench in these tests writes to: under target/, never the user's.
pub fn store_home() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("xdg-data")
}

/// The binary, its default store under target/.
pub fn tb() -> Command {
    let mut c = Command::cargo_bin("trackbench").expect("binary built");
    c.env("XDG_DATA_HOME", store_home());
    c
}

/// Whether CI requires `what` (a server or a browser) to be there: `.ci/run` installs them and
/// says so in `TRACKBENCH_TEST_REQUIRE`; elsewhere a test that cannot find one says it skipped.
pub fn required(what: &str) -> bool {
    std::env::var("TRACKBENCH_TEST_REQUIRE")
        .map(|v| v.split([',', ' ']).any(|x| x == what))
        .unwrap_or(false)
}

/// Ends a test that needs `what`, which this machine lacks: a failure where CI requires it, a
/// skip (said on stderr) elsewhere.
pub fn missing(what: &str, why: &str) {
    assert!(
        !required(what),
        "{what} is required here (TRACKBENCH_TEST_REQUIRE) but {why}"
    );
    eprintln!("skipped: {what} is not available ({why}); .ci/run installs it");
}

/// Waits (a few seconds at most) for an interrupted run's cleaner, then checks that no test data
/// is left in `dir`.
pub fn wait_clean(dir: &std::path::Path) {
    let start = std::time::Instant::now();
    while dir.join("trackbench-data").exists() && start.elapsed().as_secs() < 15 {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(
        !dir.join("trackbench-data").exists(),
        "test data left in {}",
        dir.display()
    );
}
