//! trackbench's own data directory under a target: a lock so two runs never share it (a stale lock
//! of a killed run is recovered), a manifest of every file trackbench created there, and a cleanup
//! that deletes exactly those files and nothing else.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::fs::{self, File, OpenOptions};
use std::path::{Path, PathBuf};

mod clean;
mod lock;

pub use clean::{Cleaned, abandoned, clean};
#[cfg(unix)]
use lock::mark_cleaner;
use lock::take_lock;

/// Name of the data directory created inside a directory target.
pub const DIR_NAME: &str = "trackbench-data";
const LOCK_NAME: &str = "lock";
const MANIFEST_NAME: &str = "manifest.json";
/// Version 2 records each file's identity; version 1 manifests (without) still load.
const MANIFEST_VERSION: u32 = 2;

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
    /// The file trackbench created under this name (set once it exists): only that file is
    /// ever deleted or reused, never another one found under the name later.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<Identity>,
    /// When the name was reserved, in ns since the epoch on the filesystem's clock (the
    /// manifest's time stamp): a run killed between creating the file and recording its
    /// identity left a file born after this, which proves it is trackbench's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reserved_ns: Option<u64>,
}

/// What tells the file trackbench created from another file under the same name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Identity {
    pub dev: u64,
    pub ino: u64,
    /// Birth time in ns since the epoch, where the filesystem keeps one: inode numbers are
    /// reused, birth times are not.
    pub born_ns: Option<u64>,
}

impl Identity {
    fn of(m: &fs::Metadata, (dev, ino): (u64, u64)) -> Identity {
        Identity {
            dev,
            ino,
            // NTFS's 64-bit file id carries a sequence number that changes when the record is
            // reused, so on Windows (volume, file id) is the identity; creation times there
            // can be set by any program (and wine makes them up from the Unix file's times).
            born_ns: if cfg!(windows) { None } else { born_ns(m) },
        }
    }
}

fn born_ns(m: &fs::Metadata) -> Option<u64> {
    let t = m.created().ok()?;
    Some(t.duration_since(std::time::UNIX_EPOCH).ok()?.as_nanos() as u64)
}

/// How long after its reservation a file may be born and still be taken for the one trackbench
/// was about to create (creating 20,000 files takes seconds; on a slow network filesystem more).
const RESERVATION_WINDOW_NS: u64 = 600_000_000_000;

/// Filesystem time stamps come from a coarse clock (a jiffy, up to 10 ms): a file created just
/// after the manifest was written may carry a time stamp this much earlier.
const COARSE_CLOCK_NS: u64 = 20_000_000;

/// Whether a manifest entry names a file trackbench may delete or reuse, and why not.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Ownership {
    Ours,
    Missing,
    NotOurs(&'static str),
}

