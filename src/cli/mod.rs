//! The command line: its flags (one file per family of commands), their conversion into
//! validated workload settings, and the measuring request each command stands for. What the
//! binary sets up for the process (`process`) and the progress bars (`progress`) are here too.

pub mod classic;
pub mod library;
pub mod process;
pub mod progress;
pub mod stored;
pub mod streaming;

use anyhow::{Result, bail};
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::{Path, PathBuf};
use std::time::Duration;
use trackbench::audio::Format;
use trackbench::error::Error;
use trackbench::io::{BackendKind, IoSettings};
use trackbench::present::terminal::View;
use trackbench::target::TargetKind;
use trackbench::units::{Invalid, parse_duration, parse_size};
use trackbench::workloads::multitrack::StreamKind;
use trackbench::workloads::seq::SeqMode;
use trackbench::workloads::{Workload, check_block, check_duration};

pub use classic::{AccessArgs, MixArgs, SeekArgs, SeqArgs, SweepArgs, ZonesArgs};
pub use library::{BounceArgs, LoadArgs, SamplerArgs};
pub use stored::{
    CleanArgs, CompareArgs, CompletionsArgs, HistoryArgs, ManArgs, ReportArgs, ShowArgs, UiArgs,
};
pub use streaming::{HdrArgs, PlayArgs, RecordArgs, RecordOpts};

/// What `--version` says: the version and the commit it was built from.
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("TRACKBENCH_COMMIT"),
    ")"
);

#[derive(Parser, Debug)]
#[command(
    name = "trackbench",
    version = VERSION,
    about = "Storage benchmark for audio: how many tracks and voices a disk really streams",
    long_about = "trackbench measures storage the way audio work needs it measured: tracks and voices, \
with the megabytes, IOPS and latencies underneath.\n\nIt writes only inside PATH/trackbench-data (locked, \
listed in a manifest, removed after the run unless --keep) and never writes to block devices or files it \
did not create. Ctrl-C stops a run within a second and cleans up.",
    after_long_help = CLI_AFTER_HELP
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Every column of every table and every explanation whole, one line each, as the JSON
    /// document and the report keep them (the default fits the terminal: 100 columns where it
    /// does not say).
    #[arg(long, global = true, visible_alias = "details")]
    pub wide: bool,
}

/// How this process lays out its text, set once from the command line.
static VIEW: std::sync::OnceLock<View> = std::sync::OnceLock::new();

/// The width text is fitted to: `COLUMNS` where set to a number, else the terminal's, else
/// 100.
fn terminal_width() -> usize {
    if let Some(c) = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|c| *c > 0)
    {
        return c;
    }
    terminal_size::terminal_size_of(std::io::stdout())
        .map(|(w, _)| usize::from(w.0))
        .filter(|w| *w > 0)
        .unwrap_or(View::DEFAULT_WIDTH)
}

/// Sets how text is laid out: every figure whole (`--wide`), or fitted to the terminal.
pub fn set_view(wide: bool) {
    let v = if wide {
        View::wide()
    } else {
        View::fitted(terminal_width())
    };
    let _ = VIEW.set(v);
}

