//! The trackbench binary: parses the command line, shows progress, prints tables and writes
//! result documents. All measuring happens in the library.

mod cli;

use anyhow::{Context, Result, bail};
use clap::Parser;
use cli::progress::Bars;
use cli::{
    Cli, Command, Common, CompareArgs, HistoryArgs, IoArgs, RecordOpts, ShowArgs, StoreArgs,
};
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use trackbench::datadir::{self, DataDir};
use trackbench::error::Error;
use trackbench::report;
use trackbench::result::ResultDoc;
use trackbench::session::{self, Outcome, Plan};
use trackbench::store;
use trackbench::target::{self, TargetKind};
use trackbench::units::fmt_size;
use trackbench::workloads::stream::{StreamKind, Streaming};
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
    if trackbench::stream::real::in_realtime_loop() {
        trackbench::stream::real::REALTIME_ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    }
}

#[global_allocator]
static ALLOCATOR: CountingAlloc = CountingAlloc;

/// Exit status of a run stopped by Ctrl-C or SIGTERM, as shells report it.
const EXIT_INTERRUPTED: u8 = 130;

/// What a second Ctrl-C prints before the process ends at once (set once the target is known).
static SECOND_SIGNAL_MESSAGE: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();

fn main() -> ExitCode {
    trackbench::stream::real::ALLOCATIONS_COUNTED.store(true, Ordering::Relaxed);
    raise_open_file_limit();
    let cli = Cli::parse();
    let cancel = Arc::new(AtomicBool::new(false));
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
        let _ = signal_hook::flag::register(sig, Arc::clone(&cancel));
    }
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
        Command::Run(_)
        | Command::Clean(_)
        | Command::History(_)
        | Command::Show(_)
        | Command::Compare(_) => None,
    }
}

fn dispatch(cli: Cli, cancel: &AtomicBool) -> Result<ExitCode> {
    let classic = |path: &Path, common: &Common, io: &IoArgs, w: Box<dyn Workload>| {
        measure_with(path, common, Some(io), vec![w], false, true, cancel)
    };
    // A simulated run (--device-model) touches nothing on the target.
    let streaming = |path: &Path, common: &Common, w: Streaming| {
        let uses_disk = w.device.is_none();
        measure_with(
            path,
            common,
            None,
            vec![Box::new(w)],
            false,
            uses_disk,
            cancel,
        )
    };
    match cli.command {
        Command::Run(a) => {
            let format = a.common.settings(None)?.format;
            let suite = trackbench::suite::standard(format);
            measure_with(&a.path, &a.common, Some(&a.io), suite, true, true, cancel)
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
            classic(&a.path, &a.common, &a.io, Box::new(w))
        }
        Command::Seek(a) => classic(&a.path, &a.common, &a.io, Box::new(a.workload()?)),
        Command::Access(a) => classic(&a.path, &a.common, &a.io, Box::new(a.workload()?)),
        Command::Mix(a) => classic(&a.path, &a.common, &a.io, Box::new(a.workload()?)),
        Command::Zones(a) => classic(&a.path, &a.common, &a.io, Box::new(a.workload()?)),
        Command::Sweep(a) => classic(&a.path, &a.common, &a.io, Box::new(a.workload()?)),
        Command::Play(a) => {
            let format = a.common.settings(None)?.format;
            let w =
                a.stream
                    .workload(StreamKind::Play, format, a.tracks, 0, RecordOpts::default())?;
            streaming(&a.path, &a.common, w)
        }
        Command::Record(a) => {
            let format = a.common.settings(None)?.format;
            let w = a
                .stream
                .workload(StreamKind::Record, format, 0, a.tracks, a.rec)?;
            streaming(&a.path, &a.common, w)
        }
        Command::Hdr(a) => {
            let format = a.common.settings(None)?.format;
            let w = a
                .stream
                .workload(StreamKind::Hdr, format, a.play, a.record, a.rec)?;
            streaming(&a.path, &a.common, w)
        }
        Command::Clean(a) => clean(&a.path, a.inherited_lock),
        Command::History(a) => history(&a),
        Command::Show(a) => show(&a),
        Command::Compare(a) => compare(&a),
    }
}

/// The terminal and `--json` presenter of a session.
struct Printer<'a> {
    bars: Bars,
    out: std::cell::RefCell<Box<dyn Write>>,
    json_out: Option<&'a report::json::JsonOut>,
    target_arg: &'a Path,
}

impl trackbench::session::Sink for Printer<'_> {
    fn progress(&self) -> &dyn trackbench::control::Progress {
        &self.bars
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
    }
    fn started(&self, doc: &ResultDoc) {
        let _ = write!(self.out.borrow_mut(), "{}", report::terminal::header(doc));
    }
    fn section(&self, section: &trackbench::result::Section) {
        let mut out = self.out.borrow_mut();
        let _ = write!(out, "\n{}", report::terminal::section(section));
        let _ = out.flush();
    }
    fn finished(&self, doc: &ResultDoc) -> trackbench::error::Result<()> {
        match self.json_out {
            Some(j) => j.write(doc),
            None => Ok(()),
        }
    }
}

