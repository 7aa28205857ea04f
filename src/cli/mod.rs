//! Command-line arguments, and their conversion from raw flags into validated workload settings.

pub mod progress;

use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
use std::time::Duration;
use trackbench::audio::Format;
use trackbench::engine::virtual_time::DeviceModel;
use trackbench::engine::{ButlerMode, Policy, StreamSpec};
use trackbench::io::{BackendKind, IoSettings};
use trackbench::units::{Invalid, parse_duration, parse_size};
use trackbench::workloads::multitrack::{StreamKind, Streaming};
use trackbench::workloads::{
    access::Access,
    check_block, check_duration,
    mix::Mix,
    seek::Seek,
    seq::{Seq, SeqMode},
    sweep::{self, Sweep},
    zones::Zones,
};

#[derive(Parser, Debug)]
#[command(
    name = "trackbench",
    version,
    about = "Storage benchmark for audio: how many tracks and voices a disk really streams",
    long_about = "trackbench measures storage the way audio work needs it measured: tracks and voices, \
with the megabytes, IOPS and latencies underneath.\n\nIt writes only inside PATH/trackbench-data (locked, \
listed in a manifest, removed after the run unless --keep) and never writes to block devices or files it \
did not create. Ctrl-C stops a run within a second and cleans up."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// The main job: the standard suite on PATH (default: the current directory), real-time track counts first, then the classic tests (3 to 4 minutes: each real-time probe lasts about 15 s whatever the disk).
    Run(RunArgs),
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
}

/// Builds what `command` would measure, without measuring: everything `main` does with the
/// flags before it touches a target. Values the parser accepts but a workload refuses (a format,
/// a profile, a range) are refused here, in the same words: the browser face refuses bad input
/// with it before anything is written.
pub fn check(command: &Command) -> Result<()> {
    let stream = |s: &StreamOpts, c: &Common, kind, p, r, rec| -> Result<()> {
        let format = c.settings(None)?.format;
        s.workload(kind, format, p, r, rec)?;
        Ok(())
    };
    match command {
        Command::Run(a) => {
            let format = a.common.settings(Some(&a.io))?.format;
            trackbench::suite::standard(format)?;
        }
        Command::Seq(a) => {
            a.common.settings(Some(&a.io))?;
            a.workload(trackbench::target::TargetKind::Directory)?;
        }
        Command::Seek(a) => {
            a.common.settings(Some(&a.io))?;
            a.workload()?;
        }
        Command::Access(a) => {
            a.common.settings(Some(&a.io))?;
            a.workload()?;
        }
        Command::Mix(a) => {
            a.common.settings(Some(&a.io))?;
            a.workload()?;
        }
        Command::Zones(a) => {
            a.common.settings(Some(&a.io))?;
            a.workload()?;
        }
        Command::Sweep(a) => {
            a.common.settings(Some(&a.io))?;
            a.workload()?;
        }
        Command::Play(a) => stream(
            &a.stream,
            &a.common,
            StreamKind::Play,
            a.tracks,
            0,
            RecordOpts::default(),
        )?,
        Command::Record(a) => stream(&a.stream, &a.common, StreamKind::Record, 0, a.tracks, a.rec)?,
        Command::Hdr(a) => stream(
            &a.stream,
            &a.common,
            StreamKind::Hdr,
            a.play,
            a.record,
            a.rec,
        )?,
        Command::Sampler(a) => {
            a.workload()?;
        }
        Command::Load(a) => {
            a.workload()?;
        }
        Command::Bounce(a) => {
            a.workload()?;
        }
        Command::Clean(_)
        | Command::History(_)
        | Command::Show(_)
        | Command::Compare(_)
        | Command::Report(_)
        | Command::Ui(_) => {}
    }
    Ok(())
}

#[derive(Args, Debug)]
pub struct UiArgs {
    /// Port on 127.0.0.1 (0: a free one)
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Do not open the browser; print the address only
    #[arg(long)]
    pub no_open: bool,
    #[command(flatten)]
    pub store: StoreArgs,
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
    /// Repeat each measurement N times and report median, min, max and spread
    #[arg(long, default_value_t = 1, value_name = "N")]
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
    #[command(flatten)]
    pub io: IoArgs,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Args, Debug)]
