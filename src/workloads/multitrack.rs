//! `play`, `record` and `hdr`: the real-time streaming engine as workloads — one run at a given
//! track count with its verdict, or `--find-max`, the search for the most tracks that pass, with
//! the naive (sequential-rate) count, the parallel butler's count and the default engine's count
//! beside it.

use super::{Env, RunOutcome, Workload};
use crate::audio::DATA_OFFSET;
use crate::control::Live;
use crate::dataset::{self, Span};
use crate::engine::real_time::StreamFile;
use crate::engine::ring::{Ring, RingMemory};
use crate::engine::shape::{
    head_start_ns, steady_start_allowed, steady_start_saves_ns, wave_times,
};
use crate::engine::virtual_time::DeviceModel;
use crate::engine::{ButlerMode, Policy, StreamSpec};
use crate::error::{Error, Result};
use crate::io::driver::Limits;
use crate::io::patterns::Sequential;
use crate::io::{self, OpKind, OpenMode};
use crate::result::findings::{Finding, SteadyProbe, TrailStep, Way};
use crate::result::metrics as m;
use crate::result::search::{Capacity, CapacityReport, GuessRates, SearchDetail, SearchLimit};
use crate::result::{Detail, Metric, RunRow, Section, metric};
use crate::search::{ProbeEvidence, ProbeResult, figures_of, find_max_shared};
use crate::units::fmt_size;
use crate::verdict::tracks::{self as judged, StreamOutcome};
use crate::verdict::windows::min_run_s;
use serde::Serialize;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Which streaming workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StreamKind {
    Play,
    Record,
    Hdr,
}

/// The record share of the hdr curve: M = 0, N/4, N/2 and N.
pub const HDR_RATIOS: [f64; 4] = [0.0, 0.25, 0.5, 1.0];

#[derive(Debug, Clone)]
pub struct Streaming {
    pub kind: StreamKind,
    /// Counts in it are used for single runs; `--find-max` searches them.
    pub spec: StreamSpec,
    /// Run in virtual time against this model instead of the disk.
    pub device: Option<DeviceModel>,
    pub find_max: bool,
    /// With a profile other than the default engine, also search the default engine.
    pub compare_default: bool,
    /// For a serial butler, also search the parallel butler at this queue depth.
    pub compare_parallel: Option<u32>,
    /// Read recorded files back and check every tag.
    pub verify: bool,
    /// The user asked for the ring length (`--buffer`): say so where the ring had to be larger.
    pub buffer_asked: bool,
    /// `--max-tracks`: the most tracks (in all) a search tries.
    pub max_tracks: Option<u32>,
    /// What stopped the main search short of a failing count (set by the search).
    pub main_limited_by: Option<SearchLimit>,
    /// hdr `--find-max` with this many record tracks throughout: one search for the most
    /// playback tracks beside them, instead of the N-for-each-M curve.
    pub hdr_record: Option<u32>,
}

/// A locate longer than this is said to be one: a session start a user would call stuck.
const LOCATE_NOTE_MS: f64 = 10_000.0;

/// Reads in flight while a search's probe prefills its rings.
const LOCATE_QUEUE_DEPTH: u32 = 32;

/// How many times a probe's steady part (what follows its first ring) a page-cache profile's
/// confirmation runs. On a device capped at 21 MB/s (bound 145.8 tracks of 48k/24 mono) with
/// 128 KiB read-ahead, ardour-small passed 153 tracks in a 12.4 s probe (fill trend -1.75%, its
/// noise 3.4%: five of the program's large refills are too few to tell) and ran dry at 15.9 s
/// of a 60 s run; in 35 s runs 146 passed and 149 ran dry at 21 s.
const CONFIRM_STEADY_FACTOR: f64 = 4.0;

/// How long a page-cache profile's confirmation runs: its first ring, then
/// `CONFIRM_STEADY_FACTOR` times the steady part of a probe of `probe.duration_ns`.
fn confirmation_ns(probe: &StreamSpec) -> u64 {
    let ring_ns = probe.ring_s() * 1e9;
    let steady_ns = (probe.duration_ns as f64 - ring_ns).max(0.0);
    (ring_ns + CONFIRM_STEADY_FACTOR * steady_ns).max(probe.duration_ns as f64) as u64
}

impl Streaming {
    /// Whether a probe of `spec` starts where its first refill falls due
    /// (`StreamSpec::start_at_first_refill`): real probes of direct reads. Simulated probes
    /// cost no wall time and keep their full start.
    fn probes_start_at_first_refill(&self, spec: &StreamSpec) -> bool {
        spec.policy.direct && self.device.is_none()
    }

    /// Whether a search's probes (not its confirmations) of `spec` start in the steady state
    /// (`StreamSpec::steady_start`): real ones, alone (a studio's ranks keep their clocks and
    /// rings in step), of a playback search (hdr's curve keeps one rule for all its points)
    /// whose rings the in-phase start does not bind. Simulated probes cost no wall time and
    /// keep their exact trails.
    fn probes_start_steady(&self, spec: &StreamSpec, alone: bool) -> bool {
        self.kind == StreamKind::Play
            && self.device.is_none()
            && alone
            && steady_start_allowed(spec)
    }

    fn label(&self, spec: &StreamSpec) -> String {
        match self.kind {
            StreamKind::Play => format!("{} tracks", spec.play_tracks),
            StreamKind::Record => format!("{} tracks", spec.record_tracks),
            StreamKind::Hdr => format!("{} play + {} record", spec.play_tracks, spec.record_tracks),
        }
    }

    /// One run at the spec's counts, simulated or real.
    fn one(
        &self,
        env: &mut Env<'_>,
        spec: &StreamSpec,
        rings: &mut RingMemory,
    ) -> Result<StreamOutcome> {
        match &self.device {
            Some(m) => judged::simulate_watched(spec, m, env.ctl.cancel, env.ctl.progress),
            None => self.one_real(env, spec, rings),
        }
    }