/// How text is laid out ([`set_view`]; fitted to 100 columns before it is called).
pub fn view() -> View {
    VIEW.get().copied().unwrap_or_default()
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// The main job: the standard suite on PATH (default: the current directory), real-time track counts first, then the classic tests (3 to 4 minutes: each real-time probe lasts about 15 s whatever the disk).
    Run(RunArgs),
    /// The suite as `run`, stored, then one sentence on whether this disk changed beyond its noise since its last runs; exit status 0 unchanged (or too few runs to tell), 3 slower, 4 only faster.
    #[command(after_help = WATCH_HELP)]
    Watch(WatchArgs),
    /// Sustained sequential write and read of one large file (hdparm -t, DskBench).
    Seq(SeqArgs),
    /// Random access time and seeks per second at queue depth 1 (seeker); read-only, devices allowed.
    Seek(SeekArgs),
    /// Same-sector, sequential and random reads at one transfer size (SCSIbench); read-only.
    Access(AccessArgs),
    /// DiskTest: 32K sequential read, 32K sequential write, 8K random 70% read.
    Mix(MixArgs),
    /// Transfer rate at evenly spaced points from start to end; read-only, devices allowed.
    Zones(ZonesArgs),
    /// N files read round robin at block sizes 4K..1M: MB/s, tracks and buffer RAM (DskBench, Echo).
    Sweep(SweepArgs),
    /// Real-time playback of T tracks (audio tick + butler): verdict, xruns, fill; --find-max for the most.
    Play(PlayArgs),
    /// Real-time recording of M tracks into growing (or --prealloc'd) files; --find-max for the most.
    Record(RecordArgs),
    /// Play N tracks while recording M (hdrbench); --find-max gives the most N for M = 0, N/4, N/2, N.
    Hdr(HdrArgs),
    /// Sample-library voices with preload deadlines (Kontakt, LinuxSampler, sfizz …); --find-max for the most.
    Sampler(SamplerArgs),
    /// Template load: open every sample of a library and read its header and preload, cold and warm, 1 and Q threads.
    Load(LoadArgs),
    /// Offline export: render T tracks as 32-bit float, then read each back, normalise and write 24-bit.
    Bounce(BounceArgs),
    /// Remove trackbench's own data (PATH/trackbench-data) left by --keep or a killed run.
    Clean(CleanArgs),
    /// Stored results, newest first, with the figure each is known by.
    History(HistoryArgs),
    /// A stored result, shown as when it ran.
    Show(ShowArgs),
    /// Results side by side (store ids or JSON files), each figure as a percentage of the best.
    Compare(CompareArgs),
    /// A result as one self-contained HTML file with charts (or Markdown for a forum post).
    Report(ReportArgs),
    /// The browser face: a local web page (this computer only) to pick a disk, start a search and watch it live.
    Ui(UiArgs),
    /// Shell completions, generated from this build's own flags, to stdout (e.g. trackbench completions bash > ~/.local/share/bash-completion/completions/trackbench).
    Completions(CompletionsArgs),
    /// The manual page, generated from this build's own flags: roff to stdout (trackbench man | man -l -), or every command's page with --dir.
    Man(ManArgs),
}

/// What `--help` and the manual page say after the commands: where to start, where results go,
/// and the exit statuses.
const CLI_AFTER_HELP: &str = "Start with:
  trackbench ui                     the browser face: pick a folder and a question, watch it run
  trackbench run ~/Music            the standard suite: tracks, voices, a template load, MB/s
  trackbench play DIR --find-max    the most playback tracks the disk holds in real time
  trackbench watch /mnt/audio       the suite again, and whether this disk got slower

Results are kept in $XDG_DATA_HOME/trackbench/results.sqlite (Linux: ~/.local/share/trackbench; macOS: ~/Library/Application Support/trackbench; Windows: %APPDATA%\\trackbench); --db names another, or a PostgreSQL server; --no-store keeps nothing.

Exit status: 0 done; 1 an error (the message names it); 2 a bad flag; 130 interrupted; watch: 3 this disk got slower, 4 only faster.";

/// What `watch --help` says after its flags: the exit statuses and how to run it every week.
const WATCH_HELP: &str = "Each figure the run measures (tracks, voices, the template load, sequential and random rates) is compared with the median of the same disk's last runs at the same settings (--last, default 5); a change counts when it is at least 5% and 4 times the noise of the difference. `trackbench history` marks a step once two runs stand at the new level.

Exit status: 0 when nothing changed beyond its noise (or too few earlier runs to know it), 3 when a figure got worse, 4 when figures only got better, 130 when interrupted, 1 on an error.

Every week: see docs/watch.md (a systemd timer, launchd, Task Scheduler).";

/// The audio format of tracks without `--format`.
pub const DEFAULT_FORMAT: &str = "48k/24/mono";

/// The audio format of sample libraries without `--format`.
pub const SAMPLE_FORMAT: &str = "48k/24/stereo";

