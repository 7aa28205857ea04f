//! The trackbench binary: parses the command line, shows progress, prints tables and writes
//! result documents. All measuring happens in the library.

mod browser;
mod cli;

use anyhow::{Context, Result, bail};
use clap::Parser;
use cli::progress::Bars;
use cli::{
    Cli, Command, Common, CompareArgs, HistoryArgs, IoArgs, RecordOpts, ReportArgs, ShowArgs,
    StoreArgs,
};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use trackbench::datadir::{self, DataDir};
use trackbench::error::Error;
use trackbench::present;
use trackbench::present::output::Output;
use trackbench::result::ResultDoc;
use trackbench::session::{self, Outcome, Plan};
use trackbench::store;
use trackbench::studio::{Alone, World};
use trackbench::target::{self, TargetKind};
use trackbench::units::fmt_size;
use trackbench::workloads::multitrack::{StreamKind, Streaming};
use trackbench::workloads::{Workload, seq::SeqMode};

/// The system allocator, counting what the audio tick allocates inside its real-time loop, so
/// every streaming result can state that the number is zero.
struct CountingAlloc;

// SAFETY: forwards to the system allocator unchanged; the check reads a const-initialised
// thread-local and bumps an atomic, neither of which allocates.
unsafe impl std::alloc::GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        count_realtime_allocation();
        unsafe { std::alloc::System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        count_realtime_allocation();
        unsafe { std::alloc::System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        count_realtime_allocation();
        unsafe { std::alloc::System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
}

fn count_realtime_allocation() {
    if trackbench::engine::real_time::in_realtime_loop() {
        trackbench::engine::real_time::REALTIME_ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    }
}

#[global_allocator]
static ALLOCATOR: CountingAlloc = CountingAlloc;

/// Exit status of a run stopped by Ctrl-C or SIGTERM, as shells report it.
const EXIT_INTERRUPTED: u8 = 130;

/// What a second Ctrl-C prints before the process ends at once (set once the target is known).
static SECOND_SIGNAL_MESSAGE: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();

fn main() -> ExitCode {
    trackbench::engine::real_time::ALLOCATIONS_COUNTED.store(true, Ordering::Relaxed);
    raise_open_file_limit();
    let cli = Cli::parse();
    let cancel = Arc::new(AtomicBool::new(false));
    install_interrupt_handlers(&cancel);
    let ask_less = space_hint(&cli.command);
    match dispatch(cli, &cancel) {
        Ok(code) => code,
        Err(e) => {
            let no_space = e.chain().any(|c| {
                c.downcast_ref::<Error>()
                    .is_some_and(|x| matches!(x, Error::NoSpace { .. }))
            });
            let hint = match ask_less {
                Some(h) if no_space => format!(", or ask for less: {h}"),
                _ => String::new(),
            };
            eprintln!("error: {e:#}{hint}");
            ExitCode::FAILURE
        }
    }
}

/// The first SIGINT or SIGTERM sets `cancel` (the run stops, saves its result marked
/// interrupted and removes its files); a second ends the process at once, saying what may be
/// left behind.
#[cfg(unix)]
fn install_interrupt_handlers(cancel: &Arc<AtomicBool>) {
    // Set by the first SIGINT or SIGTERM. One swap decides which signal is first: two signals
    // sent together may be handled at once on two threads, and each must not see the other
    // as not yet there.
    let signalled = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        // A second signal while the first is being handled ends the process at once, saying
        // what may be left behind.
        let seen = Arc::clone(&signalled);
        // SAFETY: the action only swaps an atomic, writes a prepared buffer and calls _exit,
        // all async-signal-safe.
        let _ = unsafe {
            signal_hook::low_level::register(sig, move || {
                if seen.swap(true, Ordering::SeqCst) {
                    let msg = SECOND_SIGNAL_MESSAGE
                        .get()
                        .map_or(&b"\nsecond interrupt: exiting now\n"[..], Vec::as_slice);
                    libc::write(2, msg.as_ptr().cast(), msg.len());
                    libc::_exit(i32::from(EXIT_INTERRUPTED));
                }
            })
        };
        let _ = signal_hook::flag::register(sig, Arc::clone(cancel));
    }
}

/// Windows: Ctrl-C and Ctrl-Break (and the console closing) through SetConsoleCtrlHandler, the
/// platform's own way; the same promise as on Unix.
#[cfg(windows)]
fn install_interrupt_handlers(cancel: &Arc<AtomicBool>) {
    use windows_sys::Win32::Foundation::{FALSE, TRUE};
    use windows_sys::Win32::System::Console::{
        CTRL_BREAK_EVENT, CTRL_C_EVENT, CTRL_CLOSE_EVENT, SetConsoleCtrlHandler,
    };
    static CANCEL: std::sync::OnceLock<Arc<AtomicBool>> = std::sync::OnceLock::new();
    static SEEN: AtomicBool = AtomicBool::new(false);
    unsafe extern "system" fn handler(kind: u32) -> windows_sys::core::BOOL {
        if ![CTRL_C_EVENT, CTRL_BREAK_EVENT, CTRL_CLOSE_EVENT].contains(&kind) {
            return FALSE;
        }
        if SEEN.swap(true, Ordering::SeqCst) {
            let msg = SECOND_SIGNAL_MESSAGE
                .get()
                .map_or(&b"\nsecond interrupt: exiting now\n"[..], Vec::as_slice);
            let _ = std::io::Write::write_all(&mut std::io::stderr(), msg);
            std::process::exit(i32::from(EXIT_INTERRUPTED));
        }
        if let Some(c) = CANCEL.get() {
            c.store(true, Ordering::SeqCst);
        }
        TRUE
    }
    let _ = CANCEL.set(Arc::clone(cancel));
    // SAFETY: a handler with the signature the API expects, living for the whole program.
    unsafe { SetConsoleCtrlHandler(Some(handler), TRUE) };
}

/// The flags with which each command asks for less disk space, for an out-of-space error.
fn space_hint(c: &Command) -> Option<&'static str> {
    match c {
        Command::Seq(_)
        | Command::Seek(_)
        | Command::Access(_)
        | Command::Mix(_)
        | Command::Zones(_) => Some("a smaller --size"),
        Command::Sweep(_) => Some("fewer --files or a smaller --file-size"),
        Command::Play(_) | Command::Record(_) => Some("fewer --tracks or a shorter --duration"),
        Command::Hdr(_) => Some("fewer --play or --record tracks, or a shorter --duration"),
        Command::Sampler(_) | Command::Load(_) => Some("fewer --files or shorter --lengths"),
        Command::Bounce(_) => Some("fewer --tracks or a shorter --duration"),
        Command::Run(_)
        | Command::Clean(_)
        | Command::History(_)
        | Command::Show(_)
        | Command::Compare(_)
        | Command::Report(_)
        | Command::Ui(_) => None,
    }
}