    fn one_real(
        &self,
        env: &mut Env<'_>,
        spec: &StreamSpec,
        rings: &mut RingMemory,
    ) -> Result<StreamOutcome> {
        let what = format!("{:?} (it writes test files)", self.kind).to_lowercase();
        let direct = spec.policy.direct;
        let play_len = crate::engine::shape::play_file_bytes(spec);
        let rec_len = crate::engine::shape::record_file_bytes(spec);
        let rings_bytes = u64::from(spec.tracks()) * spec.ring_bytes();
        let butler_bytes = spec.butler_buffer_bytes();
        let mut what_pins = format!(
            "{} rings of {}",
            spec.tracks(),
            crate::units::fmt_size(spec.ring_bytes())
        );
        if butler_bytes > 0 {
            what_pins += &format!(
                " and the butler's {} read buffers of {}",
                spec.butler.queue_depth(),
                crate::units::fmt_size(butler_bytes / spec.butler.queue_depth() as u64)
            );
        }
        env.memory.check(
            &what_pins,
            rings_bytes + butler_bytes,
            "fewer tracks, smaller rings (--buffer, --chunk) or a shallower parallel butler",
        )?;
        let cancel = env.ctl.cancel;
        let (dd, ctl) = env.data_dir(&what)?;
        // The rings are allocated and first touched (seconds of CPU for thousands of tracks on
        // a virtual machine) while the files are laid out and written back (waiting on the
        // device): the passes overlap instead of following one another. What is not touched
        // by then is touched while the run locates (`real::run`).
        let ring_len = Ring::capacity_for_bytes(spec.ring_bytes(), spec.ring_slot_bytes());
        let laid_out = std::sync::atomic::AtomicBool::new(false);
        let stop = || laid_out.load(Ordering::Relaxed) || cancel.load(Ordering::Relaxed);
        let (laid, reserved) = std::thread::scope(|s| {
            let r =
                s.spawn(|| rings.reserve_unless(spec.tracks() as usize, ring_len as usize, &stop));
            let laid = play_files(dd, spec, spec.play_tracks as usize, play_len, ctl).and_then(
                |(play, kept)| {
                    if !direct {
                        // Start from a cold page cache, as a session opened after a while
                        // would: what was just laid out (or read by an earlier probe) is
                        // written back and dropped.
                        dataset::drop_all_cached(&play)?;
                    }
                    Ok((play, kept))
                },
            );
            laid_out.store(true, Ordering::Relaxed);
            (laid, r.join())
        });
        let (play, _) = laid?;
        reserved.unwrap_or_else(|p| std::panic::resume_unwind(p))?;
        let names: Vec<String> = (0..spec.record_tracks)
            .map(|i| format!("rec-{i:04}.wav"))
            .collect();
        dd.ensure_space_replacing(
            u64::from(spec.record_tracks) * (rec_len + DATA_OFFSET),
            &names.iter().map(String::as_str).collect::<Vec<_>>(),
        )?;
        let items: Vec<(String, String, u64)> = names
            .iter()
            .map(|n| (n.clone(), format!("record:{n}"), DATA_OFFSET + rec_len))
            .collect();
        let registered = dd.register_many(&items)?;
        let mut rec: Vec<Span> = Vec::with_capacity(registered.len());
        for (path, id) in registered {
            let o = io::open(&path, OpenMode::ReadWrite, !direct)?;
            dataset::write_header(&o.file, &path, &spec.format, rec_len)?;
            if spec.prealloc {
                crate::platform::preallocate(&o.file, DATA_OFFSET + rec_len)
                    .map_err(|e| Error::io(format!("cannot preallocate {}", path.display()), e))?;
            }
            rec.push(Span::media(path, o, DATA_OFFSET + rec_len, id));
        }
        let pf: Vec<_> = play.iter().map(|s| stream_file(s, s.len())).collect();
        let rf: Vec<_> = rec.iter().map(|s| stream_file(s, rec_len)).collect();
        let (outcome, written) =
            judged::run_real(spec, &pf, &rf, env.target.device.as_ref(), rings, &env.ctl)?;
        drop(pf);
        drop(rf);
        // Record files become proper WAV files of what was recorded.
        let frame = spec.format.bytes_per_frame();
        for (s, &w) in rec.iter().zip(&written) {
            let audio = w / frame * frame;
            dataset::write_header(&s.file, &s.path, &spec.format, audio)?;
            s.file
                .set_len(DATA_OFFSET + w)
                .and_then(|_| s.file.sync_all())
                .map_err(|e| Error::io(format!("cannot finish {}", s.path.display()), e))?;
        }
        if self.verify {
            for (s, &w) in rec.iter().zip(&written) {
                if w == 0 {
                    continue;
                }
                let mut p = Sequential::new(
                    OpKind::Read,
                    0,
                    DATA_OFFSET,
                    DATA_OFFSET + w / 4096 * 4096,
                    1 << 20,
                    false,
                );
                env.drive_alone(
                    &[s],
                    &mut p,
                    1 << 20,
                    Limits::default(),
                    "verifying recorded files",
                )?;
            }
        }
        let keep = env.data.as_deref().is_some_and(|d| d.keep());
        if !keep {
            drop(rec);
            let (dd, _) = env.data_dir(&what)?;
            dd.delete_many(&names.iter().map(String::as_str).collect::<Vec<_>>())?;
        }
        Ok(outcome)
    }

