//! Where a search starts: short transfers before it — a multi-file round robin at the chunk size
//! (serially, and queued when a parallel butler is involved) for the first guesses, and a
//! sequential transfer at 1 MiB for the naive count; reads where the search plays, writes where
//! it records — and the bound tracks starting in phase put on what they suggest.

use super::files::play_files;
use super::{Multitrack, StreamKind};
use crate::audio::DATA_OFFSET;
use crate::dataset::{self, Span};
use crate::engine::shape::wave_times;
use crate::engine::virtual_time::DeviceModel;
use crate::engine::{ButlerMode, StreamSpec};
use crate::error::Result;
use crate::io::OpKind;
use crate::result::findings::{Finding, Way};
use crate::workloads::Env;
use std::time::Duration;

/// Files a first guess reads (or writes) round robin.
const GUESS_FILES: usize = 64;

/// Bytes per second a device moved, each way.
#[derive(Debug, Clone, Copy)]
pub(super) struct Rates {
    pub read: f64,
    pub write: f64,
}

/// What the short transfers before a search suggest.
pub(super) struct Estimates {
    /// Round robin at the chunk size with the butler's own queue depth.
    pub own: Rates,
    /// The same with a parallel butler's queue depth.
    pub parallel: Rates,
    /// Sequential at 1 MiB: the naive count.
    pub seq: Rates,
    pub track_rate: f64,
    pub notes: Vec<Finding>,
}

impl Estimates {
    /// Tracks in all that `r` carries for a search of `kind` with `ratio` record tracks per
    /// playback track (hdr): each second, N playback tracks cost N·rate/read and M record
    /// tracks M·rate/write of the device's time.
    pub fn tracks(&self, r: Rates, kind: StreamKind, ratio: f64) -> f64 {
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

/// What a device model serves, reads and writes alike: its round robin at the chunk and its
/// sequential rate, from its own occupancy.
fn simulated(spec: &StreamSpec, m: &DeviceModel) -> Estimates {
    let chunk = spec.policy.chunk_bytes;
    let spacing = crate::engine::shape::play_file_bytes(spec) + DATA_OFFSET;
    let rr = chunk as f64 / (m.occupancy_ns(chunk, Some(spacing)) as f64 / 1e9);
    let seq = (1u64 << 20) as f64 / (m.occupancy_ns(1 << 20, None) as f64 / 1e9);
    let both = |x: f64| Rates { read: x, write: x };
    Estimates {
        own: both(rr),
        parallel: both(rr),
        seq: both(seq),
        track_rate: spec.format.bytes_per_second() as f64,
        notes: Vec::new(),
    }
}

/// The ways a search streams: (reads, writes).
fn ways(kind: StreamKind) -> (bool, bool) {
    (kind != StreamKind::Record, kind != StreamKind::Play)
}

impl Multitrack {
    /// What short transfers suggest before a search (see the module's doc).
    pub(super) fn estimates(&self, env: &mut Env<'_>) -> Result<Estimates> {
        let spec = &self.spec;
        if let Some(m) = &self.device {
            return Ok(simulated(spec, m));
        }
        let (dd, ctl) = env.data_dir("the first guess")?;
        let play_len = crate::engine::shape::play_file_bytes(spec);
        let (play, _) = play_files(dd, spec, GUESS_FILES, play_len, ctl)?;
        let (mut span, _) =
            dataset::ensure_wavs(dd, "span", 1, &spec.format, 256 << 20, false, ctl)?;
        let span = span.remove(0);
        if !spec.policy.direct {
            // Just laid out: in the page cache, which would answer the first guess.
            dataset::drop_all_cached(&play)?;
        }
        let serial = self.round_robin(env, &play, 1)?;
        let parallel_qd = match spec.butler {
            ButlerMode::Parallel(q) => Some(q),
            ButlerMode::Serial => self.compare_parallel,
        };
        let parallel = match parallel_qd {
            Some(q) => self.round_robin(env, &play, q)?,
            None => serial,
        };
        let seq = self.sequential(env, &span)?;
        let notes = self.guess_notes(serial, parallel_qd.map(|q| (q, parallel)), seq);
        // Scattered chunk transfers that beat a sequential one came from a cache: the search
        // starts from the sequential rate then.
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
            track_rate: spec.format.bytes_per_second() as f64,
            notes,
        })
    }