pub struct SeqArgs {
    /// Directory (read and write), or a file or block device (read only)
    pub path: PathBuf,
    /// Request size
    #[arg(long, default_value = "1M")]
    pub block: String,
    /// Bytes to write and read; large enough to get past device caches
    #[arg(long, default_value = "1G")]
    pub size: String,
    /// Directions to measure [default: both on a directory, read elsewhere]
    #[arg(long, value_enum)]
    pub mode: Option<ModeArg>,
    #[command(flatten)]
    pub io: IoArgs,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    Read,
    Write,
    Both,
}

#[derive(Args, Debug)]
pub struct SeekArgs {
    /// Directory (a test file is laid out), file or block device (read-only)
    pub path: PathBuf,
    /// Read size: 4K, or 512 as seeker used
    #[arg(long, default_value = "4K")]
    pub block: String,
    /// How long to measure
    #[arg(long, default_value = "10s")]
    pub duration: String,
    /// Size of the test file on a directory
    #[arg(long, default_value = "1G")]
    pub size: String,
    /// Spindle speed of a disk: shows the rotational share (30000/rpm ms) and the implied seek time
    #[arg(long)]
    pub rpm: Option<u32>,
    #[command(flatten)]
    pub io: IoArgs,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Args, Debug)]
pub struct AccessArgs {
    pub path: PathBuf,
    /// Transfer size
    #[arg(long, default_value = "64K")]
    pub block: String,
    /// Time for each of the three patterns
    #[arg(long, default_value = "3s")]
    pub duration: String,
    /// Size of the test file on a directory
    #[arg(long, default_value = "1G")]
    pub size: String,
    #[command(flatten)]
    pub io: IoArgs,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Args, Debug)]
pub struct MixArgs {
    /// Directory to measure (mix writes)
    pub path: PathBuf,
    #[arg(long, default_value = "32K")]
    pub seq_block: String,
    #[arg(long, default_value = "8K")]
    pub random_block: String,
    /// Share of reads in the random phase, in percent
    #[arg(long, default_value_t = 70)]
    pub read_pct: u32,
    /// Time for each phase
    #[arg(long, default_value = "5s")]
    pub duration: String,
    /// Size of the test file
    #[arg(long, default_value = "1G")]
    pub size: String,
    #[command(flatten)]
    pub io: IoArgs,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Args, Debug)]
pub struct ZonesArgs {
    pub path: PathBuf,
    /// Number of evenly spaced points
    #[arg(long, default_value_t = 16)]
    pub points: u32,
    #[arg(long, default_value = "1M")]
    pub block: String,
    /// Most bytes read at each point
    #[arg(long, default_value = "64M")]
    pub per_point: String,
    /// Most time spent at each point
    #[arg(long, default_value = "1s")]
    pub duration: String,
    /// Size of the test file on a directory
    #[arg(long, default_value = "1G")]
    pub size: String,
    #[command(flatten)]
    pub io: IoArgs,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Args, Debug)]
pub struct SweepArgs {
    /// Directory to measure
    pub path: PathBuf,
    /// Number of files read round robin
    #[arg(long, default_value_t = 8)]
    pub files: u32,
    /// Block sizes, comma separated
    #[arg(
        long,
        default_value = "4K,8K,16K,32K,64K,128K,256K,512K,1M",
        value_delimiter = ','
    )]
    pub blocks: Vec<String>,
    /// Time at each block size
    #[arg(long, default_value = "2s")]
    pub duration: String,
    /// Size of each file
    #[arg(long, default_value = "128M")]
    pub file_size: String,
    /// Seconds of audio each track's buffer holds, for the RAM columns
    #[arg(long, default_value = "2s")]
    pub buffer: String,
    #[command(flatten)]
    pub io: IoArgs,
    #[command(flatten)]
    pub common: Common,
}