    /// What short transfers suggest before a search: a multi-file round robin at the chunk size
    /// (serially, and queued when a parallel butler is involved) for the first guesses, and a
    /// sequential transfer at 1 MiB for the naive count; reads where the search plays, writes
    /// where it records.
    fn estimates(&self, env: &mut Env<'_>) -> Result<Estimates> {
        let spec = &self.spec;
        let chunk = spec.policy.chunk_bytes;
        let rate = spec.format.bytes_per_second() as f64;
        if let Some(m) = &self.device {
            // The model serves reads and writes alike.
            let spacing = crate::engine::shape::play_file_bytes(spec) + DATA_OFFSET;
            let rr = chunk as f64 / (m.occupancy_ns(chunk, Some(spacing)) as f64 / 1e9);
            let seq = (1u64 << 20) as f64 / (m.occupancy_ns(1 << 20, None) as f64 / 1e9);
            let both = |x: f64| Rates { read: x, write: x };
            return Ok(Estimates {
                own: both(rr),
                parallel: both(rr),
                seq: both(seq),
                track_rate: rate,
                notes: Vec::new(),
            });
        }
        let (reads, writes) = (
            self.kind != StreamKind::Record,
            self.kind != StreamKind::Play,
        );
        let files = 64usize;
        let (format, direct) = (spec.format, spec.policy.direct);
        let play_len = crate::engine::shape::play_file_bytes(spec);
        let (dd, ctl) = env.data_dir("the first guess")?;
        let (play, _) = play_files(dd, spec, files, play_len, ctl)?;
        let (mut span, _) = dataset::ensure_wavs(dd, "span", 1, &format, 256 << 20, false, ctl)?;
        let span = span.remove(0);
        if !direct {
            // Just laid out: in the page cache, which would answer the first guess.
            dataset::drop_all_cached(&play)?;
        }
        let refs: Vec<&Span> = play.iter().collect();
        let ranges: Vec<_> = play.iter().map(|s| (s.start, s.end)).collect();
        let lim = Limits {
            duration: Some(Duration::from_secs(1)),
            bytes: None,
        };
        let round_robin = |env: &mut Env<'_>, qd: u32, kind: OpKind| -> Result<f64> {
            let label = format!(
                "first guess: {files} files {} round robin, {qd} in flight",
                if kind == OpKind::Read {
                    "read"
                } else {
                    "written"
                }
            );
            env.round_robin_rate(
                &refs,
                &ranges,
                chunk as u32,
                qd,
                !direct,
                kind,
                Duration::from_secs(1),
                &label,
            )
        };
        let both = |env: &mut Env<'_>, qd: u32| -> Result<Rates> {
            Ok(Rates {
                read: if reads {
                    round_robin(env, qd, OpKind::Read)?
                } else {
                    0.0
                },
                write: if writes {
                    round_robin(env, qd, OpKind::Write)?
                } else {
                    0.0
                },
            })
        };
        let serial = both(env, 1)?;
        let parallel_qd = match spec.butler {
            ButlerMode::Parallel(q) => Some(q),
            ButlerMode::Serial => self.compare_parallel,
        };
        let parallel = match parallel_qd {
            Some(q) => both(env, q)?,
            None => serial,
        };
        let seq_rate = |env: &mut Env<'_>, kind: OpKind| -> Result<f64> {
            // The session's sequential measurement, when it has one: one naive count.
            let measured = match kind {
                OpKind::Read => env.sequential.read,
                _ => env.sequential.write,
            };
            if let Some(r) = measured {
                return Ok(r);
            }
            let mut p = Sequential::new(kind, 0, span.start, span.end, 1 << 20, true);
            let label = if kind == OpKind::Read {
                "sequential read rate"
            } else {
                "sequential write rate"
            };
            let s = env.drive(&[&span], &mut p, 1 << 20, lim, label)?;
            Ok(crate::units::mb_per_s(s.bytes(), s.elapsed) * 1e6)
        };
        let seq = Rates {
            read: if reads {
                seq_rate(env, OpKind::Read)?
            } else {
                0.0
            },
            write: if writes {
                seq_rate(env, OpKind::Write)?
            } else {
                0.0
            },
        };
        let mut notes = Vec::new();
        let mb = |x: f64| x / 1e6;
        for (on, way, rr, sq) in [
            (reads, Way::Read, serial.read, seq.read),
            (writes, Way::Write, serial.write, seq.write),
        ] {
            if on {
                notes.push(Finding::FirstGuess {
                    files: files as u32,
                    way,
                    chunk_bytes: chunk,
                    round_robin_mb_s: mb(rr),
                    sequential_mb_s: mb(sq),
                });
            }
        }
        if let Some(q) = parallel_qd {
            notes.push(Finding::ParallelGuess {
                queue_depth: q,
                read_mb_s: reads.then(|| mb(parallel.read)),
                write_mb_s: writes.then(|| mb(parallel.write)),
            });
        }
        // Scattered chunk transfers that beat a sequential one came from a cache (files just
        // written sit in the host's or the drive's cache): guess from the sequential rate then.
        if (reads && serial.read > seq.read) || (writes && serial.write > seq.write) {
            notes.push(Finding::CacheAnsweredGuess);
        }
        let serial = Rates {
            read: serial.read.min(seq.read),
            write: serial.write.min(seq.write),
        };
        let own = if spec.butler == ButlerMode::Serial {
            serial
        } else {
            parallel
        };
        Ok(Estimates {
            own,
            parallel,
            seq,
            track_rate: rate,
            notes,
        })
    }

    /// The largest count of `base`'s shape that passes. `ratio` is records per playback track
    /// (hdr); play and record workloads search their own count.
    fn search(
        &self,
        env: &mut Env<'_>,
        base: &StreamSpec,
        ratio: f64,
        guess: f64,
        tolerance: f64,
    ) -> Result<(Capacity, SearchLimit)> {
        let counts = |n: u32| -> (u32, u32) {
            match (self.kind, self.hdr_record) {
                (StreamKind::Play, _) => (n, 0),
                (StreamKind::Record, _) => (0, n),
                (StreamKind::Hdr, Some(m)) => (n, m),
                (StreamKind::Hdr, None) => (n, (f64::from(n) * ratio).round() as u32),
            }
        };
        let per = 1.0
            + if self.kind == StreamKind::Hdr {
                ratio
            } else {
                0.0
            };
        let first = (guess / per).max(1.0) as u32;
        let (limit, why) = self.limit(env, base, per);
        // One pool of ring memory for every probe: allocated as counts grow, never twice.
        let mut rings = RingMemory::new();
        let (world, cancel) = (env.ctl.world, env.ctl.cancel);
        let cap = find_max_shared(world, cancel, first, limit, tolerance, |n, confirm| {
            let mut s = base.clone();
            (s.play_tracks, s.record_tracks) = counts(n);
            // A probe's locate time is not reported: prefill quickly. A probe that can no longer
            // pass stops at once. Through the page cache the locate leaves the kernel's
            // read-ahead in a state of its own: the quick locate leaves it as the program's
            // own locate does (`engine::run`), and a confirmation locates as the program does.
            // Both leave the read-ahead running ahead of every ring, a lead on which a count the
            // device cannot carry passes a short run: a confirmation runs its steady part
            // `CONFIRM_STEADY_FACTOR` times as long as a probe's.
            let program_locate = confirm && !s.policy.direct && s.play_tracks > 0;
            // A studio's confirmation runs as long too: its storage is judged on the mean of
            // its ranks' trends, each over the few refill cycles of a probe and moving with
            // its turn at the storage. On a loop device capped at 21 MB/s (145.8 tracks), three
            // ranks' 13 s confirmation of 49 tracks each (147, 1.008 of the bound) lost 0.80%
            // of the demand against a noise of 0.43%, and passed.
            if confirm && (program_locate || !world.is_alone()) {
                s.duration_ns = confirmation_ns(&s);
            }
            if !program_locate {
                s.locate_queue_depth = Some(LOCATE_QUEUE_DEPTH);
                s.locate_from_content = s.policy.direct;
            }
            // A real probe of direct playback starts where its first refill falls due, and
            // runs that much shorter: the same run from full rings, less the periods in which
            // nothing is read (1.82 s of the default engine's 14.9 s probes).
            s.start_at_first_refill = self.probes_start_at_first_refill(&s);
            s.duration_ns = s.duration_ns.saturating_sub(head_start_ns(&s));
            // A probe that only steers the search starts in the steady state where the
            // in-phase start does not bind, and skips the rest of the first ring; the
            // confirmations, whose passes are the answer, start in phase as it is stated.
            if !confirm && self.probes_start_steady(&s, world.is_alone()) {
                let saves = steady_start_saves_ns(&s);
                s.steady_start = true;
                s.duration_ns = s.duration_ns.saturating_sub(saves);
                // Such a probe ends as soon as its verdict is beyond doubt: a count well under
                // what the device carries, or well above it, needs no more than the rule's
                // shortest run to show it, and the confirmations, whose passes are the answer,
                // still run in full.
                s.end_early = true;
            }
            s.stop_early = true;
            match self.one(env, &s, &mut rings) {
                Ok(o) if o.interrupted => Ok(None),
                Ok(o) => {
                    env.ctl.progress.live(&Live::Probe {
                        count: n,
                        verdict: o.verdict.word(),
                        confirmation: confirm,
                    });
                    Ok(Some(ProbeResult {
                        ran_s: Some(o.ran_ms / 1000.0),
                        steady_start: s.steady_start,
                        verdict: o.verdict,
                        shortcoming: o.shortcoming,
                        worst_headroom_pct: o.worst_headroom_pct,
                        xruns: o.xruns(),
                        estimate: o.capacity_estimate().map(|share| share * f64::from(n)),
                        figures: figures_of(&outcome_metrics(&o)),
                        ranks: Vec::new(),
                        program_locate,
                        evidence: Some(ProbeEvidence {
                            own: o.own_verdict(),
                            capacity: o.capacity_evidence(),
                        }),
                        storage: None,
                    }))
                }
                Err(Error::Interrupted) => Ok(None),
                Err(e) => Err(e),
            }
        })?;
        Ok((cap, why))
    }

    /// The most a search may try (in its own count: playback tracks for hdr), and what sets
    /// it: what the user allows (`--max-tracks`), the memory rings may take (half of RAM), the
    /// free space files may take (half of it), or the engine's own ceiling.
    fn limit(&self, env: &Env<'_>, base: &StreamSpec, per: f64) -> (u32, SearchLimit) {
        const ENGINE_MAX: u64 = 20_000;
        let mut limits = vec![(ENGINE_MAX, SearchLimit::Engine)];
        if let Some(m) = self.max_tracks {
            limits.push((u64::from(m), SearchLimit::MaxTracks));
        }
        if self.device.is_none() {
            limits.push((
                env.memory.limit.saturating_sub(base.butler_buffer_bytes())
                    / base.ring_bytes().max(1),
                SearchLimit::Memory,
            ));
            // A page-cache profile's confirmations run longer, and their playback files hold
            // the whole run; a studio's run longer too.
            let longer = !base.policy.direct && self.kind != StreamKind::Record;
            let longest = if longer || !env.ctl.world.is_alone() {
                StreamSpec {
                    duration_ns: confirmation_ns(base),
                    ..base.clone()
                }
            } else {
                base.clone()
            };
            let file = track_disk_bytes(self.kind, &longest, per);
            if let Some(free) = env.target.free_bytes {
                let tracks = (free / 2) as f64 / file.max(1.0);
                limits.push((tracks as u64, SearchLimit::Space));
            }
        }
        let (total, why) = limits
            .into_iter()
            .min_by_key(|l| l.0)
            .expect("the engine's ceiling is always there");
        (((total as f64 / per) as u64).max(1) as u32, why)
    }
}

