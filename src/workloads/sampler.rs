//! `sampler`: sample-library voice streaming with preload deadlines — one run at a voice count
//! with its verdict, or `--find-max`, the most voices with no dropout at the note rate, under the
//! same promise as tracks (never above what the device sustains, probes long enough to tell).
//! The library (F stereo samples of 1 to 10 s) is laid out once and reused under `--keep`; the
//! instrument load reads every sample's preload into RAM before the clock starts.

use super::probe::{
    late_tick, not_real_time, page_cache_notes, probe_of, report, search_trail, tightest,
    verdict_notes,
};
use super::{Env, RunOutcome, Workload};
use crate::audio::Format;
use crate::content;
use crate::dataset::{self, Span};
use crate::engine::profile::SamplerPolicy;
use crate::engine::ring::RingMemory;
use crate::engine::virtual_time::DeviceModel;
use crate::engine::voices::{self, Library, Notes, SampleFile, library_lengths};
use crate::engine::{ButlerMode, StreamSpec};
use crate::error::{Error, Result};
use crate::io::AlignedBuf;
use crate::io::OpKind;
use crate::platform::FileAt;
use crate::result::findings::Finding;
use crate::result::metrics as m;
use crate::result::search::{Capacity, GuessRates, SearchDetail, SearchLimit};
use crate::result::{Detail, Metric, RunRow, Section, metric};
use crate::search::find_max_shared;
use crate::units::fmt_size;
use crate::verdict::voices::{self as judged, CONFIRM_RUN_S, SamplerOutcome, min_run_s};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The library a sampler run streams from.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct LibrarySpec {
    pub files: u32,
    /// Sample lengths are drawn between these, log-uniformly.
    pub min_s: f64,
    pub max_s: f64,
    pub seed: u64,
}

/// The defaults: a library of 2000 samples of 1 to 10 s, 100 note-ons a second.
pub const DEFAULT_FILES: u32 = 2000;
pub const DEFAULT_NOTES_PER_S: f64 = 100.0;

/// Requests in flight while a search's probe prefills its voices' rings.
const LOCATE_QUEUE_DEPTH: u32 = 32;

/// The engine's ceiling on voices.
const ENGINE_MAX_VOICES: u64 = 20_000;

#[derive(Debug, Clone)]
pub struct Sampler {
    pub format: Format,
    pub library: LibrarySpec,
    /// Voices of a single run; `--find-max` searches them.
    pub voices: u32,
    pub notes_per_s: f64,
    pub profile: SamplerPolicy,
    pub butler: ButlerMode,
    pub period_frames: u32,
    /// Each run's length, or each probe's (None: planned).
    pub duration: Option<Duration>,
    pub margin: f64,
    pub device: Option<DeviceModel>,
    pub find_max: bool,
    /// `--max-voices`: the most a search tries.
    pub max_voices: Option<u32>,
    /// What stopped the search short of a failing count (set by the search).
    pub limited_by: Option<SearchLimit>,
}

impl Sampler {
    fn lens(&self) -> Vec<u64> {
        let l = &self.library;
        library_lengths(l.files, l.min_s, l.max_s, &self.format, l.seed)
    }

    /// The engine's spec for `voices` voices, running `duration_ns`.
    pub fn spec(&self, voices: u32, duration_ns: u64, longest: u64) -> StreamSpec {
        let mut policy = self.profile.policy.clone();
        if self.profile.whole_sample {
            // The ring holds the rest of the longest sample: the whole file comes into RAM.
            let rest = longest.saturating_sub(self.profile.preload_bytes).max(4096);
            policy.buffer_s = rest as f64 / self.format.bytes_per_second() as f64;
        }
        StreamSpec {
            period_frames: self.period_frames,
            duration_ns,
            margin: self.margin,
            butler: self.butler,
            ..StreamSpec::new(self.format, policy, (voices, 0))
        }
    }

    /// How long a run lasts: as asked, else for a search's probe one ring and the steady part
    /// with a second to spare (simulated probes cost no wall time: a minute), for a single run
    /// at least 15 s.
    fn planned_ns(&self, spec: &StreamSpec) -> u64 {
        let min = min_run_s(spec);
        let secs = match (self.duration, self.find_max, self.device.is_some()) {
            (Some(d), _, _) => d.as_secs_f64(),
            (None, true, true) => (2.0 * min).max(60.0),
            (None, true, false) => min + 1.3,
            (None, false, _) => (min + 2.0).max(15.0),
        };
        (secs * 1e9) as u64
    }