/// What a measuring command runs with: the cancel flag and the computers running it at once.
struct Ctx<'a> {
    cancel: &'a AtomicBool,
    world: &'a dyn World,
    /// The browser face watching this run (`trackbench ui`), with the command line it stands
    /// for (what the result records).
    observer: Option<(&'a dyn browser::Observer, &'a [String])>,
}

/// The world of ranks this process belongs to: an MPI job's when a launcher started it and the
/// command measures (other commands, and the cleaner an interrupted rank starts, never join
/// one); otherwise none, and the command runs alone as it always has.
#[cfg(feature = "mpi")]
type Ranks = trackbench::studio::mpi::MpiWorld;
#[cfg(not(feature = "mpi"))]
type Ranks = Alone;

fn world_for(c: &Command) -> Result<Option<Ranks>> {
    let measures = !matches!(
        c,
        Command::Clean(_)
            | Command::History(_)
            | Command::Show(_)
            | Command::Compare(_)
            | Command::Report(_)
            | Command::Ui(_)
    );
    #[cfg(feature = "mpi")]
    if measures {
        return trackbench::studio::mpi::MpiWorld::from_launcher()
            .context("joining the MPI job this process was launched into");
    }
    let _ = measures;
    Ok(None)
}

/// The audio format of tracks without `--format`.
const DEFAULT_FORMAT: &str = "48k/24/mono";

/// The audio format of sample libraries without `--format`.
const SAMPLE_FORMAT: &str = "48k/24/stereo";

/// A measuring command, as `measure` runs it.
struct Request<'a> {
    /// The command's name (`run`, `seq` …).
    name: &'static str,
    path: &'a Path,
    common: &'a Common,
    /// The classic workloads' I/O flags (the streaming ones choose theirs through the profile).
    io: Option<&'a IoArgs>,
    workloads: Vec<Box<dyn Workload>>,
    /// The format without `--format`: mono tracks, stereo samples.
    default_format: &'static str,
    /// `--fio-job`: where to write the measurements as fio jobs.
    fio_job: Option<&'a Path>,
}