/// Flags every streaming command shares.
#[derive(Args, Debug, Clone)]
pub struct StreamOpts {
    /// How a real program streams: trackbench (default engine), ardour-small, ardour-medium,
    /// ardour-large, protools, cubase-vst (sources in the result document and DESIGN.md)
    #[arg(long, default_value = "trackbench")]
    pub profile: String,
    /// Seconds of audio each ring holds [default: the profile's]
    #[arg(long, value_name = "DURATION")]
    pub buffer: Option<String>,
    /// Ring slot and I/O size [default: the profile's]
    #[arg(long, value_name = "SIZE")]
    pub chunk: Option<String>,
    /// Frames per audio period (the tick) [default: 256, or the program's own for its profile:
    /// 1024 for Ardour's]
    #[arg(long, value_name = "FRAMES")]
    pub period: Option<u32>,
    /// serial (one I/O at a time, like most DAWs) or parallel:QD (QD in flight: io_uring on
    /// Linux, a pool of I/O threads elsewhere)
    #[arg(long, default_value = "serial")]
    pub butler: String,
    /// Length of each run [default: 10 s, or longer where the rings need it; with --find-max, as long as a confirmation needs to tell: one ring plus four refill cycles (simulated: 120 s or 40 rings); a real playback search's other probes, started in the steady state, run shorter by the first ring less a warm-up of two refill cycles and at least 3.5 s, and end at the rule's shortest run where the butler was idle 20% or more of it and of its later half (a pass) or under 0.5% of it (a failure)]
    #[arg(long)]
    pub duration: Option<String>,
    /// A ring below this share of its capacity makes the run marginal [default: 20%; 0 for a
    /// program's profile (Ardour's): the program drops out only when a ring runs dry]
    #[arg(long)]
    pub margin: Option<String>,
    /// Spread the tracks' starts over one chunk instead of starting them in phase
    #[arg(long)]
    pub stagger: bool,
    /// Run in virtual time against a device model instead of the disk: hdd-7200, hdd-5400,
    /// sata-ssd, nvme, or bw=SIZE,iops=N,lat=TIME,rpm=N,seek=TIME,stall=AT+LEN; shared storage
    /// serving many workstations: nas:bw=SIZE,link=SIZE|10Gbit,clients=N
    #[arg(long, value_name = "MODEL")]
    pub device_model: Option<String>,
    /// Search the largest track count that passes (exponential steps, bisection to 2%, confirmation)
    #[arg(long)]
    pub find_max: bool,
    /// With --find-max and a --profile, also search trackbench's default engine, side by side
    #[arg(long)]
    pub compare_default: bool,
    /// With --find-max and a serial butler, also search what a parallel butler (QD in flight:
    /// io_uring on Linux, I/O threads elsewhere; 8 if no QD is given) holds on the same target; about doubles the search time
    #[arg(long, value_name = "QD", num_args = 0..=1, default_missing_value = "8")]
    pub compare_parallel: Option<u32>,
    /// With --find-max, try at most N tracks in all (the answer says when it stopped there)
    #[arg(long, value_name = "N")]
    pub max_tracks: Option<u32>,
}

#[derive(Args, Debug)]
pub struct PlayArgs {
    /// Directory to measure (not needed with --device-model)
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// Playback tracks (one mono file each at the default format)
    #[arg(long, default_value_t = 32)]
    pub tracks: u32,
    /// A studio run (under mpirun): which workstations play and which record, in rank order,
    /// e.g. play:3,record:1; each plays or records --tracks (with --find-max, the searched count)
    #[arg(long, value_name = "ROLES")]
    pub roles: Option<String>,
    #[command(flatten)]
    pub stream: StreamOpts,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Args, Debug)]
pub struct RecordArgs {
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// Record tracks (one file each)
    #[arg(long, default_value_t = 16)]
    pub tracks: u32,
    /// A studio run (under mpirun): which workstations record and which play, in rank order,
    /// e.g. record:1,play:3; each records or plays --tracks (with --find-max, the searched count)
    #[arg(long, value_name = "ROLES")]
    pub roles: Option<String>,
    #[command(flatten)]
    pub rec: RecordOpts,
    #[command(flatten)]
    pub stream: StreamOpts,
    #[command(flatten)]
    pub common: Common,
}

/// How record tracks write: shared by `record` and `hdr`.
#[derive(Args, Debug, Clone, Copy, Default)]
pub struct RecordOpts {
    /// Preallocate record files instead of letting them grow as written
    #[arg(long)]
    pub prealloc: bool,
    /// Read the recorded files back and check every block
    #[arg(long)]
    pub verify: bool,
}

#[derive(Args, Debug)]
pub struct HdrArgs {
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// Playback tracks
    #[arg(long, default_value_t = 16)]
    pub play: u32,
    /// Record tracks
    #[arg(long, default_value_t = 16)]
    pub record: u32,
    #[command(flatten)]
    pub rec: RecordOpts,
    #[command(flatten)]
    pub stream: StreamOpts,
    #[command(flatten)]
    pub common: Common,
}