/// What one track's files take on disk, on average over the tracks of one count of a search
/// (`per` tracks, of which `per - 1` record for hdr): a playback file holds at most
/// `PLAY_FILE_MAX_S` with direct I/O (its reads wrap), a record file the whole run.
fn track_disk_bytes(kind: StreamKind, base: &StreamSpec, per: f64) -> f64 {
    let play = (crate::engine::shape::play_file_bytes(base) + DATA_OFFSET) as f64;
    let rec = (crate::engine::shape::record_file_bytes(base) + DATA_OFFSET) as f64;
    match kind {
        StreamKind::Play => play,
        StreamKind::Record => rec,
        StreamKind::Hdr => (play + (per - 1.0) * rec) / per,
    }
}

/// The most tracks `throughput_tracks` (what the disk streams, in tracks) can carry through the
/// first refill wave of tracks starting in phase: every ring crosses its refill threshold on the
/// same tick, and the last one served must not fall below the margin meanwhile.
fn wave_bound(spec: &StreamSpec, throughput_tracks: f64) -> f64 {
    wave_times(spec).map_or(throughput_tracks, |(slack_s, cycle_s)| {
        throughput_tracks * (slack_s / cycle_s).min(1.0)
    })
}

fn outcome_metrics(o: &StreamOutcome) -> Vec<Metric> {
    let secs = (o.ran_ms / 1000.0).max(f64::MIN_POSITIVE);
    let mut m = vec![
        metric(&m::TRACKS, f64::from(o.play_tracks + o.record_tracks)),
        metric(&m::XRUNS, o.xruns() as f64),
        metric(&m::UNDERRUNS, o.underruns as f64),
        metric(&m::OVERRUNS, o.overruns as f64),
        metric(&m::WORST_HEADROOM_PCT, o.worst_headroom_pct),
        metric(&m::LOCATE_MS, o.locate_ms),
        metric(&m::READ_MB_PER_S, o.read_bytes as f64 / secs / 1e6),
        metric(&m::WRITE_MB_PER_S, o.written_bytes as f64 / secs / 1e6),
        metric(&m::RAM_BYTES, o.ram_bytes as f64),
    ];
    if let Some(s) = &o.sustain {
        m.push(metric(&m::SHORTFALL_PCT, s.shortfall_pct));
    }
    if let Some(i) = o.butler_idle_pct {
        m.push(metric(&m::BUTLER_IDLE_PCT, i));
    }
    if let Some(w) = o.butler_cpu_wait_max_ms {
        m.push(metric(&m::BUTLER_CPU_WAIT_MS_MAX, w));
    }
    if let Some(a) = o.read_amplification() {
        m.push(metric(&m::READ_AMPLIFICATION, a));
    }
    if let Some(l) = &o.read_latency {
        m.push(metric(&m::READ_LATENCY_US_P99, l.p99_us));
    }
    if let Some(l) = &o.write_latency {
        m.push(metric(&m::WRITE_LATENCY_US_P99, l.p99_us));
    }
    if let Some(l) = &o.tick_lateness {
        m.push(metric(&m::TICK_LATE_US_P50, l.p50_us));
        m.push(metric(&m::TICK_LATE_US_P99, l.p99_us));
        m.push(metric(&m::TICK_LATE_US_MAX, l.max_us));
    }
    if !o.simulated {
        m.push(metric(&m::TICK_CPU_PCT, o.tick_cpu_pct));
        m.push(metric(&m::BUTLER_CPU_PCT, o.butler_cpu_pct));
    }
    m
}