/// A measuring command, as its flags ask for it: what `commands::measure` runs.
pub struct Request<'a> {
    /// The command's name (`run`, `seq` …).
    pub name: &'static str,
    pub path: &'a Path,
    pub common: &'a Common,
    /// The classic workloads' I/O flags (the streaming ones choose theirs through the profile).
    pub io: Option<&'a IoArgs>,
    pub workloads: Vec<Box<dyn Workload>>,
    /// The format without `--format`: mono tracks, stereo samples.
    pub default_format: &'static str,
    /// `--fio-job`: where to write the measurements as fio jobs.
    pub fio_job: Option<&'a Path>,
    /// `watch`: the stored result judged against the median of this many earlier runs.
    pub watch_last: Option<usize>,
}

impl<'a> Request<'a> {
    /// A classic command's request (or `run`'s): its I/O flags, and fio's job file if asked.
    fn classic(
        name: &'static str,
        path: &'a Path,
        common: &'a Common,
        io: &'a IoArgs,
        workloads: Vec<Box<dyn Workload>>,
    ) -> Self {
        Request {
            name,
            path,
            common,
            io: Some(io),
            workloads,
            default_format: DEFAULT_FORMAT,
            fio_job: io.fio_job.as_deref(),
            watch_last: None,
        }
    }

    /// `run`'s request (`watch`'s, judged against its last `watch_last` runs): the suite, or the
    /// parts `--only` names.
    fn suite(name: &'static str, a: &'a RunArgs, watch_last: Option<usize>) -> Result<Self> {
        let format = a.common.settings(None)?.format;
        let workloads = trackbench::suite::only(format, &a.only)?;
        Ok(Request {
            watch_last,
            ..Request::classic(name, &a.path, &a.common, &a.io, workloads)
        })
    }

    /// A command whose workload chooses its own I/O (the streaming ones, the library's).
    fn own_io(
        name: &'static str,
        path: &'a Path,
        common: &'a Common,
        workload: Box<dyn Workload>,
        default_format: &'static str,
    ) -> Self {
        Request {
            name,
            path,
            common,
            io: None,
            workloads: vec![workload],
            default_format,
            fio_job: None,
            watch_last: None,
        }
    }
}

/// Where a request is built: by a rank of a studio (`ranks`: its rank and their number, which
/// give its part from `--roles`), or to check the flags alone (None: the command's own part),
/// and how a target's kind is learnt (only `seq` asks: it reads files and devices, and writes
/// only in a directory).
pub struct Place<'a> {
    pub ranks: Option<(u32, u32)>,
    pub kind_of: &'a dyn Fn(&Path) -> trackbench::Result<TargetKind>,
}