    /// The rate of `play`'s files read (and written) round robin at the chunk size, `qd` in
    /// flight, each way the search streams.
    fn round_robin(&self, env: &mut Env<'_>, play: &[Span], qd: u32) -> Result<Rates> {
        let (reads, writes) = ways(self.kind);
        let refs: Vec<&Span> = play.iter().collect();
        let ranges: Vec<_> = play.iter().map(|s| (s.start, s.end)).collect();
        let chunk = self.spec.policy.chunk_bytes as u32;
        let cached = !self.spec.policy.direct;
        let mut rate = |kind: OpKind, done: &str| {
            let label = format!(
                "first guess: {} files {done} round robin, {qd} in flight",
                play.len()
            );
            let second = Duration::from_secs(1);
            env.round_robin_rate(&refs, &ranges, chunk, qd, cached, kind, second, &label)
        };
        Ok(Rates {
            read: if reads {
                rate(OpKind::Read, "read")?
            } else {
                0.0
            },
            write: if writes {
                rate(OpKind::Write, "written")?
            } else {
                0.0
            },
        })
    }

    /// The sequential rate at 1 MiB each way the search streams (the naive count's): the
    /// session's own sequential measurement where it has one, else a second of `span`.
    fn sequential(&self, env: &mut Env<'_>, span: &Span) -> Result<Rates> {
        let (reads, writes) = ways(self.kind);
        Ok(Rates {
            read: if reads {
                env.sequential_rate(OpKind::Read, span)?
            } else {
                0.0
            },
            write: if writes {
                env.sequential_rate(OpKind::Write, span)?
            } else {
                0.0
            },
        })
    }

    /// What the first guess came from, as notes: the round robin beside the sequential rate each
    /// way, the parallel butler's (queue depth and rates) where there is one, and a cache that
    /// answered the round robin.
    fn guess_notes(
        &self,
        serial: Rates,
        parallel: Option<(u32, Rates)>,
        seq: Rates,
    ) -> Vec<Finding> {
        let (reads, writes) = ways(self.kind);
        let mb = |x: f64| x / 1e6;
        let mut notes = Vec::new();
        for (on, way, rr, sq) in [
            (reads, Way::Read, serial.read, seq.read),
            (writes, Way::Write, serial.write, seq.write),
        ] {
            if on {
                notes.push(Finding::FirstGuess {
                    files: GUESS_FILES as u32,
                    way,
                    chunk_bytes: self.spec.policy.chunk_bytes,
                    round_robin_mb_s: mb(rr),
                    sequential_mb_s: mb(sq),
                });
            }
        }
        if let Some((q, parallel)) = parallel {
            notes.push(Finding::ParallelGuess {
                queue_depth: q,
                read_mb_s: reads.then(|| mb(parallel.read)),
                write_mb_s: writes.then(|| mb(parallel.write)),
            });
        }
        // Scattered chunk transfers that beat a sequential one came from a cache (files just
        // written sit in the host's or the drive's cache).
        if (reads && serial.read > seq.read) || (writes && serial.write > seq.write) {
            notes.push(Finding::CacheAnsweredGuess);
        }
        notes
    }
}

/// The most tracks `throughput_tracks` (what the disk streams, in tracks) can carry through the
/// first refill wave of tracks starting in phase: every ring crosses its refill threshold on the
/// same tick, and the last one served must not fall below the margin meanwhile.
pub(super) fn wave_bound(spec: &StreamSpec, throughput_tracks: f64) -> f64 {
    wave_times(spec).map_or(throughput_tracks, |(slack_s, cycle_s)| {
        throughput_tracks * (slack_s / cycle_s).min(1.0)
    })
}