fn dispatch(cli: Cli, cancel: &AtomicBool) -> Result<ExitCode> {
    let ranks = world_for(&cli.command)?;
    let world = ranks
        .as_ref()
        .map_or(&Alone as &dyn World, |w| w as &dyn World);
    if let Command::Ui(a) = &cli.command {
        return browser::serve(a, cancel, run_for_ui);
    }
    let ctx = &Ctx {
        cancel,
        world,
        observer: None,
    };
    let done = run_command(cli, ctx);
    // A rank that stops on an error or a signal does not wait for the others to leave.
    if done.is_err() || cancel.load(Ordering::Relaxed) {
        world.forsake();
    }
    done
}

/// A run the browser face started: the command line it built, run as the terminal would run
/// it, with `observer` told what happens.
fn run_for_ui(
    args: &[String],
    cancel: &AtomicBool,
    observer: &dyn browser::Observer,
) -> Result<ExitCode> {
    let cli = Cli::try_parse_from(args)?;
    let ctx = &Ctx {
        cancel,
        world: &Alone,
        observer: Some((observer, args)),
    };
    run_command(cli, ctx)
}

fn run_command(cli: Cli, ctx: &Ctx<'_>) -> Result<ExitCode> {
    let classic = |name, path: &Path, common, io, w: Box<dyn Workload>| {
        measure(
            Request {
                name,
                path,
                common,
                io: Some(io),
                workloads: vec![w],
                default_format: DEFAULT_FORMAT,
                fio_job: io.fio_job.as_deref(),
            },
            ctx,
        )
    };
    let streaming = |name, path: &Path, common, w: Streaming| {
        measure(
            Request {
                name,
                path,
                common,
                io: None,
                workloads: vec![Box::new(w)],
                default_format: DEFAULT_FORMAT,
                fio_job: None,
            },
            ctx,
        )
    };
    // The DAW workloads: stereo sample libraries, the sampler's format unless --format says.
    let daw = |name, path: &Path, common, w: Box<dyn Workload>| {
        measure(
            Request {
                name,
                path,
                common,
                io: None,
                workloads: vec![w],
                default_format: SAMPLE_FORMAT,
                fio_job: None,
            },
            ctx,
        )
    };
    match cli.command {
        Command::Run(a) => {
            let format = a.common.settings(None)?.format;
            let workloads = trackbench::suite::standard(format)?;
            measure(
                Request {
                    name: "run",
                    path: &a.path,
                    common: &a.common,
                    io: Some(&a.io),
                    workloads,
                    default_format: DEFAULT_FORMAT,
                    fio_job: a.io.fio_job.as_deref(),
                },
                ctx,
            )
        }
        Command::Seq(a) => {
            let kind = target::inspect(&a.path)?.kind;
            let w = a.workload(kind)?;
            if kind != TargetKind::Directory && w.mode != SeqMode::Read {
                Err(Error::WriteRefused {
                    path: a.path.clone(),
                    kind: kind.describe(),
                    what: "seq --mode write/both".to_string(),
                })?;
            }
            classic("seq", &a.path, &a.common, &a.io, Box::new(w))
        }
        Command::Seek(a) => classic("seek", &a.path, &a.common, &a.io, Box::new(a.workload()?)),
        Command::Access(a) => classic("access", &a.path, &a.common, &a.io, Box::new(a.workload()?)),
        Command::Mix(a) => classic("mix", &a.path, &a.common, &a.io, Box::new(a.workload()?)),
        Command::Zones(a) => classic("zones", &a.path, &a.common, &a.io, Box::new(a.workload()?)),
        Command::Sweep(a) => classic("sweep", &a.path, &a.common, &a.io, Box::new(a.workload()?)),
        Command::Play(a) => {
            let format = a.common.settings(None)?.format;
            let (rank, size) = (ctx.world.rank(), ctx.world.size());
            let kind = cli::role(a.roles.as_deref(), rank, size, StreamKind::Play)?;
            let (p, r) = role_counts(kind, a.tracks);
            let w = a
                .stream
                .workload(kind, format, p, r, RecordOpts::default())?;
            streaming("play", &a.path, &a.common, w)
        }
        Command::Record(a) => {
            let format = a.common.settings(None)?.format;
            let (rank, size) = (ctx.world.rank(), ctx.world.size());
            let kind = cli::role(a.roles.as_deref(), rank, size, StreamKind::Record)?;
            let (p, r) = role_counts(kind, a.tracks);
            let w = a.stream.workload(kind, format, p, r, a.rec)?;
            streaming("record", &a.path, &a.common, w)
        }
        Command::Hdr(a) => {
            let format = a.common.settings(None)?.format;
            let w = a
                .stream
                .workload(StreamKind::Hdr, format, a.play, a.record, a.rec)?;
            streaming("hdr", &a.path, &a.common, w)
        }
        Command::Sampler(a) => daw("sampler", &a.path, &a.common, Box::new(a.workload()?)),
        Command::Load(a) => daw("load", &a.path, &a.common, Box::new(a.workload()?)),
        Command::Bounce(a) => {
            let w = a.workload()?;
            measure(
                Request {
                    name: "bounce",
                    path: &a.path,
                    common: &a.common,
                    io: None,
                    workloads: vec![Box::new(w)],
                    default_format: DEFAULT_FORMAT,
                    fio_job: a.fio_job.as_deref(),
                },
                ctx,
            )
        }
        Command::Clean(a) => clean(&a.path, a.inherited_lock, a.rank, a.after_exit),
        Command::History(a) => history(&a),
        Command::Show(a) => show(&a),
        Command::Compare(a) => compare(&a),
        Command::Report(a) => report_cmd(&a),
        Command::Ui(_) => bail!("ui runs no measurement of its own"),
    }
}

