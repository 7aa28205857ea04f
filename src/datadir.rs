//! trackbench's own data directory under a target: a lock so two runs never share it (a stale lock
//! of a killed run is recovered), a manifest of every file trackbench created there, and a cleanup
//! that deletes exactly those files and nothing else.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Name of the data directory created inside a directory target.
pub const DIR_NAME: &str = "trackbench-data";
const LOCK_NAME: &str = "lock";
const MANIFEST_NAME: &str = "manifest.json";
const MANIFEST_VERSION: u32 = 1;

/// One file trackbench created.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// File name inside the data directory.
    pub name: String,
    /// What it is for and with which settings; equal keys mean interchangeable files.
    pub key: String,
    pub size_bytes: u64,
    /// The id its content tags carry.
    pub content_id: u32,
    /// False until the file was fully written.
    pub complete: bool,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Manifest {
    version: u32,
    next_id: u32,
    files: Vec<Entry>,
}

/// The locked data directory of one run.
pub struct DataDir {
    root: PathBuf,
    lock: Option<File>,
    manifest: Manifest,
    keep: bool,
    closed: bool,
    /// Messages for the user (a recovered stale lock, a damaged manifest).
    pub notes: Vec<String>,
}

impl DataDir {
    /// Creates (or reuses) `target/trackbench-data` and takes its lock. With `keep`, the files stay
    /// after the run for reuse; without, everything in the manifest is deleted at the end.
    pub fn open(target: &Path, keep: bool) -> Result<DataDir> {
        let root = target.join(DIR_NAME);
        let mut notes = Vec::new();
        let lock = take_lock(&root, &mut notes)?;
        let manifest = match fs::read(root.join(MANIFEST_NAME)) {
            Ok(bytes) => match serde_json::from_slice::<Manifest>(&bytes) {
                Ok(m) if m.version == MANIFEST_VERSION => m,
                _ => {
                    notes.push(format!(
                        "{} is unreadable; files it listed are left alone",
                        root.join(MANIFEST_NAME).display()
                    ));
                    Manifest::default()
                }
            },
            Err(_) => Manifest::default(),
        };
        let mut d = DataDir {
            root,
            lock: Some(lock),
            manifest,
            keep,
            closed: false,
            notes,
        };
        d.manifest.version = MANIFEST_VERSION;
        d.manifest.next_id = d.manifest.next_id.max(1);
        // Drop entries whose files are gone (deleted by hand).
        d.manifest.files.retain(|e| d.root.join(&e.name).exists());
        d.save()?;
        Ok(d)
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn keep(&self) -> bool {
        self.keep
    }

    /// A complete file with this key and size, left by an earlier `--keep` run.
    pub fn find(&self, key: &str) -> Option<&Entry> {
        self.manifest
            .files
            .iter()
            .find(|e| e.key == key && e.complete)
    }

    pub fn entries(&self) -> &[Entry] {
        &self.manifest.files
    }

    /// Records a new file before it is created, so that even a killed run's files are known.
    /// Any incomplete file under the same name is deleted first.
    pub fn register(&mut self, name: &str, key: &str, size_bytes: u64) -> Result<(PathBuf, u32)> {
        let mut v = self.register_many(&[(name.to_string(), key.to_string(), size_bytes)])?;
        Ok(v.remove(0))
    }

    /// Records many new files at once (one manifest write): `(name, key, size)` each.
    pub fn register_many(
        &mut self,
        items: &[(String, String, u64)],
    ) -> Result<Vec<(PathBuf, u32)>> {
        let mut out = Vec::with_capacity(items.len());
        for (name, key, size) in items {
            assert!(
                !name.contains('/') && name != LOCK_NAME && name != MANIFEST_NAME,
                "data file names are plain and not reserved: {name}"
            );
            if let Some(i) = self.manifest.files.iter().position(|e| &e.name == name) {
                self.delete_at(i)?;
            }
            let id = self.manifest.next_id;
            self.manifest.next_id += 1;
            self.manifest.files.push(Entry {
                name: name.clone(),
                key: key.clone(),
                size_bytes: *size,
                content_id: id,
                complete: false,
            });
            out.push((self.root.join(name), id));
        }
        self.save()?;
        Ok(out)
    }

    /// Marks a registered file as fully written.
    pub fn mark_complete(&mut self, name: &str) -> Result<()> {
        self.mark_complete_many(&[name])
    }

    /// Marks several files as fully written (one manifest write).
    pub fn mark_complete_many(&mut self, names: &[&str]) -> Result<()> {
        for e in self.manifest.files.iter_mut() {
            if names.contains(&e.name.as_str()) {
                e.complete = true;
            }
        }
        self.save()
    }

    /// Deletes one of trackbench's files and forgets it.
    pub fn delete(&mut self, name: &str) -> Result<()> {
        self.delete_many(&[name])
    }

    /// Deletes several of trackbench's files and forgets them (one manifest write).
    pub fn delete_many(&mut self, names: &[&str]) -> Result<()> {
        let mut first_err = None;
        for name in names {
            if let Some(i) = self.manifest.files.iter().position(|e| e.name == *name)
                && let Err(e) = self.delete_at(i)
            {
                first_err.get_or_insert(e);
            }
        }
        self.save()?;
        first_err.map_or(Ok(()), Err)
    }

    fn delete_at(&mut self, i: usize) -> Result<()> {
        let p = self.root.join(&self.manifest.files[i].name);
        match fs::remove_file(&p) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(format!("cannot delete {}", p.display()), e)),
        }
        // The caller writes the manifest once for a batch.
        self.manifest.files.remove(i);
        Ok(())
    }

    /// Fails unless `bytes` more fit on the filesystem with a margin to spare: 1% of its size, and
    /// at least 64 MiB (or 5% on filesystems too small for that).
    pub fn ensure_space(&self, bytes: u64) -> Result<()> {
        let Some((total, free)) = crate::target::space(&self.root) else {
            return Ok(());
        };
        let needed = bytes + (total / 100).max((64 << 20u64).min(total / 20));
        if needed > free {
            return Err(Error::NoSpace {
                path: self.root.clone(),
                needed,
                free,
            });
        }
        Ok(())
    }

    fn save(&self) -> Result<()> {
        let tmp = self.root.join(format!("{MANIFEST_NAME}.tmp"));
        let dst = self.root.join(MANIFEST_NAME);
        let json = serde_json::to_vec_pretty(&self.manifest).expect("manifest serialises");
        fs::write(&tmp, json)
            .and_then(|_| fs::rename(&tmp, &dst))
            .map_err(|e| Error::io(format!("cannot write {}", dst.display()), e))
    }

    /// Ends the run: without `keep`, deletes every file in the manifest, the manifest, the lock and
    /// the directory (if nothing else is in it); with `keep`, leaves the files and the manifest.
    pub fn close(mut self) -> Result<()> {
        self.cleanup()
    }

    fn cleanup(&mut self) -> Result<()> {
        if self.closed {
            return Ok(());
        }
        self.closed = true;
        let mut first_err = None;
        if !self.keep {
            while !self.manifest.files.is_empty() {
                let last = self.manifest.files.len() - 1;
                if let Err(e) = self.delete_at(last) {
                    first_err.get_or_insert(e);
                    self.manifest.files.pop();
                }
            }
            let _ = fs::remove_file(self.root.join(MANIFEST_NAME));
        }
        // Unlink the lock while holding it; a waiting run notices the inode changed and retries.
        let _ = fs::remove_file(self.root.join(LOCK_NAME));
        self.lock = None;
        let _ = fs::remove_dir(&self.root); // only succeeds when empty: never removes others' files
        first_err.map_or(Ok(()), Err)
    }
}