/// Runs `workloads` on `path` and reports. `uses_disk` is false for simulated runs, which touch
/// nothing on the target.
fn measure_with(
    path: &Path,
    common: &Common,
    io: Option<&IoArgs>,
    workloads: Vec<Box<dyn Workload>>,
    suite: bool,
    uses_disk: bool,
    cancel: &AtomicBool,
) -> Result<ExitCode> {
    let settings = common.settings(io)?;
    let json_to_stdout = common.json.as_deref() == Some(Path::new("-"));
    // Checked before anything is measured: a search must not be lost to a bad --json path.
    let json_out = match &common.json {
        Some(j) if !json_to_stdout => Some(report::json::JsonOut::prepare(j)?),
        _ => None,
    };
    let plan = Plan {
        target: path.to_path_buf(),
        workloads,
        format: settings.format,
        io: settings.io,
        memory: settings.memory,
        runs: settings.runs,
        keep: common.keep,
        suite,
        uses_disk,
        // The command line as given; a path that is not UTF-8 is recorded lossily.
        command: std::env::args_os()
            .map(|a| a.to_string_lossy().into_owned())
            .collect(),
    };
    let printer = Printer {
        bars: Bars::new(common.quiet),
        out: std::cell::RefCell::new(if json_to_stdout {
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
    } = session::run(plan, cancel, &printer)?;
    // An interrupted run hands its files to a cleaner of their own and exits at once:
    // unlinking large files takes seconds on some filesystems (ext4 with discard).
    let mut cleaner = None;
    if let Some(d) = unfinished {
        match hand_over(d, path) {
            Ok(pid) => cleaner = pid,
            Err(e) => doc.warnings.push(format!("cleanup incomplete: {e}")),
        }
    }
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
    // result worth finding again.
    if !common.no_store && !doc.sections.is_empty() {
        // After the cleanup (the JSON was saved before it); a store that cannot take the
        // result costs the user the history entry, not the run.
        match store::open(common.store.db.as_deref()).and_then(|mut s| {
            let id = s.save(&doc)?;
            Ok((id, s.location()))
        }) {
            Ok((id, at)) => printer.bars.note(&format!(
                "stored as result {id} in {at} (trackbench show {id}{})",
                db_flag(&common.store)
            )),
            Err(e) => doc
                .warnings
                .push(format!("not stored: {e} (--no-store skips the store)")),
        }
    }
    let mut out = printer.out.borrow_mut();
    if suite && !doc.sections.is_empty() {
        let _ = write!(
            out,
            "\n{}",
            trackbench::suite::summary(&doc, &settings.format)
        );
    }
    for w in doc.warnings.iter().filter(|w| Some(*w) != stopped.as_ref()) {
        let _ = writeln!(out, "warning: {w}");
    }
    if json_to_stdout {
        println!("{}", report::json::to_string(&doc)?);
    } else if let Some(j) = &json_out {
        j.write(&doc)?;
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
    print!("{}", report::terminal::history(&rows));
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
    let p = report::presenter(format).context("a presenter for every show format")?;
    let text = p.render(&doc)?;
    print!("{text}");
    if !text.ends_with('\n') {
        println!();
    }
    Ok(ExitCode::SUCCESS)
}

fn compare(a: &CompareArgs) -> Result<ExitCode> {
    let mut store = None;
    let mut docs = Vec::new();
    for r in &a.results {
        let path = Path::new(r);
        let doc = match r.parse::<i64>() {
            Ok(id) if !path.exists() => {
                let s = match &mut store {
                    Some(s) => s,
                    None => store.insert(store::open(a.store.db.as_deref())?),
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
    let unfair = report::compare::unfair_differences(&docs);
    if !unfair.is_empty() && !a.unfair {
        bail!(
            "these results ran with different settings, so their figures do not compare:\n  {}\n(--unfair compares them anyway)",
            unfair.join("\n  ")
        );
    }
    print!("{}", report::compare::terminal(&docs));
    for u in &unfair {
        println!("warning: compared although {u}");
    }
    Ok(ExitCode::SUCCESS)
}

/// Hands an interrupted run's data directory, lock included, to a `trackbench clean` of its
/// own (its own process group: a second Ctrl-C at the terminal does not stop it) and returns
/// its pid; where that cannot start, cleans here.
fn hand_over(d: DataDir, target: &Path) -> Result<Option<u32>> {
    use std::os::unix::process::CommandExt;
    if d.keep() {
        d.close()?;
        return Ok(None);
    }
    let fd = d.detach_lock()?;
    let spawned = std::env::current_exe().and_then(|exe| {
        std::process::Command::new(exe)
            .arg("clean")
            .arg(target)
            .arg("--inherited-lock")
            .arg(fd.to_string())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .process_group(0)
            .spawn()
    });
    match spawned {
        Ok(child) => {
            // SAFETY: our copy of the handed-over descriptor; the cleaner holds its own.
            unsafe { libc::close(fd) };
            Ok(Some(child.id()))
        }
        Err(_) => {
            let t = target::inspect(target)?;
            DataDir::adopt(&t.path, fd)?.close()?;
            Ok(None)
        }
    }
}

fn clean(path: &Path, inherited_lock: Option<i32>) -> Result<ExitCode> {
    let t = target::inspect(path)?;
    if t.kind != TargetKind::Directory {
        bail!(
            "{} is a {}: only directories hold trackbench data",
            path.display(),
            t.kind.describe()
        );
    }
    if let Some(fd) = inherited_lock {
        // The interrupted run's own cleanup, handed over with its lock.
        DataDir::adopt(&t.path, fd)?.close()?;
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

/// Streaming thousands of tracks keeps one file open per track: lift the soft limit on open
/// files to the hard limit.
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
