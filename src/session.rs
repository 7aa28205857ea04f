//! A session: one plan of workloads run against one target, from opening the data directory to
//! the finished result document. What is seen along the way goes to a [`Sink`]; the caller maps
//! its flags to a [`Plan`] and presents what comes back, and measures nothing itself.

use crate::audio::Format;
use crate::control::{Control, Progress};
use crate::datadir::DataDir;
use crate::error::{Error, Result};
use crate::host;
use crate::io::IoSettings;
use crate::memory::MemoryBudget;
use crate::result::{ResultDoc, Section, SessionInfo};
use crate::target::{self, TargetKind};
use crate::workloads::{Env, Workload, run_repeated};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// What to measure, where, and how: everything a session needs, already validated.
pub struct Plan {
    /// The target as the user gave it (a directory, a file or a block device).
    pub target: PathBuf,
    pub workloads: Vec<Box<dyn Workload>>,
    pub format: Format,
    /// I/O settings of the classic workloads (the streaming ones choose through their policy).
    pub io: IoSettings,
    pub memory: MemoryBudget,
    /// Repetitions of each workload.
    pub runs: u32,
    /// Keep the test files for later runs.
    pub keep: bool,
    /// The command (`run`, `seq`, `play` …). The standard suite (`run`) writes test files, so
    /// it needs a directory.
    pub name: String,
    /// The command line, recorded in the result.
    pub command: Vec<String>,
}

impl Plan {
    pub fn is_suite(&self) -> bool {
        self.name == "run"
    }
}

/// Where a session reports as it goes. Every method has a default that ignores the event.
pub trait Sink {
    /// Progress of the running workload.
    fn progress(&self) -> &dyn Progress;
    /// The data directory is open: from here on, test files may be left if the process dies.
    fn data_dir_opened(&self, _root: &Path) {}
    /// Something the user should know that is not a figure (a data directory note).
    fn note(&self, _note: &str) {}
    /// The document has its target and host; nothing is measured yet.
    fn started(&self, _doc: &ResultDoc) {}
    /// One workload finished.
    fn section(&self, _section: &Section) {}
    /// The measurement is over and nothing is cleaned up yet: save what must not be lost to a
    /// second signal during the cleanup.
    fn finished(&self, _doc: &ResultDoc) -> Result<()> {
        Ok(())
    }
}

/// What a session leaves to its caller.
pub struct Outcome {
    /// The result, finished; warnings about the cleanup included.
    pub doc: ResultDoc,
    /// The error that stopped a workload, if any (the figures before it are in `doc`).
    pub failure: Option<Error>,
    /// An interrupted run's data directory, still holding its files and lock: the caller hands
    /// it to a cleaner of its own (unlinking large files can take seconds) or closes it.
    pub unfinished: Option<DataDir>,
    /// Where test files were kept (`keep`).
    pub kept: Option<PathBuf>,
}

