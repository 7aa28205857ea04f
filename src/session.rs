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
use crate::result::{ResultDoc, Section, SessionInfo, Studio, StudioHost};
use crate::studio::{Ended, PlanPrint, World};
use crate::target::{self, TargetInfo, TargetKind};
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
    /// This process speaks for the run (stores and shows its result): always alone; in a studio
    /// rank 0, or the lowest rank still there when the ranks below it died.
    pub speaks: bool,
}

/// Runs `plan`, reporting to `sink`, until its workloads end, one fails, or `cancel` is set.
/// Errors are those that stop a session before it measures anything (a missing target, a data
/// directory that is not trackbench's, a suite on a device, ranks of a studio that were not
/// given the same plan).
///
/// In a world of several ranks (a studio) every rank runs the plan at once on the shared target,
/// each in a data directory of its own; after each workload the ranks agree on how it ended (a
/// failure or an interruption anywhere stops them all), and at the end rank 0 gathers every
/// rank's figures into its document ([`ResultDoc::studio`]). The other ranks' documents are
/// their own part only: the caller stores and shows rank 0's.
pub fn run(plan: Plan, world: &dyn World, cancel: &AtomicBool, sink: &dyn Sink) -> Result<Outcome> {
    let target = agree_on_target(&plan, world, cancel)?;
    // Simulated runs touch nothing on the target: what they measured is the simulated device.
    let uses_disk = plan.workloads.iter().any(|w| w.uses_disk());
    let simulated = plan.workloads.iter().find_map(|w| w.simulated_device());
    let target = match simulated {
        Some(name) if !uses_disk => target.simulated(name),
        // What could explain a change in this disk's answers later: its health now.
        _ => TargetInfo {
            health: Some(target::health_of(&target)),
            ..target
        },
    };
    // A studio's ranks each keep a data directory of their own inside the shared one.
    let rank_dir = (!world.is_alone()).then(|| world.rank());
    let opened = match target.kind {
        TargetKind::Directory if uses_disk => {
            DataDir::open_at(&target.path, rank_dir, plan.keep).map(Some)
        }
        _ => Ok(None),
    };
    let mut data = crate::studio::agree_ok(world, "data directory", opened, cancel)?;
    if let Some(d) = &data {
        sink.data_dir_opened(d.root());
        for n in &d.notes {
            sink.note(n);
        }
    }
    let mut doc = ResultDoc::new(plan.command.clone(), target.clone(), host::inspect());
    doc.session = Some(SessionInfo {
        command: plan.name.clone(),
        format: plan.format,
        runs: plan.runs,
        io: plan.io,
    });
    sink.started(&doc);
    let failure = run_workloads(plan, &target, data.as_mut(), world, cancel, sink, &mut doc);
    doc.interrupted |= cancel.load(Ordering::Relaxed);
    if !world.is_alone() {
        studio(world, &mut doc, failure.is_none(), cancel);
    }
    if doc.interrupted || failure.is_some() {
        world.forsake();
    }
    doc.finish();
    // Saved before the files are removed: a second signal cannot lose it.
    sink.finished(&doc)?;
    let (unfinished, kept) = match data {
        Some(d) => close_data(d, &mut doc, sink),
        None => (None, None),
    };
    Ok(Outcome {
        speaks: speaks(world, &doc),
        doc,
        failure,
        unfinished,
        kept,
    })
}

/// The target, as every rank of a studio sees it the same (alone, as it is); a suite needs a
/// directory; ranks of a studio must have been given the same plan.
fn agree_on_target(plan: &Plan, world: &dyn World, cancel: &AtomicBool) -> Result<TargetInfo> {
    let target = target::inspect(&plan.target);
    let target = crate::studio::agree_ok(world, "target", target, cancel)?;
    if plan.is_suite() && target.kind != TargetKind::Directory {
        return Err(Error::BadTarget {
            path: plan.target.clone(),
            reason: format!(
                "is a {}: run needs a directory on the filesystem to test (it writes test files there); for a device, use seek or zones",
                target.kind.describe()
            ),
        });
    }
    // Hashing the executable is for ranks to compare: alone there is nothing to compare with.
    if !world.is_alone() {
        crate::studio::agree_on_plan(world, &PlanPrint::of(&plan.command), cancel)?;
    }
    Ok(target)
}

/// Runs the plan's workloads one after the other into `doc`, each section shown as it ends,
/// until they end, one fails (its error returned), or the run is interrupted; a studio's ranks
/// agree after each how it ended.
fn run_workloads(
    plan: Plan,
    target: &TargetInfo,
    mut data: Option<&mut DataDir>,
    world: &dyn World,
    cancel: &AtomicBool,
    sink: &dyn Sink,
    doc: &mut ResultDoc,
) -> Option<Error> {
    let mut failure = None;
    let mut sequential = crate::workloads::Sequential::default();
    for mut w in plan.workloads {
        if cancel.load(Ordering::Relaxed) {
            doc.interrupted = true;
            break;
        }
        let mut env = Env {
            target,
            data: data.as_deref_mut(),
            io: plan.io,
            format: plan.format,
            memory: plan.memory,
            ctl: Control {
                cancel,
                progress: sink.progress(),
                world,
            },
            sequential,
        };
        let mine = run_repeated(w.as_mut(), &mut env, plan.runs);
        let ended = match &mine {
            Ok(_) => Ended::Done,
            Err(Error::Interrupted) => Ended::Interrupted,
            Err(e) => Ended::Failed(e.to_string()),
        };
        let agreed = crate::studio::agree_ended(world, ended, cancel);
        match mine {
            Ok(mut section) => {
                // A workload that returns what it had when the run was stopped (a search's
                // probes so far) is an interrupted section: its answer is not one.
                if cancel.load(Ordering::Relaxed) || matches!(agreed, Ok(Ended::Interrupted)) {
                    section.interrupted = true;
                }
                if let Some(s) = crate::workloads::Sequential::of(&section) {
                    sequential = s;
                }
                sink.section(&section);
                doc.push(section);
            }
            Err(Error::Interrupted) => doc.interrupted = true,
            Err(e) => failure = Some(e),
        }
        match agreed {
            Ok(Ended::Done) if failure.is_none() && !doc.interrupted => {}
            Ok(Ended::Interrupted) | Err(Error::Interrupted) => {
                doc.interrupted = true;
                break;
            }
            Ok(_) => break,
            Err(e) => {
                failure.get_or_insert(e);
                break;
            }
        }
    }
    failure
}