impl StreamOpts {
    /// Builds the workload from validated flags.
    #[allow(clippy::too_many_arguments)]
    pub fn workload(
        &self,
        kind: StreamKind,
        format: Format,
        play: u32,
        record: u32,
        RecordOpts { prealloc, verify }: RecordOpts,
    ) -> Result<Streaming> {
        let mut policy = Policy::named(&self.profile, &format)?;
        if let Some(c) = &self.chunk {
            let c = parse_size("chunk", c)?;
            policy = policy.with_chunk(c);
        }
        if let Some(b) = &self.buffer {
            policy = policy.with_buffer(duration("buffer", b)?.as_secs_f64());
        }
        let margin = match &self.margin {
            Some(m) => parse_pct("margin", m)?,
            None => policy.margin.unwrap_or(trackbench::engine::DEFAULT_MARGIN),
        };
        let period = self
            .period
            .or(policy.period_frames)
            .unwrap_or(trackbench::engine::DEFAULT_PERIOD);
        let dur = self
            .duration
            .as_deref()
            .map(|d| duration("duration", d))
            .transpose()?;
        let butler = ButlerMode::parse(&self.butler)?;
        let device = self
            .device_model
            .as_deref()
            .map(DeviceModel::parse)
            .transpose()?;
        if let Some(m) = self.max_tracks {
            if !(1..=20_000).contains(&m) {
                bail!("invalid max-tracks {m}: 1 to 20000");
            }
            if !self.find_max {
                bail!(
                    "--max-tracks limits a --find-max search: add --find-max, or use --tracks for one run"
                );
            }
        }
        if self.compare_default && !self.find_max {
            bail!("--compare-default compares --find-max answers: add --find-max");
        }
        if let Some(q) = self.compare_parallel {
            if !(2..=1024).contains(&q) {
                bail!("invalid compare-parallel {q}: a queue depth from 2 to 1024");
            }
            if !self.find_max || butler != ButlerMode::Serial || kind == StreamKind::Hdr {
                bail!(
                    "--compare-parallel compares a serial butler's --find-max answer for play or record: add --find-max and keep --butler serial"
                );
            }
        }
        let mut spec = StreamSpec {
            format,
            play_tracks: play,
            record_tracks: record,
            period_frames: period,
            duration_ns: dur.map_or(1_000_000_000, |d| d.as_nanos() as u64),
            margin,
            policy,
            butler,
            stagger: self.stagger,
            prealloc,
            locate_queue_depth: None,
            stop_early: false,
            steady_start: false,
            end_early: false,
            locate_from_content: false,
            start_at_first_refill: false,
        };
        spec.validate()?;
        let planned = trackbench::workloads::multitrack::planned_duration_s(
            &spec,
            self.find_max,
            device.is_some(),
        );
        match dur {
            None => spec.duration_ns = (planned * 1e9) as u64,
            // A probe too short to tell could never pass: the search would answer 0.
            Some(d)
                if self.find_max
                    && d.as_secs_f64() < trackbench::verdict::windows::min_run_s(&spec) =>
            {
                bail!(
                    "invalid duration {:?} for --find-max: with {} rings ({:.2} s) each probe needs at least {:.1} s (one ring plus {}) before it can pass; leave --duration out to let the search plan it ({:.1} s), or use smaller rings (--buffer, --chunk)",
                    self.duration.as_deref().unwrap_or_default(),
                    trackbench::units::fmt_size(spec.ring_bytes()),
                    spec.ring_s(),
                    trackbench::verdict::windows::min_run_s(&spec),
                    trackbench::verdict::windows::steady_words(),
                    planned
                )
            }
            Some(_) => {}
        }
        spec.validate()?;
        Ok(Streaming {
            kind,
            spec,
            device,
            find_max: self.find_max,
            compare_default: self.compare_default,
            compare_parallel: self.compare_parallel,
            verify,
            buffer_asked: self.buffer.is_some(),
            max_tracks: self.max_tracks,
            main_limited_by: None,
            hdr_record: None,
        })
    }
}

/// A share written `20%` or `0.2`.
fn parse_pct(what: &'static str, s: &str) -> Result<f64> {
    let t = s.trim();
    let v = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|x| x / 100.0),
        None => t.parse::<f64>(),
    };
    match v {
        Ok(x) if (0.0..1.0).contains(&x) => Ok(x),
        _ => bail!("invalid {what} {s:?}: a share from 0% to 99% (e.g. 20% or 0.2)"),
    }
}