    /// The library, its files (real runs) and how long the instrument took to load the
    /// preloads (real runs).
    fn library(&self, env: &mut Env<'_>) -> Result<(Arc<Library>, Vec<Span>, Option<f64>)> {
        let lens = self.lens();
        let preload = self.profile.preload_bytes;
        let seed = self.library.seed;
        if self.device.is_some() {
            let n = lens.len() as u32;
            return Ok((
                Arc::new(Library::new(lens, (1..=n).collect(), preload, seed)),
                Vec::new(),
                None,
            ));
        }
        let direct = self.profile.policy.direct;
        let format = self.format;
        let ram = lens.iter().map(|&l| preload.min(l)).sum::<u64>();
        // The instrument load reads into one buffer with a --preload slot per sample.
        env.memory.check(
            &format!("the preloads of {} samples", lens.len()),
            ram.max(lens.len() as u64 * preload),
            "fewer samples (--files) or a smaller --preload",
        )?;
        let (dd, ctl) = env.data_dir("sampler (it lays out its sample library)")?;
        let (spans, _) = dataset::ensure_wav_set(dd, "sample", &lens, &format, !direct, ctl)?;
        if !direct {
            // Just laid out, or read by an earlier run: in the page cache, which would answer.
            dataset::drop_all_cached(&spans)?;
        }
        let started = Instant::now();
        let buf = instrument_load(&spans, &lens, preload, ram, ctl)?;
        let load_ms = started.elapsed().as_secs_f64() * 1e3;
        if !direct {
            // The streams start cold: what the preload reads brought in (read-ahead included)
            // goes.
            dataset::drop_all_cached(&spans)?;
        }
        let mut lib = Library::new(
            lens,
            spans.iter().map(|s| s.content_id.unwrap_or(0)).collect(),
            preload,
            seed,
        );
        lib.preload = Some(buf);
        Ok((Arc::new(lib), spans, Some(load_ms)))
    }

    /// One run of `spec`, simulated or real.
    fn one(
        &self,
        env: &mut Env<'_>,
        spec: &StreamSpec,
        lib: &Arc<Library>,
        spans: &[Span],
        rings: &mut RingMemory,
    ) -> Result<SamplerOutcome> {
        let notes = Notes {
            voices: spec.play_tracks,
            notes_per_s: self.notes_per_s,
            seed: self.library.seed,
        };
        match &self.device {
            Some(m) => {
                judged::simulate_watched(spec, &notes, lib, m, env.ctl.cancel, env.ctl.progress)
            }
            None => {
                let rings_bytes = spec.ring_bytes() * u64::from(voices::streams(spec));
                env.memory.check(
                    &format!(
                        "{} voices' rings of {} (and {} for reads in flight)",
                        spec.play_tracks,
                        fmt_size(spec.ring_bytes()),
                        spec.butler.queue_depth()
                    ),
                    rings_bytes + lib.preload_ram(),
                    "fewer voices or a smaller preload",
                )?;
                let files: Vec<SampleFile> = spans
                    .iter()
                    .map(|s| SampleFile {
                        file: &s.file,
                        path: s.path.clone(),
                    })
                    .collect();
                judged::run_real(
                    spec,
                    &notes,
                    lib,
                    &files,
                    env.target.device.as_ref(),
                    rings,
                    &env.ctl,
                )
            }
        }
    }

    /// What short transfers suggest before a search, in bytes per second: the butler's reads
    /// round robin over samples' streams, and a sequential transfer (the naive count).
    fn rates(&self, env: &mut Env<'_>, lib: &Library, spans: &[Span]) -> Result<GuessRates> {
        let read = self.profile.policy.read_max_bytes;
        if let Some(m) = &self.device {
            let avg = lib.lens.iter().sum::<u64>() / lib.lens.len().max(1) as u64;
            let rr = read as f64 / (m.occupancy_ns(read, Some(avg)) as f64 / 1e9);
            let seq = (1u64 << 20) as f64 / (m.occupancy_ns(1 << 20, None) as f64 / 1e9);
            return Ok(GuessRates {
                round_robin_read: rr,
                sequential_read: seq,
                ..GuessRates::default()
            });
        }
        let picked: Vec<&Span> = spans
            .iter()
            .zip(&lib.lens)
            .filter(|(_, l)| **l > lib.preload_bytes + read)
            .map(|(s, _)| s)
            .take(64)
            .collect();
        let ranges: Vec<(u64, u64)> = picked
            .iter()
            .map(|s| (s.start + lib.preload_bytes, s.end))
            .collect();
        let direct = self.profile.policy.direct;
        let rr = if picked.is_empty() {
            0.0
        } else {
            env.round_robin_rate(
                &picked,
                &ranges,
                read as u32,
                self.butler.queue_depth() as u32,
                !direct,
                OpKind::Read,
                Duration::from_secs(1),
                &format!("first guess: {} samples read round robin", picked.len()),
            )?
        };
        if !direct {
            dataset::drop_all_cached(picked.iter().copied())?;
        }
        // The session's sequential measurement, when it has one: one naive count.
        let seq = match env.sequential.read {
            Some(r) => r,
            None => {
                let span = env.span(256 << 20)?;
                env.sequential_rate(OpKind::Read, &span)?
            }
        };
        Ok(GuessRates {
            // Scattered reads faster than a sequential one came from a cache.
            round_robin_read: if rr > seq { seq } else { rr },
            sequential_read: seq,
            ..GuessRates::default()
        })
    }