/// The data directory once the run has ended: an interrupted run's, handed back whole (its
/// files are removed after the run has exited); otherwise closed, its files removed unless
/// kept (where they are, then), what closing it noted told and kept in `doc`.
fn close_data(
    d: DataDir,
    doc: &mut ResultDoc,
    sink: &dyn Sink,
) -> (Option<DataDir>, Option<PathBuf>) {
    if doc.interrupted {
        return (Some(d), None);
    }
    let keep = d.keep().then(|| d.root().to_path_buf());
    match d.close() {
        Ok(notes) => {
            for n in notes {
                sink.note(&n);
                doc.warnings.push(n);
            }
            (None, keep)
        }
        Err(e) => {
            doc.warnings.push(format!("cleanup incomplete: {e}"));
            (None, None)
        }
    }
}

/// What each rank sends rank 0 at the end of a studio run.
#[derive(serde::Serialize, serde::Deserialize)]
struct RankPart {
    host: crate::host::HostInfo,
    target: String,
    starts_ns: Vec<u64>,
    sections: Vec<Section>,
}

/// Gathers every rank's part into rank 0's document. A run that was stopped cannot gather (a
/// rank may be gone): rank 0 then names the ranks that died without cleaning up.
fn studio(world: &dyn World, doc: &mut ResultDoc, ok: bool, cancel: &AtomicBool) {
    let mut studio = Studio {
        launcher: world.launcher(),
        ranks: world.size(),
        hosts: Vec::new(),
        lost_ranks: Vec::new(),
    };
    if ok && !doc.interrupted {
        let part = RankPart {
            host: doc.host.clone(),
            target: doc.target.path.display().to_string(),
            starts_ns: world.starts_ns(),
            sections: doc
                .sections
                .iter()
                .map(|s| Section {
                    detail: None,
                    ..s.clone()
                })
                .collect(),
        };
        match crate::studio::gather(world, "results", &part, cancel) {
            Ok(parts) => {
                let starts: Vec<Vec<u64>> = parts.iter().map(|p| p.starts_ns.clone()).collect();
                let skews = Studio::skews_ms(&starts);
                studio.hosts = parts
                    .into_iter()
                    .zip(skews)
                    .enumerate()
                    .map(|(rank, (p, (median, max)))| StudioHost {
                        rank: rank as u32,
                        host: p.host,
                        target: p.target,
                        start_skew_ms_median: median,
                        start_skew_ms_max: max,
                        sections: p.sections,
                    })
                    .collect();
            }
            Err(Error::Interrupted) => doc.interrupted = true,
            Err(e) => doc
                .warnings
                .push(format!("the ranks' figures were not gathered: {e}")),
        }
    }
    if doc.interrupted {
        let me = world.rank();
        studio.lost_ranks = (0..world.size())
            .filter(|&r| r != me && crate::datadir::abandoned(&doc.target.path, r))
            .collect();
        if let Some(r) = studio.lost_ranks.first() {
            doc.warnings.push(format!(
                "rank {r} stopped without cleaning up (killed, or its host lost): its test files are left in {}; the next run or trackbench clean {} removes them",
                crate::datadir::root_of(&doc.target.path, Some(*r)).display(),
                doc.target.path.display()
            ));
        }
    }
    doc.studio = Some(studio);
}

/// Whether this rank speaks for a studio run: rank 0, or the lowest rank alive when the ranks
/// below it died.
fn speaks(world: &dyn World, doc: &ResultDoc) -> bool {
    let lost = doc.studio.as_ref().map_or(&[][..], |s| &s.lost_ranks[..]);
    (0..world.rank()).all(|r| lost.contains(&r))
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
        let o = run(plan(t.path(), "seek"), &crate::studio::Alone, &cancel, &log).unwrap();
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
        let o = run(
            plan(t.path(), "seek"),
            &crate::studio::Alone,
            &cancel,
            &Log::default(),
        )
        .unwrap();
        assert!(o.doc.interrupted && o.doc.sections.is_empty());
        let d = o.unfinished.expect("the data directory comes back");
        d.close().unwrap();
        assert!(!t.path().join(crate::datadir::DIR_NAME).exists());

        let f = t.path().join("file");
        std::fs::write(&f, b"x").unwrap();
        let e = run(
            plan(&f, "run"),
            &crate::studio::Alone,
            &cancel,
            &Log::default(),
        )
        .err()
        .expect("refused");
        assert!(e.to_string().contains("run needs a directory"), "{e}");
    }
}
