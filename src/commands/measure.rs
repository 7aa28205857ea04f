//! The measuring commands' handler: runs the request's plan through the library's session,
//! printing tables as they come, then stores the result, writes the report and the result
//! document, and prints the summary. An interrupted run hands its files to a cleaner of their
//! own.

use super::clean::{Gate, hand_over};
use super::{Ctx, db_flag};
use crate::browser;
use crate::cli::process::{EXIT_INTERRUPTED, SECOND_SIGNAL_MESSAGE};
use crate::cli::progress::Bars;
use crate::cli::{Common, Request};
use anyhow::{Context, Result, bail};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use trackbench::datadir::DataDir;
use trackbench::error::Error;
use trackbench::present;
use trackbench::present::output::Output;
use trackbench::result::ResultDoc;
use trackbench::session::{self, Outcome, Plan};
use trackbench::store;
use trackbench::studio::World;
use trackbench::target;
use trackbench::workloads::Workload;

/// The terminal and `--json` presenter of a session.
struct Printer<'a> {
    bars: Bars,
    observer: Option<&'a dyn browser::Observer>,
    out: std::cell::RefCell<Box<dyn Write>>,
    json_out: Option<&'a Output>,
    target_arg: &'a Path,
    view: present::terminal::View,
    /// The run as it started (its target, its format), for wording each section's answer.
    started: std::cell::RefCell<Option<ResultDoc>>,
}

/// Progress goes to the bars and to the browser face, where one watches.
impl trackbench::control::Progress for Printer<'_> {
    fn begin(&self, label: &str, total: u64, unit: trackbench::control::ProgressUnit) {
        self.bars.begin(label, total, unit);
        if let Some(o) = self.observer {
            o.begin(label, total, unit);
        }
    }
    fn set(&self, position: u64) {
        self.bars.set(position);
        if let Some(o) = self.observer {
            o.set(position);
        }
    }
    fn end(&self) {
        self.bars.end();
        if let Some(o) = self.observer {
            o.end();
        }
    }
    fn live(&self, event: &trackbench::control::Live) {
        if let Some(o) = self.observer {
            o.live(event);
        }
    }
    fn wants_live(&self) -> bool {
        self.observer.is_some()
    }
}

impl trackbench::session::Sink for Printer<'_> {
    fn progress(&self) -> &dyn trackbench::control::Progress {
        self
    }
    fn data_dir_opened(&self, root: &Path) {
        let _ = SECOND_SIGNAL_MESSAGE.set(
            format!(
                "\nsecond interrupt: exiting now; trackbench's test files may be left in {}: remove them with: trackbench clean {}\n",
                root.display(),
                self.target_arg.display()
            )
            .into_bytes(),
        );
    }
    fn note(&self, note: &str) {
        self.bars.note(&format!("note: {note}"));
        if let Some(o) = self.observer {
            o.note(note);
        }
    }
    fn started(&self, doc: &ResultDoc) {
        let _ = write!(
            self.out.borrow_mut(),
            "{}",
            present::terminal::header(doc, &self.view)
        );
        *self.started.borrow_mut() = Some(doc.clone());
    }
    fn section(&self, section: &trackbench::result::Section) {
        let Some(mut doc) = self.started.borrow().clone() else {
            return;
        };
        // How long the run had gone on when this section ended: a search stopped before its
        // answer says after how long.
        doc.finished_at = trackbench::result::now_rfc3339();
        let text = present::terminal::section(&doc, section, &self.view);
        if let Some(o) = self.observer {
            let wide = present::terminal::section(&doc, section, &present::terminal::View::wide());
            let answer = present::answer::of(&doc, section);
            o.section(&section.workload, &wide, answer.as_ref());
        }
        let mut out = self.out.borrow_mut();
        let _ = write!(out, "\n{text}");
        let _ = out.flush();
    }
    fn finished(&self, doc: &ResultDoc) -> trackbench::error::Result<()> {
        match self.json_out {
            Some(j) => j.write(&present::json::to_string(doc)?),
            None => Ok(()),
        }
    }
}

/// Where `run` writes its report when not told: a file named for the time in the current
/// directory.
fn default_report_path() -> PathBuf {
    let stamp: String = trackbench::result::now_rfc3339()
        .chars()
        .filter(|c| c.is_ascii_digit())
        .collect();
    PathBuf::from(format!(
        "trackbench-report-{}-{}.html",
        &stamp[..8.min(stamp.len())],
        &stamp[8.min(stamp.len())..]
    ))
}

/// Where the result document and the report go, checked before anything is measured: a
/// search must not be lost to a bad path. In a studio, rank 0 speaks for all: it alone writes
/// files of results.
struct Outputs {
    /// `--json -`: the document on standard output (the tables then go to stderr).
    json_to_stdout: bool,
    json: Option<Output>,
    report: Option<Output>,
}

