//! Names the commit a build was made from, for `trackbench --version` and every result's
//! `tool.commit`: the repository's HEAD where the source is a git checkout, the commit cargo
//! recorded where it is a packaged crate (`.cargo_vcs_info.json`), else "unknown". Runs nothing
//! but git, and builds without it.

use std::path::Path;
use std::process::Command;

/// HEAD of the checkout at `dir`, where `dir` is one (not a repository further up).
fn from_git(dir: &Path) -> Option<String> {
    if !dir.join(".git").exists() {
        return None;
    }
    let out = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(dir)
        .output()
        .ok()?;
    let sha = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !sha.is_empty()).then_some(sha)
}

/// The commit cargo recorded when it packaged the crate.
fn from_package(dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(dir.join(".cargo_vcs_info.json")).ok()?;
    let at = text.find("\"sha1\"")?;
    let rest = &text[at + 6..];
    let start = rest.find('"')? + 1;
    let len = rest[start..].find('"')?;
    Some(rest[start..start + len].chars().take(12).collect())
}

fn main() {
    let dir = std::path::PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let commit = from_package(&dir)
        .or_else(|| from_git(&dir))
        .unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=TRACKBENCH_COMMIT={commit}");
    // A new commit moves HEAD or the branch it points to.
    let git = dir.join(".git");
    if git.is_dir() {
        println!("cargo:rerun-if-changed=.git/HEAD");
        println!("cargo:rerun-if-changed=.git/packed-refs");
        if let Ok(head) = std::fs::read_to_string(git.join("HEAD"))
            && let Some(r) = head.trim().strip_prefix("ref: ")
        {
            println!("cargo:rerun-if-changed=.git/{r}");
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
