//! The Windows build, for real: trackbench built for `x86_64-pc-windows-gnu` with MinGW-w64 and
//! its command line run under wine on a temporary directory — bad input, a short `seq`, four
//! playback tracks through the real-time engine, a search against a device model, and Ctrl-C.
//!
//! What wine cannot emulate, and so what these tests do not claim:
//! - `FILE_FLAG_NO_BUFFERING`: wine opens the Unix file through the page cache, so rates here are
//!   the cache's; the tests check that runs complete, verify their data and clean up, not rates.
//! - MMCSS ("Pro Audio" through avrt.dll): wine grants the request without real-time scheduling,
//!   so the result's real-time grant proves nothing under wine.
//! - `ProcessPrng`: wine 8.0's bcryptprimitives.dll lacks it and Rust's standard library calls it
//!   at start-up; `tests/windows/processprng.c`, built beside the test's binary, answers with
//!   `RtlGenRandom` (loaded through `WINEDLLOVERRIDES=bcryptprimitives=n`).
//! - The storage stack's device query (IOCTL_STORAGE_QUERY_PROPERTY on `\\.\Z:`): wine answers
//!   none, so the device's model and seek penalty are unknown there, and the result says so.
//! - The volume serial of wine's `Z:` drive (wine cannot read one for a Unix directory): file
//!   identities there rest on the file index alone.
//!
//! Needs wine, MinGW-w64 (`x86_64-w64-mingw32-gcc`) and the Rust target; skipped with the reason
//! printed when they are missing, failed instead when `TRACKBENCH_TEST_REQUIRE` names `wine`
//! (`.ci/run` installs them). The wine prefix and the Windows build live under target/.
#![cfg(target_os = "linux")]

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

const TARGET: &str = "x86_64-pc-windows-gnu";

struct Win {
    exe: PathBuf,
    prefix: PathBuf,
    /// TMPDIR for everything these tests start: MinGW's gcc leaves empty `ccXXXXXX` files
    /// (about 140 a build) and wine a `wine-XXXXXX` server directory for every prefix in the
    /// system's /tmp otherwise; here they stay under target/.
    tmp: PathBuf,
}

fn required() -> bool {
    std::env::var("TRACKBENCH_TEST_REQUIRE")
        .is_ok_and(|v| v.split_whitespace().any(|w| w == "wine"))
}

fn on_path(program: &str) -> bool {
    Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {program}"))
        .output()
        .is_ok_and(|o| o.status.success())
}

