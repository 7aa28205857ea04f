//! What a package installs beside the binary, for real: the completions load in bash and
//! complete, every shell's script names the commands and flags this build has, the manual
//! pages render with man, and --version names the commit the build was made from, as every
//! result does.

use crate::common::tb;
use predicates::prelude::*;
use std::process::Command;

fn stdout_of(args: &[&str]) -> String {
    let out = tb().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// What bash completes `line` (words, the last one being completed) to, with `script` loaded.
#[cfg(unix)]
fn bash_completes(script: &std::path::Path, words: &[&str]) -> Vec<String> {
    let line = words.join(" ");
    let out = Command::new("bash")
        .arg("-c")
        .arg(
            r#"source "$1"; shift
               COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
               _trackbench trackbench "${@: -1}" "${@: -2:1}"
               printf '%s\n' "${COMPREPLY[@]}""#,
        )
        .arg("bash")
        .arg(script)
        .args(words)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{line}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[cfg(unix)]
#[test]
fn bash_completes_commands_and_flags_from_the_generated_script() {
    let t = tempfile::tempdir().unwrap();
    let script = t.path().join("trackbench.bash");
    std::fs::write(&script, stdout_of(&["completions", "bash"])).unwrap();
    assert_eq!(bash_completes(&script, &["trackbench", "wat"]), ["watch"]);
    let flags = bash_completes(&script, &["trackbench", "watch", "--l"]);
    assert!(flags.contains(&"--last".to_string()), "{flags:?}");
    let shells = bash_completes(&script, &["trackbench", "completions", "p"]);
    assert_eq!(shells, ["powershell"]);
}

#[test]
fn every_shells_script_names_this_builds_commands_and_a_bad_shell_is_refused() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let s = stdout_of(&["completions", shell]);
        for word in ["watch", "find-max", "only", "last", "history"] {
            assert!(s.contains(word), "{shell}: no {word}");
        }
    }
    tb().args(["completions", "tcsh"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("tcsh").and(predicate::str::contains("powershell")));
}

#[test]
fn the_manual_pages_render_with_man() {
    let page = stdout_of(&["man"]);
    assert!(
        page.starts_with(".ie") || page.contains(".TH trackbench 1"),
        "{page}"
    );
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("man");
    let said = stdout_of(&["man", "--dir", dir.to_str().unwrap()]);
    let pages: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        said.starts_with(&format!("{} manual pages in ", pages.len())),
        "{said}"
    );
    for p in [
        "trackbench.1",
        "trackbench-run.1",
        "trackbench-watch.1",
        "trackbench-play.1",
    ] {
        assert!(pages.contains(&p.to_string()), "{p} in {pages:?}");
    }
    if Command::new("man").arg("--version").output().is_err() {
        return crate::common::missing("man", "man-db is not installed");
    }
    let shown = Command::new("man")
        .args(["-P", "cat", "-l"])
        .arg(dir.join("trackbench-watch.1"))
        .env("MANWIDTH", "100")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(shown.status.success(), "{text}");
    assert!(
        text.contains("trackbench-watch") && text.contains("--last"),
        "{text}"
    );
    assert!(
        text.contains("Exit status: 0 when nothing changed"),
        "{text}"
    );
}

#[test]
fn version_names_the_commit_as_every_result_does() {
    let said = stdout_of(&["--version"]);
    let commit = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    let expected = commit.as_deref().unwrap_or("unknown");
    assert_eq!(
        said.trim(),
        format!(
            "trackbench {} (commit {expected})",
            env!("CARGO_PKG_VERSION")
        )
    );
    let t = tempfile::tempdir().unwrap();
    let json = t.path().join("r.json");
    let d = t.path().join("d");
    std::fs::create_dir(&d).unwrap();
    tb().arg("seq")
        .arg(&d)
        .args(["--size", "1M", "-q", "--no-store", "--no-report", "--json"])
        .arg(&json)
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(v["tool"]["commit"], expected);
}
