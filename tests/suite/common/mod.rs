//! Helpers shared by the integration tests: the binary with its store under target/, what a test
//! may require of the machine, and a private PostgreSQL server.
#![allow(dead_code)]

#[cfg(target_os = "linux")]
pub mod capped;
pub mod postgres;
#[cfg(target_os = "linux")]
pub mod share;
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

/// The host's disk, which every test's temporary directory shares. The tests that drive it as
/// fast as it goes in bursts (find_max_real's searches starting at once, each first guess
/// writing and reading a 256 MiB span; cold template loads) share it with each other; a
/// real-time run that asserts a few tracks pass has it to itself, as the user it stands for has
/// a quiet disk. Beside the searches, a 16 KiB read was held 1.5 s and a 4-track record lost
/// 2.8% of its demand to a write held 183 ms (CI, 2026-11-28), failing runs that pass alone.
/// The newcomer's `run` (the longest test) is left out: held behind the real-time runs it took
/// the suite binary to 608 and 728 s, 393 s without (2026-11-29). A test takes one guard at
/// a time and holds it only around its runs (readers of a lock a writer waits on wait too: a
/// second read guard could deadlock).
static DISK: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// Shares the disk with the other tests that drive it hard; waits while a real-time test has it.
pub fn busy_disk() -> std::sync::RwLockReadGuard<'static, ()> {
    DISK.read().unwrap_or_else(|e| e.into_inner())
}

/// The disk without the suite's hard-driving tests, for a real-time run's verdict.
pub fn quiet_disk() -> std::sync::RwLockWriteGuard<'static, ()> {
    DISK.write().unwrap_or_else(|e| e.into_inner())
}

/// Runs trackbench with `args` plus `--json DIR/result.json -q`, checks it succeeded, returns the
/// document (and removes its file).
pub fn run_json(dir: &std::path::Path, args: &[&str]) -> serde_json::Value {
    let json = dir.join("result.json");
    let out = tb()
        .args(args)
        .arg("--json")
        .arg(&json)
        .arg("-q")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    let v = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    std::fs::remove_file(&json).unwrap();
    v
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

/// trackbench inside the cgroup v1 group `group` (its first argument the binary's first): a
/// shell that joins the group and becomes trackbench, its store under target/.
pub fn tb_in_group(group: &std::path::Path) -> std::process::Command {
    let mut c = std::process::Command::new("sh");
    c.env("XDG_DATA_HOME", store_home())
        .arg("-c")
        .arg(r#"echo $$ > "$1/cgroup.procs" && shift && exec "$@""#)
        .arg("sh")
        .arg(group)
        .arg(assert_cmd::cargo::cargo_bin("trackbench"));
    c
}

/// Removes the groups under a cgroup v1 controller's directory (`/sys/fs/cgroup/cpu`, …) that
/// test processes no longer running left (`trackbench-test-PID` or `trackbench-test-PID-WHAT`):
/// a killed suite runs no `Drop`. A group a process is still in, or whose test process is
/// alive, is left alone. Returns what it removed.
pub fn reap_test_groups(controller: &std::path::Path) -> Vec<PathBuf> {
    let mut done = Vec::new();
    let Ok(groups) = std::fs::read_dir(controller) else {
        return done;
    };
    for g in groups.flatten() {
        let name = g.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix("trackbench-test-")
            .map(|rest| rest.split('-').next().unwrap_or(rest))
            .filter(|pid| pid.parse::<u32>().is_ok())
        else {
            continue;
        };
        let alive = std::path::Path::new("/proc").join(pid).exists();
        let occupied = std::fs::read_to_string(g.path().join("cgroup.procs"))
            .map_or(true, |p| !p.trim().is_empty());
        if !alive && !occupied && std::fs::remove_dir(g.path()).is_ok() {
            done.push(g.path());
        }
    }
    done
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

/// The newcomer's `run`, as the README's first command runs it: `run -q --json DIR/run.json` in
/// a folder of its own (the current directory, the default target), with a store of its own. It
/// takes minutes of the machine, so the tests that check it (its result document and summary
/// in as_a_newcomer.rs, its report and store in report.rs) share one: the first to ask runs it,
/// the others wait for it. Its directory is under target/ and goes when the last of them is
/// done with it.
pub struct NewcomerRun {
    pub dir: PathBuf,
    /// The folder measured, the current directory of the run: it holds the report afterwards.
    pub target: PathBuf,
    /// The run's store (`XDG_DATA_HOME`).
    pub home: PathBuf,
    /// The result document (`--json`).
    pub json: PathBuf,
    pub success: bool,
    pub stdout: String,
    pub stderr: String,
}

/// How many tests check the newcomer's run; when all have had it, the last one removes it.
const NEWCOMER_USERS: usize = 2;

pub fn newcomer_run() -> std::sync::Arc<NewcomerRun> {
    use std::sync::{Arc, Mutex};
    static RUN: Mutex<(Option<Arc<NewcomerRun>>, usize)> = Mutex::new((None, 0));
    let mut state = RUN.lock().unwrap_or_else(|e| e.into_inner());
    if state.0.is_none() && state.1 == 0 {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("newcomer-run");
        let _ = std::fs::remove_dir_all(&dir);
        let (target, home, json) = (dir.join("music"), dir.join("xdg"), dir.join("run.json"));
        std::fs::create_dir_all(&target).expect("a folder under target/");
        let out = tb()
            .current_dir(&target)
            .env("XDG_DATA_HOME", &home)
            // As a pipe is, whatever the developer's shell exports.
            .env_remove("COLUMNS")
            .args(["run", "-q", "--json"])
            .arg(&json)
            .output()
            .expect("trackbench runs");
        state.0 = Some(Arc::new(NewcomerRun {
            dir,
            target,
            home,
            json,
            success: out.status.success(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }));
    }
    state.1 += 1;
    let run = state.0.clone().expect("run once");
    if state.1 >= NEWCOMER_USERS {
        // The last user's handle is the last one: the directory goes when it is dropped.
        state.0 = None;
    }
    run
}

impl Drop for NewcomerRun {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