    /// The most voices a search may try, and what sets it.
    fn limit(&self, env: &Env<'_>, lib: &Library, spec: &StreamSpec) -> (u32, SearchLimit) {
        let mut limits = Vec::new();
        if let Some(m) = self.max_voices {
            limits.push((u64::from(m), SearchLimit::MaxTracks));
        }
        if self.device.is_none() {
            let room = env.memory.limit.saturating_sub(lib.preload_ram());
            limits.push((
                (room / spec.ring_bytes().max(1)).saturating_sub(spec.butler.queue_depth() as u64),
                SearchLimit::Memory,
            ));
        }
        let (n, why) = tightest(ENGINE_MAX_VOICES, limits);
        ((n.max(1)) as u32, why)
    }
}

impl Sampler {
    /// One run at the voice count asked for: its verdict, figures and notes.
    fn single_run(
        &self,
        env: &mut Env<'_>,
        mut out: RunOutcome,
        lib: &Arc<Library>,
        spans: &[Span],
    ) -> Result<RunOutcome> {
        let mut spec = self.spec(self.voices, 0, longest(lib));
        spec.duration_ns = self.planned_ns(&spec);
        spec.validate()?;
        let o = self.one(env, &spec, lib, spans, &mut RingMemory::new())?;
        out.findings
            .extend(run_findings(&o, spec.period_ns() as f64 / 1000.0));
        out.interrupted = o.interrupted;
        out.rows.push(RunRow {
            label: format!("{} voices: {}", o.voices, o.verdict.word()),
            metrics: outcome_metrics(&o),
        });
        out.detail = Some(Detail::Sampler(Box::new(o)));
        Ok(out)
    }

    /// The search for the most voices: from the first guess of a round robin over the
    /// library's streams, every probe as long as the rings need, a confirmation of at least
    /// `CONFIRM_RUN_S`; its row, its trail and its record.
    fn find_max_run(
        &mut self,
        env: &mut Env<'_>,
        mut out: RunOutcome,
        lib: &Arc<Library>,
        spans: &[Span],
    ) -> Result<RunOutcome> {
        let rates = self.rates(env, lib, spans)?;
        let per_voice = self.format.bytes_per_second() as f64 * lib.streamed_share();
        let guess = rates.round_robin_read / per_voice.max(1.0);
        let naive = (rates.sequential_read / per_voice.max(1.0)).floor();
        let mut base = self.spec(1, 0, longest(lib));
        base.duration_ns = self.planned_ns(&base);
        base.stop_early = true;
        base.locate_queue_depth = Some(LOCATE_QUEUE_DEPTH);
        base.validate()?;
        let (limit, why) = self.limit(env, lib, &base);
        let (world, cancel) = (env.ctl.world, env.ctl.cancel);
        let first = ((guess * 0.95) as u32).max(1);
        let mut rings = RingMemory::new();
        let cap = find_max_shared(world, cancel, first, limit, 0.02, |v, confirm| {
            let mut s = base.clone();
            s.play_tracks = v;
            if confirm {
                s.duration_ns = s.duration_ns.max((CONFIRM_RUN_S * 1e9) as u64);
            }
            let run = self.one(env, &s, lib, spans, &mut rings);
            probe_of(env, v, confirm, run, outcome_metrics, (false, false))
        })?;
        let limited_by = cap.hit_limit.then_some(why);
        self.limited_by = limited_by;
        let label = format!("{} · {}", self.profile.policy.profile, self.butler);
        out.rows.push(answer_row(&label, &cap, naive, lib, &base));
        out.findings.push(search_trail(&label, &cap, limited_by));
        out.detail = Some(Detail::Search(SearchDetail {
            wave_share: 1.0,
            naive_tracks: naive,
            first_guess_tracks: guess,
            first_guess_parallel_tracks: guess,
            rates_bytes_per_s: rates,
            searches: vec![report(label, &base, (cap.answer, 0), limited_by, cap)],
            repetitions: Vec::new(),
        }));
        Ok(out)
    }
}

