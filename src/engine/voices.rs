//! The sampler scenario of the streaming loop: V voices sounding at once from a library of
//! sample files, each playing the start of its sample from RAM (the preload) while its stream,
//! from the end of the preload on, must be read into the voice's ring before the preload runs
//! out (the first-read deadline: P ÷ data rate). A voice whose note ends starts a new one at once;
//! on top of that, note-ons arrive as a Poisson process and steal the oldest voice. So V sets the
//! bandwidth and the note rate how many first-read deadlines fall each second.
//!
//! The tick side ([`VoicePlayer`]) plays every voice each period — preload from RAM, the rest
//! from its stream's ring — counts dropouts (a voice whose ring lacks the period) and picks the
//! notes; it tells the butler side ([`Handover`]) through a lock-free queue which voice starts
//! which sample. The butler side gives the note a stream from a pool of V + queue depth rings
//! (as LinuxSampler keeps 90 streams for 64 voices: a stolen voice's stream may still have a
//! read in flight, and its new note must not wait for it), hands it to the voice with the
//! note's generation, returns the old stream to the pool once nothing of it is in flight, and
//! times each note's first read against its deadline.

use super::planner::{Planner, Request};
use super::seams::{ButlerSide, EngineOut, TickSide};
use super::spsc::Spsc;
use super::telemetry::FillSeries;
use super::tick::{Played, check_piece, play_ring_bytes};
use super::{StreamSpec, Track};
use crate::audio::DATA_OFFSET;
use crate::content;
use crate::io::AlignedBuf;
use crate::stats::LatencyHist;
use rand::{Rng, SeedableRng, rngs::SmallRng};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Popularity skew: the k-th most played sample is played in proportion to 1 / k^ZIPF_S (a few
/// samples of an instrument, its middle notes, are played far more than the rest).
pub const ZIPF_S: f64 = 1.0;

/// A sample library as a sampler holds it.
pub struct Library {
    /// Each sample's audio bytes (whole blocks).
    pub lens: Vec<u64>,
    /// Each sample file's content id (the tags its blocks carry).
    pub content_ids: Vec<u32>,
    /// Bytes of each sample's start held in RAM (the whole sample where it is shorter).
    pub preload_bytes: u64,
    /// The preloads, `preload_bytes` per sample, as read at instrument load (None in simulation).
    pub preload: Option<AlignedBuf>,
    /// Cumulative popularity: a note picks sample i when a uniform draw falls in
    /// `cdf[i-1]..cdf[i]`.
    pub cdf: Vec<f64>,
}

impl Library {
    /// `lens` with `preload_bytes` of each, popularity by a seeded shuffle of Zipf weights.
    pub fn new(lens: Vec<u64>, content_ids: Vec<u32>, preload_bytes: u64, seed: u64) -> Library {
        let n = lens.len();
        let mut rank: Vec<usize> = (0..n).collect();
        let mut rng = SmallRng::seed_from_u64(seed ^ 0x5a4d_9e11);
        for i in (1..n).rev() {
            rank.swap(i, rng.random_range(0..=i));
        }
        let weights: Vec<f64> = rank
            .iter()
            .map(|&r| 1.0 / ((r + 1) as f64).powf(ZIPF_S))
            .collect();
        let total: f64 = weights.iter().sum();
        let mut acc = 0.0;
        let cdf = weights
            .iter()
            .map(|w| {
                acc += w / total;
                acc
            })
            .collect();
        Library {
            lens,
            content_ids,
            preload_bytes,
            preload: None,
            cdf,
        }
    }

    /// The preload of sample `s`: its first bytes, at most the sample.
    pub fn preload_of(&self, s: usize) -> u64 {
        self.preload_bytes.min(self.lens[s])
    }

    /// The sample a uniform draw `u` in [0, 1) picks.
    pub fn pick(&self, u: f64) -> usize {
        self.cdf
            .partition_point(|&c| c <= u)
            .min(self.lens.len() - 1)
    }

    /// The share of a voice's bytes that come from the disk, over notes played to their end:
    /// popularity-weighted (length − preload) ÷ popularity-weighted length (a voice plays each
    /// note for as long as its sample lasts).
    pub fn streamed_share(&self) -> f64 {
        let (mut streamed, mut total) = (0.0, 0.0);
        let mut prev = 0.0;
        for (s, &c) in self.cdf.iter().enumerate() {
            let w = c - prev;
            prev = c;
            streamed += w * (self.lens[s] - self.preload_of(s)) as f64;
            total += w * self.lens[s] as f64;
        }
        if total > 0.0 { streamed / total } else { 0.0 }
    }

    /// The RAM the preloads take.
    pub fn preload_ram(&self) -> u64 {
        (0..self.lens.len()).map(|s| self.preload_of(s)).sum()
    }
}

/// What the tick asks of the butler: voice `voice` starts note `generation` on `sample` at
/// `t_ns` (since the clock started).
#[derive(Debug, Clone, Copy, Default)]
pub struct Start {
    pub voice: u32,
    pub generation: u32,
    pub sample: u32,
    pub t_ns: u64,
}

/// What the tick and the butler share: the queue of starts, and for each voice the stream the
/// butler has handed it, with the note's generation (`generation << 32 | stream`).
pub struct Shared {
    pub starts: Spsc<Start>,
    pub handed: Vec<AtomicU64>,
}

/// Nothing handed yet.
const NO_STREAM: u64 = u32::MAX as u64;

impl Shared {
    pub fn new(voices: usize) -> Arc<Shared> {
        Arc::new(Shared {
            // Every voice could start twice before the butler looks (a note end and a steal):
            // room for that, and for a burst of note-ons beyond it.
            starts: Spsc::new(2 * voices + 4096, Start::default()),
            handed: (0..voices).map(|_| AtomicU64::new(NO_STREAM)).collect(),
        })
    }

    /// The stream of voice `v` for note `generation`, once the butler has handed it over.
    fn stream_of(&self, v: usize, generation: u32) -> Option<usize> {
        let h = self.handed[v].load(Ordering::Acquire);
        ((h >> 32) as u32 == generation && h != NO_STREAM).then_some((h & NO_STREAM) as usize)
    }

    fn hand(&self, v: usize, generation: u32, stream: u32) {
        self.handed[v].store(
            (u64::from(generation) << 32) | u64::from(stream),
            Ordering::Release,
        );
    }
}

/// The notes the run plays: how many voices, how often a note-on steals one, from which
/// library, on which seed.
pub struct Notes {
    pub voices: u32,
    pub notes_per_s: f64,
    pub seed: u64,
}

/// One voice on the tick side.
#[derive(Clone, Copy, Default)]
struct Voice {
    generation: u32,
    sample: u32,
    /// Bytes of the note played (preload and stream).
    pos: u64,
    /// The note's bytes: its sample's length.
    len: u64,
    started_ns: u64,
    /// A dropout in this note already counted.
    dropped: bool,
}

/// The audio the voices' rings lack over time (what they could hold of the rest of their notes
/// less what they hold), in buckets of a few ticks, and what the voices consumed from them: a
/// growing lack is audio the butler did not bring. The lack, not the fill: a ring that holds the
/// whole rest of its sample (sfizz) empties as its note plays however fast the butler is.
/// Allocated for the whole run when made.
pub struct Stock {
    bucket_ticks: u64,
    /// Each bucket's summed stock (bytes held less bytes the rings could hold) and ticks.
    sums: Vec<(f64, u32)>,
    /// Bytes the voices took from their rings, up to the end of each bucket.
    consumed_at: Vec<u64>,
    consumed: u64,
    tick: u64,
}

impl Stock {
    fn new(total_ticks: u64) -> Stock {
        let bucket_ticks = 16;
        let n = (total_ticks / bucket_ticks + 2) as usize;
        Stock {
            bucket_ticks,
            sums: Vec::with_capacity(n),
            consumed_at: Vec::with_capacity(n),
            consumed: 0,
            tick: 0,
        }
    }

    fn record(&mut self, stock: f64, consumed: u64) {
        self.consumed += consumed;
        let b = (self.tick / self.bucket_ticks) as usize;
        if b == self.sums.len() && self.sums.len() < self.sums.capacity() {
            self.sums.push((0.0, 0));
            self.consumed_at.push(0);
        }
        if let Some(s) = self.sums.get_mut(b) {
            s.0 += stock;
            s.1 += 1;
            self.consumed_at[b] = self.consumed;
        }
        self.tick += 1;
    }

    /// How much less than the voices consumed the butler brought from `from_ns` on, in percent
    /// of the consumption: the least-squares slope of the stock against what was consumed
    /// meanwhile. None when fewer than eight buckets follow.
    pub fn shortfall_pct(&self, from_ns: u64, period_ns: u64) -> Option<f64> {
        let bucket_ns = self.bucket_ticks * period_ns;
        let first = (from_ns.div_ceil(bucket_ns.max(1))) as usize;
        // Whole buckets only.
        let last = self
            .sums
            .iter()
            .rposition(|s| u64::from(s.1) == self.bucket_ticks)?;
        if last < first + 8 {
            return None;
        }
        let pts: Vec<(f64, f64)> = (first..=last)
            .map(|b| {
                let (sum, n) = self.sums[b];
                ((b as u64 * bucket_ns) as f64 / 1e9, sum / f64::from(n))
            })
            .collect();
        let n = pts.len() as f64;
        let (mt, my) = pts
            .iter()
            .fold((0.0, 0.0), |(a, b), (t, y)| (a + t / n, b + y / n));
        let (sxy, sxx) = pts.iter().fold((0.0, 0.0), |(a, b), (t, y)| {
            (a + (t - mt) * (y - my), b + (t - mt) * (t - mt))
        });
        let secs = (last - first) as f64 * bucket_ns as f64 / 1e9;
        let rate = (self.consumed_at[last] - self.consumed_at[first]) as f64 / secs.max(1e-9);
        (sxx > 0.0 && rate > 0.0).then(|| -100.0 * (sxy / sxx) / rate)
    }
}

/// The tick side: plays every voice each period and picks the notes. Allocates nothing after
/// it is made.
pub struct VoicePlayer {
    lib: Arc<Library>,
    shared: Arc<Shared>,
    voices: Vec<Voice>,
    rng: SmallRng,
    notes_per_s: f64,
    next_note_ns: f64,
    period_bytes: u64,
    margin: f64,
    pub played: Played,
    pub notes: u64,
    pub steals: u64,
    /// Periods a voice had nothing to play (its ring short of the period).
    pub dropouts: u64,
    /// Notes with a dropout.
    pub dropout_notes: u64,
    pub first_dropout_ns: Option<u64>,
    /// Starts the queue could not take (never, with its size).
    pub lost_starts: u64,
    pub series: FillSeries,
    /// The audio held in the rings over time.
    pub stock: Stock,
    /// The lowest headroom a streaming voice's ring fell to, as a share of what it could hold.
    pub worst: f64,
    pub ticks: u64,
}

impl VoicePlayer {
    /// The player of `notes` over `lib` for `spec`'s periods. `tracks` are the voices, bound
    /// already (the run starts with every voice part way into a note, as in a session that has
    /// been playing); `initial` says which sample and how far.
    pub fn new(
        spec: &StreamSpec,
        lib: Arc<Library>,
        shared: Arc<Shared>,
        notes: &Notes,
        initial: &[(u32, u64)],
    ) -> VoicePlayer {
        content::warm();
        let mut rng = SmallRng::seed_from_u64(notes.seed);
        let first = exp_gap(&mut rng, notes.notes_per_s);
        let voices = initial
            .iter()
            .map(|&(sample, pos)| Voice {
                generation: 0,
                sample,
                pos,
                len: lib.lens[sample as usize],
                started_ns: 0,
                dropped: false,
            })
            .collect();
        VoicePlayer {
            lib,
            shared,
            voices,
            rng,
            notes_per_s: notes.notes_per_s,
            next_note_ns: first,
            period_bytes: spec.period_bytes(),
            margin: spec.margin,
            played: Played::default(),
            notes: 0,
            steals: 0,
            dropouts: 0,
            dropout_notes: 0,
            first_dropout_ns: None,
            lost_starts: 0,
            series: FillSeries::new(spec.ticks(), spec.period_ns()),
            stock: Stock::new(spec.ticks()),
            worst: 1.0,
            ticks: 0,
        }
    }

    /// A new note on voice `v` at `t_ns`.
    fn start(&mut self, v: usize, t_ns: u64) {
        let s = self.lib.pick(self.rng.random::<f64>());
        let voice = &mut self.voices[v];
        voice.generation = voice.generation.wrapping_add(1);
        *voice = Voice {
            generation: voice.generation,
            sample: s as u32,
            pos: 0,
            len: self.lib.lens[s],
            started_ns: t_ns,
            dropped: false,
        };
        self.notes += 1;
        if !self.shared.starts.push(Start {
            voice: v as u32,
            generation: voice.generation,
            sample: s as u32,
            t_ns,
        }) {
            self.lost_starts += 1;
        }
    }

    /// Plays `n` bytes of sample `s`'s preload from `at`, checking them as the ring's are.
    fn play_preload(&mut self, v: u32, s: usize, at: u64, n: u64) {
        let Some(pre) = &self.lib.preload else {
            return;
        };
        let base = s as u64 * self.lib.preload_bytes;
        let block = content::BLOCK as u64;
        let mut done = 0;
        while done < n {
            let pos = at + done;
            let k = (n - done).min(block - pos % block);
            let from = (base + pos) as usize;
            let bytes = &pre[from..from + k as usize];
            let tag = pos.is_multiple_of(block).then(|| &pre[from..from + 16]);
            check_piece(
                &mut self.played,
                v,
                bytes,
                tag,
                DATA_OFFSET + pos,
                self.lib.content_ids[s],
            );
            done += k;
        }
    }
}

/// What one voice did in one period, for the tick's accounting.
struct VoiceStep {
    /// Bytes its stream's ring gave.
    consumed: u64,
    /// What its ring could hold of the rest of the note less what it holds (negative: lack).
    stock: f64,
    /// Its ring's fill as a share of what it could hold of the rest, where it streams.
    headroom: Option<f64>,
}

impl VoicePlayer {
    /// Note-ons due by `t_ns` steal the oldest voice.
    fn steal_for_due_notes(&mut self, t_ns: u64) {
        while self.next_note_ns <= t_ns as f64 {
            let oldest = (0..self.voices.len())
                .min_by_key(|&v| self.voices[v].started_ns)
                .unwrap_or(0);
            if !self.voices.is_empty() {
                self.start(oldest, t_ns);
                self.steals += 1;
            }
            self.next_note_ns += exp_gap(&mut self.rng, self.notes_per_s);
        }
    }

    /// Plays voice `v` for one period at `t_ns`: its preload from RAM, the rest from its
    /// stream's ring; a ring short of what the period needs is a dropout (the voice plays on
    /// from where it was). A note that ended starts the next at once.
    fn play_voice(&mut self, tracks: &[Track], v: usize, t_ns: u64) -> VoiceStep {
        let voice = self.voices[v];
        let s = voice.sample as usize;
        let preload = self.lib.preload_of(s);
        let mut want = self.period_bytes.min(voice.len - voice.pos);
        let (mut played, mut consumed) = (0, 0);
        if voice.pos < preload {
            let a = want.min(preload - voice.pos);
            self.play_preload(v as u32, s, voice.pos, a);
            played += a;
            want -= a;
        }
        let stream = self.shared.stream_of(v, voice.generation);
        if want > 0 {
            match stream.map(|st| (st, &tracks[st])) {
                Some((st, t)) if t.ring.fill() >= want => {
                    if t.ring.has_memory() {
                        play_ring_bytes(&mut self.played, st as u32, t, want);
                    }
                    t.ring.commit_consume(want);
                    played += want;
                    consumed += want;
                }
                _ => {
                    self.dropouts += 1;
                    if let Some(st) = stream {
                        tracks[st].note_xrun(t_ns);
                    }
                    self.first_dropout_ns.get_or_insert(t_ns);
                    if !voice.dropped {
                        self.voices[v].dropped = true;
                        self.dropout_notes += 1;
                    }
                }
            }
        }
        self.voices[v].pos += played;
        let pos = self.voices[v].pos;
        let mut step = VoiceStep {
            consumed,
            stock: 0.0,
            headroom: None,
        };
        if let Some(st) = stream {
            let t = &tracks[st];
            let rest = voice.len - pos.max(preload).min(voice.len);
            step.stock = -(t.ring.capacity().min(rest) as f64 - t.ring.fill() as f64);
            let could = t.ring.capacity().min(voice.len - pos);
            if pos >= preload && could > 0 {
                step.headroom = Some(t.ring.fill() as f64 / could as f64);
            }
        }
        if pos >= voice.len {
            self.start(v, t_ns);
        }
        step
    }
}

/// A Poisson process's next gap, in ns.
fn exp_gap(rng: &mut SmallRng, per_s: f64) -> f64 {
    if per_s <= 0.0 {
        return f64::INFINITY;
    }
    let u: f64 = rng.random::<f64>();
    -(1.0 - u).ln() / per_s * 1e9
}

impl TickSide for VoicePlayer {
    fn run(&mut self, tracks: &[Track], t_ns: u64) {
        self.steal_for_due_notes(t_ns);
        let mut worst = f64::INFINITY;
        let (mut sum, mut counted) = (0.0, 0u32);
        let (mut stock, mut consumed) = (0.0f64, 0u64);
        for v in 0..self.voices.len() {
            let step = self.play_voice(tracks, v, t_ns);
            stock += step.stock;
            consumed += step.consumed;
            if let Some(h) = step.headroom {
                worst = worst.min(h);
                sum += h;
                counted += 1;
            }
        }
        self.stock.record(stock, consumed);
        if counted > 0 {
            self.worst = self.worst.min(worst);
            self.series.record(worst, sum / f64::from(counted));
        } else {
            self.series.record(1.0, 1.0);
        }
        self.ticks += 1;
    }

    fn cannot_pass(&self, _spec: &StreamSpec) -> bool {
        self.dropouts > 0 || self.worst < self.margin
    }
}

/// The first-read slack of every note: how long before its preload ran out its stream's first
/// read landed.
#[derive(Debug, Default)]
pub struct Slack {
    /// Slacks of reads on time.
    pub on_time: LatencyHist,
    /// Reads that landed after their deadline.
    pub late: u64,
    /// The smallest slack, in ns (negative: late).
    pub min_ns: Option<i64>,
}

impl Slack {
    /// The slack 99% of first reads had at least, in ms: from the late ones (negative, the
    /// smallest known) when more than 1% were late, else from the on-time ones.
    pub fn p1_ms(&self) -> Option<f64> {
        let total = self.on_time.count() + self.late;
        if total == 0 {
            return None;
        }
        let k = 0.01 * total as f64;
        if self.late as f64 >= k || self.on_time.count() == 0 {
            return self.min_ns.map(|n| n as f64 / 1e6);
        }
        let q = ((k - self.late as f64) / self.on_time.count() as f64).clamp(0.0, 1.0);
        Some(self.on_time.quantile_us(q) / 1000.0)
    }
}

/// The butler side: takes the tick's starts, gives each note a free stream, returns streams
/// to the pool once nothing of theirs is in flight, and times each note's first read.
pub struct Handover {
    lib: Arc<Library>,
    shared: Arc<Shared>,
    /// Each voice's stream, as the butler last handed it.
    stream_of: Vec<Option<u32>>,
    /// Streams free for a new note.
    free: Vec<u32>,
    /// Streams whose note ended while a read into them was in flight: free once it lands.
    draining: Vec<bool>,
    /// Starts waiting for a free stream (none while the pool holds voices + queue depth).
    waiting: Vec<Start>,
    /// Each stream's note's first-read deadline, until that read lands.
    first: Vec<Option<u64>>,
    bytes_per_s: f64,
    pub slack: Slack,
}

impl Handover {
    /// The hand-over of `voices` voices over `streams` streams (the first `voices` already bound
    /// to them, one each).
    pub fn new(
        lib: Arc<Library>,
        shared: Arc<Shared>,
        voices: usize,
        streams: usize,
        bytes_per_s: u64,
    ) -> Handover {
        Handover {
            lib,
            shared,
            stream_of: (0..voices as u32).map(Some).collect(),
            free: (voices as u32..streams as u32).rev().collect(),
            draining: vec![false; streams],
            waiting: Vec::with_capacity(voices),
            first: vec![None; streams],
            bytes_per_s: bytes_per_s as f64,
            slack: Slack::default(),
        }
    }

    /// Gives note `c` stream `st` and hands it to the voice.
    fn bind(&mut self, tracks: &[Track], st: u32, c: Start) {
        let s = c.sample as usize;
        let preload = self.lib.preload_of(s);
        let stream = self.lib.lens[s] - preload;
        tracks[st as usize].rebind(
            c.sample,
            self.lib.content_ids[s],
            DATA_OFFSET + preload,
            stream,
        );
        self.stream_of[c.voice as usize] = Some(st);
        self.shared.hand(c.voice as usize, c.generation, st);
        self.first[st as usize] =
            (stream > 0).then(|| c.t_ns + (preload as f64 / self.bytes_per_s * 1e9) as u64);
    }

    /// Stream `st`'s note is over: back to the pool, at once or when its read lands.
    fn release(&mut self, tracks: &[Track], planner: &Planner, st: u32) {
        tracks[st as usize].deactivate();
        self.first[st as usize] = None;
        if planner.busy(st as usize) {
            self.draining[st as usize] = true;
        } else {
            self.free.push(st);
        }
    }
}

impl ButlerSide for Handover {
    fn poll(&mut self, tracks: &[Track], planner: &mut Planner, _now_ns: u64) {
        let mut any = false;
        while let Some(c) = self.shared.starts.pop() {
            let v = c.voice as usize;
            if let Some(old) = self.stream_of[v].take() {
                self.release(tracks, planner, old);
            }
            // A start still waiting for this voice is superseded.
            self.waiting.retain(|w| w.voice != c.voice);
            match self.free.pop() {
                Some(st) => self.bind(tracks, st, c),
                None => self.waiting.push(c),
            }
            any = true;
        }
        if any {
            planner.invalidate();
        }
    }

    fn completed(&mut self, tracks: &[Track], planner: &mut Planner, r: &Request, now_ns: u64) {
        let st = r.track as usize;
        if self.draining[st] {
            self.draining[st] = false;
            if self.waiting.is_empty() {
                self.free.push(st as u32);
            } else {
                let c = self.waiting.remove(0);
                self.bind(tracks, st as u32, c);
                planner.invalidate();
            }
        } else if let Some(deadline) = self.first[st].take() {
            let slack = deadline as i64 - now_ns as i64;
            self.slack.min_ns = Some(self.slack.min_ns.map_or(slack, |m| m.min(slack)));
            if slack >= 0 {
                self.slack
                    .on_time
                    .record(Duration::from_nanos(slack as u64));
            } else {
                self.slack.late += 1;
            }
        }
    }
}

/// Where each voice is when the run starts, as in a session that has been playing: the note
/// sounding at a random moment is length-biased (a sample is found sounding in proportion to
/// how often it is played and how long it lasts), and it is a uniform share of the way through
/// (in whole blocks). Voices drawn otherwise end their notes too soon and spend the first
/// seconds playing preloads: on a device capped at 77.6 voices, 83 passed. Returns (sample,
/// bytes of the note already played).
pub fn initial_positions(lib: &Library, voices: u32, seed: u64) -> Vec<(u32, u64)> {
    let mut rng = SmallRng::seed_from_u64(seed ^ 0x1417_c0de);
    let mut prev = 0.0;
    let mut acc = 0.0;
    let biased: Vec<f64> = lib
        .cdf
        .iter()
        .zip(&lib.lens)
        .map(|(&c, &len)| {
            acc += (c - prev) * len as f64;
            prev = c;
            acc
        })
        .collect();
    (0..voices)
        .map(|_| {
            let u = rng.random::<f64>() * acc;
            let s = biased.partition_point(|&c| c <= u).min(lib.lens.len() - 1);
            let blocks = lib.lens[s] / 4096;
            let at = rng.random_range(0..blocks.max(1)) * 4096;
            (s as u32, at)
        })
        .collect()
}

/// Binds voice v to stream v where `initial` puts it (its stream from there on, or from the end
/// of its preload for a voice still playing it) and hands it over; the locate then fills them.
pub fn bind_initial(lib: &Library, shared: &Shared, tracks: &[Track], initial: &[(u32, u64)]) {
    for (v, &(s, pos)) in initial.iter().enumerate() {
        let s = s as usize;
        let from = pos.max(lib.preload_of(s));
        tracks[v].rebind(
            s as u32,
            lib.content_ids[s],
            DATA_OFFSET + from,
            lib.lens[s] - from,
        );
        shared.hand(v, 0, v as u32);
    }
}

/// The lengths of a library of `files` samples of `format`, drawn between `min_s` and `max_s`
/// seconds, log-uniformly (many short samples, fewer long ones, as a real library's), in whole
/// frames and blocks.
pub fn library_lengths(
    files: u32,
    min_s: f64,
    max_s: f64,
    format: &crate::audio::Format,
    seed: u64,
) -> Vec<u64> {
    let mut rng = SmallRng::seed_from_u64(seed ^ 0x11b_4a7e);
    let unit = crate::audio::lcm(4096, format.bytes_per_frame());
    let rate = format.bytes_per_second() as f64;
    let (lo, hi) = (min_s.max(1e-3).ln(), max_s.max(min_s).max(1e-3).ln());
    (0..files)
        .map(|_| {
            let secs = (lo + rng.random::<f64>() * (hi - lo)).exp();
            ((secs * rate) as u64 / unit).max(1) * unit
        })
        .collect()
}

/// A sampler's run as the engine measured it, for the verdict to judge
/// (`verdict::voices::judge_run`).
pub struct VoicesRun {
    /// The loop's measurements, with the voices' own (dropouts, notes, their stock) in `side`.
    pub engine: EngineOut<VoicePlayer>,
    /// Every note's first-read slack.
    pub slack: Slack,
    pub lib: Arc<Library>,
    pub voices: u32,
    pub notes_per_s: f64,
    pub simulated: bool,
    /// The process's peak resident memory after the run (real runs).
    pub peak_rss_bytes: Option<u64>,
}

/// A sampler run on sample files (real or simulated) through the one streaming loop.
#[allow(clippy::too_many_arguments)]
fn play<Tm: super::seams::Timing>(
    spec: &StreamSpec,
    notes: &Notes,
    lib: &Arc<Library>,
    tracks: &[Track],
    backend: &mut dyn crate::io::IoBackend,
    locate: Option<&mut dyn crate::io::IoBackend>,
    timing: &Tm,
    files: &super::seams::Files<'_>,
    device: Option<&crate::target::DeviceInfo>,
    ctl: &crate::control::Control<'_>,
    simulated: bool,
) -> crate::error::Result<VoicesRun> {
    let voices = notes.voices as usize;
    let shared = Shared::new(voices);
    let initial = initial_positions(lib, notes.voices, notes.seed);
    bind_initial(lib, &shared, tracks, &initial);
    let player = VoicePlayer::new(spec, Arc::clone(lib), Arc::clone(&shared), notes, &initial);
    let rate = spec.format.bytes_per_second();
    let mut handover = Handover::new(Arc::clone(lib), shared, voices, tracks.len(), rate);
    let e = super::stream_loop::run(
        spec,
        tracks,
        backend,
        locate,
        timing,
        player,
        &mut handover,
        files,
        device,
        None,
        ctl,
    )?;
    if let Some((v, off)) = e.side.played.verify_error {
        let s = tracks[v as usize].file() as usize;
        return Err(crate::error::Error::Verify {
            path: files.names[s].clone(),
            offset: off,
            detail: "a voice played data that is not what was written there (its tag or its noise differs)".into(),
        });
    }
    Ok(VoicesRun {
        slack: std::mem::take(&mut handover.slack),
        lib: Arc::clone(lib),
        voices: notes.voices,
        notes_per_s: notes.notes_per_s,
        simulated,
        peak_rss_bytes: (!simulated)
            .then(super::real_time::peak_rss_bytes)
            .flatten(),
        engine: e,
    })
}

/// The streams' rings: one per voice, and one per request that may be in flight (a stolen
/// voice's stream drains while its next note streams).
pub fn streams(spec: &StreamSpec) -> u32 {
    spec.play_tracks + spec.butler.queue_depth() as u32
}

fn voice_tracks(
    spec: &StreamSpec,
    rings: Option<&mut super::ring::RingMemory>,
) -> crate::error::Result<Vec<Track>> {
    let cap = spec.ring_bytes();
    let chunk = spec.ring_slot_bytes();
    let n = streams(spec);
    Ok(match rings {
        Some(m) => {
            m.reserve(
                n as usize,
                super::ring::Ring::capacity_for_bytes(cap, chunk) as usize,
            )?;
            (0..n)
                .map(|_| super::ring::Ring::from_memory(cap, chunk, m).map(Track::voice))
                .collect::<crate::error::Result<_>>()?
        }
        None => (0..n)
            .map(|_| Track::voice(super::ring::Ring::new(cap, chunk, false)))
            .collect(),
    })
}

/// A sample file a real run streams from.
pub struct SampleFile<'a> {
    pub file: &'a std::fs::File,
    pub path: std::path::PathBuf,
}