impl Outputs {
    fn prepare(name: &str, common: &Common, root: bool) -> Result<Self> {
        let json_to_stdout = root && common.json.as_deref() == Some(Path::new("-"));
        let json = match &common.json {
            Some(j) if root && !json_to_stdout => {
                Some(Output::prepare(j, "the result document (--json)")?)
            }
            _ => None,
        };
        let report_path = match (&common.report, common.no_report) {
            _ if !root => None,
            (Some(p), _) => Some(p.clone()),
            (None, false) if name == "run" => Some(default_report_path()),
            _ => None,
        };
        let report = report_path
            .map(|p| {
                Output::prepare(&p, "the report (--report)").with_context(|| {
                    if common.report.is_none() {
                        "run writes its HTML report into the current directory: name another place with --report FILE, or use --no-report"
                    } else {
                        "--report"
                    }
                })
            })
            .transpose()?;
        Ok(Outputs {
            json_to_stdout,
            json,
            report,
        })
    }
}

/// Runs a measuring command and reports: tables as it goes, then the store, the report, the
/// summary and the result document.
pub fn measure(req: Request<'_>, ctx: &Ctx<'_>) -> Result<ExitCode> {
    let world = ctx.world;
    let (name, path, common) = (req.name, req.path, req.common);
    let settings = common.settings_for(req.io, req.default_format)?;
    let root = world.is_root();
    let outputs = Outputs::prepare(name, common, root)?;
    let target_info = target::inspect(path)?;
    if let Some(f) = req.fio_job.filter(|_| root) {
        write_fio_job(ctx, name, f, &target_info, &settings.io, &req.workloads)?;
    }
    let plan = Plan {
        target: path.to_path_buf(),
        workloads: req.workloads,
        format: settings.format,
        io: settings.io,
        memory: settings.memory,
        runs: settings.runs,
        keep: common.keep,
        name: name.to_string(),
        command: command_line(ctx),
    };
    let printer = Printer {
        bars: Bars::new(common.quiet || !root),
        observer: ctx.observer.map(|(o, _)| o),
        out: std::cell::RefCell::new(if !root {
            Box::new(std::io::sink())
        } else if outputs.json_to_stdout {
            Box::new(std::io::stderr())
        } else {
            Box::new(std::io::stdout())
        }),
        json_out: outputs.json.as_ref(),
        target_arg: path,
        view: crate::cli::view(),
        started: std::cell::RefCell::new(None),
    };
    let outcome = session::run(plan, world, ctx.cancel, &printer)?;
    let ending = Ending {
        common,
        path,
        outputs: &outputs,
        watch_last: req.watch_last,
    };
    finish(outcome, ctx, &printer, &ending)
}

/// What the end of a run needs besides its outcome: the flags, the target as given, where the
/// outputs go, and `watch`'s window.
struct Ending<'a> {
    common: &'a Common,
    path: &'a Path,
    outputs: &'a Outputs,
    watch_last: Option<usize>,
}

/// The fio job file says what will be measured: written before the run, so an interrupted run
/// leaves it too.
fn write_fio_job(
    ctx: &Ctx<'_>,
    name: &str,
    to: &Path,
    target_info: &trackbench::target::TargetInfo,
    io: &trackbench::io::IoSettings,
    workloads: &[Box<dyn Workload>],
) -> Result<()> {
    let out = Output::prepare(to, "the fio job file (--fio-job)")?;
    let jobs: Vec<_> = workloads
        .iter()
        .flat_map(|w| w.fio_jobs(target_info, io))
        .collect();
    if jobs.is_empty() {
        bail!(
            "--fio-job: {name} has no measurement fio can run (the real-time ones are trackbench's own)"
        );
    }
    let command = command_line(ctx).join(" ");
    out.write(&trackbench::fio::job_file(&command, target_info, io, &jobs))?;
    eprintln!(
        "fio job file: {} (fio {} runs the same measurements)",
        out.path().display(),
        out.path().display()
    );
    Ok(())
}