/// The instrument load: the start of every sample (`preload` bytes, `ram` in all) read into
/// one buffer with a slot per sample, as the sampler does when a template opens, and checked.
fn instrument_load(
    spans: &[Span],
    lens: &[u64],
    preload: u64,
    ram: u64,
    ctl: &crate::control::Control<'_>,
) -> Result<AlignedBuf> {
    let mut buf = AlignedBuf::try_new((lens.len() as u64 * preload) as usize)?;
    ctl.progress.begin(
        "instrument load (preloads)",
        ram,
        crate::control::ProgressUnit::Bytes,
    );
    let mut done = 0;
    for (i, s) in spans.iter().enumerate() {
        if ctl.cancelled() {
            ctl.progress.end();
            return Err(Error::Interrupted);
        }
        let n = preload.min(lens[i]) as usize;
        let at = i * preload as usize;
        s.file
            .read_exact_at(&mut buf[at..at + n], s.start)
            .map_err(|e| Error::io(format!("cannot read {}", s.path.display()), e))?;
        let id = s.content_id.expect("our own media");
        content::verify(&buf[at..at + n], id, s.start, true).map_err(|m| Error::Verify {
            path: s.path.clone(),
            offset: m.offset,
            detail: m.detail,
        })?;
        done += n as u64;
        ctl.progress.set(done);
    }
    ctl.progress.end();
    Ok(buf)
}

/// The longest sample of the library, in bytes.
fn longest(lib: &Library) -> u64 {
    lib.lens.iter().copied().max().unwrap_or(0)
}

/// The search's row: the most voices beside the naive count, the headroom the answer left, the
/// probes, and the memory the preloads and rings take.
fn answer_row(label: &str, cap: &Capacity, naive: f64, lib: &Library, base: &StreamSpec) -> RunRow {
    let at_answer = cap.probes.iter().rev().find(|p| p.count == cap.answer);
    let streams = u64::from(cap.answer) + base.butler.queue_depth() as u64;
    RunRow {
        label: label.to_string(),
        metrics: vec![
            metric(&m::VOICES, f64::from(cap.answer)),
            metric(&m::NAIVE_VOICES, naive),
            metric(
                &m::WORST_HEADROOM_PCT,
                at_answer.map_or(0.0, |a| a.worst_headroom_pct),
            ),
            metric(&m::PROBES, cap.probes.len() as f64),
            metric(&m::PRELOAD_RAM_BYTES, lib.preload_ram() as f64),
            metric(&m::RAM_BYTES, (base.ring_bytes() * streams) as f64),
        ],
    }
}

/// The figures of one run.
fn outcome_metrics(o: &SamplerOutcome) -> Vec<Metric> {
    let mut v = vec![
        metric(&m::VOICES, f64::from(o.voices)),
        metric(&m::DROPOUTS, o.dropouts as f64),
        metric(&m::NOTES, o.notes as f64),
        metric(&m::STREAMED_MB_PER_S, o.streamed_mb_per_s()),
        metric(&m::WORST_HEADROOM_PCT, o.worst_headroom_pct),
        metric(&m::LOCATE_MS, o.locate_ms),
        metric(&m::PRELOAD_RAM_BYTES, o.preload_ram_bytes as f64),
        metric(&m::RAM_BYTES, o.ring_ram_bytes as f64),
    ];
    if let Some(s) = &o.first_read_slack {
        v.push(metric(&m::FIRST_READ_SLACK_MS_P50, s.p50_us / 1000.0));
    }
    if let Some(p1) = o.first_read_slack_p1_ms {
        v.push(metric(&m::FIRST_READ_SLACK_MS_P1, p1));
    }
    if let Some(min) = o.first_read_slack_min_ms {
        v.push(metric(&m::FIRST_READ_SLACK_MS_MIN, min));
    }
    if let Some(i) = o.butler_idle_pct {
        v.push(metric(&m::BUTLER_IDLE_PCT, i));
    }
    if let Some(w) = o.butler_cpu_wait_max_ms {
        v.push(metric(&m::BUTLER_CPU_WAIT_MS_MAX, w));
    }
    if let Some(l) = &o.read_latency {
        v.push(metric(&m::READ_LATENCY_US_P99, l.p99_us));
    }
    if let Some(l) = &o.tick_lateness {
        v.push(metric(&m::TICK_LATE_US_P99, l.p99_us));
        v.push(metric(&m::TICK_LATE_US_MAX, l.max_us));
    }
    if !o.simulated {
        v.push(metric(&m::TICK_CPU_PCT, o.tick_cpu_pct));
        v.push(metric(&m::BUTLER_CPU_PCT, o.butler_cpu_pct));
    }
    v
}

