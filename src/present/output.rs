//! Where a document or a report goes: checked before anything is measured (a `--find-max` or a
//! `run` must not be lost at the end to a path that could never be written), then written
//! atomically.

use crate::datadir::DIR_NAME;
use crate::error::{Error, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

/// A checked destination file.
#[derive(Debug, Clone)]
pub struct Output {
    path: PathBuf,
    /// What goes there and which flag named it, for messages ("the result document (--json)").
    what: String,
}

impl Output {
    /// Refuses a directory, something that is not a regular file (a device, a pipe: the text is
    /// written to a temporary file and renamed over the destination), a place inside
    /// trackbench's data directory (removed after the run), a missing parent and a directory
    /// this process may not write to.
    pub fn prepare(path: &Path, what: &str) -> Result<Output> {
        let bad = |reason: String| Error::BadTarget {
            path: path.to_path_buf(),
            reason: format!("cannot hold {what}: {reason}"),
        };
        if path.components().any(|c| c.as_os_str() == DIR_NAME) {
            return Err(bad(format!(
                "it is inside {DIR_NAME}, which trackbench removes after the run"
            )));
        }
        match std::fs::symlink_metadata(path) {
            Ok(m) if m.is_dir() => return Err(bad("it is a directory".into())),
            Ok(m)
                if m.file_type().is_symlink()
                    && std::fs::metadata(path).is_ok_and(|t| !t.is_file()) =>
            {
                return Err(bad(
                    "it links to something that is not a regular file".into()
                ));
            }
            Ok(m) if m.file_type().is_symlink() => {}
            Ok(m) if !m.is_file() => return Err(bad("it is not a regular file".into())),
            _ => {}
        }
        if path.file_name().is_none() {
            return Err(bad("it names no file".into()));
        }
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        match std::fs::metadata(&parent) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => return Err(bad(format!("{} is not a directory", parent.display()))),
            Err(e) => return Err(bad(format!("{}: {e}", parent.display()))),
        }
        #[cfg(unix)]
        {
            let c = std::ffi::CString::new(parent.as_os_str().as_encoded_bytes())
                .map_err(|_| bad("the path holds a NUL byte".into()))?;
            // SAFETY: a valid NUL-terminated path.
            if unsafe { libc::access(c.as_ptr(), libc::W_OK | libc::X_OK) } != 0 {
                let e = std::io::Error::last_os_error();
                return Err(bad(format!("{} cannot be written: {e}", parent.display())));
            }
        }
        // Windows has no access(2) for directories' ACLs: a read-only attribute is what can be
        // told before writing; the write itself says the rest.
        #[cfg(windows)]
        if std::fs::metadata(&parent).is_ok_and(|m| m.permissions().readonly()) {
            return Err(bad(format!("{} is read-only", parent.display())));
        }
        Ok(Output {
            path: path.to_path_buf(),
            what: what.to_string(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes `text` atomically: a temporary file beside the destination, flushed, then renamed
    /// over it, so a reader never sees half of it and a failed write leaves the old one in place.
    pub fn write(&self, text: &str) -> Result<()> {
        let name = self.path.file_name().unwrap_or_default().to_string_lossy();
        let tmp = self
            .path
            .with_file_name(format!(".{name}.trackbench-{}.tmp", std::process::id()));
        let written = std::fs::File::create(&tmp)
            .and_then(|mut f| {
                f.write_all(text.as_bytes())?;
                f.sync_all()
            })
            .and_then(|_| std::fs::rename(&tmp, &self.path));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            return Err(Error::io(
                format!("cannot write {} to {}", self.what, self.path.display()),
                e,
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn destinations_that_could_never_be_written_are_refused_up_front() {
        let t = tempfile::tempdir().unwrap();
        let ok = t.path().join("r.json");
        assert!(Output::prepare(&ok, "x").is_ok());
        for (p, why) in [
            (t.path().to_path_buf(), "directory"),
            (t.path().join("missing").join("r.json"), "missing"),
            (t.path().join(DIR_NAME).join("r.json"), DIR_NAME),
            (PathBuf::from("/dev/full"), "not a regular file"),
        ] {
            let e = Output::prepare(&p, "the report (--report)")
                .unwrap_err()
                .to_string();
            assert!(e.contains(why) && e.contains("--report"), "{p:?}: {e}");
        }
        let file = t.path().join("f");
        std::fs::write(&file, b"x").unwrap();
        assert!(Output::prepare(&file.join("r.json"), "x").is_err());
    }

    #[test]
    fn the_text_replaces_the_file_whole() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("r.json");
        std::fs::write(&p, b"old").unwrap();
        Output::prepare(&p, "x").unwrap().write("new").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new");
        assert_eq!(
            std::fs::read_dir(t.path()).unwrap().count(),
            1,
            "no temporary left"
        );
    }
}