/// What follows a session: an interrupted run's files handed to a cleaner, the result stored,
/// its report and document written, the summary and warnings printed, and the exit status.
fn finish(
    outcome: Outcome,
    ctx: &Ctx<'_>,
    printer: &Printer<'_>,
    ending: &Ending<'_>,
) -> Result<ExitCode> {
    let (common, path, outputs) = (ending.common, ending.path, ending.outputs);
    let world = ctx.world;
    let Outcome {
        mut doc,
        failure,
        unfinished,
        kept,
        speaks,
    } = outcome;
    // The cleaner starts removing when `_cleaner_gate` is dropped: when this function returns,
    // the result saved.
    let (cleaner, _cleaner_gate) = hand_over_unfinished(unfinished, path, world, &mut doc);
    if let Some(root) = kept {
        printer.bars.note(&format!(
            "test files kept in {} (remove them with: trackbench clean {})",
            root.display(),
            path.display()
        ));
    }
    // The error itself goes to stderr below; the document (JSON, store) records it too.
    let stopped = failure
        .as_ref()
        .map(|e| format!("stopped by an error: {e}"));
    doc.warnings.extend(stopped.clone());
    if !speaks {
        return silent_rank_exit(failure, doc.interrupted, world);
    }
    if !world.is_root() {
        // Rank 0 died: this rank speaks for the studio, from its own part of the figures.
        let mut out = std::io::stdout();
        let _ = write!(out, "{}", present::terminal::document(&doc, &printer.view));
        *printer.out.borrow_mut() = Box::new(std::io::sink());
    }
    // A run that measured nothing (refused at its first workload, interrupted before) has no
    // result worth finding again, or showing.
    let measured = !doc.sections.is_empty();
    let stored_id = (!common.no_store && measured)
        .then(|| store_result(&mut doc, common, printer))
        .flatten();
    let written_report = outputs
        .report
        .as_ref()
        .filter(|_| measured)
        .and_then(|r| write_report(&mut doc, r, stored_id, common.store.db.as_deref()));
    print_ending(printer, &doc, stored_id, failure.as_ref(), stopped.as_ref());
    write_outputs(printer, outputs, &doc, written_report)?;
    let lost_share = failure.as_ref().and_then(|e| lost_share(e, path, &doc));
    let watched = match ending.watch_last {
        Some(last) if failure.is_none() && !doc.interrupted && measured => {
            Some(print_watch(printer, &doc, stored_id, common, last)?)
        }
        _ => None,
    };
    let status = exit_status(failure, doc.interrupted, cleaner, lost_share)?;
    Ok(watched.unwrap_or(status))
}

/// Where the report went, said; the document written where `--json` asked.
fn write_outputs(
    printer: &Printer<'_>,
    outputs: &Outputs,
    doc: &ResultDoc,
    written_report: Option<PathBuf>,
) -> Result<()> {
    if let Some(p) = written_report {
        let _ = writeln!(
            printer.out.borrow_mut(),
            "\nreport: {} (one HTML file with charts; open it in a browser)",
            p.display()
        );
    }
    if outputs.json_to_stdout {
        println!("{}", present::json::to_string(doc)?);
    } else if let Some(j) = &outputs.json {
        j.write(&present::json::to_string(doc)?)?;
    }
    Ok(())
}

/// `watch`: whether this disk changed, judged against its last `last` runs in the store, printed
/// after the summary; the exit status that says it.
fn print_watch(
    printer: &Printer<'_>,
    doc: &ResultDoc,
    stored_id: Option<i64>,
    common: &Common,
    last: usize,
) -> Result<ExitCode> {
    let said = super::watch::judge(doc, stored_id, common.store.db.as_deref(), last)?;
    let mut out = printer.out.borrow_mut();
    let _ = writeln!(out);
    for line in &said.lines {
        let indent = if line.starts_with("  ") { "    " } else { "  " };
        let _ = write!(out, "{}", printer.view.wrap(line, "", indent));
    }
    Ok(said.status)
}

/// An interrupted run hands its files to a cleaner of their own and exits at once: unlinking
/// large files takes seconds on some filesystems (ext4 with discard). The cleaner's pid, and
/// the gate whose dropping lets it start; where it cannot, why, in `doc`'s warnings.
fn hand_over_unfinished(
    unfinished: Option<DataDir>,
    path: &Path,
    world: &dyn World,
    doc: &mut ResultDoc,
) -> (Option<u32>, Option<Gate>) {
    match unfinished.map(|d| hand_over(d, path, (!world.is_alone()).then(|| world.rank()))) {
        Some(Ok(handed)) => handed,
        Some(Err(e)) => {
            doc.warnings.push(format!("cleanup incomplete: {e}"));
            (None, None)
        }
        None => (None, None),
    }
}

/// How a rank that does not speak for the studio exits: another rank's failure is said by that
/// rank and by rank 0, so this one only stops; its own failure, interruption or success.
fn silent_rank_exit(
    failure: Option<Error>,
    interrupted: bool,
    world: &dyn World,
) -> Result<ExitCode> {
    match failure {
        Some(Error::RankFailed { .. }) => Ok(ExitCode::FAILURE),
        Some(e) => Err(e).context(format!("measurement failed on rank {}", world.rank())),
        None if interrupted => Ok(ExitCode::from(EXIT_INTERRUPTED)),
        None => Ok(ExitCode::SUCCESS),
    }
}