/// What one streaming run observed besides its figures.
fn run_findings(spec: &StreamSpec, o: &StreamOutcome) -> Vec<Finding> {
    let mut f = Vec::new();
    if let Some(n) = &o.realtime_note {
        f.push(Finding::NotRealTime { reason: n.clone() });
    }
    if o.locate_ms > LOCATE_NOTE_MS {
        f.push(Finding::LongLocate {
            locate_ms: o.locate_ms,
        });
    }
    if let Some(l) = &o.tick_lateness {
        let period_us = spec.period_ns() as f64 / 1000.0;
        if l.max_us > period_us / 2.0 {
            f.push(Finding::LateTick {
                max_us: l.max_us,
                period_us,
            });
        }
    }
    f.extend(crate::result::findings::butler_cpu_wait(
        o.butler_cpu_wait_max_ms,
        o.butler_cpu_wait_ms,
        o.ran_ms / 1000.0,
        spec.ring_s() * 1000.0,
        o.shortcoming.is_some_and(|s| s.is_failure()),
    ));
    if let Some(sc) = o.shortcoming {
        f.push(Finding::DidNotPass {
            shortcoming: sc,
            first_xrun_ms: o.first_xrun_ms,
            margin_in_s: o.sustain.and_then(|s| s.margin_in_s),
        });
    } else if let Some(idle_pct) = o.butler_idle_pct {
        f.push(Finding::SpareCapacity { idle_pct });
        f.extend(crate::result::findings::drain_within_one_hold(
            &o.capacity_evidence(),
            o.longest_hold_ms(),
        ));
    }
    if let (Some(d), Some(ratio)) = (o.device_read_bytes, o.read_amplification()) {
        f.push(Finding::ReadAmplification {
            device_read_bytes: d,
            read_bytes: o.read_bytes,
            played_bytes: o.played_bytes,
            ratio,
            direct: spec.policy.direct,
        });
    }
    if o.stopped_early {
        f.push(Finding::StoppedEarly {
            after_s: o.ran_ms / 1000.0,
        });
    }
    f
}

/// How long each run lasts when `--duration` is not given: a search's probes as long as it
/// takes to tell (one ring, then the refill cycles that measure the butler's spare time, with a
/// cycle and a little scheduling to spare: the idle share and the trend are taken over whole
/// cycles counted back from the end, and the extra cycle makes that window four cycles rather
/// than three; with three, the capped fixture's search once called 138 tracks (5% under the
/// bound) marginal and answered 136) and no longer; a single run at least 10 s. Simulated
/// probes cost no wall time: they run long enough for a small drain to show.
pub fn planned_duration_s(spec: &StreamSpec, find_max: bool, simulated: bool) -> f64 {
    let min = min_run_s(spec);
    let cycle = crate::engine::shape::refill_cycle_s(spec);
    match (find_max, simulated) {
        (true, true) => (40.0 * spec.ring_s()).max(120.0).max(min + 2.0 * cycle),
        (true, false) => min + cycle + 0.3,
        (false, _) => (min + cycle + 1.0).max(10.0),
    }
}

/// Bytes per second a device moved, each way.
#[derive(Debug, Clone, Copy)]
struct Rates {
    read: f64,
    write: f64,
}

