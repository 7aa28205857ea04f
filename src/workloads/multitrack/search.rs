//! One search for the most tracks of a spec's shape: how each probe is set up (a quick locate,
//! a start at the first refill or in the steady state, an early end; a confirmation as the
//! answer is stated), run and reported to `find_max`, and the most the search may try.

use super::{Multitrack, StreamKind, outcome_metrics};
use crate::audio::DATA_OFFSET;
use crate::engine::StreamSpec;
use crate::engine::ring::RingMemory;
use crate::engine::shape::{head_start_ns, steady_start_saves_ns};
use crate::error::Result;
use crate::result::search::{Capacity, SearchLimit};
use crate::search::find_max_shared;
use crate::workloads::Env;
use crate::workloads::probe::{probe_of, tightest};

/// How many times a probe's steady part (what follows its first ring) a page-cache profile's
/// confirmation runs. On a device capped at 21 MB/s (bound 145.8 tracks of 48k/24 mono) with
/// 128 KiB read-ahead, ardour-small passed 153 tracks in a 12.4 s probe (fill trend -1.75%, its
/// noise 3.4%: five of the program's large refills are too few to tell) and ran dry at 15.9 s
/// of a 60 s run; in 35 s runs 146 passed and 149 ran dry at 21 s.
const CONFIRM_STEADY_FACTOR: f64 = 4.0;

/// Reads in flight while a search's probe prefills its rings.
const LOCATE_QUEUE_DEPTH: u32 = 32;

/// The engine's ceiling on tracks a search tries.
const ENGINE_MAX: u64 = 20_000;

/// How long a page-cache profile's confirmation runs: its first ring, then
/// `CONFIRM_STEADY_FACTOR` times the steady part of a probe of `probe.duration_ns`.
pub(super) fn confirmation_ns(probe: &StreamSpec) -> u64 {
    let ring_ns = probe.ring_s() * 1e9;
    let steady_ns = (probe.duration_ns as f64 - ring_ns).max(0.0);
    (ring_ns + CONFIRM_STEADY_FACTOR * steady_ns).max(probe.duration_ns as f64) as u64
}