/// Plays `notes` on real sample files (`files[i]` holds `lib.lens[i]` bytes of audio, its
/// preload already in `lib.preload`). Ring memory comes from `rings` and goes back to it.
pub fn run_real(
    spec: &StreamSpec,
    notes: &Notes,
    lib: &Arc<Library>,
    files: &[SampleFile<'_>],
    device: Option<&crate::target::DeviceInfo>,
    rings: &mut super::ring::RingMemory,
    ctl: &crate::control::Control<'_>,
) -> crate::error::Result<VoicesRun> {
    spec.validate()?;
    let tracks = voice_tracks(spec, Some(rings))?;
    let handles: Vec<&std::fs::File> = files.iter().map(|f| f.file).collect();
    let names: Vec<std::path::PathBuf> = files.iter().map(|f| f.path.clone()).collect();
    let cached = !spec.policy.direct;
    let out = (|| {
        let (mut backend, mut locate) = super::real_time::backends(spec, &handles)?;
        play(
            spec,
            notes,
            lib,
            &tracks,
            backend.as_mut(),
            locate
                .as_mut()
                .map(|l| l.as_mut() as &mut dyn crate::io::IoBackend),
            &super::real_time::RealTime,
            &super::seams::Files {
                names: &names,
                page_cache: cached.then_some(&handles[..]),
                drop_behind: true,
                rings_ready: None,
            },
            device,
            ctl,
            false,
        )
    })();
    for t in tracks {
        if let Some(m) = t.ring.into_memory() {
            rings.give(m);
        }
    }
    out
}

/// Plays `notes` against `model` in virtual time, the library's files laid end to end on it,
/// telling `progress` what a live view shows (ring fill over virtual time).
pub fn simulate_watched(
    spec: &StreamSpec,
    notes: &Notes,
    lib: &Arc<Library>,
    model: &crate::io::device_model::DeviceModel,
    cancel: &std::sync::atomic::AtomicBool,
    progress: &dyn crate::control::Progress,
) -> crate::error::Result<VoicesRun> {
    use std::rc::Rc;
    spec.validate()?;
    let tracks = voice_tracks(spec, None)?;
    let sizes: Vec<u64> = lib.lens.iter().map(|l| DATA_OFFSET + l).collect();
    let names: Vec<std::path::PathBuf> = (0..sizes.len())
        .map(|i| format!("simulated sample {i}").into())
        .collect();
    let timing = super::virtual_time::Virtual {
        clock: Rc::new(crate::clock::SimClock::new()),
    };
    let mut backend = crate::io::device_model::SimBackend::new(
        model.clone(),
        Rc::clone(&timing.clock),
        &sizes,
        spec.butler.queue_depth(),
    );
    let mut locate = spec.locate_queue_depth.map(|q| backend.sibling(q as usize));
    play(
        spec,
        notes,
        lib,
        &tracks,
        &mut backend,
        locate.as_mut().map(|l| l as &mut dyn crate::io::IoBackend),
        &timing,
        &super::seams::Files {
            names: &names,
            page_cache: None,
            drop_behind: false,
            rings_ready: None,
        },
        None,
        &crate::control::Control {
            cancel,
            progress,
            world: &crate::studio::Alone,
        },
        true,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn popularity_is_skewed_and_the_streamed_share_follows_it() {
        let lib = Library::new(vec![4096 * 100; 1000], vec![0; 1000], 4096 * 10, 7);
        // One in ten bytes is preloaded: 90% is streamed whatever the popularity.
        assert!((lib.streamed_share() - 0.9).abs() < 1e-9);
        let mut count = vec![0u32; 1000];
        for k in 0..100_000 {
            count[lib.pick((k as f64 + 0.5) / 100_000.0)] += 1;
        }
        count.sort_unstable();
        count.reverse();
        // Zipf over 1000: the most played about 1/H(1000) = 13%; the top ten over a third.
        assert!((12_000..14_500).contains(&count[0]), "{}", count[0]);
        assert!(count[..10].iter().sum::<u32>() > 35_000);
        let lib = Library::new(vec![4096 * 10, 4096 * 1000], vec![0; 2], 4096 * 20, 1);
        assert_eq!(
            lib.preload_of(0),
            4096 * 10,
            "a short sample is preloaded whole"
        );
        assert_eq!(lib.preload_ram(), 4096 * 30);
    }

    #[test]
    fn initial_voices_are_length_biased_and_part_way_through_in_whole_blocks() {
        // Two samples, one ten times longer: each is found sounding in proportion to how often
        // it is played times how long it lasts.
        let lib = Library::new(vec![4096 * 10, 4096 * 100], vec![0; 2], 4096, 3);
        let (w_short, w_long) = (lib.cdf[0], 1.0 - lib.cdf[0]);
        let expected = 11_000.0 * 10.0 * w_long / (10.0 * w_long + w_short);
        let at = initial_positions(&lib, 11_000, 9);
        let long = at
            .iter()
            .filter(|(s, _)| lib.lens[*s as usize] == 4096 * 100)
            .count();
        assert!(
            (long as f64 - expected).abs() < 150.0,
            "{long} of 11000, {expected:.0} expected"
        );
        for (s, pos) in at {
            assert!(
                pos < lib.lens[s as usize] && pos.is_multiple_of(4096),
                "{pos}"
            );
        }
    }
}