/// The playback tracks' files. Through the page cache they are laid out as a recording's takes
/// (`dataset::Layout::Takes`): a program reading a session reads files the filesystem placed
/// as it recorded them, and where a read-ahead window crosses from one extent to the next the
/// device takes two I/Os (Ardour's float takes on a 20-IOPS device: one more I/O a track in
/// the refill that ran dry, BENCHMARKS.md). Direct-I/O files stay laid out file after file, as
/// the capped-device searches were measured on.
fn play_files(
    dd: &mut crate::datadir::DataDir,
    spec: &StreamSpec,
    count: usize,
    play_len: u64,
    ctl: &crate::control::Control<'_>,
) -> Result<(Vec<Span>, usize)> {
    if spec.policy.direct {
        dataset::ensure_wavs(dd, "play", count, &spec.format, play_len, false, ctl)
    } else {
        dataset::ensure_takes(dd, "play", count, &spec.format, play_len, ctl)
    }
}

/// What the short transfers before a search suggest.
struct Estimates {
    /// Round robin at the chunk size with the butler's own queue depth.
    own: Rates,
    /// The same with a parallel butler's queue depth.
    parallel: Rates,
    /// Sequential at 1 MiB: the naive count.
    seq: Rates,
    track_rate: f64,
    notes: Vec<Finding>,
}

impl Estimates {
    /// Tracks in all that `r` carries for a search of `kind` with `ratio` record tracks per
    /// playback track (hdr): each second, N playback tracks cost N·rate/read and M record
    /// tracks M·rate/write of the device's time.
    fn tracks(&self, r: Rates, kind: StreamKind, ratio: f64) -> f64 {
        let t = self.track_rate;
        match kind {
            StreamKind::Play => r.read / t,
            StreamKind::Record => r.write / t,
            StreamKind::Hdr => {
                let per_play_s = t / r.read.max(1.0) + ratio * t / r.write.max(1.0);
                (1.0 + ratio) / per_play_s
            }
        }
    }
}