/// Playback and record tracks of a rank playing or recording `tracks`.
fn role_counts(kind: StreamKind, tracks: u32) -> (u32, u32) {
    match kind {
        StreamKind::Record => (0, tracks),
        _ => (tracks, 0),
    }
}

/// The terminal and `--json` presenter of a session.
struct Printer<'a> {
    bars: Bars,
    observer: Option<&'a dyn browser::Observer>,
    out: std::cell::RefCell<Box<dyn Write>>,
    json_out: Option<&'a Output>,
    target_arg: &'a Path,
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
        let _ = write!(self.out.borrow_mut(), "{}", present::terminal::header(doc));
    }
    fn section(&self, section: &trackbench::result::Section) {
        let text = present::terminal::section(section);
        if let Some(o) = self.observer {
            o.section(&section.workload, &text);
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

/// Runs a measuring command and reports: tables as it goes, then the store, the report, the
/// summary and the result document.
fn measure(req: Request<'_>, ctx: &Ctx<'_>) -> Result<ExitCode> {
    let (cancel, world) = (ctx.cancel, ctx.world);
    let Request {
        name,
        path,
        common,
        io,
        workloads,
        default_format,
        fio_job,
    } = req;
    let settings = common.settings_for(io, default_format)?;
    // In a studio, rank 0 speaks for all: it alone writes files of results, stores and prints.
    let root = world.is_root();
    let json_to_stdout = root && common.json.as_deref() == Some(Path::new("-"));
    // Checked before anything is measured: a search must not be lost to a bad path.
    let json_out = match &common.json {
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
    let report_out = report_path
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
    let target_info = target::inspect(path)?;
    // The fio job file says what will be measured: written before the run, so an interrupted
    // run leaves it too.
    if let Some(f) = fio_job.filter(|_| root) {
        let out = Output::prepare(f, "the fio job file (--fio-job)")?;
        let jobs: Vec<_> = workloads
            .iter()
            .flat_map(|w| w.fio_jobs(&target_info, &settings.io))
            .collect();
        if jobs.is_empty() {
            bail!(
                "--fio-job: {name} has no measurement fio can run (the real-time ones are trackbench's own)"
            );
        }
        let command = command_line(ctx).join(" ");
        out.write(&trackbench::fio::job_file(
            &command,
            &target_info,
            &settings.io,
            &jobs,
        ))?;
        eprintln!(
            "fio job file: {} (fio {} runs the same measurements)",
            out.path().display(),
            out.path().display()
        );
    }
    let plan = Plan {
        target: path.to_path_buf(),
        workloads,
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
        } else if json_to_stdout {
            Box::new(std::io::stderr())
        } else {
            Box::new(std::io::stdout())
        }),
        json_out: json_out.as_ref(),
        target_arg: path,
    };
    let Outcome {
        mut doc,
        failure,
        unfinished,
        kept,
        speaks,
    } = session::run(plan, world, cancel, &printer)?;
    // An interrupted run hands its files to a cleaner of their own and exits at once:
    // unlinking large files takes seconds on some filesystems (ext4 with discard).
    // The cleaner starts removing when `_cleaner_gate` is dropped: when this function returns,
    // the result saved.
    let (cleaner, _cleaner_gate) =
        match unfinished.map(|d| hand_over(d, path, (!world.is_alone()).then(|| world.rank()))) {
            Some(Ok(handed)) => handed,
            Some(Err(e)) => {
                doc.warnings.push(format!("cleanup incomplete: {e}"));
                (None, None)
            }
            None => (None, None),
        };
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
    // A run that measured nothing (refused at its first workload, interrupted before) has no
    // result worth finding again, or showing.
    let measured = !doc.sections.is_empty();
    if !speaks {
        // Another rank's failure is said by that rank and by rank 0; this one only stops.
        return match failure {
            Some(Error::RankFailed { .. }) => Ok(ExitCode::FAILURE),
            Some(e) => Err(e).context(format!("measurement failed on rank {}", world.rank())),
            None if doc.interrupted => Ok(ExitCode::from(EXIT_INTERRUPTED)),
            None => Ok(ExitCode::SUCCESS),
        };
    }
    if !root {
        // Rank 0 died: this rank speaks for the studio, from its own part of the figures.
        let mut out = std::io::stdout();
        let _ = write!(out, "{}", present::terminal::document(&doc));
        *printer.out.borrow_mut() = Box::new(std::io::sink());
    }
    let mut stored_id = None;
    if !common.no_store && measured {
        // Before an interrupted run's cleaner removes its files (the JSON was saved before the
        // hand-over); a store that cannot take the result costs the user the history entry,
        // not the run.
        match store::open(common.store.db.as_deref()).and_then(|mut s| {
            let id = s.save(&doc, &present::summary::headline(&doc))?;
            Ok((id, s.location()))
        }) {
            Ok((id, at)) => {
                stored_id = Some(id);
                printer.bars.note(&format!(
                    "stored as result {id} in {at} (trackbench show {id}{})",
                    db_flag(&common.store)
                ))
            }
            Err(e) => doc
                .warnings
                .push(format!("not stored: {e} (--no-store skips the store)")),
        }
    }
    let mut written_report = None;
    if let Some(r) = report_out.as_ref().filter(|_| measured) {
        match present::html::document(&doc).and_then(|html| r.write(&html)) {
            Ok(()) => written_report = Some(r.path()),
            Err(e) => doc.warnings.push(format!("no report: {e}")),
        }
    }
    let mut out = printer.out.borrow_mut();
    if let Some(studio) = present::terminal::studio(&doc) {
        let _ = write!(out, "\n{studio}");
    }
    let summary = present::summary::summary(&doc);
    if let Some(summary) = &summary {
        let _ = write!(out, "\n{summary}");
    }
    if let Some(o) = printer.observer {
        o.done(&browser::Done {
            stored: stored_id,
            summary: summary.as_deref(),
            headline: &present::summary::headline(&doc),
            interrupted: doc.interrupted,
            failure: failure.as_ref().map(|e| e.to_string()),
            warnings: &doc.warnings,
        });
    }
    for w in doc.warnings.iter().filter(|w| Some(*w) != stopped.as_ref()) {
        let _ = writeln!(out, "warning: {w}");
    }
    if let Some(p) = written_report {
        let _ = writeln!(
            out,
            "\nreport: {} (one HTML file with charts; open it in a browser)",
            p.display()
        );
    }
    if json_to_stdout {
        println!("{}", present::json::to_string(&doc)?);
    } else if let Some(j) = &json_out {
        j.write(&present::json::to_string(&doc)?)?;
    }
    if let Some(e) = failure {
        return Err(e).context("measurement failed");
    }
    if doc.interrupted {
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

/// The `--db` a follow-up command needs to find the same store.
fn db_flag(s: &StoreArgs) -> String {
    s.db.as_deref()
        .map(|d| format!(" --db {d}"))
        .unwrap_or_default()
}

fn history(a: &HistoryArgs) -> Result<ExitCode> {
    let mut s = store::open(a.store.db.as_deref())?;
    let rows = s.history(&store::Filter {
        target: a.target.clone(),
        device: a.device.clone(),
        workload: a.workload.clone(),
        since: a.since.clone(),
        limit: a.limit,
    })?;
    if rows.is_empty() {
        println!("no stored results match, in {}", s.location());
        return Ok(ExitCode::SUCCESS);
    }
    print!("{}", present::terminal::history(&rows));
    println!(
        "{} result(s) from {}; trackbench show ID{} shows one",
        rows.len(),
        s.location(),
        db_flag(&a.store)
    );
    Ok(ExitCode::SUCCESS)
}

fn show(a: &ShowArgs) -> Result<ExitCode> {
    let mut s = store::open(a.store.db.as_deref())?;
    let doc = s.load(a.id)?;
    let format = if a.json { "json" } else { "terminal" };
    let p = present::presenter(format).context("a presenter for every show format")?;
    let text = p.render(&doc)?;
    print!("{text}");
    if !text.ends_with('\n') {
        println!();
    }
    Ok(ExitCode::SUCCESS)
}

/// Results named by store ids or result files, with the name each is shown under (`#12`, the
/// file's name); the store is opened once, where an id needs it.
fn load_results(names: &[String], db: &StoreArgs) -> Result<Vec<(String, ResultDoc)>> {
    let mut store = None;
    let mut docs = Vec::new();
    for r in names {
        let path = Path::new(r);
        let doc = match r.parse::<i64>() {
            Ok(id) if !path.exists() => {
                let s = match &mut store {
                    Some(s) => s,
                    None => store.insert(store::open(db.db.as_deref())?),
                };
                (format!("#{id}"), s.load(id)?)
            }
            _ => {
                let text = std::fs::read_to_string(path).with_context(|| {
                    format!("{r} is neither a stored result's id nor a readable result document")
                })?;
                let doc: ResultDoc = serde_json::from_str(&text)
                    .with_context(|| format!("{r} is not a trackbench result document"))?;
                let name = path
                    .file_name()
                    .map_or(r.clone(), |n| n.to_string_lossy().into_owned());
                (name, doc)
            }
        };
        docs.push(doc);
    }
    // Two files of the same name are told apart by their paths, as given.
    for i in 0..docs.len() {
        if docs.iter().filter(|d| d.0 == docs[i].0).count() > 1 && !docs[i].0.starts_with('#') {
            docs[i].0 = names[i].clone();
        }
    }
    Ok(docs)
}

fn compare(a: &CompareArgs) -> Result<ExitCode> {
    let html_out = a
        .output
        .as_deref()
        .map(|p| Output::prepare(p, "the comparison (--output)"))
        .transpose()?;
    let docs = load_results(&a.results, &a.store)?;
    let unfair = present::compare::unfair_differences(&docs);
    if !unfair.is_empty() && !a.unfair {
        bail!(
            "these results ran with different settings, so their figures do not compare:\n  {}\n(--unfair compares them anyway)",
            unfair.join("\n  ")
        );
    }
    print!("{}", present::compare::terminal(&docs));
    for u in &unfair {
        println!("warning: compared although {u}");
    }
    if let Some(o) = html_out {
        o.write(&present::compare::html(&docs, &unfair)?)?;
        println!(
            "comparison: {} (one HTML file with charts)",
            o.path().display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn report_cmd(a: &ReportArgs) -> Result<ExitCode> {
    let name = if a.markdown {
        "markdown"
    } else {
        a.to.as_str()
    };
    let presenter = present::presenter(name).ok_or_else(|| {
        let names: Vec<_> = present::PRESENTERS.iter().map(|p| p.name()).collect();
        anyhow::anyhow!("invalid format {name:?}: one of {}", names.join(", "))
    })?;
    let html = presenter.name() == "html";
    let out = match &a.output {
        Some(p) if p.as_os_str() == "-" => None,
        Some(p) => Some(Output::prepare(p, "the report (--output)")?),
        // An HTML page is a file to open; text goes to the terminal.
        None if !html => None,
        None => {
            let stem = Path::new(&a.result)
                .file_stem()
                .map_or(a.result.clone(), |s| s.to_string_lossy().into_owned());
            let p = PathBuf::from(format!(
                "trackbench-report-{stem}.{}",
                presenter.extension()
            ));
            Some(Output::prepare(&p, "the report").context("name another place with -o FILE")?)
        }
    };
    let (_, doc) = load_results(std::slice::from_ref(&a.result), &a.store)?
        .pop()
        .context("one result loaded")?;
    let text = presenter.render(&doc)?;
    match out {
        None => print!("{text}"),
        Some(o) => {
            o.write(&text)?;
            println!(
                "report: {} ({})",
                o.path().display(),
                if html {
                    "one HTML file with charts; open it in a browser"
                } else {
                    presenter.name()
                }
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Hands an interrupted run's data directory, lock included, to a `trackbench clean` of its
/// own (its own process group: a second Ctrl-C at the terminal does not stop it) and returns
/// its pid; where that cannot start, cleans here.
///
/// The cleaner holds the lock at once but removes the files only once the returned gate, the
/// write end of a pipe it reads, is closed: by dropping it when the run's result is saved, or
/// by this process's exit, however it exits (a second Ctrl-C among the ways); and at most
/// `CLEANER_WAITS_FOR_RUN` after it starts. The removal's discards (most of a second for a 1 GB
/// file on ext4 mounted with `discard`) would otherwise queue ahead of the run's last writes,
/// the store's and the JSON's syncs, and took its exit past a second.
#[cfg(unix)]
fn hand_over(
    d: DataDir,
    target: &Path,
    rank: Option<u32>,
) -> Result<(Option<u32>, Option<std::io::PipeWriter>)> {
    use std::os::fd::AsRawFd;
    use std::os::unix::process::CommandExt;
    if d.keep() {
        d.close()?;
        return Ok((None, None));
    }
    let fd = d.detach_lock()?;
    // Both ends close on exec (std's pipe); the cleaner's copy of the read end is kept open
    // below. Without a pipe the cleaner starts at once.
    let gate = std::io::pipe().ok();
    let spawned = std::env::current_exe().and_then(|exe| {
        let mut c = std::process::Command::new(exe);
        c.arg("clean")
            .arg(target)
            .arg("--inherited-lock")
            .arg(fd.to_string());
        if let Some(r) = rank {
            c.arg("--rank").arg(r.to_string());
        }
        if let Some((read, _)) = &gate {
            let read = read.as_raw_fd();
            c.arg("--after-exit").arg(read.to_string());
            // SAFETY: runs in the child between fork and exec; fcntl is async-signal-safe.
            unsafe {
                c.pre_exec(move || {
                    if libc::fcntl(read, libc::F_SETFD, 0) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        }
        // The cleaner is no rank of the job: it must not see the launcher's variables.
        for (k, _) in std::env::vars_os() {
            let k = k.to_string_lossy();
            if k.starts_with("OMPI_") || k.starts_with("PMIX_") || k.starts_with("PMI_") {
                c.env_remove(&*k);
            }
        }
        c.stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .process_group(0)
            .spawn()
    });
    // Our read end closes here; the cleaner holds its own.
    let gate = gate.map(|(_read, write)| write);
    match spawned {
        Ok(child) => {
            // SAFETY: our copy of the handed-over descriptor; the cleaner holds its own.
            unsafe { libc::close(fd) };
            Ok((Some(child.id()), gate))
        }
        Err(_) => {
            let t = target::inspect(target)?;
            DataDir::adopt(&t.path, rank, fd)?.close()?;
            Ok((None, None))
        }
    }
}

/// Windows: a lock handle cannot be handed to a child as a descriptor is, so the interrupted
/// run removes its files itself before it exits.
#[cfg(windows)]
fn hand_over(d: DataDir, _target: &Path, _rank: Option<u32>) -> Result<(Option<u32>, Option<()>)> {
    d.close()?;
    Ok((None, None))
}

/// How long a cleaner waits for the run that handed it its files to exit before it removes
/// them anyway (a run's last writes, its store on a slow server among them, take longer only
/// when something is wrong).
#[cfg(unix)]
const CLEANER_WAITS_FOR_RUN: std::time::Duration = std::time::Duration::from_secs(30);

/// Waits until the pipe read end `fd` reads end of file (every writer has closed it, by exiting
/// among other ways) or `limit` has passed, then closes it.
#[cfg(unix)]
fn wait_for_writers_to_exit(fd: i32, limit: std::time::Duration) {
    let start = std::time::Instant::now();
    let mut byte = 0u8;
    loop {
        let left = limit.saturating_sub(start.elapsed());
        if left.is_zero() {
            break;
        }
        let mut p = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = left.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32;
        // SAFETY: one valid pollfd.
        let n = unsafe { libc::poll(&mut p, 1, ms) };
        if n == 0
            || (n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted)
        {
            continue;
        }
        if n < 0 || p.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0 {
            break;
        }
        // Readable: end of file, or a byte nobody meant to send (read it and wait on).
        // SAFETY: reads at most one byte into `byte`.
        if unsafe { libc::read(fd, (&raw mut byte).cast(), 1) } <= 0 {
            break;
        }
    }
    // SAFETY: the descriptor was handed to this process for this wait alone.
    unsafe { libc::close(fd) };
}

fn clean(
    path: &Path,
    inherited_lock: Option<i32>,
    rank: Option<u32>,
    after_exit: Option<i32>,
) -> Result<ExitCode> {
    let t = target::inspect(path)?;
    if t.kind != TargetKind::Directory {
        bail!(
            "{} is a {}: only directories hold trackbench data",
            path.display(),
            t.kind.describe()
        );
    }
    if let Some(fd) = inherited_lock {
        // The interrupted run's own cleanup, handed over with its lock: the directory is
        // marked as the cleaner's at once, its files removed once that run has exited.
        #[cfg(unix)]
        {
            let d = DataDir::adopt(&t.path, rank, fd)?;
            if let Some(gate) = after_exit {
                wait_for_writers_to_exit(gate, CLEANER_WAITS_FOR_RUN);
            }
            d.close()?;
        }
        #[cfg(windows)]
        {
            let _ = (rank, after_exit);
            bail!("--inherited-lock {fd}: a lock is handed over only on Unix");
        }
        #[cfg(unix)]
        return Ok(ExitCode::SUCCESS);
    }
    let c = datadir::clean(&t.path)?;
    for n in &c.notes {
        println!("note: {n}");
    }
    if c.removed.is_empty() && c.foreign.is_empty() && !t.path.join(datadir::DIR_NAME).exists() {
        println!("nothing to clean in {}", t.path.display());
    } else {
        let bytes: u64 = c.removed.iter().map(|r| r.1).sum();
        println!(
            "removed {} file(s), {} from {}",
            c.removed.len(),
            fmt_size(bytes),
            t.path.join(datadir::DIR_NAME).display()
        );
        if !c.foreign.is_empty() {
            println!(
                "left alone (not created by trackbench): {}",
                c.foreign.join(", ")
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Windows has no per-process limit of this kind.
#[cfg(windows)]
fn raise_open_file_limit() {}

/// Streaming thousands of tracks keeps one file open per track: lift the soft limit on open
/// files to the hard limit.
#[cfg(unix)]
fn raise_open_file_limit() {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: valid out-pointer / in-pointer to an rlimit.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) == 0 && r.rlim_cur < r.rlim_max {
            r.rlim_cur = r.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &r);
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::wait_for_writers_to_exit;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::{Duration, Instant};

    /// A pipe's ends as descriptors this test owns.
    fn pipe() -> [i32; 2] {
        use std::os::fd::IntoRawFd;
        let (read, write) = std::io::pipe().expect("a pipe");
        [read.into_raw_fd(), write.into_raw_fd()]
    }

    /// A cleaner removes an interrupted run's files only once that run has exited (its write
    /// end closed), and a stray byte on the pipe does not end the wait early.
    #[test]
    fn a_cleaner_waits_for_the_run_to_exit() {
        let [read, write] = pipe();
        let closed = Arc::new(AtomicBool::new(false));
        let c = closed.clone();
        let writer = std::thread::spawn(move || {
            // SAFETY: writes one byte from a valid buffer to our pipe's write end.
            assert_eq!(unsafe { libc::write(write, b"x".as_ptr().cast(), 1) }, 1);
            std::thread::sleep(Duration::from_millis(200));
            c.store(true, Ordering::SeqCst);
            // SAFETY: the write end is this thread's to close.
            unsafe { libc::close(write) };
        });
        wait_for_writers_to_exit(read, Duration::from_secs(60));
        assert!(
            closed.load(Ordering::SeqCst),
            "the wait ended before the writer closed"
        );
        writer.join().unwrap();
    }

    /// A run that does not exit holds its files back for the limit only.
    #[test]
    fn a_cleaner_waits_no_longer_than_its_limit() {
        let [read, write] = pipe();
        let start = Instant::now();
        wait_for_writers_to_exit(read, Duration::from_millis(300));
        let waited = start.elapsed();
        assert!(waited >= Duration::from_millis(300), "{waited:?}");
        // SAFETY: our write end.
        unsafe { libc::close(write) };
    }
}