#[derive(Args, Debug)]
pub struct SamplerArgs {
    /// Directory to measure (not needed with --device-model)
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// Voices sounding at once (a single run; --find-max searches them)
    #[arg(long, default_value_t = 64)]
    pub voices: u32,
    /// Note-ons per second on top of the notes that end, each stealing the oldest voice
    #[arg(long, default_value_t = 100.0, value_name = "RATE")]
    pub notes_per_s: f64,
    /// Sample files in the library
    #[arg(long, default_value_t = 2000, value_name = "F")]
    pub files: u32,
    /// Sample lengths, drawn between these (log-uniformly)
    #[arg(long, default_value = "1s..10s", value_name = "MIN..MAX")]
    pub lengths: String,
    /// How a real sampler streams: trackbench (default engine), kontakt, linuxsampler, sfizz,
    /// spectrasonics (sources in the result document)
    #[arg(long, default_value = "trackbench")]
    pub profile: String,
    /// Bytes of each sample held in RAM [default: the profile's]
    #[arg(long, value_name = "SIZE")]
    pub preload: Option<String>,
    /// serial (one read at a time) or parallel:QD [default: the profile's]
    #[arg(long)]
    pub butler: Option<String>,
    /// Frames per audio period (the tick)
    #[arg(long, default_value_t = trackbench::engine::DEFAULT_PERIOD, value_name = "FRAMES")]
    pub period: u32,
    /// Length of each run [default: 15 s, or as long as the rings need; with --find-max, one ring and 5 s of steady running (simulated: a minute)]
    #[arg(long)]
    pub duration: Option<String>,
    /// A first read landing with less than this share of its preload left, or a ring below it, makes the run marginal
    #[arg(long, default_value = "20%")]
    pub margin: String,
    /// Run in virtual time against a device model (see play --help)
    #[arg(long, value_name = "MODEL")]
    pub device_model: Option<String>,
    /// Search the most voices with no dropout at the note rate
    #[arg(long)]
    pub find_max: bool,
    /// With --find-max, try at most N voices
    #[arg(long, value_name = "N")]
    pub max_voices: Option<u32>,
    /// Seed of the library's lengths, the notes and their samples
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[command(flatten)]
    pub common: Common,
}

impl SamplerArgs {
    pub fn workload(&self) -> Result<trackbench::workloads::sampler::Sampler> {
        use trackbench::engine::profile::SamplerPolicy;
        let format = self.common.settings_for(None, "48k/24/stereo")?.format;
        let mut profile = SamplerPolicy::named(&self.profile, &format)?;
        if let Some(p) = &self.preload {
            let bytes = parse_size("preload", p)?;
            if !(4096..=64 << 20).contains(&bytes) {
                bail!("invalid preload {p:?}: from 4K to 64M");
            }
            profile.preload_bytes = bytes.div_ceil(4096) * 4096;
            profile.preload_stated = p.clone();
        }
        let butler = match &self.butler {
            Some(b) => ButlerMode::parse(b)?,
            None => profile.butler,
        };
        if !(1..=20_000).contains(&self.voices) {
            bail!("invalid voices {}: 1 to 20000", self.voices);
        }
        files(self.files)?;
        if !(self.notes_per_s.is_finite() && (0.0..=100_000.0).contains(&self.notes_per_s)) {
            bail!(
                "invalid notes-per-s {}: 0 to 100000 note-ons a second",
                self.notes_per_s
            );
        }
        let (min_s, max_s) = lengths(&self.lengths)?;
        if let Some(m) = self.max_voices {
            if !(1..=20_000).contains(&m) {
                bail!("invalid max-voices {m}: 1 to 20000");
            }
            if !self.find_max {
                bail!("--max-voices limits a --find-max search: add --find-max");
            }
        }
        let device = self
            .device_model
            .as_deref()
            .map(DeviceModel::parse)
            .transpose()?;
        let w = trackbench::workloads::sampler::Sampler {
            format,
            library: trackbench::workloads::sampler::LibrarySpec {
                files: self.files,
                min_s,
                max_s,
                seed: self.seed,
            },
            voices: self.voices,
            notes_per_s: self.notes_per_s,
            profile,
            butler,
            period_frames: self.period,
            duration: self
                .duration
                .as_deref()
                .map(|d| duration("duration", d))
                .transpose()?,
            margin: parse_pct("margin", &self.margin)?,
            device,
            find_max: self.find_max,
            max_voices: self.max_voices,
            limited_by: None,
        };
        let spec = w.spec(w.voices, 1_000_000_000, 4096);
        spec.validate()?;
        if let Some(d) = w.duration
            && d.as_secs_f64() < trackbench::verdict::voices::min_run_s(&spec)
            && w.find_max
        {
            bail!(
                "invalid duration {:?} for --find-max: each probe needs at least {:.1} s (one ring and 5 s of steady running) before it can pass; leave --duration out to let the search plan it",
                self.duration.as_deref().unwrap_or_default(),
                trackbench::verdict::voices::min_run_s(&spec)
            );
        }
        Ok(w)
    }
}