impl Workload for Streaming {
    fn name(&self) -> &'static str {
        match self.kind {
            StreamKind::Play => "play",
            StreamKind::Record => "record",
            StreamKind::Hdr => "hdr",
        }
    }

    fn uses_disk(&self) -> bool {
        self.device.is_none()
    }

    fn title(&self) -> String {
        let s = &self.spec;
        let what = match (self.kind, self.find_max) {
            (StreamKind::Play, false) => "Real-time playback",
            (StreamKind::Record, false) => "Real-time recording",
            (StreamKind::Hdr, false) => "Playback while recording",
            (StreamKind::Play, true) => "Most playback tracks",
            (StreamKind::Record, true) => "Most record tracks",
            (StreamKind::Hdr, true) => "Most playback tracks while recording (N for each M)",
        };
        format!(
            "{what}: {}, profile {}, {} butler, {} chunks, {} rings ({:.2} s), period {}{}",
            s.format,
            s.policy.profile,
            s.butler,
            fmt_size(s.policy.chunk_bytes),
            fmt_size(s.ring_bytes()),
            s.ring_s(),
            s.period_frames,
            match &self.device {
                Some(m) => format!(", simulated device {}", m.name),
                None => String::new(),
            }
        )
    }

    fn settings(&self) -> serde_json::Value {
        serde_json::json!({
            "spec": self.spec,
            "device_model": self.device,
            "find_max": self.find_max,
            "compare_default": self.compare_default,
            "compare_parallel": self.compare_parallel,
            "verify": self.verify,
            "max_tracks": self.max_tracks,
            "profile_source": self.spec.policy.source,
        })
    }

    fn run_once(&mut self, env: &mut Env<'_>, _run: u32) -> Result<RunOutcome> {
        let mut out = RunOutcome::default();
        if self.device.is_none() {
            env.data_dir(self.name())?;
        }
        out.cached = self.device.is_none() && !self.spec.policy.direct;
        if out.cached {
            out.findings.push(Finding::ThroughPageCache {
                profile: self.spec.policy.profile.clone(),
            });
            if self.find_max && self.kind != StreamKind::Record {
                out.findings.push(Finding::PageCacheSearchConfirmedLong {
                    profile: self.spec.policy.profile.clone(),
                    confirm_s: confirmation_ns(&self.spec) as f64 / 1e9,
                });
            }
            if !crate::platform::CAN_DROP_PAGES {
                out.findings.push(Finding::PagesKept {
                    profile: self.spec.policy.profile.clone(),
                });
            }
        }
        if let Some((asked_s, min_chunks)) = self.spec.ring_raised().filter(|_| self.buffer_asked) {
            out.findings.push(Finding::RingRaised {
                asked_s,
                min_chunks,
                chunk_bytes: self.spec.policy.chunk_bytes,
                ring_bytes: self.spec.ring_bytes(),
                ring_s: self.spec.ring_s(),
            });
        }
        if !self.find_max {
            let spec = self.spec.clone();
            let o = self.one(env, &spec, &mut RingMemory::new())?;
            out.findings.extend(run_findings(&spec, &o));
            out.interrupted = o.interrupted;
            out.rows.push(RunRow {
                label: format!("{}: {}", self.label(&spec), o.verdict.word()),
                metrics: outcome_metrics(&o),
            });
            out.detail = Some(Detail::Stream(Box::new(o)));
            return Ok(out);
        }

        let est = self.estimates(env)?;
        let naive = est.tracks(est.seq, self.kind, 0.0);
        out.findings.extend(est.notes.iter().cloned());
        let mut reports = Vec::new();
        let ratios: Vec<f64> = match (self.kind, self.hdr_record) {
            (StreamKind::Hdr, None) => HDR_RATIOS.to_vec(),
            _ => vec![0.0],
        };
        // Each search: its label, its engine setup, records per playback track, and whether it
        // is a point of the answer (searched to 2%) rather than a comparison beside it (15%).
        let mut searches: Vec<(String, StreamSpec, f64, bool)> = Vec::new();
        for &r in &ratios {
            let label = if self.kind != StreamKind::Hdr {
                format!("{} · {}", self.spec.policy.profile, self.spec.butler)
            } else if let Some(m) = self.hdr_record {
                format!("M = {m}")
            } else if r == 0.0 {
                "M = 0".to_string()
            } else if r == 1.0 {
                "M = N".to_string()
            } else {
                format!("M = N/{}", (1.0 / r).round())
            };
            searches.push((label, self.spec.clone(), r, true));
        }
        if self.compare_default && self.spec.policy.profile != "trackbench" {
            let mut s = self.spec.clone();
            // trackbench's own period and margin, unless they were asked for: the profile's
            // came from its program.
            if s.policy.period_frames == Some(s.period_frames) {
                s.period_frames = crate::engine::DEFAULT_PERIOD;
            }
            if s.policy.margin == Some(s.margin) {
                s.margin = crate::engine::DEFAULT_MARGIN;
            }
            s.policy = Policy::named("trackbench", &s.format)?;
            // Its own rings: probes as long as they need to be, not as the profile's.
            let planned = planned_duration_s(&s, true, self.device.is_some());
            s.duration_ns = s.duration_ns.max((planned * 1e9) as u64);
            searches.push((format!("trackbench · {}", s.butler), s, 0.0, false));
        }
        let mut main_answer = 0u32;
        let mut i = 0;
        while i < searches.len() {
            if env.ctl.cancelled() {
                out.interrupted = true;
                break;
            }
            let (label, spec, ratio, main) = searches[i].clone();
            // The answer is searched to 2%, every point of hdr's curve included; the
            // comparisons, which show a gap, to 15%. A parallel butler starts above the serial
            // answer: it rarely does worse.
            let (start_guess, tolerance) = match (i, spec.butler) {
                (_, _) if main && i > 0 => (
                    wave_bound(&spec, est.tracks(est.own, self.kind, ratio)) * 0.95,
                    0.02,
                ),
                (0, _) => {
                    let guess = match self.hdr_record {
                        // What the device has left for playback once M tracks record.
                        Some(m) => {
                            let t = est.track_rate;
                            let left = (1.0 - f64::from(m) * t / est.own.write.max(1.0)).max(0.0);
                            left * est.own.read / t
                        }
                        None => est.tracks(est.own, self.kind, ratio),
                    };
                    (wave_bound(&spec, guess) * 0.95, 0.02)
                }
                (_, ButlerMode::Parallel(_)) => (
                    (wave_bound(&spec, est.tracks(est.parallel, self.kind, ratio)) * 0.95)
                        .max(f64::from(main_answer) * 1.25),
                    0.15,
                ),
                _ => (
                    wave_bound(&spec, est.tracks(est.own, self.kind, ratio)) * 0.95,
                    0.15,
                ),
            };
            let (cap, why) = self.search(env, &spec, ratio, start_guess, tolerance)?;
            let limited_by = cap.hit_limit.then_some(why);
            let (p, r) = match self.kind {
                StreamKind::Play => (cap.answer, 0),
                StreamKind::Record => (0, cap.answer),
                StreamKind::Hdr => (
                    cap.answer,
                    self.hdr_record
                        .unwrap_or((f64::from(cap.answer) * ratio).round() as u32),
                ),
            };
            let at_answer = cap.probes.iter().rev().find(|pr| pr.count == cap.answer);
            let per = 1.0 + ratio;
            let naive = est.tracks(est.seq, self.kind, ratio);
            let mut metrics = vec![metric(&m::TRACKS, f64::from(p + r))];
            if self.kind == StreamKind::Hdr {
                metrics.push(metric(&m::PLAY_TRACKS, f64::from(p)));
                metrics.push(metric(&m::RECORD_TRACKS, f64::from(r)));
            }
            metrics.extend([
                metric(&m::NAIVE_TRACKS, (naive / per).floor() * per),
                metric(
                    &m::WORST_HEADROOM_PCT,
                    at_answer.map_or(0.0, |a| a.worst_headroom_pct),
                ),
                metric(&m::PROBES, cap.probes.len() as f64),
                metric(&m::RAM_BYTES, (spec.ring_bytes() * u64::from(p + r)) as f64),
            ]);
            out.rows.push(RunRow {
                label: label.clone(),
                metrics,
            });
            out.findings.push(Finding::SearchTrail {
                label: label.clone(),
                probes: cap
                    .probes
                    .iter()
                    .map(|pr| TrailStep {
                        count: pr.count,
                        verdict: pr.verdict,
                        confirmation: pr.confirmation,
                        shortcoming: pr.shortcoming,
                    })
                    .collect(),
                answer: cap.answer,
                confirmed: cap.confirmed,
                limited_by,
            });
            if i == 0 {
                main_answer = cap.answer;
                if let Some(m) = self.device.as_ref().filter(|m| m.clients > 1) {
                    out.findings.push(Finding::SharedStorage {
                        clients: m.clients,
                        tracks_each: f64::from(p + r),
                        link_bound: m.link_binds(),
                    });
                }
                self.main_limited_by = limited_by;
                if let (ButlerMode::Serial, Some(qd)) = (spec.butler, self.compare_parallel)
                    && self.kind != StreamKind::Hdr
                {
                    let mut s = spec.clone();
                    s.butler = ButlerMode::Parallel(qd);
                    searches.insert(
                        1,
                        (
                            format!("{} · {}", s.policy.profile, s.butler),
                            s,
                            0.0,
                            false,
                        ),
                    );
                }
            }
            reports.push(CapacityReport {
                label,
                profile: spec.policy.profile.clone(),
                butler: spec.butler.to_string(),
                play_tracks: p,
                record_tracks: r,
                period_frames: Some(spec.period_frames),
                margin_pct: Some(100.0 * spec.margin),
                limited_by,
                capacity: cap,
            });
            i += 1;
        }
        let wave_share = wave_bound(&self.spec, 1.0);
        if let Some((slack_s, cycle_s)) = wave_times(&self.spec)
            && wave_share < 0.999
        {
            out.findings.push(Finding::InPhaseWave {
                slack_s,
                cycle_s,
                share_pct: 100.0 * wave_share,
            });
        }
        out.detail = Some(Detail::Search(SearchDetail {
            wave_share,
            naive_tracks: naive,
            first_guess_tracks: est.tracks(est.own, self.kind, 0.0),
            first_guess_parallel_tracks: est.tracks(est.parallel, self.kind, 0.0),
            rates_bytes_per_s: GuessRates {
                round_robin_read: est.own.read,
                round_robin_write: est.own.write,
                sequential_read: est.seq.read,
                sequential_write: est.seq.write,
            },
            searches: reports,
        }));
        Ok(out)
    }

    fn findings(&self, s: &Section) -> Vec<Finding> {
        let mut n = Vec::new();
        if !self.find_max {
            return n;
        }
        let get = |row: &str, f: &crate::result::metrics::Def| {
            s.row(row).and_then(|r| r.get(f)).map(|f| f.spread.median)
        };
        if let Some(first) = s.rows.first() {
            let tracks = first.get(&m::TRACKS).map_or(0.0, |f| f.spread.median);
            let naive = first.get(&m::NAIVE_TRACKS).map_or(0.0, |f| f.spread.median);
            if naive > 0.0 && self.kind != StreamKind::Hdr {
                n.push(Finding::RealTimeAnswer {
                    tracks,
                    naive_tracks: naive,
                    way: if self.kind == StreamKind::Record {
                        Way::Write
                    } else {
                        Way::Read
                    },
                    limited_by: self.main_limited_by,
                });
            }
            if let Some(qd) = self.compare_parallel {
                let par = format!("{} · parallel:{qd}", self.spec.policy.profile);
                if let Some(p) = get(&par, &m::TRACKS) {
                    n.push(Finding::SerialLeaves {
                        queue_depth: qd,
                        serial_tracks: tracks,
                        parallel_tracks: p,
                    });
                }
            }
        }
        // What a probe of playback alone skips (the searches of hdr's M = 0 point do too).
        let mut probe = self.spec.clone();
        probe.start_at_first_refill = self.probes_start_at_first_refill(&probe);
        (probe.play_tracks, probe.record_tracks) = (1, 0);
        let head_start_s = match self.kind {
            StreamKind::Play => head_start_ns(&probe) as f64 / 1e9,
            _ => 0.0,
        };
        let probe_s = self.spec.duration_ns as f64 / 1e9 - head_start_s;
        // The searches' own probes say whether any started in the steady state.
        let steady_probes = matches!(&s.detail, Some(Detail::Search(d))
            if d.searches.iter().any(|c| c.capacity.probes.iter().any(|p| p.steady_start)));
        let steady = steady_probes.then(|| {
            probe.duration_ns = self.spec.duration_ns - head_start_ns(&probe);
            SteadyProbe {
                probe_s: probe_s - steady_start_saves_ns(&probe) as f64 / 1e9,
                warmup_s: crate::engine::shape::steady_warmup_s(&probe),
                end_early_s: Some(
                    crate::verdict::windows::early_end_at_ns(&StreamSpec {
                        steady_start: true,
                        ..probe.clone()
                    }) as f64
                        / 1e9,
                ),
            }
        });
        n.push(Finding::ProbeRule {
            probe_s,
            ring_s: self.spec.ring_s(),
            simulated: self.device.is_some(),
            head_start_s,
            steady,
        });
        if self.compare_parallel.is_none()
            && self.spec.butler == ButlerMode::Serial
            && self.kind != StreamKind::Hdr
        {
            n.push(Finding::TryCompareParallel);
        }
        n.push(Finding::AnswersHoldFor {
            profile: self.spec.policy.profile.clone(),
            format: self.spec.format.to_string(),
            period_frames: self.spec.period_frames,
            ring_bytes: self.spec.ring_bytes(),
            chunk_bytes: self.spec.policy.chunk_bytes,
            margin_pct: self.spec.margin * 100.0,
            staggered: self.spec.stagger,
        });
        n
    }
}