/// True for the names trackbench gives its files (`seq.wav`, `play-0007.wav`, …): plain names in
/// the data directory, never a path, a hidden file or one of the directory's own files. A
/// manifest entry with any other name is damaged or forged and is left alone.
pub fn is_own_name(name: &str) -> bool {
    let Some(stem) = name.strip_suffix(".wav") else {
        return false;
    };
    let mut parts = stem.splitn(2, '-');
    let prefix = parts.next().unwrap_or("");
    let number_ok = parts
        .next()
        .is_none_or(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    name.len() <= 64
        && !prefix.is_empty()
        && prefix
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        && number_ok
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
    /// A `trackbench-data` that is a link, not a directory, or a directory that is not
    /// trackbench's (files but no manifest) is refused: its files are never touched.
    pub fn open(target: &Path, keep: bool) -> Result<DataDir> {
        Self::open_at(target, None, keep)
    }

    /// `open` for one rank of a studio run: `target/trackbench-data/rank-NNN`, a data directory
    /// of its own (lock, manifest, cleanup) inside the shared one, so the safety rules hold per
    /// rank. `None` is the single run's `target/trackbench-data`.
    pub fn open_at(target: &Path, rank: Option<u32>, keep: bool) -> Result<DataDir> {
        let root = root_of(target, rank);
        let mut notes = Vec::new();
        if rank.is_some() {
            let parent = target.join(DIR_NAME);
            check_own_dir(&parent)?;
            match fs::create_dir(&parent) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => {
                    return Err(Error::io(format!("cannot create {}", parent.display()), e));
                }
            }
        }
        check_own_dir(&root)?;
        let lock = take_lock(&root, &mut notes)?;
        Self::load(root, lock, keep, notes)
    }

    /// Takes over the data directory of a run that handed its lock over (`detach_lock`): the
    /// descriptor `fd`, inherited from it, still holds the lock, so no other run can slip in
    /// between. Used to remove an interrupted run's files after that run has exited.
    #[cfg(unix)]
    pub fn adopt(target: &Path, rank: Option<u32>, fd: std::os::fd::RawFd) -> Result<DataDir> {
        use std::os::fd::FromRawFd;
        use std::os::unix::fs::MetadataExt;
        let root = root_of(target, rank);
        // SAFETY: the caller passes a descriptor it owns (inherited, not used elsewhere);
        // fstat checks it is open before it is wrapped.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        if fd < 0 || unsafe { libc::fstat(fd, &mut st) } != 0 {
            return Err(Error::invalid(
                "lock descriptor",
                fd,
                "an open descriptor of the lock",
            ));
        }
        let mut lock = unsafe { File::from_raw_fd(fd) };
        let held = lock
            .metadata()
            .map_err(|e| Error::io("cannot inspect the lock descriptor", e))?;
        let on_disk = fs::metadata(root.join(LOCK_NAME)).map_err(|e| {
            Error::io(
                format!("cannot inspect {}", root.join(LOCK_NAME).display()),
                e,
            )
        })?;
        if on_disk.ino() != held.ino() || on_disk.dev() != held.dev() {
            return Err(Error::invalid(
                "lock descriptor",
                fd,
                format!("the lock of {}", root.display()),
            ));
        }
        // Says who holds the lock now: the interrupted run's pid, written there, is gone.
        mark_cleaner(&mut lock, &root)?;
        Self::load(root, lock, false, Vec::new())
    }

    /// Hands the lock over to a process this one starts (the descriptor loses close-on-exec):
    /// that process `adopt`s the directory and removes the files, which on some filesystems
    /// takes seconds, while this one exits. This `DataDir` no longer cleans up.
    #[cfg(unix)]
    pub fn detach_lock(mut self) -> Result<std::os::fd::RawFd> {
        use std::os::fd::IntoRawFd;
        let mut lock = self
            .lock
            .take()
            .expect("an open data directory holds its lock");
        // Marked before the cleaner starts, not only once it has: a `clean` run in between
        // (the user's, after a second Ctrl-C ended this run at once) found the lock held, by
        // the cleaner, under this run's pid, gone by then, and refused the directory as in use.
        if let Err(e) = mark_cleaner(&mut lock, &self.root) {
            self.lock = Some(lock);
            return Err(e);
        }
        let fd = lock.into_raw_fd();
        // SAFETY: fd is open; this only clears FD_CLOEXEC.
        if unsafe { libc::fcntl(fd, libc::F_SETFD, 0) } != 0 {
            let e = std::io::Error::last_os_error();
            // SAFETY: fd is ours and open; reclaim it so it is closed.
            self.lock = Some(unsafe { <File as std::os::fd::FromRawFd>::from_raw_fd(fd) });
            return Err(Error::io("cannot hand the lock over", e));
        }
        self.closed = true;
        Ok(fd)
    }

    fn load(root: PathBuf, lock: File, keep: bool, mut notes: Vec<String>) -> Result<DataDir> {
        let manifest = match fs::read(root.join(MANIFEST_NAME)) {
            Ok(bytes) => match serde_json::from_slice::<Manifest>(&bytes) {
                Ok(m) if (1..=MANIFEST_VERSION).contains(&m.version) => m,
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
        // Forget entries whose files are gone (deleted by hand), and entries that do not name a
        // file trackbench created (a forged or damaged entry, a file replaced since): those files
        // are left alone, and said so.
        let files = std::mem::take(&mut d.manifest.files);
        for e in files {
            match d.ownership(&e) {
                Ownership::Ours => d.manifest.files.push(e),
                Ownership::Missing => {}
                Ownership::NotOurs(why) => d.notes.push(format!(
                    "{}: {why}; left alone and dropped from the manifest",
                    d.root.join(&e.name).display()
                )),
            }
        }
        d.save()?;
        Ok(d)
    }

    /// Whether the file an entry names is the one trackbench created (see `Ownership`).
    fn ownership(&self, e: &Entry) -> Ownership {
        if !is_own_name(&e.name) {
            return Ownership::NotOurs("not a name trackbench gives its files");
        }
        let p = self.root.join(&e.name);
        let m = match fs::symlink_metadata(&p) {
            Ok(m) => m,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ownership::Missing,
            Err(_) => return Ownership::NotOurs("cannot be inspected"),
        };
        if !m.file_type().is_file() {
            return Ownership::NotOurs("not a regular file");
        }
        match (e.identity, e.reserved_ns) {
            (Some(id), _) => {
                let Ok(found) = crate::platform::identity_of_path(&p) else {
                    return Ownership::NotOurs("cannot be inspected");
                };
                let now = Identity::of(&m, found);
                let same = now.dev == id.dev
                    && now.ino == id.ino
                    && (id.born_ns.is_none() || now.born_ns == id.born_ns);
                if same {
                    Ownership::Ours
                } else {
                    Ownership::NotOurs("not the file trackbench created under this name")
                }
            }
            // Reserved, then the run stopped before it recorded what it created.
            (None, Some(reserved)) => match born_ns(&m) {
                Some(b) if b + COARSE_CLOCK_NS < reserved => {
                    Ownership::NotOurs("older than trackbench's claim to the name")
                }
                Some(b) if b > reserved.saturating_add(RESERVATION_WINDOW_NS) => {
                    Ownership::NotOurs("created long after trackbench claimed the name")
                }
                Some(_) => Ownership::Ours,
                None if tagged(&p, e.content_id) || headed(&p, &m, e.size_bytes) => Ownership::Ours,
                None => Ownership::NotOurs(
                    "trackbench cannot tell that it created it (this filesystem keeps no birth times)",
                ),
            },
            // A manifest of version 1: trackbench's own content tags prove the file.
            (None, None) if tagged(&p, e.content_id) => Ownership::Ours,
            (None, None) => Ownership::NotOurs("trackbench cannot tell that it created it"),
        }
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

    /// [`DataDir::find`] for every key of `keys`, in order, in one pass over the manifest (a
    /// search's probe of 8,000 tracks looked its files up one by one: 64 million comparisons).
    pub fn find_many(&self, keys: &[String]) -> Vec<Option<&Entry>> {
        let mut first: HashMap<&str, &Entry> = HashMap::with_capacity(self.manifest.files.len());
        for e in self.manifest.files.iter().filter(|e| e.complete) {
            first.entry(e.key.as_str()).or_insert(e);
        }
        keys.iter()
            .map(|k| first.get(k.as_str()).copied())
            .collect()
    }

    pub fn entries(&self) -> &[Entry] {
        &self.manifest.files
    }

    /// Creates a new, empty file of trackbench's (see `register_many`).
    pub fn register(&mut self, name: &str, key: &str, size_bytes: u64) -> Result<(PathBuf, u32)> {
        let mut v = self.register_many(&[(name.to_string(), key.to_string(), size_bytes)])?;
        Ok(v.remove(0))
    }

    /// Creates new, empty files, `(name, key, size)` each, and lists them in the manifest: the
    /// names are reserved first (so even a killed run's files are known), then each file is
    /// created, never opened if something is already there, and its identity recorded (two
    /// manifest writes for the batch). Earlier files of trackbench's under these names are
    /// deleted first. A file under one of the names that trackbench did not create stops the
    /// run with an error and is left alone.
    pub fn register_many(
        &mut self,
        items: &[(String, String, u64)],
    ) -> Result<Vec<(PathBuf, u32)>> {
        let reserved = self.reserve_many(items)?;
        let mut created = Vec::with_capacity(reserved.len());
        let mut failure = None;
        for (path, _) in &reserved {
            match create_reserved(path) {
                Ok(id) => created.push(id),
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            }
        }
        self.record_created(&reserved, &created)?;
        failure.map_or(Ok(reserved), Err)
    }

    /// The first half of [`DataDir::register_many`]: reserves the names in the manifest (written
    /// once) and returns each one's path and content id, in order, for [`create_reserved`] to
    /// create, from any thread, and [`DataDir::record_created`] to record. A run killed in
    /// between left files born after the reservation, which the cleanup knows for its own.
    pub fn reserve_many(&mut self, items: &[(String, String, u64)]) -> Result<Vec<(PathBuf, u32)>> {
        if let Some((name, _, _)) = items.iter().find(|(n, _, _)| !is_own_name(n)) {
            return Err(Error::invalid(
                "data file name",
                name,
                "a plain name such as play-0001.wav",
            ));
        }
        let names: HashSet<&str> = items.iter().map(|(n, _, _)| n.as_str()).collect();
        if let Some(e) = self.delete_matching(&names) {
            return Err(e);
        }
        let reserved_ns = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        let mut out = Vec::with_capacity(items.len());
        for (name, key, size) in items {
            let id = self.manifest.next_id;
            self.manifest.next_id += 1;
            self.manifest.files.push(Entry {
                name: name.clone(),
                key: key.clone(),
                size_bytes: *size,
                content_id: id,
                complete: false,
                identity: None,
                reserved_ns: Some(reserved_ns),
            });
            out.push((self.root.join(name), id));
        }
        self.save()?;
        Ok(out)
    }

    /// The second half of [`DataDir::register_many`]: the identities of the files created under
    /// the first `created.len()` of `reserved` (as `reserve_many` returned them, in order) are
    /// recorded, and the names after them, never created, are no longer claimed. One manifest
    /// write.
    pub fn record_created(
        &mut self,
        reserved: &[(PathBuf, u32)],
        created: &[Identity],
    ) -> Result<()> {
        let identities: HashMap<u32, Option<Identity>> = reserved
            .iter()
            .enumerate()
            .map(|(i, &(_, id))| (id, created.get(i).copied()))
            .collect();
        self.manifest
            .files
            .retain_mut(|e| match identities.get(&e.content_id) {
                _ if e.identity.is_some() => true,
                Some(Some(id)) => {
                    e.identity = Some(*id);
                    true
                }
                Some(None) => false,
                None => true,
            });
        self.save()
    }

    /// Marks a registered file as fully written.
    pub fn mark_complete(&mut self, name: &str) -> Result<()> {
        self.mark_complete_many(&[name])
    }

    /// Marks several files as fully written (one manifest write).
    pub fn mark_complete_many(&mut self, names: &[&str]) -> Result<()> {
        let names: HashSet<&str> = names.iter().copied().collect();
        for e in self.manifest.files.iter_mut() {
            if names.contains(e.name.as_str()) {
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
        let first_err = self.delete_matching(&names.iter().copied().collect());
        self.save()?;
        first_err.map_or(Ok(()), Err)
    }

    /// Deletes the files of the entries named in `names` that are the ones trackbench created
    /// (others are left alone, with a note) and forgets those entries, in one pass over the
    /// manifest (10,000 tracks' files name 10,000 entries). An entry whose file could not be
    /// deleted stays; the first such error is returned. The caller writes the manifest.
    fn delete_matching(&mut self, names: &HashSet<&str>) -> Option<Error> {
        let mut first_err = None;
        let files = std::mem::take(&mut self.manifest.files);
        let (mine, mut kept): (Vec<Entry>, Vec<Entry>) = files
            .into_iter()
            .partition(|e| names.contains(e.name.as_str()));
        let outcomes = self.delete_all(&mine.iter().collect::<Vec<_>>());
        for (e, r) in mine.into_iter().zip(outcomes) {
            match r {
                Ok(None) => {}
                Ok(Some(note)) => self.notes.push(note),
                Err(err) => {
                    first_err.get_or_insert(err);
                    kept.push(e);
                }
            }
        }
        self.manifest.files = kept;
        first_err
    }

    /// Deletes the file of entry `e` if it is the one trackbench created (or finds it gone);
    /// else leaves it alone and returns a note saying so.
    fn delete_one(&self, e: &Entry) -> Result<Option<String>> {
        let p = self.root.join(&e.name);
        match self.ownership(e) {
            Ownership::Ours => match fs::remove_file(&p) {
                Ok(()) => Ok(None),
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(err) => Err(Error::io(format!("cannot delete {}", p.display()), err)),
            },
            Ownership::Missing => Ok(None),
            Ownership::NotOurs(why) => Ok(Some(format!("{}: {why}; left alone", p.display()))),
        }
    }

    /// [`DataDir::delete_one`] for every entry of `entries`, several at once; each entry's
    /// outcome, in order. Most of an unlink's time is freeing the file's blocks, which the
    /// kernel does after it lets go of the directory: on this machine's ext4, 1.5 MB test files
    /// took 0.77 ms each one at a time and 0.50 ms with two threads, and a search on a fast
    /// disk leaves about 10,000 of them.
    fn delete_all(&self, entries: &[&Entry]) -> Vec<Result<Option<String>>> {
        /// Fewer files than this a thread are not worth its start.
        const PER_THREAD: usize = 256;
        let workers = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(8)
            .min(entries.len().div_ceil(PER_THREAD))
            .max(1);
        if workers == 1 {
            return entries.iter().map(|e| self.delete_one(e)).collect();
        }
        let per = entries.len().div_ceil(workers);
        std::thread::scope(|s| {
            let parts: Vec<_> = entries
                .chunks(per)
                .map(|part| {
                    s.spawn(move || part.iter().map(|e| self.delete_one(e)).collect::<Vec<_>>())
                })
                .collect();
            parts
                .into_iter()
                .flat_map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect()
        })
    }

    /// `ensure_space` for new files under `names`: the files of trackbench's that they replace
    /// are deleted first, so their space counts as free (a kept 1 GiB seq.wav on a nearly full
    /// disk must not stop the run that rewrites it).
    pub fn ensure_space_replacing(&self, bytes: u64, names: &[&str]) -> Result<()> {
        let names: HashSet<&str> = names.iter().copied().collect();
        let freed: u64 = self
            .manifest
            .files
            .iter()
            .filter(|e| names.contains(e.name.as_str()))
            .filter_map(|e| fs::symlink_metadata(self.root.join(&e.name)).ok())
            .map(|m| crate::platform::allocated_bytes(&m))
            .sum();
        self.ensure_space(bytes.saturating_sub(freed))
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

    /// Ends the run: without `keep`, deletes every file in the manifest that is still the one
    /// trackbench created, then the manifest, the lock and the directory (if nothing else is in
    /// it); with `keep`, leaves the files and the manifest. Returns notes on files left alone.
    pub fn close(mut self) -> Result<Vec<String>> {
        let before = self.notes.len();
        self.cleanup()?;
        Ok(self.notes.split_off(before))
    }

    fn cleanup(&mut self) -> Result<()> {
        if self.closed {
            return Ok(());
        }
        self.closed = true;
        let mut first_err = None;
        if !self.keep {
            let files = std::mem::take(&mut self.manifest.files);
            let newest_first: Vec<&Entry> = files.iter().rev().collect();
            for r in self.delete_all(&newest_first) {
                match r {
                    Ok(None) => {}
                    Ok(Some(note)) => self.notes.push(note),
                    Err(err) => {
                        first_err.get_or_insert(err);
                    }
                }
            }
            let _ = fs::remove_file(self.root.join(MANIFEST_NAME));
        }
        // Unlink the lock while holding it; a waiting run notices the inode changed and retries.
        let _ = fs::remove_file(self.root.join(LOCK_NAME));
        self.lock = None;
        // Only succeeds when empty: never removes others' files.
        remove_dir_once_released(&self.root);
        // A rank's directory sits in the shared one: the last rank out removes that too.
        let is_rank = self
            .root
            .file_name()
            .is_some_and(|n| is_rank_dir_name(&n.to_string_lossy()));
        if let Some(parent) = self
            .root
            .parent()
            .filter(|p| is_rank && p.ends_with(DIR_NAME))
        {
            remove_dir_once_released(parent);
        }
        first_err.map_or(Ok(()), Err)
    }
}

/// Whether `name` is what a network filesystem keeps of a file removed while still open: FUSE's
/// `.fuse_hiddenNNN` (sshfs and other high-level FUSE filesystems), NFS's `.nfsNNN`, SMB's
/// `.smbNNN`. The filesystem removes it itself once the file is released.
fn is_released_later(name: &std::ffi::OsStr) -> bool {
    let n = name.to_string_lossy();
    n.starts_with(".fuse_hidden") || n.starts_with(".nfs") || n.starts_with(".smb")
}

/// Removes the empty directory `dir`. On a network share a file trackbench removed while it
/// was still open (the lock, which is unlinked while held) lingers under a hidden name until
/// the share hears that it was closed, which comes after `close` returns: while only such names
/// are left, waits for them to go (up to 5 s), then removes the directory. Anything else in it
/// is left alone, as are the hidden names if they stay.
fn remove_dir_once_released(dir: &Path) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        if fs::remove_dir(dir).is_ok() {
            return;
        }
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        let others = entries
            .filter_map(|e| e.ok())
            .any(|e| !is_released_later(&e.file_name()));
        if others || std::time::Instant::now() >= deadline {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

impl Drop for DataDir {
    fn drop(&mut self) {
        let _ = self.cleanup();
    }
}

/// Where a run's data directory is: `target/trackbench-data`, or a rank's inside it.
pub fn root_of(target: &Path, rank: Option<u32>) -> PathBuf {
    match rank {
        None => target.join(DIR_NAME),
        Some(r) => target.join(DIR_NAME).join(rank_dir_name(r)),
    }
}

fn rank_dir_name(rank: u32) -> String {
    format!("{RANK_PREFIX}{rank:03}")
}

const RANK_PREFIX: &str = "rank-";

/// True for the name of a rank's data directory (`rank-007`).
fn is_rank_dir_name(name: &str) -> bool {
    name.strip_prefix(RANK_PREFIX)
        .is_some_and(|n| !n.is_empty() && n.len() <= 10 && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The ranks whose data directories are in `target` (what studio runs left, or are using).
pub fn rank_dirs(target: &Path) -> Vec<u32> {
    let mut ranks: Vec<u32> = fs::read_dir(target.join(DIR_NAME))
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            is_rank_dir_name(&n)
                .then(|| n[RANK_PREFIX.len()..].parse().ok())
                .flatten()
        })
        .collect();
    ranks.sort_unstable();
    ranks
}

/// Refuses a `trackbench-data` that trackbench must not use: a symbolic link (its lock, manifest
/// and files would land wherever it points), something other than a directory, or a directory
/// with files in it but no manifest (someone else's, or one whose manifest was removed).
fn check_own_dir(root: &Path) -> Result<()> {
    let m = match fs::symlink_metadata(root) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io(format!("cannot inspect {}", root.display()), e)),
    };
    let refuse = |reason: &str| {
        Err(Error::BadTarget {
            path: root.to_path_buf(),
            reason: format!(
                "{reason}; trackbench keeps its test files in a directory of its own there and will not use this one: move it away or choose another target"
            ),
        })
    };
    if m.file_type().is_symlink() {
        return refuse("is a symbolic link");
    }
    if !m.is_dir() {
        return refuse("is not a directory");
    }
    if root.join(MANIFEST_NAME).exists() {
        return Ok(());
    }
    let rd =
        fs::read_dir(root).map_err(|e| Error::io(format!("cannot list {}", root.display()), e))?;
    // What a run leaves before its first manifest write, if it is killed then, and the ranks'
    // directories of a studio run.
    let own = [LOCK_NAME.to_string(), format!("{MANIFEST_NAME}.tmp")];
    let others: Vec<String> = rd
        .flatten()
        .filter(|e| {
            !(e.file_type().is_ok_and(|t| t.is_dir())
                && is_rank_dir_name(&e.file_name().to_string_lossy()))
        })
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !own.contains(n))
        .collect();
    if others.is_empty() {
        Ok(())
    } else {
        refuse(&format!(
            "holds {} but no {MANIFEST_NAME}, so it is not trackbench's",
            others.join(", ")
        ))
    }
}

/// Creates an empty file that did not exist (never follows a link, never opens what is there),
/// and returns what it is and which file it is.
/// Creates the file a reservation named ([`DataDir::reserve_many`]), never opening one already
/// there, and returns its identity for [`DataDir::record_created`].
pub fn create_reserved(path: &Path) -> Result<Identity> {
    match create_new(path) {
        Ok((m, id)) => Ok(Identity::of(&m, id)),
        Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => Err(Error::BadTarget {
            path: path.to_path_buf(),
            reason: "is in trackbench's data directory, but trackbench did not create it; it is left alone: move it elsewhere and run again".into(),
        }),
        Err(err) => Err(Error::io(format!("cannot create {}", path.display()), err)),
    }
}

fn create_new(path: &Path) -> std::io::Result<(fs::Metadata, (u64, u64))> {
    let mut o = OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o644)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC);
    }
    // Windows: CREATE_NEW fails on anything already there, a link included.
    let f = o.open(path)?;
    Ok((f.metadata()?, crate::platform::identity_of_file(&f)?))
}

