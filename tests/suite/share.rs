//! Network shares are cleaned as disks are: a FUSE share (sshfs) over a real, capped TCP link to
//! an sshd of the test's own. A run that ends normally leaves nothing there, not even an empty
//! directory; a run whose share went away names it, and `trackbench clean` removes what it
//! left once the share is back.

#![cfg(target_os = "linux")]

use crate::common::share::Share;
use crate::common::{missing, tb};
use std::time::Duration;

fn share_or_skip() -> Option<Share> {
    match Share::start(40) {
        Ok(s) => Some(s),
        Err(why) => {
            missing("sshfs", &why);
            None
        }
    }
}

/// The lock is removed while held, and over FUSE a file removed while open lingers under a
/// hidden name until the share hears it was closed, after the run has tried to remove its
/// directory: with the link busy, an empty `trackbench-data/` stayed behind in 3 runs of 3.
#[test]
fn a_run_on_a_network_share_leaves_nothing_there() {
    let Some(share) = share_or_skip() else { return };
    for args in [
        vec!["play", "--tracks", "20", "--duration", "8"],
        vec!["record", "--tracks", "8", "--duration", "6"],
    ] {
        let out = tb()
            .args(&args)
            .arg(&share.mnt)
            .env("COLUMNS", "100")
            .timeout(Duration::from_secs(300))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{args:?}: {text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            text.contains("fuse.sshfs"),
            "the target is the share: {text}"
        );
        assert_eq!(
            share.served_entries(),
            Vec::<String>::new(),
            "{args:?} left something on the share"
        );
    }
}

#[test]
fn a_share_lost_mid_run_is_named_and_clean_removes_what_is_left() {
    let Some(mut share) = share_or_skip() else {
        return;
    };
    let mut run = std::process::Command::new(assert_cmd::cargo::cargo_bin("trackbench"));
    run.args(["play", "--tracks", "16", "--duration", "60"])
        .arg(&share.mnt)
        .env("XDG_DATA_HOME", crate::common::store_home())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = run.spawn().unwrap();
    // Long enough for the run to have laid out some of its files over the capped link.
    std::thread::sleep(Duration::from_secs(4));
    share.lose();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a run whose share went away failed");
    assert!(
        err.contains("the network share root@") && err.contains("fuse.sshfs"),
        "the error names the share: {err}"
    );
    assert!(
        err.contains("trackbench clean"),
        "the error says how to clean up: {err}"
    );
    share.reconnect().unwrap();
    assert!(
        !share.served_entries().is_empty(),
        "the lost run left its files (the case clean is for)"
    );
    let out = tb()
        .arg("clean")
        .arg(&share.mnt)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!text.contains("left alone"), "{text}");
    assert_eq!(
        share.served_entries(),
        Vec::<String>::new(),
        "clean removed everything: {text}"
    );
}