pub(crate) fn stream_file(s: &Span, len: u64) -> StreamFile<'_> {
    StreamFile {
        file: &s.file,
        path: s.path.clone(),
        content_id: s.content_id.expect("our own media"),
        data_start: s.start,
        data_len: len,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audio::Format;
    use crate::engine::{ButlerMode, Policy};

    /// A probe of 15 s: a playback track's file is its ring and 8 s at most (reads wrap), a
    /// record track's the whole run; hdr averages them by its ratio.
    #[test]
    fn a_playback_track_is_counted_for_its_file_not_for_a_recording() {
        let base = StreamSpec {
            format: Format::default(),
            play_tracks: 1,
            record_tracks: 0,
            period_frames: 256,
            duration_ns: 15_000_000_000,
            margin: 0.2,
            policy: Policy::named("trackbench", &Format::default()).unwrap(),
            butler: ButlerMode::Serial,
            stagger: false,
            prealloc: false,
            locate_queue_depth: None,
            stop_early: false,
            steady_start: false,
            end_early: false,
            locate_from_content: false,
            start_at_first_refill: false,
        };
        let rate = base.format.bytes_per_second() as f64;
        let longer = StreamSpec {
            duration_ns: 60_000_000_000,
            ..base.clone()
        };
        let play = track_disk_bytes(StreamKind::Play, &base, 1.0);
        let rec = track_disk_bytes(StreamKind::Record, &base, 1.0);
        assert_eq!(
            play,
            track_disk_bytes(StreamKind::Play, &longer, 1.0),
            "a longer probe plays the same file again"
        );
        assert!(
            play < 12.0 * rate,
            "{play}: a ring, a chunk and at most 8 s"
        );
        assert!(rec >= 15.0 * rate + base.ring_bytes() as f64, "{rec}");
        assert!(track_disk_bytes(StreamKind::Record, &longer, 1.0) >= rec + 44.0 * rate);
        let hdr = track_disk_bytes(StreamKind::Hdr, &base, 1.5);
        assert!((hdr - (play + 0.5 * rec) / 1.5).abs() < 1.0, "{hdr}");
    }
}