/// True when `path` starts with the header trackbench writes for a file of `size` bytes (its
/// RIFF size and its data chunk's length both say that size, its data starts after a JUNK pad
/// at `DATA_OFFSET`) and holds no more than that: a file whose header went down before its
/// first tagged block did (a share lost while the layout wrote it). On a filesystem without
/// birth times this is what tells it from another program's file under the reserved name.
fn headed(path: &Path, m: &fs::Metadata, size: u64) -> bool {
    use crate::audio::DATA_OFFSET;
    use crate::platform::FileAt;
    if size < DATA_OFFSET || m.len() > size {
        return false;
    }
    let (Ok(riff), Ok(data)) = (u32::try_from(size - 8), u32::try_from(size - DATA_OFFSET)) else {
        return false;
    };
    let mut h = vec![0u8; DATA_OFFSET as usize];
    let read = fs::File::open(path).and_then(|f| f.read_exact_at(&mut h, 0));
    let n = h.len();
    read.is_ok()
        && &h[0..4] == b"RIFF"
        && h[4..8] == riff.to_le_bytes()
        && &h[8..12] == b"WAVE"
        && &h[n - 8..n - 4] == b"data"
        && h[n - 4..] == data.to_le_bytes()
        && h.windows(4).any(|w| w == b"JUNK")
}