impl Command {
    /// The measurement this command asks for, its workloads built and validated from its flags;
    /// None for a command that measures nothing (clean, history, show, compare, report, ui).
    pub fn request(&self, place: &Place<'_>) -> Result<Option<Request<'_>>> {
        let format = |c: &Common| -> Result<Format> { Ok(c.settings(None)?.format) };
        // This rank's part: its `--roles` entry in a studio, the command's own otherwise.
        let part = |roles: Option<&str>, own| match place.ranks {
            Some((rank, size)) => streaming::role(roles, rank, size, own),
            None => Ok(own),
        };
        let one = |w: Box<dyn Workload>| vec![w];
        Ok(Some(match self {
            Command::Run(a) => Request::suite("run", a, None)?,
            Command::Watch(w) => Request::suite("watch", &w.run, Some(w.last as usize))?,
            Command::Seq(a) => {
                let kind = (place.kind_of)(&a.path)?;
                let w = a.workload(kind)?;
                if kind != TargetKind::Directory && w.mode != SeqMode::Read {
                    Err(Error::WriteRefused {
                        path: a.path.clone(),
                        kind: kind.describe(),
                        what: "seq --mode write/both".to_string(),
                    })?;
                }
                Request::classic("seq", &a.path, &a.common, &a.io, one(Box::new(w)))
            }
            Command::Seek(a) => {
                let w = one(Box::new(a.workload()?));
                Request::classic("seek", &a.path, &a.common, &a.io, w)
            }
            Command::Access(a) => {
                let w = one(Box::new(a.workload()?));
                Request::classic("access", &a.path, &a.common, &a.io, w)
            }
            Command::Mix(a) => {
                let w = one(Box::new(a.workload()?));
                Request::classic("mix", &a.path, &a.common, &a.io, w)
            }
            Command::Zones(a) => {
                let w = one(Box::new(a.workload()?));
                Request::classic("zones", &a.path, &a.common, &a.io, w)
            }
            Command::Sweep(a) => {
                let w = one(Box::new(a.workload()?));
                Request::classic("sweep", &a.path, &a.common, &a.io, w)
            }
            Command::Play(a) => {
                let kind = part(a.roles.as_deref(), StreamKind::Play)?;
                let (p, r) = role_counts(kind, a.tracks);
                let rec = RecordOpts::default();
                let w = a.stream.workload(kind, format(&a.common)?, p, r, rec)?;
                Request::own_io("play", &a.path, &a.common, Box::new(w), DEFAULT_FORMAT)
            }
            Command::Record(a) => {
                let kind = part(a.roles.as_deref(), StreamKind::Record)?;
                let (p, r) = role_counts(kind, a.tracks);
                let w = a.stream.workload(kind, format(&a.common)?, p, r, a.rec)?;
                Request::own_io("record", &a.path, &a.common, Box::new(w), DEFAULT_FORMAT)
            }
            Command::Hdr(a) => {
                let (p, r) = (a.play, a.record);
                let w = a
                    .stream
                    .workload(StreamKind::Hdr, format(&a.common)?, p, r, a.rec)?;
                Request::own_io("hdr", &a.path, &a.common, Box::new(w), DEFAULT_FORMAT)
            }
            Command::Sampler(a) => {
                let w = Box::new(a.workload()?);
                Request::own_io("sampler", &a.path, &a.common, w, SAMPLE_FORMAT)
            }
            Command::Load(a) => {
                let w = Box::new(a.workload()?);
                Request::own_io("load", &a.path, &a.common, w, SAMPLE_FORMAT)
            }
            Command::Bounce(a) => {
                let w = Box::new(a.workload()?);
                Request {
                    fio_job: a.fio_job.as_deref(),
                    ..Request::own_io("bounce", &a.path, &a.common, w, DEFAULT_FORMAT)
                }
            }
            Command::Clean(_)
            | Command::History(_)
            | Command::Show(_)
            | Command::Compare(_)
            | Command::Report(_)
            | Command::Ui(_)
            | Command::Completions(_)
            | Command::Man(_) => return Ok(None),
        }))
    }

    /// Whether the command measures (the others read what is stored or left behind, or serve
    /// the browser face).
    pub fn measures(&self) -> bool {
        !matches!(
            self,
            Command::Clean(_)
                | Command::History(_)
                | Command::Show(_)
                | Command::Compare(_)
                | Command::Report(_)
                | Command::Ui(_)
                | Command::Completions(_)
                | Command::Man(_)
        )
    }

    /// The flags with which the command asks for less disk space, for an out-of-space error.
    pub fn space_hint(&self) -> Option<&'static str> {
        match self {
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
            | Command::Watch(_)
            | Command::Clean(_)
            | Command::History(_)
            | Command::Show(_)
            | Command::Compare(_)
            | Command::Report(_)
            | Command::Ui(_)
            | Command::Completions(_)
            | Command::Man(_) => None,
        }
    }
}

/// Playback and record tracks of a rank playing or recording `tracks`.
fn role_counts(kind: StreamKind, tracks: u32) -> (u32, u32) {
    match kind {
        StreamKind::Record => (0, tracks),
        _ => (tracks, 0),
    }
}

