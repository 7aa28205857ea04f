//! `trackbench clean`: what a killed run or `--keep` left in a target's data directory (and in
//! every rank's a studio run left), removed where it is still trackbench's own, and what is not
//! reported and left alone.

use super::{
    DataDir, LOCK_NAME, MANIFEST_NAME, check_own_dir, is_rank_dir_name, rank_dir_name, rank_dirs,
    root_of,
};
use crate::error::Result;
use std::fs::{self, OpenOptions};
use std::path::Path;

/// What `clean` did.
#[derive(Debug, Default)]
pub struct Cleaned {
    /// Files removed: name and size on disk.
    pub removed: Vec<(String, u64)>,
    /// Names found in the data directory that trackbench did not create (left alone).
    pub foreign: Vec<String>,
    /// Why files listed in the manifest were left alone.
    pub notes: Vec<String>,
}

/// True when `rank`'s data directory in `target` is there, with its lock held by no process: the
/// run that made it ended without cleaning up (killed, or its host lost). A lock still held, or
/// no directory, says nothing of the kind.
pub fn abandoned(target: &Path, rank: u32) -> bool {
    let lock_path = root_of(target, Some(rank)).join(LOCK_NAME);
    let Ok(f) = OpenOptions::new().read(true).write(true).open(&lock_path) else {
        return false;
    };
    match f.try_lock() {
        Ok(()) => {
            let _ = f.unlock();
            true
        }
        Err(_) => false,
    }
}

/// Removes trackbench's data from `target` (the `clean` command): files listed in the manifest
/// that are still the ones trackbench created, the manifest, the lock and the directory if it is
/// then empty; and the same in every rank's directory a studio run left there.
pub fn clean(target: &Path) -> Result<Cleaned> {
    let mut out = Cleaned::default();
    for rank in rank_dirs(target) {
        let c = clean_root(target, Some(rank))?;
        let sub = rank_dir_name(rank);
        out.removed.extend(
            c.removed
                .into_iter()
                .map(|(n, b)| (format!("{sub}/{n}"), b)),
        );
        out.foreign
            .extend(c.foreign.into_iter().map(|n| format!("{sub}/{n}")));
        out.notes.extend(c.notes);
    }
    let c = clean_root(target, None)?;
    out.removed.extend(c.removed);
    out.foreign.extend(
        c.foreign
            .into_iter()
            .filter(|n| !is_rank_dir_name(n) || !root_of(target, None).join(n).is_dir()),
    );
    out.notes.extend(c.notes);
    Ok(out)
}

fn clean_root(target: &Path, rank: Option<u32>) -> Result<Cleaned> {
    let root = root_of(target, rank);
    let Ok(m) = fs::symlink_metadata(&root) else {
        return Ok(Cleaned::default());
    };
    if m.is_dir() && !root.join(MANIFEST_NAME).exists() && check_own_dir(&root).is_err() {
        // Nothing of trackbench's is listed there: report what is there, touch nothing.
        let mut out = Cleaned::default();
        if let Ok(rd) = fs::read_dir(&root) {
            out.foreign = rd
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
        }
        return Ok(out);
    }
    let mut d = DataDir::open_at(target, rank, false)?;
    let mut out = Cleaned {
        notes: std::mem::take(&mut d.notes),
        ..Cleaned::default()
    };
    // open() kept only entries naming trackbench's own files: these are what close() deletes.
    for e in &d.manifest.files {
        if let Ok(m) = fs::symlink_metadata(d.root.join(&e.name)) {
            out.removed.push((e.name.clone(), m.len()));
        }
    }
    out.notes.extend(d.close()?);
    if let Ok(rd) = fs::read_dir(&root) {
        for e in rd.flatten() {
            out.foreign
                .push(e.file_name().to_string_lossy().into_owned());
        }
    }
    Ok(out)
}
