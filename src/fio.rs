//! The classic measurements as a fio job file (`--fio-job FILE`): the same request sizes,
//! patterns, queue depth and caching as trackbench issues, so that an engineer can cross-check
//! a figure with the standard tool. Each workload describes its own jobs
//! (`Workload::fio_jobs`); this module adds what they share and writes the file.

use crate::io::{BackendKind, IoSettings};
use crate::target::{TargetInfo, TargetKind};

/// The file fio lays out in a directory target for the single-file measurements (trackbench's
/// own test files are removed after its run, and fio must not touch them anyway).
pub const FILE: &str = "trackbench-fio.dat";

/// One fio job: a section of the file with its options, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct FioJob {
    pub name: String,
    /// What the job reproduces, as a comment above it.
    pub comment: String,
    pub options: Vec<(&'static str, String)>,
}

impl FioJob {
    pub fn new(name: impl Into<String>, comment: impl Into<String>) -> FioJob {
        FioJob {
            name: name.into(),
            comment: comment.into(),
            options: Vec::new(),
        }
    }

    /// Adds `key=value`.
    pub fn set(mut self, key: &'static str, value: impl ToString) -> FioJob {
        self.options.push((key, value.to_string()));
        self
    }

    /// Adds a bare option (`time_based`, `stonewall`).
    pub fn flag(mut self, key: &'static str) -> FioJob {
        self.options.push((key, String::new()));
        self
    }
}

/// A size in fio's notation: bytes with a binary suffix where exact (`64k`, `1m`, `1g`).
pub fn size(bytes: u64) -> String {
    for (suffix, unit) in [("g", 1u64 << 30), ("m", 1 << 20), ("k", 1 << 10)] {
        if bytes >= unit && bytes.is_multiple_of(unit) {
            return format!("{}{suffix}", bytes / unit);
        }
    }
    bytes.to_string()
}

/// Seconds in fio's notation, to the millisecond.
pub fn secs(d: std::time::Duration) -> String {
    format!("{}ms", d.as_millis().max(1))
}

/// Where a single-file job reads and writes: in a directory target, fio's own file there of
/// `file_size` bytes; on a file or a device, the target itself, read-only.
pub fn single_file(job: FioJob, target: &TargetInfo, file_size: u64) -> FioJob {
    match target.kind {
        TargetKind::Directory => job.set("filename", FILE).set("filesize", size(file_size)),
        _ => job.set("filename", path(&target.path)).flag("readonly"),
    }
}

/// A path as fio reads it: `:` separates several files in fio's options, so it is escaped.
fn path(p: &std::path::Path) -> String {
    p.display().to_string().replace(':', "\\:")
}

/// The files a job works on, as its options name them.
fn files_of(j: &FioJob) -> Option<&str> {
    j.options
        .iter()
        .find(|(k, _)| *k == "filename" || *k == "filename_format")
        .map(|(_, v)| v.as_str())
}

/// The whole job file for `jobs`, run one after the other (`stonewall`) with trackbench's
/// engine, queue depth and caching, in the target's directory; in a directory, the last job on
/// each file fio laid out removes it.
pub fn job_file(command: &str, target: &TargetInfo, io: &IoSettings, jobs: &[FioJob]) -> String {
    let mut out = format!(
        "; trackbench {}: `{command}` as fio jobs, to cross-check its figures with the standard\n\
         ; tool: fio THIS_FILE (fio 3.x). Each job reproduces one of trackbench's measurements:\n\
         ; the same request size, pattern, queue depth and caching. fio lays out its own files\n\
         ; ({FILE} and trackbench-sweep.N in a directory target) and removes them at the end.\n\
         ; trackbench checks the content of every read; fio does not, which costs it nothing.\n\n",
        env!("CARGO_PKG_VERSION")
    );
    out.push_str("[global]\n");
    let engine = match io.backend {
        BackendKind::Sync => "psync",
        BackendKind::Uring => "io_uring",
        // fio's thread-based asynchronous engine: the same requests in flight from a pool.
        BackendKind::Threads => "posixaio",
    };
    out.push_str(&format!("ioengine={engine}\niodepth={}\n", io.queue_depth));
    out.push_str(&format!("direct={}\n", u8::from(!io.cached)));
    if target.kind == TargetKind::Directory {
        out.push_str(&format!("directory={}\n", path(&target.path)));
    }
    out.push_str("group_reporting=1\n");
    for (i, j) in jobs.iter().enumerate() {
        out.push('\n');
        for line in j.comment.lines() {
            out.push_str(&format!("; {line}\n"));
        }
        out.push_str(&format!("[{}]\n", j.name));
        if i > 0 {
            out.push_str("stonewall\n");
        }
        for (k, v) in &j.options {
            if v.is_empty() {
                out.push_str(&format!("{k}\n"));
            } else {
                out.push_str(&format!("{k}={v}\n"));
            }
        }
        let last_on_its_files = !jobs[i + 1..]
            .iter()
            .any(|later| files_of(later) == files_of(j));
        if last_on_its_files && target.kind == TargetKind::Directory {
            out.push_str("unlink=1\n");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_times_in_fios_words() {
        assert_eq!(size(1 << 20), "1m");
        assert_eq!(size(64 << 10), "64k");
        assert_eq!(size(3 << 30), "3g");
        assert_eq!(size(1000), "1000");
        assert_eq!(secs(std::time::Duration::from_millis(1500)), "1500ms");
    }

    #[test]
    fn a_job_file_has_the_engine_the_jobs_and_cleans_up() {
        let t = tempfile::tempdir().unwrap();
        let target = crate::target::inspect(t.path()).unwrap();
        let io = IoSettings {
            backend: BackendKind::Uring,
            queue_depth: 8,
            cached: false,
        };
        let jobs = [
            single_file(
                FioJob::new("a", "first").set("rw", "read"),
                &target,
                1 << 20,
            ),
            FioJob::new("s", "own files")
                .set("filename_format", "x.$filenum")
                .set("rw", "read"),
            single_file(
                FioJob::new("b", "second")
                    .set("rw", "write")
                    .flag("time_based"),
                &target,
                1 << 20,
            ),
        ];
        let f = job_file("trackbench seq X", &target, &io, &jobs);
        assert!(
            f.contains("ioengine=io_uring\niodepth=8\ndirect=1\n"),
            "{f}"
        );
        assert!(
            f.contains("; first\n[a]\nrw=read\nfilename=trackbench-fio.dat\nfilesize=1m\n\n"),
            "{f}"
        );
        // Each file is removed by the last job on it.
        assert!(
            f.contains("[s]\nstonewall\nfilename_format=x.$filenum\nrw=read\nunlink=1\n"),
            "{f}"
        );
        assert!(f.ends_with("filesize=1m\nunlink=1\n"), "{f}");
        assert_eq!(path(std::path::Path::new("/mnt/a:b")), "/mnt/a\\:b");
    }
}