/// Builds what `command` would measure, without measuring: everything the binary does with the
/// flags before it touches a target. Values the parser accepts but a workload refuses (a format,
/// a profile, a range) are refused here, in the same words: the browser face refuses bad input
/// with it before anything is written.
pub fn check(command: &Command) -> Result<()> {
    let place = Place {
        ranks: None,
        kind_of: &|_| Ok(TargetKind::Directory),
    };
    if let Some(r) = command.request(&place)? {
        r.common.settings_for(r.io, r.default_format)?;
    }
    Ok(())
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum BackendArg {
    /// pread/pwrite, one request at a time (queue depth 1)
    Sync,
    /// io_uring, up to --qd requests in flight (Linux)
    Uring,
    /// a pool of threads doing positional I/O, up to --qd requests in flight (every platform)
    Threads,
}

#[derive(Args, Debug, Clone)]
pub struct Common {
    /// Audio format for test media and track counts: rate/depth/channels, e.g. 48k/24/mono, 44.1k/16/stereo, 96k/32f/8 [default: 48k/24/mono; sampler, load: 48k/24/stereo]
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<String>,
    /// Repeat each measurement N times and report median, min, max and spread; a --find-max
    /// search runs N times, its answer their median with their range ("96 to 104 over 5
    /// searches"), which `compare` weighs differences against
    #[arg(long, visible_alias = "repeat", default_value_t = 1, value_name = "N")]
    pub runs: u32,
    /// Write the result document (JSON) to FILE ("-" for standard output, tables go to stderr)
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Keep the test files in PATH/trackbench-data for reuse by later runs
    #[arg(long)]
    pub keep: bool,
    /// No progress bars
    #[arg(long, short)]
    pub quiet: bool,
    /// Most memory a run may pin in request buffers and rings (e.g. 16G) [default: half of RAM]
    #[arg(long, value_name = "SIZE")]
    pub max_memory: Option<String>,
    #[command(flatten)]
    pub store: StoreArgs,
    /// Do not keep the result in the store
    #[arg(long)]
    pub no_store: bool,
    /// Write the HTML report (charts, findings, every setting) to FILE [run: a file in the current directory]
    #[arg(long, value_name = "FILE", conflicts_with = "no_report")]
    pub report: Option<PathBuf>,
    /// Write no HTML report (run writes one by default)
    #[arg(long)]
    pub no_report: bool,
}

/// Which result store to use.
#[derive(Args, Debug, Clone, Default)]
pub struct StoreArgs {
    /// Result store: an SQLite database file, or postgres://user:password@host/database for a
    /// server shared by a studio's machines [default: $XDG_DATA_HOME/trackbench/results.sqlite, or the platform data directory]
    #[arg(long, value_name = "PATH|URL")]
    pub db: Option<String>,
}

/// How the classic measurements issue I/O.
#[derive(Args, Debug, Clone)]
pub struct IoArgs {
    /// I/O backend [default: sync at --qd 1; above, uring on Linux and threads elsewhere]
    #[arg(long, value_enum)]
    pub backend: Option<BackendArg>,
    /// Requests in flight (queue depth); above 1 needs a parallel backend (uring or threads)
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub qd: u32,
    /// Measure through the page cache on purpose (default: O_DIRECT)
    #[arg(long)]
    pub cached: bool,
    /// Also write the same measurements as a fio job file, to cross-check with fio
    #[arg(long, value_name = "FILE")]
    pub fio_job: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Directory to measure
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// Only these parts of the suite, comma-separated: seq, realtime, sampler, load, bounce, seek, access, mix, zones, sweep
    #[arg(long, value_delimiter = ',', value_name = "PARTS")]
    pub only: Vec<String>,
    #[command(flatten)]
    pub io: IoArgs,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Args, Debug)]
pub struct WatchArgs {
    #[command(flatten)]
    pub run: RunArgs,
    /// Compare with the median of this many earlier runs of the same disk at the same settings
    #[arg(long, default_value_t = 5, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub last: u32,
}

/// Validated settings shared by all measuring commands.
pub struct Settings {
    pub format: Format,
    pub io: IoSettings,
    pub runs: u32,
    pub memory: trackbench::memory::MemoryBudget,
}

impl Common {
    /// The settings of a measuring command; `io` for the classic ones (the streaming commands
    /// choose their I/O through the butler and the profile).
    pub fn settings(&self, io: Option<&IoArgs>) -> Result<Settings> {
        self.settings_for(io, DEFAULT_FORMAT)
    }