impl Drop for DataDir {
    fn drop(&mut self) {
        let _ = self.cleanup();
    }
}

/// Removes trackbench's data from `target` (the `clean` command): files listed in the manifest, the
/// manifest, the lock and the directory if it is then empty. Returns the files removed and the
/// names of files found there that trackbench did not create (left alone).
pub fn clean(target: &Path) -> Result<(Vec<Entry>, Vec<String>)> {
    let root = target.join(DIR_NAME);
    if !root.is_dir() {
        return Ok((Vec::new(), Vec::new()));
    }
    let d = DataDir::open(target, false)?;
    let removed = d.manifest.files.clone();
    d.close()?;
    let mut foreign = Vec::new();
    if let Ok(rd) = fs::read_dir(&root) {
        for e in rd.flatten() {
            foreign.push(e.file_name().to_string_lossy().into_owned());
        }
    }
    Ok((removed, foreign))
}

fn take_lock(root: &Path, notes: &mut Vec<String>) -> Result<File> {
    let lock_path = root.join(LOCK_NAME);
    for _ in 0..20 {
        match fs::create_dir(root) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e)
                if e.kind() == std::io::ErrorKind::ReadOnlyFilesystem
                    || e.kind() == std::io::ErrorKind::PermissionDenied =>
            {
                return Err(Error::ReadOnly {
                    path: root.parent().unwrap_or(root).to_path_buf(),
                    source: e,
                });
            }
            Err(e) => return Err(Error::io(format!("cannot create {}", root.display()), e)),
        }
        let mut f = match OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lock_path)
        {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue, // directory just removed
            Err(e)
                if e.kind() == std::io::ErrorKind::ReadOnlyFilesystem
                    || e.kind() == std::io::ErrorKind::PermissionDenied =>
            {
                return Err(Error::ReadOnly {
                    path: root.to_path_buf(),
                    source: e,
                });
            }
            Err(e) => return Err(Error::io(format!("cannot open {}", lock_path.display()), e)),
        };
        // SAFETY: a valid open descriptor.
        if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            let err = std::io::Error::last_os_error();
            if err.raw_os_error() == Some(libc::EWOULDBLOCK) {
                let mut s = String::new();
                let _ = f.read_to_string(&mut s);
                let pid = s.lines().next().unwrap_or("").trim();
                return Err(Error::Locked {
                    path: root.parent().unwrap_or(root).to_path_buf(),
                    pid: if pid.is_empty() {
                        "unknown".into()
                    } else {
                        pid.into()
                    },
                });
            }
            return Err(Error::io(
                format!("cannot lock {}", lock_path.display()),
                err,
            ));
        }
        // The holder before us may have unlinked this file just before we locked it.
        let same = match (f.metadata(), fs::metadata(&lock_path)) {
            (Ok(a), Ok(b)) => a.ino() == b.ino() && a.dev() == b.dev(),
            _ => false,
        };
        if !same {
            continue;
        }
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
            .map_err(|e| Error::io(format!("cannot write {}", lock_path.display()), e))?;
        return Ok(f);
    }
    Err(Error::BadTarget {
        path: root.to_path_buf(),
        reason: "the lock file keeps changing under another process".to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_open_is_refused_and_cleanup_removes_only_ours() {
        let t = tempfile::tempdir().unwrap();
        let mut d = DataDir::open(t.path(), false).unwrap();
        let e = DataDir::open(t.path(), false)
            .err()
            .expect("second run refused");
        assert!(matches!(e, Error::Locked { .. }), "{e}");
        assert!(e.to_string().contains(&std::process::id().to_string()));
        let (p, id) = d.register("a.wav", "k", 10).unwrap();
        assert_eq!(id, 1);
        fs::write(&p, b"x").unwrap();
        fs::write(d.root().join("users-file"), b"mine").unwrap();
        d.close().unwrap();
        let root = t.path().join(DIR_NAME);
        assert!(!root.join("a.wav").exists());
        assert!(
            root.join("users-file").exists(),
            "never delete what is not ours"
        );
        assert!(!root.join(LOCK_NAME).exists());
        let (removed, foreign) = clean(t.path()).unwrap();
        assert!(removed.is_empty());
        assert_eq!(foreign, vec!["users-file".to_string()]);
    }

    #[test]
    fn keep_then_reuse_then_clean() {
        let t = tempfile::tempdir().unwrap();
        let mut d = DataDir::open(t.path(), true).unwrap();
        let (p, _) = d.register("a.wav", "span:1M", 1 << 20).unwrap();
        fs::write(&p, b"x").unwrap();
        assert!(
            d.find("span:1M").is_none(),
            "incomplete files are not reused"
        );
        d.mark_complete("a.wav").unwrap();
        d.close().unwrap();
        let d = DataDir::open(t.path(), false).unwrap();
        assert_eq!(d.find("span:1M").unwrap().name, "a.wav");
        drop(d); // Drop cleans up like close
        assert!(!t.path().join(DIR_NAME).exists());
    }

    #[test]
    fn stale_lock_is_recovered() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join(DIR_NAME);
        fs::create_dir(&root).unwrap();
        fs::write(root.join(LOCK_NAME), "999999\n").unwrap();
        let d = DataDir::open(t.path(), false).unwrap();
        assert!(
            d.notes.iter().any(|n| n.contains("999999")),
            "{:?}",
            d.notes
        );
        d.close().unwrap();
        assert!(!root.exists());
    }
}