/// Runs `plan`, reporting to `sink`, until its workloads end, one fails, or `cancel` is set.
/// Errors are those that stop a session before it measures anything (a missing target, a data
/// directory that is not trackbench's, a suite on a device).
pub fn run(plan: Plan, cancel: &AtomicBool, sink: &dyn Sink) -> Result<Outcome> {
    let target = target::inspect(&plan.target)?;
    if plan.is_suite() && target.kind != TargetKind::Directory {
        return Err(Error::BadTarget {
            path: plan.target.clone(),
            reason: format!(
                "is a {}: run needs a directory on the filesystem to test (it writes test files there); for a device, use seek or zones",
                target.kind.describe()
            ),
        });
    }
    // Simulated runs touch nothing on the target.
    let uses_disk = plan.workloads.iter().any(|w| w.uses_disk());
    let mut data = match target.kind {
        TargetKind::Directory if uses_disk => Some(DataDir::open(&target.path, plan.keep)?),
        _ => None,
    };
    if let Some(d) = &data {
        sink.data_dir_opened(d.root());
        for n in &d.notes {
            sink.note(n);
        }
    }
    let mut doc = ResultDoc::new(plan.command, target.clone(), host::inspect());
    doc.session = Some(SessionInfo {
        command: plan.name,
        format: plan.format,
        runs: plan.runs,
        io: plan.io,
    });
    sink.started(&doc);
    let mut failure = None;
    for mut w in plan.workloads {
        if cancel.load(Ordering::Relaxed) {
            doc.interrupted = true;
            break;
        }
        let mut env = Env {
            target: &target,
            data: data.as_mut(),
            io: plan.io,
            format: plan.format,
            memory: plan.memory,
            ctl: Control {
                cancel,
                progress: sink.progress(),
            },
        };
        match run_repeated(w.as_mut(), &mut env, plan.runs) {
            Ok(section) => {
                sink.section(&section);
                doc.push(section);
            }
            Err(Error::Interrupted) => {
                doc.interrupted = true;
                break;
            }
            Err(e) => {
                failure = Some(e);
                break;
            }
        }
    }
    doc.interrupted |= cancel.load(Ordering::Relaxed);
    doc.finish();
    // Saved before the files are removed: a second signal cannot lose it.
    sink.finished(&doc)?;
    let mut unfinished = None;
    let mut kept = None;
    if let Some(d) = data {
        if doc.interrupted {
            unfinished = Some(d);
        } else {
            let keep = d.keep().then(|| d.root().to_path_buf());
            match d.close() {
                Ok(notes) => {
                    for n in notes {
                        sink.note(&n);
                        doc.warnings.push(n);
                    }
                    kept = keep;
                }
                Err(e) => doc.warnings.push(format!("cleanup incomplete: {e}")),
            }
        }
    }
    Ok(Outcome {
        doc,
        failure,
        unfinished,
        kept,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::control::NoProgress;
    use crate::workloads::seek::Seek;
    use std::sync::Mutex;
    use std::time::Duration;

    /// Records the order of events.
    #[derive(Default)]
    struct Log(Mutex<Vec<String>>);
    impl Sink for Log {
        fn progress(&self) -> &dyn Progress {
            &NoProgress
        }
        fn data_dir_opened(&self, _: &Path) {
            self.0.lock().unwrap().push("opened".into());
        }
        fn started(&self, _: &ResultDoc) {
            self.0.lock().unwrap().push("started".into());
        }
        fn section(&self, s: &Section) {
            self.0
                .lock()
                .unwrap()
                .push(format!("section {}", s.workload));
        }
        fn finished(&self, d: &ResultDoc) -> Result<()> {
            self.0
                .lock()
                .unwrap()
                .push(format!("finished {}", d.sections.len()));
            Ok(())
        }
    }

    fn plan(dir: &Path, name: &str) -> Plan {
        Plan {
            target: dir.to_path_buf(),
            workloads: vec![Box::new(Seek {
                block: 4096,
                duration: Duration::from_millis(50),
                size: 4 << 20,
                rpm: None,
            })],
            format: Format::default(),
            io: IoSettings::default(),
            memory: MemoryBudget::default_for(crate::memory::usable_ram()),
            runs: 1,
            keep: false,
            name: name.into(),
            command: vec!["trackbench".into()],
        }
    }

    #[test]
    fn a_session_reports_in_order_saves_before_cleanup_and_leaves_nothing() {
        let t = tempfile::tempdir().unwrap();
        let log = Log::default();
        let cancel = AtomicBool::new(false);
        let o = run(plan(t.path(), "seek"), &cancel, &log).unwrap();
        assert!(o.failure.is_none() && o.unfinished.is_none() && o.kept.is_none());
        assert_eq!(o.doc.sections.len(), 1);
        assert!(!o.doc.finished_at.is_empty());
        assert_eq!(
            *log.0.lock().unwrap(),
            ["opened", "started", "section seek", "finished 1"]
        );
        assert!(!t.path().join(crate::datadir::DIR_NAME).exists());
    }

    #[test]
    fn an_interrupted_session_hands_back_its_files_and_a_suite_needs_a_directory() {
        let t = tempfile::tempdir().unwrap();
        let cancel = AtomicBool::new(true);
        let o = run(plan(t.path(), "seek"), &cancel, &Log::default()).unwrap();
        assert!(o.doc.interrupted && o.doc.sections.is_empty());
        let d = o.unfinished.expect("the data directory comes back");
        d.close().unwrap();
        assert!(!t.path().join(crate::datadir::DIR_NAME).exists());

        let f = t.path().join("file");
        std::fs::write(&f, b"x").unwrap();
        let e = run(plan(&f, "run"), &cancel, &Log::default())
            .err()
            .expect("refused");
        assert!(e.to_string().contains("run needs a directory"), "{e}");
    }
}