/// What one run observed besides its figures.
fn run_findings(o: &SamplerOutcome, period_us: f64) -> Vec<Finding> {
    let mut f: Vec<Finding> = not_real_time(o).into_iter().collect();
    f.extend(late_tick(o, period_us));
    f.extend(verdict_notes(o, o.preload_ms, None));
    f.push(Finding::Voices {
        voices: o.voices,
        notes: o.notes,
        steals: o.steals,
        seconds: o.ran_ms / 1000.0,
        preload_ms: o.preload_ms,
        slack_min_ms: o.first_read_slack_min_ms,
        late: o.late_first_reads,
    });
    f
}

impl Workload for Sampler {
    fn name(&self) -> &'static str {
        "sampler"
    }

    fn uses_disk(&self) -> bool {
        self.device.is_none()
    }

    fn simulated_device(&self) -> Option<&str> {
        self.device.as_ref().map(|d| d.name.as_str())
    }

    fn title(&self) -> String {
        let what = if self.find_max {
            "Most sampler voices"
        } else {
            "Sampler voices"
        };
        format!(
            "{what}: {}, profile {}, {} preload ({:.0} ms), {} reads, {} samples, {} notes/s{}",
            self.format,
            self.profile.policy.profile,
            fmt_size(self.profile.preload_bytes),
            self.profile.preload_bytes as f64 / self.format.bytes_per_second() as f64 * 1e3,
            fmt_size(self.profile.policy.read_max_bytes),
            self.library.files,
            self.notes_per_s,
            match &self.device {
                Some(m) => format!(", simulated device {}", m.name),
                None => String::new(),
            }
        )
    }

    fn settings(&self) -> serde_json::Value {
        let spec = self.spec(self.voices, 0, 0);
        serde_json::json!({
            "format": self.format,
            "library": self.library,
            "voices": self.voices,
            "notes_per_s": self.notes_per_s,
            "profile": self.profile.policy.profile,
            "preload_bytes": self.profile.preload_bytes,
            "preload_stated": self.profile.preload_stated,
            "ring_bytes": spec.ring_bytes(),
            "chunk_bytes": spec.policy.chunk_bytes,
            "read_bytes": spec.policy.read_max_bytes,
            "whole_sample": self.profile.whole_sample,
            "butler": self.butler,
            "period_frames": self.period_frames,
            "margin": self.margin,
            "duration_s": self.duration.map(|d| d.as_secs_f64()),
            "device_model": self.device,
            "find_max": self.find_max,
            "max_voices": self.max_voices,
            "direct": spec.policy.direct,
            "profile_source": spec.policy.source,
        })
    }

    fn run_once(&mut self, env: &mut Env<'_>, _run: u32) -> Result<RunOutcome> {
        let mut out = RunOutcome::default();
        let (lib, spans, load_ms) = self.library(env)?;
        out.cached = self.device.is_none() && !self.profile.policy.direct;
        if out.cached {
            out.findings
                .extend(page_cache_notes(&self.profile.policy.profile, None));
        }
        if let Some(ms) = load_ms {
            out.findings.push(Finding::InstrumentLoad {
                samples: lib.lens.len() as u32,
                preload_bytes: lib.preload_ram(),
                load_ms: ms,
            });
        }
        if self.find_max {
            self.find_max_run(env, out, &lib, &spans)
        } else {
            self.single_run(env, out, &lib, &spans)
        }
    }

    fn findings(&self, s: &Section) -> Vec<Finding> {
        let mut n = Vec::new();
        if !self.find_max {
            return n;
        }
        if let Some(first) = s.rows.first() {
            let get = |d: &m::Def| first.get(d).map_or(0.0, |f| f.spread.median);
            n.push(Finding::VoicesAnswer {
                voices: get(&m::VOICES),
                naive_voices: get(&m::NAIVE_VOICES),
                notes_per_s: self.notes_per_s,
                limited_by: self.limited_by,
            });
        }
        n.push(Finding::SamplerHoldsFor {
            profile: self.profile.policy.profile.clone(),
            format: self.format.to_string(),
            preload_bytes: self.profile.preload_bytes,
            read_bytes: self.profile.policy.read_max_bytes,
            samples: self.library.files,
            notes_per_s: self.notes_per_s,
            simulated: self.device.is_some(),
        });
        n
    }
}