#[derive(Args, Debug)]
pub struct LoadArgs {
    /// Directory to measure (the library is laid out there)
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// Sample files in the library
    #[arg(long, default_value_t = 2000, value_name = "F")]
    pub files: u32,
    /// Sample lengths, drawn between these (log-uniformly)
    #[arg(long, default_value = "1s..10s", value_name = "MIN..MAX")]
    pub lengths: String,
    /// Bytes of each sample read after its header
    #[arg(long, default_value = "60K", value_name = "SIZE")]
    pub preload: String,
    /// Loader threads of the parallel passes
    #[arg(long, default_value_t = 8, value_name = "Q")]
    pub threads: u32,
    /// Before each cold pass, drop the whole page, dentry and inode cache (root only; affects the whole machine)
    #[arg(long)]
    pub drop_caches: bool,
    /// Seed of the library's lengths (the sampler's, so the two share files)
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[command(flatten)]
    pub common: Common,
}

/// `--lengths MIN..MAX` as seconds.
fn lengths(s: &str) -> Result<(f64, f64)> {
    let (min_s, max_s) = match s.split_once("..") {
        Some((a, b)) => (
            duration("lengths", a)?.as_secs_f64(),
            duration("lengths", b)?.as_secs_f64(),
        ),
        None => bail!("invalid lengths {s:?}: MIN..MAX, e.g. 1s..10s"),
    };
    if min_s > max_s || max_s > 600.0 {
        bail!("invalid lengths {s:?}: MIN..MAX with MIN at most MAX and MAX at most 10m");
    }
    Ok((min_s, max_s))
}

fn files(n: u32) -> Result<u32> {
    if !(1..=100_000).contains(&n) {
        bail!("invalid files {n}: 1 to 100000");
    }
    Ok(n)
}

impl LoadArgs {
    pub fn workload(&self) -> Result<trackbench::workloads::load::Load> {
        let format = self.common.settings_for(None, "48k/24/stereo")?.format;
        let (min_s, max_s) = lengths(&self.lengths)?;
        let preload = parse_size("preload", &self.preload)?;
        if !(4096..=64 << 20).contains(&preload) {
            bail!("invalid preload {:?}: from 4K to 64M", self.preload);
        }
        if !(1..=1024).contains(&self.threads) {
            bail!("invalid threads {}: 1 to 1024", self.threads);
        }
        if self.drop_caches && !cfg!(target_os = "linux") {
            bail!(
                "--drop-caches is Linux's (it writes /proc/sys/vm/drop_caches); on macOS run `sudo purge` before the load instead"
            );
        }
        if self.drop_caches && !trackbench::platform::is_root() {
            bail!(
                "--drop-caches needs root (it writes /proc/sys/vm/drop_caches); leave it out to drop each file's pages only"
            );
        }
        Ok(trackbench::workloads::load::Load {
            format,
            library: trackbench::workloads::sampler::LibrarySpec {
                files: files(self.files)?,
                min_s,
                max_s,
                seed: self.seed,
            },
            preload_bytes: preload.div_ceil(4096) * 4096,
            threads: self.threads,
            drop_caches: self.drop_caches,
        })
    }
}

#[derive(Args, Debug)]
pub struct BounceArgs {
    /// Directory to measure (the export is written there)
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// Tracks exported
    #[arg(long, default_value_t = 500)]
    pub tracks: u32,
    /// Length of each track
    #[arg(long, default_value = "30s")]
    pub duration: String,
    /// Also write stage one's write pattern as a fio job file, to cross-check with fio
    #[arg(long, value_name = "FILE")]
    pub fio_job: Option<PathBuf>,
    #[command(flatten)]
    pub common: Common,
}

impl BounceArgs {
    pub fn workload(&self) -> Result<trackbench::workloads::bounce::Bounce> {
        let format = self.common.settings(None)?.format;
        if !(1..=100_000).contains(&self.tracks) {
            bail!("invalid tracks {}: 1 to 100000", self.tracks);
        }
        let d = duration("duration", &self.duration)?;
        if d.as_secs_f64() * f64::from(format.rate_hz) < 1.0 {
            bail!("invalid duration {:?}: at least one frame", self.duration);
        }
        Ok(trackbench::workloads::bounce::Bounce {
            format,
            tracks: self.tracks,
            duration: d,
        })
    }
}