    /// `settings` for a command whose streams are `default_format` unless `--format` says.
    pub fn settings_for(&self, io: Option<&IoArgs>, default_format: &str) -> Result<Settings> {
        let format = Format::parse(self.format.as_deref().unwrap_or(default_format))?;
        let io = match io {
            None => IoSettings::default(),
            Some(a) => {
                let backend = match a.backend {
                    Some(BackendArg::Sync) => BackendKind::Sync,
                    Some(BackendArg::Uring) => BackendKind::Uring,
                    Some(BackendArg::Threads) => BackendKind::Threads,
                    None if a.qd > 1 => BackendKind::PARALLEL,
                    None => BackendKind::Sync,
                };
                IoSettings {
                    backend,
                    queue_depth: a.qd,
                    cached: a.cached,
                }
            }
        };
        io.validate()?;
        if self.runs == 0 || self.runs > 1000 {
            bail!("invalid runs {}: 1 to 1000", self.runs);
        }
        let ram = trackbench::memory::usable_ram();
        let memory = match &self.max_memory {
            None => trackbench::memory::MemoryBudget::default_for(ram),
            Some(s) => trackbench::memory::MemoryBudget::chosen(parse_size("max-memory", s)?, ram)?,
        };
        Ok(Settings {
            format,
            io,
            runs: self.runs,
            memory,
        })
    }
}

const MIN_SIZE: u64 = 1 << 20;
const MAX_SIZE: u64 = 1 << 44;

pub(crate) fn size(what: &'static str, s: &str) -> Result<u64> {
    let v = parse_size(what, s)?;
    if !(MIN_SIZE..=MAX_SIZE).contains(&v) {
        bail!("invalid {what} {s:?}: from 1M to 16T");
    }
    Ok(v)
}

pub(crate) fn block(what: &'static str, s: &str) -> Result<u32> {
    Ok(check_block(what, parse_size(what, s)?)?)
}