fn build() -> Result<Win, String> {
    for p in ["wine", "wineserver", "x86_64-w64-mingw32-gcc"] {
        if !on_path(p) {
            return Err(format!("{p} is not installed (Debian: wine, mingw-w64)"));
        }
    }
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let target_dir = tmp.join("windows-build");
    let tools_tmp = tmp.join("windows-tmp");
    std::fs::create_dir_all(&tools_tmp).map_err(|e| format!("{}: {e}", tools_tmp.display()))?;
    // At the lowest CPU priority: the build runs beside the suite's real-time tests, whose disk
    // threads must not wait for a CPU behind rustc (a sampler run in CI issued a first read
    // late and dropped notes while it compiled).
    let out = Command::new("nice")
        .args(["-n", "19"])
        .arg(env!("CARGO"))
        .args([
            "build",
            "--locked",
            "--bin",
            "trackbench",
            "--target",
            TARGET,
        ])
        .arg("--target-dir")
        .arg(&target_dir)
        .env("TMPDIR", &tools_tmp)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .map_err(|e| format!("nice cargo: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cargo build --target {TARGET} failed (rustup target add {TARGET}):\n{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let exe = target_dir.join(TARGET).join("debug").join("trackbench.exe");
    let shim = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/windows/processprng.c");
    let dll = exe.with_file_name("bcryptprimitives.dll");
    let out = Command::new("x86_64-w64-mingw32-gcc")
        .args(["-shared", "-O2", "-o"])
        .arg(&dll)
        .arg(&shim)
        .arg("-ladvapi32")
        .env("TMPDIR", &tools_tmp)
        .output()
        .map_err(|e| format!("x86_64-w64-mingw32-gcc: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "building the ProcessPrng shim failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let w = Win {
        exe,
        prefix: tmp.join("wineprefix"),
        tmp: tools_tmp,
    };
    // The first start also creates the wine prefix.
    let v = w.run(&["--version"], None);
    if !v.status.success() || !String::from_utf8_lossy(&v.stdout).contains("trackbench") {
        return Err(format!(
            "trackbench.exe does not start under wine: {}",
            String::from_utf8_lossy(&v.stderr)
        ));
    }
    // A new prefix goes on being set up after that first start returns (wineboot's rundll32,
    // services, device drivers: about 2 s here, longer in a loaded CI run), and the tests' own
    // starts would overlap it: wait until the prefix's wineserver has no process left and exits
    // (for two minutes at most: a wine process that never ends must not hang the suite; the
    // tests then start beside it, as they did before this wait, and say so).
    let idle = Command::new("timeout")
        .args(["120", "wineserver", "-w"])
        .env("WINEPREFIX", &w.prefix)
        .env("TMPDIR", &w.tmp)
        .status()
        .map_err(|e| format!("timeout 120 wineserver -w: {e}"))?;
    if !idle.success() {
        eprintln!("wineserver -w did not end ({idle}): the Windows tests start beside it");
    }
    Ok(w)
}

/// The Windows build, or None (skipped, reason printed).
fn win() -> Option<&'static Win> {
    static WIN: OnceLock<Result<Win, String>> = OnceLock::new();
    match WIN.get_or_init(build) {
        Ok(w) => Some(w),
        Err(e) if required() => panic!("TRACKBENCH_TEST_REQUIRE names wine: {e}"),
        Err(e) => {
            eprintln!("skipped: {e}");
            None
        }
    }
}

/// A Linux path as wine's Z: drive shows it.
fn z(p: &Path) -> String {
    format!("Z:{}", p.display()).replace('/', "\\")
}

impl Win {
    fn command(&self, args: &[&str], store: Option<&Path>) -> Command {
        let mut c = Command::new("wine");
        c.arg(&self.exe)
            .args(args)
            .env("WINEPREFIX", &self.prefix)
            .env("TMPDIR", &self.tmp)
            .env("WINEDEBUG", "-all")
            .env("WINEDLLOVERRIDES", "mscoree,mshtml=;bcryptprimitives=n");
        match store {
            // The store under the test's directory, as Windows names it.
            Some(s) => c.env("XDG_DATA_HOME", z(s)),
            None => c.env_remove("XDG_DATA_HOME"),
        };
        c
    }

    /// Runs trackbench.exe under wine. A CI run once saw one of these end in failure with
    /// nothing on stderr but wine's own lines (`seek --backend uring`, whose refusal every
    /// other run printed; its status was not recorded). A start that wine failed before
    /// trackbench said anything (see [`wine_failed`]) is tried once more, and said on the
    /// test's stderr; anything trackbench said or did counts as it is.
    fn run(&self, args: &[&str], store: Option<&Path>) -> Output {
        let o = self.command(args, store).output().expect("wine runs");
        if !wine_failed(&o) {
            return o;
        }
        eprintln!(
            "wine did not run {args:?} ({}, stderr {:?}): once more",
            o.status,
            String::from_utf8_lossy(&o.stderr)
        );
        self.command(args, store).output().expect("wine runs")
    }
}

/// wine failed before trackbench said anything: an exit status trackbench never gives (it exits
/// 0, 1, 2 for bad usage or 130 when interrupted), nothing on stdout and nothing on stderr but
/// wine's lines, none of them a crash report (an unhandled exception in trackbench is its own
/// failure, never retried).
fn wine_failed(o: &Output) -> bool {
    let stderr = String::from_utf8_lossy(&o.stderr);
    !matches!(o.status.code(), Some(0 | 1 | 2 | 130))
        && o.stdout.is_empty()
        && errors(o).trim().is_empty()
        && !stderr.contains("Unhandled")
}

/// stderr without wine's own complaints about the Z: drive.
fn errors(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr)
        .lines()
        .filter(|l| !l.starts_with("wine:") && !l.contains("wine32 is missing"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).expect("the result was written")).expect("JSON")
}

/// The Windows binary builds with MinGW-w64 and starts under wine (`--version`, checked by
/// [`build`]).
#[test]
fn the_windows_binary_builds_and_starts_under_wine() {
    let Some(w) = win() else { return };
    assert!(w.exe.is_file(), "{}", w.exe.display());
}

#[test]
fn bad_input_fails_with_one_line_naming_it() {
    let Some(w) = win() else { return };
    let t = tempfile::tempdir().unwrap();
    let d = z(t.path());
    for (args, msg) in [
        (vec!["seq", "Z:\\no\\such\\dir"], "no such file"),
        (vec!["seq", &d, "--block", "1000"], "multiple of 512"),
        (vec!["seek", &d, "--backend", "uring", "--qd", "4"], "Linux"),
        (vec!["load", &d, "--drop-caches"], "Linux"),
    ] {
        let o = w.run(&args, Some(t.path()));
        let err = errors(&o);
        assert!(!o.status.success(), "{args:?} should fail");
        assert!(
            err.contains(msg),
            "{args:?}: expected {msg:?} in {err:?} ({}, stderr {:?}, stdout {:?})",
            o.status,
            String::from_utf8_lossy(&o.stderr),
            String::from_utf8_lossy(&o.stdout)
        );
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err:?}");
    }
    assert!(!t.path().join("trackbench-data").exists());
}

/// What [`Win::run`] tries again is wine's own failure only: wine failing to start a program
/// (here one that does not exist) is one; trackbench refusing bad input, or succeeding, is not.
#[test]
fn only_wines_own_failure_to_start_is_tried_again() {
    let Some(w) = win() else { return };
    let missing = w.exe.with_file_name("no-such-program.exe");
    let o = Command::new("wine")
        .arg(&missing)
        .env("WINEPREFIX", &w.prefix)
        .env("TMPDIR", &w.tmp)
        .env("WINEDEBUG", "-all")
        .output()
        .expect("wine runs");
    assert!(wine_failed(&o), "{}: {:?}", o.status, o.stderr);
    let t = tempfile::tempdir().unwrap();
    let bad = w
        .command(&["seq", &z(t.path()), "--block", "1000"], None)
        .output()
        .unwrap();
    assert!(
        !bad.status.success() && !wine_failed(&bad),
        "{}",
        errors(&bad)
    );
    let fine = w.command(&["--version"], None).output().unwrap();
    assert!(fine.status.success() && !wine_failed(&fine));
}

#[test]
fn a_short_seq_measures_stores_and_cleans_up() {
    let Some(w) = win() else { return };
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("seq.json");
    let o = w.run(
        &[
            "seq",
            &z(t.path()),
            "--size",
            "8M",
            "--json",
            &z(&out),
            "-q",
        ],
        Some(t.path()),
    );
    assert!(o.status.success(), "{}", errors(&o));
    let v = json(&out);
    assert_eq!(v["host"]["os"], "Windows x86_64");
    // The target as Windows names it (no verbatim prefix), its filesystem from the volume, and
    // no device where the storage stack gives none (wine): unknown, not guessed.
    let target = &v["target"];
    assert_eq!(target["path"], z(t.path()), "{target}");
    assert!(target["fs_type"].is_string(), "{target}");
    assert!(target["device"].is_null(), "{target}");
    assert!(target["free_bytes"].as_u64().unwrap() > 0, "{target}");
    for row in v["sections"][0]["rows"].as_array().unwrap() {
        assert!(row["figures"][0]["median"].as_f64().unwrap() > 0.0, "{row}");
    }
    assert!(
        t.path().join("trackbench/results.sqlite").exists(),
        "the result is stored where XDG_DATA_HOME points"
    );
    assert!(
        !t.path().join("trackbench-data").exists(),
        "files left behind"
    );
    // The stored result reads back through the Windows build.
    let h = w.run(&["history"], Some(t.path()));
    assert!(h.status.success(), "{}", errors(&h));
    assert!(String::from_utf8_lossy(&h.stdout).contains("seq"));
}

/// Four tracks for eight seconds with 1.82 s rings through `butler`, checked: they pass with
/// no underrun, play what eight seconds hold (every byte checked against what was written, or
/// the run fails), and leave nothing behind. Under wine the audio tick is an ordinary thread,
/// and the suite runs beside it on two CPUs: once it woke 1.3 s late and the rings fell to 4.9%
/// (marginal). A run that did not pass is run again, three runs at most, only when it says why
/// that was not the engine's fault: the tick late, or a read held, for a quarter of the rings.
fn play_four(w: &Win, butler: &str) {
    let _disk = crate::common::quiet_disk();
    let mut runs = Vec::new();
    for _ in 0..3 {
        let t = tempfile::tempdir().unwrap();
        let out = t.path().join("play.json");
        let o = w.run(
            &[
                "play",
                &z(t.path()),
                "--tracks",
                "4",
                "--butler",
                butler,
                "--buffer",
                "1s",
                "--chunk",
                "64K",
                "--duration",
                "8s",
                "--no-store",
                "--no-report",
                "--json",
                &z(&out),
                "-q",
            ],
            None,
        );
        assert!(o.status.success(), "{butler}: {}", errors(&o));
        let doc = json(&out);
        let d = &doc["sections"][0]["detail"];
        let brief = format!(
            "{butler}: verdict {} underruns {} shortcoming {} tick lateness {} read latency {}",
            d["verdict"], d["underruns"], d["shortcoming"], d["tick_lateness"], d["read_latency"]
        );
        assert_eq!(d["play_tracks"], 4, "{brief}");
        assert!(
            !t.path().join("trackbench-data").exists(),
            "{butler}: files left behind"
        );
        assert!(
            d["tick_lateness"]["count"].as_u64().unwrap() > 1000,
            "{brief}"
        );
        if d["verdict"] != "pass" {
            // 48 kHz 24-bit mono: 144 kB/s a track.
            let ring_ms = d["ring_bytes_per_track"].as_f64().unwrap() / 144.0;
            let ms = |lat: &Value| lat["max_us"].as_f64().unwrap_or(0.0) / 1e3;
            let held = ms(&d["tick_lateness"]).max(ms(&d["read_latency"]));
            assert!(
                held >= ring_ms / 4.0,
                "not passed with the tick and every read on time (under {:.0} ms): {brief}",
                ring_ms / 4.0
            );
            eprintln!("run again: {brief}");
            runs.push(brief);
            continue;
        }
        assert_eq!(d["underruns"], 0, "{brief}");
        let played = d["played_bytes"].as_f64().unwrap();
        let want = 4.0 * 144_000.0 * 8.0;
        assert!(
            (played - want).abs() < 0.02 * want,
            "{butler}: played {played} of {want}"
        );
        return;
    }
    panic!("no clean run in three: {runs:#?}");
}

#[test]
fn four_playback_tracks_run_through_the_real_time_engine() {
    let Some(w) = win() else { return };
    play_four(w, "serial");
}

#[test]
fn a_device_model_search_answers_as_on_linux() {
    let Some(w) = win() else { return };
    let t = tempfile::tempdir().unwrap();
    let args = [
        "--find-max",
        "--device-model",
        "hdd-7200",
        "--no-store",
        "--no-report",
        "-q",
    ];
    let out = t.path().join("win.json");
    let dir = z(t.path());
    let mut a = vec!["play", dir.as_str()];
    a.extend(args);
    let zo = z(&out);
    a.extend(["--json", &zo]);
    let o = w.run(&a, None);
    assert!(o.status.success(), "{}", errors(&o));
    let linux = t.path().join("linux.json");
    let l = Command::new(assert_cmd::cargo::cargo_bin("trackbench"))
        .arg("play")
        .arg(t.path())
        .args(args)
        .arg("--json")
        .arg(&linux)
        .output()
        .unwrap();
    assert!(l.status.success(), "{}", String::from_utf8_lossy(&l.stderr));
    let answer = |v: &Value| v["sections"][0]["detail"]["searches"][0]["play_tracks"].clone();
    let (wa, la) = (answer(&json(&out)), answer(&json(&linux)));
    assert!(wa.as_u64().unwrap() > 100, "{wa}");
    assert_eq!(wa, la, "the simulation is the same program on both");
}

#[test]
fn ctrl_c_stops_saves_and_cleans_up() {
    let Some(w) = win() else { return };
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("int.json");
    let child = w
        .command(
            &[
                "play",
                &z(t.path()),
                "--tracks",
                "4",
                "--duration",
                "120s",
                "--no-report",
                "--json",
                &z(&out),
                "-q",
            ],
            Some(t.path()),
        )
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while !t.path().join("trackbench-data").exists() && start.elapsed().as_secs() < 60 {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // Playing by now (the files are laid out within a second).
    std::thread::sleep(std::time::Duration::from_secs(3));
    // wine turns SIGINT into the console's CTRL_C_EVENT for the Windows process.
    // SAFETY: a child of ours.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", errors(&o));
    let v = json(&out);
    assert_eq!(v["interrupted"], true);
    assert!(
        start.elapsed().as_secs() < 60,
        "stopped long after the interrupt"
    );
    assert!(
        !t.path().join("trackbench-data").exists(),
        "files left behind"
    );
    assert!(t.path().join("trackbench/results.sqlite").exists(), "saved");
}

/// Parallel I/O where there is no io_uring: `--qd` and `--butler parallel:QD` go through the
/// pool of I/O threads.
#[test]
fn parallel_io_goes_through_the_thread_pool() {
    let Some(w) = win() else { return };
    let t = tempfile::tempdir().unwrap();
    let d = z(t.path());
    let out = t.path().join("seek.json");
    let o = w.run(
        &[
            "seek",
            &d,
            "--duration",
            "300ms",
            "--size",
            "8M",
            "--qd",
            "8",
            "--no-store",
            "--json",
            &z(&out),
            "-q",
        ],
        None,
    );
    assert!(o.status.success(), "{}", errors(&o));
    let v = json(&out);
    assert_eq!(v["session"]["io"]["backend"], "threads", "{}", v["session"]);
    assert_eq!(v["session"]["io"]["queue_depth"], 8);
    play_four(w, "parallel:4");
}

/// A profile that reads through the page cache (Ardour's) says, on Windows, that the pages it
/// read stay cached: only Linux can drop them, so its answer may be above the disk's.
#[test]
fn a_page_cache_profile_says_its_pages_stay_cached() {
    let Some(w) = win() else { return };
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("ardour.json");
    let o = w.run(
        &[
            "play",
            &z(t.path()),
            "--tracks",
            "2",
            "--profile",
            "ardour-small",
            "--duration",
            "2s",
            "--no-store",
            "--no-report",
            "--json",
            &z(&out),
            "-q",
        ],
        None,
    );
    assert!(o.status.success(), "{}", errors(&o));
    let findings = json(&out)["sections"][0]["findings"].to_string();
    assert!(findings.contains("through_page_cache"), "{findings}");
    assert!(findings.contains("pages_kept"), "{findings}");
    assert!(
        !t.path().join("trackbench-data").exists(),
        "files left behind"
    );
}