#[derive(Args, Debug)]
pub struct CleanArgs {
    pub path: PathBuf,
    /// Internal: the lock descriptor an interrupted run hands over with its files
    #[arg(long, hide = true, value_name = "FD")]
    pub inherited_lock: Option<i32>,
    /// Internal: with --inherited-lock, the studio rank whose data directory it is
    #[arg(long, hide = true, value_name = "RANK", requires = "inherited_lock")]
    pub rank: Option<u32>,
    /// Internal: with --inherited-lock, a pipe's read end whose writer is the interrupted run:
    /// the files are removed once it reads end of file (that run has exited)
    #[arg(long, hide = true, value_name = "FD", requires = "inherited_lock")]
    pub after_exit: Option<i32>,
}

#[derive(Args, Debug)]
pub struct HistoryArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    /// Only results whose target path contains this text
    #[arg(long, value_name = "TEXT")]
    pub target: Option<String>,
    /// Only results on a device whose name or model contains this text
    #[arg(long, value_name = "TEXT")]
    pub device: Option<String>,
    /// Only results that ran this workload (seq, play, realtime, …)
    #[arg(long, value_name = "NAME")]
    pub workload: Option<String>,
    /// Only results started on or after this date (2026-11-23) or time (RFC 3339)
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,
    /// At most N results (0: all)
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub limit: u32,
}