pub(crate) fn duration(what: &'static str, s: &str) -> Result<Duration> {
    // A refusal echoes the value as typed, not converted ("1e9", not "31years 8months …").
    check_duration(what, parse_duration(what, s)?)
        .map_err(|e| match e {
            trackbench::Error::Invalid(bad) => trackbench::Error::Invalid(Invalid {
                value: s.to_string(),
                ..bad
            }),
            e => e,
        })
        .map_err(Into::into)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Everything `main` does with the flags before it touches a target.
    fn build(args: &[String]) -> Result<()> {
        check(&Cli::try_parse_from(args)?.command)
    }

    /// Every flag that takes a value, per command.
    fn flags(cmd: &str) -> &'static [&'static str] {
        match cmd {
            "run" => &["--format", "--runs", "--max-memory", "--qd"],
            "seq" => &[
                "--block",
                "--size",
                "--qd",
                "--runs",
                "--max-memory",
                "--format",
            ],
            "seek" => &["--block", "--duration", "--size", "--rpm", "--qd", "--runs"],
            "access" => &["--block", "--duration", "--size", "--qd", "--runs"],
            "mix" => &[
                "--seq-block",
                "--random-block",
                "--read-pct",
                "--duration",
                "--size",
                "--qd",
            ],
            "zones" => &["--points", "--block", "--per-point", "--duration", "--size"],
            "sweep" => &[
                "--files",
                "--blocks",
                "--duration",
                "--file-size",
                "--buffer",
            ],
            "play" | "record" => &[
                "--tracks",
                "--buffer",
                "--chunk",
                "--period",
                "--butler",
                "--duration",
                "--margin",
                "--device-model",
                "--max-tracks",
                "--compare-parallel",
                "--profile",
                "--max-memory",
                "--format",
            ],
            "sampler" => &[
                "--voices",
                "--notes-per-s",
                "--files",
                "--lengths",
                "--preload",
                "--butler",
                "--period",
                "--duration",
                "--margin",
                "--device-model",
                "--max-voices",
                "--profile",
                "--format",
            ],
            "load" => &["--files", "--lengths", "--preload", "--threads", "--format"],
            "bounce" => &["--tracks", "--duration", "--format"],
            "hdr" => &[
                "--play",
                "--record",
                "--buffer",
                "--chunk",
                "--period",
                "--butler",
                "--duration",
                "--margin",
                "--device-model",
                "--format",
            ],
            _ => &[],
        }
    }

    /// Values at the edges of every kind of number the flags take, and junk.
    fn value() -> impl Strategy<Value = String> {
        prop_oneof![
            prop::sample::select(vec![
                "0",
                "1",
                "-1",
                "2",
                "4095",
                "4096",
                "65536",
                "65537",
                "4294967295",
                "4294967296",
                "18446744073709551615",
                "18446744073709551616",
                "1e9",
                "1e400",
                "NaN",
                "inf",
                "-0",
                "",
                " ",
                "0B",
                "1B",
                "4K",
                "64M",
                "64M1",
                "16T",
                "17T",
                "99999999999T",
                "0s",
                "1ns",
                "24h",
                "25h",
                "1e-9s",
                "0%",
                "100%",
                "99%",
                "-5%",
                "parallel:0",
                "parallel:1",
                "parallel:4096",
                "parallel:99999999999",
                "serial",
                "bw=0",
                "bw=1,iops=1,lat=1h",
                "bw=20M,stall=1s+0s",
                "48k/24/mono",
                "0k/24/mono",
                "48k/0/mono",
                "48k/24/0",
                "4294967296k/24/mono",
                "ardour-medium",
            ])
            .prop_map(String::from),
            "[ -~]{0,16}",
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(10_000))]
        /// No flag value, alone or combined, makes the parsers or the settings panic: every
        /// bad one is an error naming it.
        #[test]
        fn no_flag_value_panics(
            cmd in prop::sample::select(vec![
                "run", "seq", "seek", "access", "mix", "zones", "sweep", "play", "record", "hdr",
                "sampler", "load", "bounce",
            ]),
            picks in prop::collection::vec((0usize..16, value()), 1..5),
            find_max in any::<bool>(),
        ) {
            let fl = flags(cmd);
            let mut args = vec!["trackbench".to_string(), cmd.to_string(), "/tmp".to_string()];
            for (i, v) in picks {
                args.push(fl[i % fl.len()].to_string());
                args.push(v);
            }
            if find_max && matches!(cmd, "play" | "record" | "hdr" | "sampler") {
                args.push("--find-max".into());
            }
            if let Err(e) = build(&args) {
                let msg = format!("{e:#}");
                prop_assert!(!msg.is_empty());
            }
        }
    }

    #[test]
    fn edges_of_every_numeric_flag_are_refused_with_the_flag_named() {
        for (cmd, flag, v, names) in [
            ("play", "--chunk", "0", "chunk"),
            ("play", "--tracks", "0", "tracks"),
            ("play", "--period", "0", "period"),
            ("play", "--period", "65537", "period"),
            ("play", "--buffer", "0s", "buffer"),
            ("play", "--margin", "100%", "margin"),
            ("play", "--max-tracks", "0", "max-tracks"),
            ("record", "--chunk", "64M1", "chunk"),
            ("hdr", "--butler", "parallel:0", "butler"),
            ("hdr", "--play", "4294967295", "tracks"),
            ("seq", "--qd", "0", "queue depth"),
            ("seq", "--qd", "4097", "queue depth"),
            ("seq", "--block", "0", "block"),
            ("seq", "--size", "17T", "size"),
            ("seq", "--runs", "0", "runs"),
            ("seq", "--max-memory", "0", "max-memory"),
            ("sweep", "--files", "0", "files"),
            ("zones", "--points", "0", "points"),
            ("mix", "--read-pct", "101", "read"),
            ("seek", "--duration", "25h", "duration"),
        ] {
            let args: Vec<String> = ["trackbench", cmd, "/tmp", flag, v]
                .iter()
                .map(|s| s.to_string())
                .collect();
            let e = build(&args).expect_err(&format!("{cmd} {flag} {v} accepted"));
            let msg = format!("{e:#}");
            assert!(msg.contains(names), "{cmd} {flag} {v}: {msg}");
        }
    }
}
