//! The data directory's lock: one run at a time in a target (a second refuses, naming the
//! first's pid), a stale lock of a killed run recovered, and an interrupted run's cleaner
//! waited for rather than refused.

use super::LOCK_NAME;
use crate::error::{Error, Result};
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

/// Writes in the lock that an interrupted run's cleaner holds it (with this process's pid):
/// a run or `clean` started meanwhile waits for the cleaner rather than refusing.
#[cfg(unix)]
pub(super) fn mark_cleaner(lock: &mut File, root: &Path) -> Result<()> {
    let me = format!("{}\n{CLEANER_MARK}\n", std::process::id());
    lock.set_len(0)
        .and_then(|_| lock.seek(SeekFrom::Start(0)))
        .and_then(|_| lock.write_all(me.as_bytes()))
        .map_err(|e| {
            Error::io(
                format!("cannot write {}", root.join(LOCK_NAME).display()),
                e,
            )
        })
}

/// The second line of the lock file while an interrupted run's cleaner holds it.
pub(super) const CLEANER_MARK: &str = "cleaner";

/// How long a run waits for an interrupted run's cleaner before it gives up.
const CLEANER_WAIT: std::time::Duration = std::time::Duration::from_secs(120);

/// Waits up to `limit` for the lock `f` is the file of to be free (polling, so that the wait is
/// bounded on every platform); true when it was. The lock is not kept: the caller reopens the
/// file, which the holder may have removed meanwhile.
fn wait_for_unlock(f: &File, limit: std::time::Duration) -> bool {
    let start = std::time::Instant::now();
    while start.elapsed() < limit {
        std::thread::sleep(std::time::Duration::from_millis(50));
        if f.try_lock().is_ok() {
            let _ = f.unlock();
            return true;
        }
    }
    false
}

/// Takes the lock of the data directory `root` (created where missing), saying in `notes` what
/// it recovered or waited for. Refuses where another run holds it, or where an interrupted run's
/// cleaner has not let go within `CLEANER_WAIT`.
pub(super) fn take_lock(root: &Path, notes: &mut Vec<String>) -> Result<File> {
    let lock_path = root.join(LOCK_NAME);
    for _ in 0..20 {
        create_root(root)?;
        let Some(mut f) = open_lock(root, &lock_path)? else {
            continue; // the directory was just removed
        };
        // flock(LOCK_EX | LOCK_NB) on Unix, LockFileEx on Windows.
        if let Err(lock_err) = f.try_lock() {
            match lock_err {
                fs::TryLockError::WouldBlock => {
                    wait_for_cleaner(root, &mut f, notes)?;
                    continue;
                }
                fs::TryLockError::Error(e) => {
                    return Err(Error::io(format!("cannot lock {}", lock_path.display()), e));
                }
            }
        }
        // The holder before us may have unlinked this file just before we locked it.
        let same = match (
            crate::platform::identity_of_file(&f),
            crate::platform::identity_of_path(&lock_path),
        ) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        };
        if !same {
            continue;
        }
        claim(&mut f, &lock_path, notes)?;
        return Ok(f);
    }
    Err(Error::BadTarget {
        path: root.to_path_buf(),
        reason: "the lock file keeps changing under another process".to_string(),
    })
}

/// Creates the data directory where it is missing, naming a read-only or unwritable target.
fn create_root(root: &Path) -> Result<()> {
    let parent = || root.parent().unwrap_or(root).to_path_buf();
    match fs::create_dir(root) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::ReadOnlyFilesystem => Err(Error::ReadOnly {
            path: parent(),
            cause: e,
        }),
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => Err(Error::NotWritable {
            path: parent(),
            cause: e,
        }),
        Err(e) => Err(Error::io(format!("cannot create {}", root.display()), e)),
    }
}

/// The lock file, opened (created where missing); None where the directory was removed
/// meanwhile.
fn open_lock(root: &Path, lock_path: &Path) -> Result<Option<File>> {
    match OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(lock_path)
    {
        Ok(f) => Ok(Some(f)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::ReadOnlyFilesystem => Err(Error::ReadOnly {
            path: root.to_path_buf(),
            cause: e,
        }),
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => Err(Error::NotWritable {
            path: root.to_path_buf(),
            cause: e,
        }),
        Err(e) => Err(Error::io(format!("cannot open {}", lock_path.display()), e)),
    }
}

/// The lock `f` is held by another process. An interrupted run's cleaner is removing its files:
/// they are going, so wait for it (bounded: a cleaner on a hung filesystem must not hang this
/// run), and Ok to try again. Any other holder is a run in progress: refused, with its pid.
fn wait_for_cleaner(root: &Path, f: &mut File, notes: &mut Vec<String>) -> Result<()> {
    let mut s = String::new();
    let _ = f.read_to_string(&mut s);
    let pid = s.lines().next().unwrap_or("").trim();
    let target = || root.parent().unwrap_or(root).to_path_buf();
    if s.lines().nth(1).map(str::trim) != Some(CLEANER_MARK) {
        return Err(Error::Locked {
            path: target(),
            pid: if pid.is_empty() {
                "unknown".into()
            } else {
                pid.into()
            },
        });
    }
    let started = std::time::Instant::now();
    if !wait_for_unlock(f, CLEANER_WAIT) {
        return Err(Error::Cleaning {
            path: target(),
            pid: pid.to_string(),
            waited_s: CLEANER_WAIT.as_secs(),
        });
    }
    notes.push(format!(
        "waited {:.1} s for an interrupted run's cleaner (pid {pid}) to remove its files",
        started.elapsed().as_secs_f64()
    ));
    Ok(())
}

/// The lock is ours: a pid left in it is an interrupted run's (said in `notes`), and ours
/// replaces it.
fn claim(f: &mut File, lock_path: &Path, notes: &mut Vec<String>) -> Result<()> {
    let mut old = String::new();
    let _ = f.read_to_string(&mut old);
    if let Some(pid) = old.lines().next().map(str::trim).filter(|p| !p.is_empty()) {
        notes.push(format!(
            "recovered the lock left by an interrupted run (pid {pid}); its files will be reused or removed"
        ));
    }
    let me = format!("{}\n", std::process::id());
    f.set_len(0)
        .and_then(|_| f.seek(SeekFrom::Start(0)))
        .and_then(|_| f.write_all(me.as_bytes()))
        .map_err(|e| Error::io(format!("cannot write {}", lock_path.display()), e))
}