impl Multitrack {
    /// The largest count of `base`'s shape that passes. `ratio` is records per playback track
    /// (hdr); play and record workloads search their own count.
    pub(super) fn search(
        &self,
        env: &mut Env<'_>,
        base: &StreamSpec,
        ratio: f64,
        guess: f64,
        tolerance: f64,
    ) -> Result<(Capacity, SearchLimit)> {
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
            let (s, program_locate) = self.probe_spec(base, ratio, n, confirm, world.is_alone());
            let run = self.one(env, &s, &mut rings);
            let how = (s.steady_start, program_locate);
            probe_of(env, n, confirm, run, outcome_metrics, how)
        })?;
        Ok((cap, why))
    }

    /// The playback and record tracks of a search's count `n` (`ratio` records per playback
    /// track for hdr's curve, or its fixed record count).
    fn counts(&self, n: u32, ratio: f64) -> (u32, u32) {
        match (self.kind, self.hdr_record) {
            (StreamKind::Play, _) => (n, 0),
            (StreamKind::Record, _) => (0, n),
            (StreamKind::Hdr, Some(m)) => (n, m),
            (StreamKind::Hdr, None) => (n, (f64::from(n) * ratio).round() as u32),
        }
    }

    /// How a probe of `n` runs (a `confirm`ation or one that steers the search; `alone` or a
    /// studio's), and whether it locates as the profile's program does.
    ///
    /// A probe's locate time is not reported: it prefills quickly. A probe that can no longer
    /// pass stops at once. Through the page cache the locate leaves the kernel's read-ahead in a
    /// state of its own: the quick locate leaves it as the program's own locate does
    /// (`engine::stream_loop::run`), and a confirmation locates as the program does. Both leave
    /// the read-ahead running ahead of every ring, a lead on which a count the device cannot
    /// carry passes a short run: a confirmation runs its steady part `CONFIRM_STEADY_FACTOR`
    /// times as long as a probe's.
    fn probe_spec(
        &self,
        base: &StreamSpec,
        ratio: f64,
        n: u32,
        confirm: bool,
        alone: bool,
    ) -> (StreamSpec, bool) {
        let mut s = base.clone();
        (s.play_tracks, s.record_tracks) = self.counts(n, ratio);
        let program_locate = confirm && !s.policy.direct && s.play_tracks > 0;
        // A studio's confirmation runs as long too: its storage is judged on the mean of its
        // ranks' trends, each over the few refill cycles of a probe and moving with its turn at
        // the storage. On a loop device capped at 21 MB/s (145.8 tracks), three ranks' 13 s
        // confirmation of 49 tracks each (147, 1.008 of the bound) lost 0.80% of the demand
        // against a noise of 0.43%, and passed.
        if confirm && (program_locate || !alone) {
            s.duration_ns = confirmation_ns(&s);
        }
        if !program_locate {
            s.locate_queue_depth = Some(LOCATE_QUEUE_DEPTH);
            s.locate_from_content = s.policy.direct;
        }
        // A real probe of direct playback starts where its first refill falls due, and runs
        // that much shorter: the same run from full rings, less the periods in which nothing is
        // read (1.82 s of the default engine's 14.9 s probes).
        s.start_at_first_refill = self.probes_start_at_first_refill(&s);
        s.duration_ns = s.duration_ns.saturating_sub(head_start_ns(&s));
        // A probe that only steers the search starts in the steady state where the in-phase
        // start does not bind, and skips the rest of the first ring; the confirmations, whose
        // passes are the answer, start in phase as it is stated.
        if !confirm && self.probes_start_steady(&s, alone) {
            let saves = steady_start_saves_ns(&s);
            s.steady_start = true;
            s.duration_ns = s.duration_ns.saturating_sub(saves);
            // Such a probe ends as soon as its verdict is beyond doubt: a count well under what
            // the device carries, or well above it, needs no more than the rule's shortest run
            // to show it, and the confirmations, whose passes are the answer, still run in full.
            s.end_early = true;
        }
        s.stop_early = true;
        (s, program_locate)
    }

    /// The most a search may try (in its own count: playback tracks for hdr), and what sets
    /// it: what the user allows (`--max-tracks`), the memory rings may take (half of RAM), the
    /// free space files may take (half of it), or the engine's own ceiling.
    fn limit(&self, env: &Env<'_>, base: &StreamSpec, per: f64) -> (u32, SearchLimit) {
        let mut limits = Vec::new();
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
        let (total, why) = tightest(ENGINE_MAX, limits);
        (((total as f64 / per) as u64).max(1) as u32, why)
    }
}

/// What one track's files take on disk, on average over the tracks of one count of a search
/// (`per` tracks, of which `per - 1` record for hdr): a playback file holds at most
/// `PLAY_FILE_MAX_S` with direct I/O (its reads wrap), a record file the whole run.
pub(super) fn track_disk_bytes(kind: StreamKind, base: &StreamSpec, per: f64) -> f64 {
    let play = (crate::engine::shape::play_file_bytes(base) + DATA_OFFSET) as f64;
    let rec = (crate::engine::shape::record_file_bytes(base) + DATA_OFFSET) as f64;
    match kind {
        StreamKind::Play => play,
        StreamKind::Record => rec,
        StreamKind::Hdr => (play + (per - 1.0) * rec) / per,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audio::Format;
    use crate::engine::Policy;

    /// A probe of 15 s: a playback track's file is its ring and 8 s at most (reads wrap), a
    /// record track's the whole run; hdr averages them by its ratio.
    #[test]
    fn a_playback_track_is_counted_for_its_file_not_for_a_recording() {
        let policy = Policy::named("trackbench", &Format::default()).unwrap();
        let base = StreamSpec {
            duration_ns: 15_000_000_000,
            ..StreamSpec::new(Format::default(), policy, (1, 0))
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