#[derive(Args, Debug)]
pub struct ShowArgs {
    /// The result's id (trackbench history lists them)
    pub id: i64,
    #[command(flatten)]
    pub store: StoreArgs,
    /// The result document as JSON instead of tables
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Two or more results: ids from trackbench history, or result documents (--json files)
    #[arg(required = true, num_args = 2.., value_name = "RESULT")]
    pub results: Vec<String>,
    #[command(flatten)]
    pub store: StoreArgs,
    /// Compare even where the settings differ (format, ring, chunk or block size, profile, period)
    #[arg(long)]
    pub unfair: bool,
    /// Also write the comparison as an HTML page with charts
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// The result: an id from trackbench history, or a result document (--json file)
    #[arg(value_name = "RESULT")]
    pub result: String,
    /// Where to write it ("-" for standard output) [default: trackbench-report-RESULT.html in
    /// the current directory for HTML; standard output for the other formats]
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// The format: html, markdown (text for a forum post), terminal or json
    #[arg(long, value_name = "FORMAT", default_value = "html")]
    pub to: String,
    /// Markdown instead of HTML (--to markdown)
    #[arg(long, conflicts_with = "to")]
    pub markdown: bool,
    #[command(flatten)]
    pub store: StoreArgs,
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
        self.settings_for(io, "48k/24/mono")
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

fn size(what: &'static str, s: &str) -> Result<u64> {
    let v = parse_size(what, s)?;
    if !(MIN_SIZE..=MAX_SIZE).contains(&v) {
        bail!("invalid {what} {s:?}: from 1M to 16T");
    }
    Ok(v)
}

fn block(what: &'static str, s: &str) -> Result<u32> {
    Ok(check_block(what, parse_size(what, s)?)?)
}

fn duration(what: &'static str, s: &str) -> Result<Duration> {
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

impl SeqArgs {
    pub fn workload(&self, kind: trackbench::target::TargetKind) -> Result<Seq> {
        Ok(Seq {
            block: block("block size", &self.block)?,
            size: size("size", &self.size)?,
            mode: match self.mode {
                None => trackbench::workloads::seq::default_mode(kind),
                Some(ModeArg::Read) => SeqMode::Read,
                Some(ModeArg::Write) => SeqMode::Write,
                Some(ModeArg::Both) => SeqMode::Both,
            },
        })
    }
}

impl SeekArgs {
    pub fn workload(&self) -> Result<Seek> {
        if let Some(rpm) = self.rpm
            && !(1000..=30_000).contains(&rpm)
        {
            bail!(
                "invalid rpm {rpm}: a spindle speed from 1000 to 30000 (e.g. 5400, 7200, 10000, 15000)"
            );
        }
        Ok(Seek {
            block: block("block size", &self.block)?,
            duration: duration("duration", &self.duration)?,
            size: size("size", &self.size)?,
            rpm: self.rpm,
        })
    }
}

impl AccessArgs {
    pub fn workload(&self) -> Result<Access> {
        Ok(Access {
            block: block("block size", &self.block)?,
            duration: duration("duration", &self.duration)?,
            size: size("size", &self.size)?,
        })
    }
}

impl MixArgs {
    pub fn workload(&self) -> Result<Mix> {
        if self.read_pct > 100 {
            bail!("invalid read share {}%: 0 to 100", self.read_pct);
        }
        Ok(Mix {
            seq_block: block("sequential block size", &self.seq_block)?,
            random_block: block("random block size", &self.random_block)?,
            read_pct: self.read_pct,
            duration: duration("duration", &self.duration)?,
            size: size("size", &self.size)?,
        })
    }
}

impl ZonesArgs {
    pub fn workload(&self) -> Result<Zones> {
        if !(2..=1000).contains(&self.points) {
            bail!("invalid points {}: 2 to 1000", self.points);
        }
        Ok(Zones {
            points: self.points,
            block: block("block size", &self.block)?,
            bytes_per_point: size("bytes per point", &self.per_point)?,
            duration: duration("duration", &self.duration)?,
            size: size("size", &self.size)?,
        })
    }
}

impl SweepArgs {
    pub fn workload(&self) -> Result<Sweep> {
        if !(1..=10_000).contains(&self.files) {
            bail!("invalid files {}: 1 to 10000", self.files);
        }
        let mut blocks = Vec::new();
        for b in &self.blocks {
            blocks.push(block("block size", b).with_context(|| "in --blocks".to_string())?);
        }
        if blocks.is_empty() {
            blocks = sweep::DEFAULT_BLOCKS.to_vec();
        }
        let buffer = duration("buffer", &self.buffer)?;
        Ok(Sweep {
            files: self.files,
            blocks,
            duration: duration("duration", &self.duration)?,
            file_size: size("file size", &self.file_size)?,
            buffer,
            memory_limit: None,
        })
    }
}

/// This rank's part in a studio run from `--roles` (`play:3,record:1`: ranks 0–2 play, rank 3
/// records), or `default` without the flag. The counts must add up to the ranks there are.
pub fn role(
    roles: Option<&str>,
    rank: u32,
    size: u32,
    default: trackbench::workloads::multitrack::StreamKind,
) -> Result<trackbench::workloads::multitrack::StreamKind> {
    use trackbench::workloads::multitrack::StreamKind;
    let Some(roles) = roles else {
        return Ok(default);
    };
    let mut kinds = Vec::new();
    for part in roles.split(',') {
        let (name, n) = part.trim().split_once(':').unwrap_or((part.trim(), "1"));
        let kind = match name {
            "play" => StreamKind::Play,
            "record" => StreamKind::Record,
            _ => bail!(
                "invalid roles {roles:?}: {name:?} is no role; each part is play:N or record:N, e.g. play:3,record:1"
            ),
        };
        let n: u32 = n.parse().map_err(|_| {
            anyhow::anyhow!("invalid roles {roles:?}: {n:?} is not a count of workstations")
        })?;
        kinds.extend(std::iter::repeat_n(kind, n as usize));
    }
    if kinds.len() != size as usize {
        bail!(
            "invalid roles {roles:?}: they name {} workstations, but {size} {} running{}",
            kinds.len(),
            if size == 1 { "is" } else { "are" },
            if size == 1 {
                " (a studio run starts one rank per workstation: mpirun -np N trackbench …, with a build that has the mpi feature)"
            } else {
                ": the counts must add up to mpirun's -np"
            }
        );
    }
    Ok(kinds[rank as usize])
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

    #[test]
    fn roles_name_every_rank_and_add_up_to_the_ranks_there_are() {
        use trackbench::workloads::multitrack::StreamKind::{Play, Record};
        let r = |rank| role(Some("play:2,record:1"), rank, 3, Play).unwrap();
        assert_eq!([r(0), r(1), r(2)], [Play, Play, Record]);
        assert_eq!(role(None, 2, 3, Record).unwrap(), Record);
        for (roles, size, says) in [
            (
                "play:2,record:1",
                4,
                "they name 3 workstations, but 4 are running",
            ),
            ("play:1", 2, "add up to mpirun's -np"),
            ("play:2", 1, "mpirun -np N"),
            ("mix:3", 3, "\"mix\" is no role"),
            ("play:x", 1, "not a count"),
        ] {
            let e = role(Some(roles), 0, size, Play).unwrap_err().to_string();
            assert!(e.contains(roles) && e.contains(says), "{e}");
        }
    }
}