/// Keeps the result in the store, before an interrupted run's cleaner removes its files (the
/// JSON was saved before the hand-over): its id, or a warning in the document where the store
/// cannot take it (that costs the user the history entry, not the run).
fn store_result(doc: &mut ResultDoc, common: &Common, printer: &Printer<'_>) -> Option<i64> {
    match store::open(common.store.db.as_deref()).and_then(|mut s| {
        let id = s.save(doc, &present::summary::headline(doc))?;
        Ok((id, s.location()))
    }) {
        Ok((id, at)) => {
            printer.bars.note(&format!(
                "stored as result {id} in {at} (trackbench show {id}{})",
                db_flag(&common.store)
            ));
            Some(id)
        }
        Err(e) => {
            doc.warnings
                .push(format!("not stored: {e} (--no-store skips the store)"));
            None
        }
    }
}

/// Writes the HTML report to `to`: where it went, or a warning in the document.
/// Writes the HTML report; a stored result's shows the disk's series over its earlier runs.
fn write_report(
    doc: &mut ResultDoc,
    to: &Output,
    stored: Option<i64>,
    db: Option<&str>,
) -> Option<PathBuf> {
    let html = match stored {
        Some(id) => store::open(db)
            .and_then(|mut s| trackbench::watch::series::report_with_history(s.as_mut(), doc, id)),
        None => present::html::document(doc),
    };
    match html.and_then(|html| to.write(&html)) {
        Ok(()) => Some(to.path().to_path_buf()),
        Err(e) => {
            doc.warnings.push(format!("no report: {e}"));
            None
        }
    }
}

/// What a run prints once measured: a studio's table, the summary, the warnings (but the error
/// that stopped it, said on stderr); the browser face hears the end.
fn print_ending(
    printer: &Printer<'_>,
    doc: &ResultDoc,
    stored: Option<i64>,
    failure: Option<&Error>,
    stopped: Option<&String>,
) {
    let mut out = printer.out.borrow_mut();
    if let Some(studio) = present::terminal::studio(doc, &printer.view) {
        let _ = write!(out, "\n{studio}");
    }
    let summary = present::summary::summary(doc);
    if let Some(summary) = &summary {
        let _ = write!(
            out,
            "\n{}",
            present::terminal::wrap_lines(summary, &printer.view)
        );
    }
    if let Some(o) = printer.observer {
        o.done(&browser::Done {
            stored,
            summary: summary.as_deref(),
            headline: &present::summary::headline(doc),
            interrupted: doc.interrupted,
            failure: failure.map(|e| e.to_string()),
            warnings: &doc.warnings,
        });
    }
    for w in doc.warnings.iter().filter(|w| Some(*w) != stopped) {
        let _ = write!(out, "{}", printer.view.wrap(w, "warning: ", "  "));
    }
}

/// Where the run's network share went away during it: the share named, and what to do once it
/// is back. The error a lost share gives depends on the call it interrupted (not connected, an
/// I/O error, or a file that is no longer there, where the share was unmounted): the share not
/// answering, or no longer mounted there, is what says.
fn lost_share(failure: &Error, path: &Path, doc: &ResultDoc) -> Option<String> {
    let gone = failure.is_storage_gone()
        || std::fs::read_dir(path).is_err()
        || target::inspect(path).map_or(true, |t| t.mount_source != doc.target.mount_source);
    let share = doc.target.network_share().filter(|_| gone)?;
    Some(format!(
        "{share} stopped answering during the run; once it is back, `trackbench clean {}` removes what trackbench left there",
        path.display()
    ))
}

/// The exit status: the error that stopped the run, 130 for an interrupted one (saying who
/// removes its files), success otherwise.
fn exit_status(
    failure: Option<Error>,
    interrupted: bool,
    cleaner: Option<u32>,
    lost_share: Option<String>,
) -> Result<ExitCode> {
    if let Some(e) = failure {
        return match lost_share {
            Some(share) => Err(e).context(share),
            None => Err(e).context("measurement failed"),
        };
    }
    if interrupted {
        match cleaner {
            Some(pid) => eprintln!(
                "interrupted: the figures measured so far are shown; trackbench's test files are being removed (cleaner pid {pid})"
            ),
            None => eprintln!(
                "interrupted: the figures measured so far are shown; trackbench's test files were removed"
            ),
        }
        return Ok(ExitCode::from(EXIT_INTERRUPTED));
    }
    Ok(ExitCode::SUCCESS)
}

/// The command line a result records: as given, or as the browser face built it (a path that
/// is not UTF-8 is recorded lossily).
fn command_line(ctx: &Ctx<'_>) -> Vec<String> {
    match ctx.observer {
        Some((_, args)) => args.to_vec(),
        None => std::env::args_os()
            .map(|a| a.to_string_lossy().into_owned())
            .collect(),
    }
}