/// True when the first audio block of `path` carries trackbench's tag for `content_id`.
fn tagged(path: &Path, content_id: u32) -> bool {
    use crate::platform::FileAt;
    let mut tag = [0u8; 16];
    fs::File::open(path)
        .and_then(|f| f.read_exact_at(&mut tag, crate::audio::DATA_OFFSET))
        .is_ok()
        && crate::content::check_tag(&tag, content_id, crate::audio::DATA_OFFSET)
}

#[cfg(test)]
mod tests {

    /// Over FUSE (and NFS, SMB) a file removed while open lingers under a hidden name until the
    /// share hears it was closed: the directory goes once it has gone, and a directory that
    /// holds anything else stays, at once.
    #[test]
    fn a_directory_goes_once_the_share_has_released_what_was_removed_open() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("trackbench-data");
        fs::create_dir(&d).unwrap();
        let hidden = d.join(".fuse_hidden0000080e00000004");
        fs::write(&hidden, b"lock").unwrap();
        let release = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(300));
            fs::remove_file(hidden).unwrap();
        });
        remove_dir_once_released(&d);
        release.join().unwrap();
        assert!(!d.exists(), "removed once the hidden file went");

        fs::create_dir(&d).unwrap();
        fs::write(d.join(".fuse_hidden1"), b"x").unwrap();
        fs::write(d.join("take-01.wav"), b"a user's").unwrap();
        let t0 = std::time::Instant::now();
        remove_dir_once_released(&d);
        assert!(d.join("take-01.wav").exists() && d.join(".fuse_hidden1").exists());
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(1),
            "no wait for others' files"
        );
    }
    use super::*;

    /// A run started while an interrupted run's cleaner still removes its files waits for the
    /// cleaner, then opens the directory (a test once ran `clean` as the cleaner worked and was
    /// told the directory was in use by the interrupted run, whose pid was long gone).
    #[cfg(unix)]
    #[test]
    fn a_run_waits_for_an_interrupted_runs_cleaner() {
        let t = tempfile::tempdir().unwrap();
        let mut d = DataDir::open(t.path(), false).unwrap();
        let (p, _) = d.register("a.wav", "k", 10).unwrap();
        fs::write(&p, b"x").unwrap();
        let fd = d.detach_lock().unwrap();
        // Handed over, before the cleaner has started: the lock says so already.
        let lock = fs::read_to_string(t.path().join(DIR_NAME).join(LOCK_NAME)).unwrap();
        assert_eq!(
            lock,
            format!("{}\n{}\n", std::process::id(), lock::CLEANER_MARK),
            "the handed-over lock says a cleaner holds it"
        );
        let target = t.path().to_path_buf();
        let finishing = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(150));
            let cleaner = DataDir::adopt(&target, None, fd).unwrap();
            std::thread::sleep(std::time::Duration::from_millis(150));
            cleaner.close().unwrap();
        });
        let started = std::time::Instant::now();
        let d = DataDir::open(t.path(), false).expect("waits for the cleaner, then opens");
        assert!(started.elapsed() >= std::time::Duration::from_millis(250));
        assert!(
            d.notes
                .iter()
                .any(|n| n.contains("cleaner") && n.contains("waited")),
            "{:?}",
            d.notes
        );
        assert!(
            !p.exists(),
            "the cleaner removed the file before the run went on"
        );
        finishing.join().unwrap();
        d.close().unwrap();
    }

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
        let c = clean(t.path()).unwrap();
        assert!(c.removed.is_empty());
        assert_eq!(c.foreign, vec!["users-file".to_string()]);
        assert_eq!(fs::read(root.join("users-file")).unwrap(), b"mine");
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

    /// `find_many` answers as `find` does key by key: complete entries only, the first of a
    /// key, none for a key not there.
    #[test]
    fn many_keys_are_found_as_one_at_a_time() {
        let t = tempfile::tempdir().unwrap();
        let mut d = DataDir::open(t.path(), false).unwrap();
        for (name, key) in [
            ("a.wav", "k:a"),
            ("b.wav", "k:b"),
            ("c.wav", "k:a"),
            ("d.wav", "k:d"),
        ] {
            d.register(name, key, 4096).unwrap();
        }
        d.mark_complete_many(&["a.wav", "b.wav", "c.wav"]).unwrap();
        let keys: Vec<String> = ["k:b", "k:a", "k:d", "k:none"].map(String::from).to_vec();
        let many: Vec<Option<&str>> = d
            .find_many(&keys)
            .into_iter()
            .map(|e| e.map(|e| e.name.as_str()))
            .collect();
        let one: Vec<Option<&str>> = keys
            .iter()
            .map(|k| d.find(k).map(|e| e.name.as_str()))
            .collect();
        assert_eq!(many, one);
        assert_eq!(many, [Some("b.wav"), Some("a.wav"), None, None]);
        d.close().unwrap();
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

    fn with_manifest(target: &Path, files: serde_json::Value) {
        let root = target.join(DIR_NAME);
        fs::create_dir_all(&root).unwrap();
        let m = serde_json::json!({"version": 1, "next_id": 50, "files": files});
        fs::write(root.join(MANIFEST_NAME), m.to_string()).unwrap();
    }

    fn entry(name: &str) -> serde_json::Value {
        serde_json::json!({"name": name, "key": "k", "size_bytes": 1, "content_id": 7, "complete": true})
    }

    #[test]
    fn a_users_file_under_one_of_our_names_is_never_deleted() {
        let t = tempfile::tempdir().unwrap();
        let mut d = DataDir::open(t.path(), false).unwrap();
        let take = d.root().join("seq.wav");
        fs::write(&take, b"a take").unwrap();
        let e = d.register("seq.wav", "k", 10).unwrap_err();
        assert!(e.to_string().contains("did not create it"), "{e}");
        assert!(d.entries().is_empty(), "an uncreated name is not claimed");
        // Several names, the second one taken: the first is ours and goes, the rest is unclaimed.
        fs::write(d.root().join("play-0001.wav"), b"another take").unwrap();
        let items: Vec<(String, String, u64)> = (0..3)
            .map(|i| (format!("play-{i:04}.wav"), format!("k{i}"), 1))
            .collect();
        assert!(d.register_many(&items).is_err());
        assert_eq!(d.entries().len(), 1);
        assert_eq!(d.entries()[0].name, "play-0000.wav");
        d.close().unwrap();
        assert_eq!(fs::read(&take).unwrap(), b"a take");
        assert_eq!(
            fs::read(t.path().join(DIR_NAME).join("play-0001.wav")).unwrap(),
            b"another take"
        );
        assert!(!t.path().join(DIR_NAME).join("play-0000.wav").exists());
    }

    #[test]
    fn a_file_replaced_since_it_was_created_is_left_alone() {
        let t = tempfile::tempdir().unwrap();
        let mut d = DataDir::open(t.path(), true).unwrap();
        let (p, _) = d.register("a.wav", "k", 10).unwrap();
        d.mark_complete("a.wav").unwrap();
        d.close().unwrap();
        // The user deletes trackbench's file and saves one of theirs under the name (later:
        // birth times from a coarse clock tell files apart only across its ticks).
        fs::remove_file(&p).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(30));
        let other = p.with_file_name("x.tmp");
        fs::write(&other, b"mine").unwrap();
        fs::rename(&other, &p).unwrap();
        let d = DataDir::open(t.path(), false).unwrap();
        assert!(d.find("k").is_none(), "never reused");
        assert!(
            d.notes.iter().any(|n| n.contains("left alone")),
            "{:?}",
            d.notes
        );
        d.close().unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"mine");
    }

    #[test]
    fn manifest_entries_that_are_not_our_names_are_left_alone() {
        let t = tempfile::tempdir().unwrap();
        let outside = t.path().join("user.wav");
        fs::write(&outside, b"keep me").unwrap();
        let abs = outside.to_string_lossy().into_owned();
        with_manifest(
            t.path(),
            serde_json::json!([
                entry("../user.wav"),
                entry(&abs),
                entry("lock"),
                entry("manifest.json"),
                entry(".hidden.wav"),
                entry("sub/a.wav"),
            ]),
        );
        let d = DataDir::open(t.path(), false).unwrap();
        assert!(d.entries().is_empty());
        assert_eq!(d.notes.len(), 6, "{:?}", d.notes);
        d.close().unwrap();
        assert_eq!(fs::read(&outside).unwrap(), b"keep me");
        let c = clean(t.path()).unwrap();
        assert!(c.removed.is_empty());
        assert_eq!(fs::read(&outside).unwrap(), b"keep me");
    }

    #[cfg(unix)]
    #[test]
    fn a_linked_or_foreign_data_directory_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let elsewhere = t.path().join("elsewhere");
        fs::create_dir(&elsewhere).unwrap();
        fs::write(elsewhere.join("seq.wav"), b"take").unwrap();
        let target = t.path().join("target");
        fs::create_dir(&target).unwrap();
        std::os::unix::fs::symlink(&elsewhere, target.join(DIR_NAME)).unwrap();
        let e = DataDir::open(&target, false)
            .err()
            .expect("a link is refused");
        assert!(e.to_string().contains("symbolic link"), "{e}");
        assert!(clean(&target).is_err());
        assert_eq!(
            fs::read_dir(&elsewhere).unwrap().count(),
            1,
            "nothing written there"
        );
        // A directory of someone else's under our name.
        let other = t.path().join("other");
        fs::create_dir_all(other.join(DIR_NAME)).unwrap();
        fs::write(other.join(DIR_NAME).join("seq.wav"), b"take").unwrap();
        let e = DataDir::open(&other, false).err().expect("not ours");
        assert!(e.to_string().contains("not trackbench's"), "{e}");
        let c = clean(&other).unwrap();
        assert_eq!(c.foreign, vec!["seq.wav".to_string()]);
        assert_eq!(
            fs::read(other.join(DIR_NAME).join("seq.wav")).unwrap(),
            b"take"
        );
        // A file under our name, or a directory left with only a lock, are fine.
        let file = t.path().join("file");
        fs::create_dir(&file).unwrap();
        fs::write(file.join(DIR_NAME), b"x").unwrap();
        assert!(DataDir::open(&file, false).is_err());
        let stale = t.path().join("stale");
        fs::create_dir_all(stale.join(DIR_NAME)).unwrap();
        fs::write(stale.join(DIR_NAME).join(LOCK_NAME), b"1\n").unwrap();
        DataDir::open(&stale, false).unwrap().close().unwrap();
        assert!(!stale.join(DIR_NAME).exists());
    }

    #[test]
    fn a_damaged_manifest_never_leads_to_deleting_what_it_listed() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join(DIR_NAME);
        fs::create_dir(&root).unwrap();
        fs::write(root.join(MANIFEST_NAME), b"{not json").unwrap();
        fs::write(root.join("play-0000.wav"), b"take").unwrap();
        let mut d = DataDir::open(t.path(), false).unwrap();
        assert!(d.notes.iter().any(|n| n.contains("unreadable")));
        assert!(d.register("play-0000.wav", "k", 1).is_err());
        d.close().unwrap();
        assert_eq!(fs::read(root.join("play-0000.wav")).unwrap(), b"take");
    }

    #[test]
    fn a_killed_runs_files_are_recognised_by_birth_time_or_tags() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join(DIR_NAME);
        fs::create_dir(&root).unwrap();
        // Version 1 entries: a file with trackbench's tag for its id goes, an untagged one stays.
        let mut tagged_file = vec![0u8; 2 * 4096];
        crate::content::fill_range(&mut tagged_file[4096..], 7, 4096);
        fs::write(root.join("span-0000.wav"), &tagged_file).unwrap();
        fs::write(root.join("span-0001.wav"), vec![1u8; 2 * 4096]).unwrap();
        // A reservation made before the user's file was there is not a claim on it; one made
        // before trackbench created the file is.
        fs::write(root.join("play-0000.wav"), b"older take").unwrap();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64;
        let mut early = entry("play-0000.wav");
        early["reserved_ns"] = serde_json::json!(now + 3_600_000_000_000);
        let mut ours = entry("play-0001.wav");
        ours["reserved_ns"] = serde_json::json!(now - 1_000_000_000);
        fs::write(root.join("play-0001.wav"), b"").unwrap();
        let mut stale = entry("play-0002.wav");
        stale["reserved_ns"] = serde_json::json!(now - 3_600_000_000_000);
        fs::write(root.join("play-0002.wav"), b"put there long after").unwrap();
        with_manifest(
            t.path(),
            serde_json::json!([
                entry("span-0000.wav"),
                entry("span-0001.wav"),
                early,
                ours,
                stale
            ]),
        );
        let born_known = fs::metadata(root.join("play-0001.wav"))
            .unwrap()
            .created()
            .is_ok();
        let d = DataDir::open(t.path(), false).unwrap();
        d.close().unwrap();
        assert!(!root.join("span-0000.wav").exists());
        assert_eq!(
            fs::read(root.join("span-0001.wav")).unwrap(),
            vec![1u8; 2 * 4096]
        );
        assert_eq!(fs::read(root.join("play-0000.wav")).unwrap(), b"older take");
        assert_eq!(root.join("play-0001.wav").exists(), !born_known);
        assert_eq!(
            fs::read(root.join("play-0002.wav")).unwrap(),
            b"put there long after"
        );
    }

    #[test]
    fn own_names_are_plain_and_of_our_pattern() {
        for ok in [
            "seq.wav",
            "play-0000.wav",
            "rec-12345.wav",
            "f3-0001.wav",
            "a.wav",
        ] {
            assert!(is_own_name(ok), "{ok}");
        }
        for bad in [
            "",
            ".wav",
            "../a.wav",
            "/tmp/a.wav",
            "a/b.wav",
            "lock",
            "manifest.json",
            ".hidden.wav",
            "Seq.wav",
            "a-.wav",
            "a-b.wav",
            "a-1-2.wav",
            "a.wav.tmp",
            "a b.wav",
        ] {
            assert!(!is_own_name(bad), "{bad}");
        }
        assert!(!is_own_name(&format!("{}.wav", "a".repeat(70))));
    }

    use proptest::strategy::Strategy;

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        /// Whatever a manifest says, opening and cleaning never panics and never touches a file
        /// outside the data directory, nor one inside it that trackbench did not create.
        #[test]
        fn any_manifest_leaves_other_files_alone(
            names in proptest::collection::vec(
                proptest::prop_oneof![
                    "[a-z./-]{0,12}",
                    proptest::strategy::Just("../outside.wav".to_string()),
                    proptest::strategy::Just("user.wav".to_string()),
                    proptest::strategy::Just("play-0000.wav".to_string()),
                    proptest::strategy::Just("..".to_string()),
                    proptest::strategy::Just("/".to_string()),
                ],
                0..8,
            ),
            ids in proptest::collection::vec(0u32..100, 8),
            // A claim on the name made after the files below existed, or long before.
            reserved in proptest::option::of(proptest::prop_oneof![
                (25_000_000u64..86_400_000_000_000).prop_map(|d| (true, d)),
                (660_000_000_000u64..4_000_000_000_000_000_000).prop_map(|d| (false, d)),
            ]),
            raw in proptest::option::of("[ -~]{0,40}"),
        ) {
            let t = tempfile::tempdir().unwrap();
            let root = t.path().join(DIR_NAME);
            fs::create_dir(&root).unwrap();
            fs::write(t.path().join("outside.wav"), b"outside").unwrap();
            fs::write(root.join("user.wav"), b"user").unwrap();
            fs::write(root.join("play-0000.wav"), b"user take").unwrap();
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64;
            let reserved = reserved.map(|(after, d)| if after { now + d } else { now.saturating_sub(d) });
            let files: Vec<_> = names
                .iter()
                .zip(&ids)
                .map(|(n, id)| serde_json::json!({
                    "name": n, "key": "k", "size_bytes": 1, "content_id": id,
                    "complete": true, "reserved_ns": reserved,
                }))
                .collect();
            let text = raw.unwrap_or_else(|| {
                serde_json::json!({"version": 2, "next_id": 1, "files": files}).to_string()
            });
            fs::write(root.join(MANIFEST_NAME), text).unwrap();
            if let Ok(d) = DataDir::open(t.path(), false) {
                let _ = d.close();
            }
            let _ = clean(t.path());
            proptest::prop_assert_eq!(fs::read(t.path().join("outside.wav")).unwrap(), b"outside");
            proptest::prop_assert_eq!(fs::read(root.join("user.wav")).unwrap(), b"user");
            proptest::prop_assert_eq!(fs::read(root.join("play-0000.wav")).unwrap(), b"user take");
        }
    }
}
