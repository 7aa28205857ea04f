//! A run's shape in time, from its spec alone: the refill cycle, what the prefilled rings
//! carry, a steady start's warm-up and what it saves, the head start of a run that starts at
//! its first refill, and how long the tracks' files must be.

use super::spec::StreamSpec;

/// Seconds of audio between a ring's refills (playback) or flushes (capture), the longer of the
/// two, and the seconds the prefill lasts: the ring's length, less the head start of a run that
/// starts at the first refill.
pub(crate) fn cycle_and_prefill_s(spec: &StreamSpec) -> (f64, f64) {
    let rate = spec.format.bytes_per_second() as f64;
    let mut cycle = 0u64;
    if spec.play_tracks > 0 {
        cycle = spec
            .policy
            .read_len(spec.policy.refill_at_bytes)
            .max(spec.policy.refill_at_bytes);
    }
    if spec.record_tracks > 0 {
        cycle = cycle.max(spec.policy.write_bytes);
    }
    // A steady start's rings are already in their refill rhythm: its verdict waits out a
    // warm-up, not a ring.
    let full = spec.ring_bytes() - head_start_bytes(spec);
    let prefill = if spec.steady_start {
        let least = (STEADY_WARMUP_MIN_S * rate).ceil() as u64;
        (STEADY_WARMUP_CYCLES * cycle).max(least)
    } else {
        full
    };
    (cycle as f64 / rate, prefill as f64 / rate)
}

/// Refill cycles a steady start waits out before its steady part, and the least time. A
/// device idle between two probes serves the next one faster at first (a kernel throttle
/// grants a slice's budget at once after a gap), and staggered rings take that in without
/// falling behind: on a loop device capped at 21 MB/s (bound 145.8 tracks), probes of 151
/// tracks passed after a warm-up of one cycle (1.82 s with 256K chunks, 0.46 s with 64K) and
/// of two cycles of 64K (0.91 s), and failed, as every full start did, after two cycles of
/// 256K (3.64 s).
const STEADY_WARMUP_CYCLES: u64 = 2;
const STEADY_WARMUP_MIN_S: f64 = 3.5;

/// Seconds a steady start waits out before its verdict's steady part (see
/// `STEADY_WARMUP_CYCLES`).
pub fn steady_warmup_s(spec: &StreamSpec) -> f64 {
    cycle_and_prefill_s(&StreamSpec {
        steady_start: true,
        ..spec.clone()
    })
    .1
}

/// Whether a run of `spec`'s shape may start in the steady state (`StreamSpec::steady_start`):
/// direct playback alone, whose rings let tracks starting in phase each wait for their first
/// refill at least a refill cycle before the margin, so that the in-phase start does not hold
/// the count below what the steady state carries (DESIGN.md section 4: with two chunks a ring,
/// it does), and where the steady start saves at least a second. Where the in-phase start
/// binds, a probe must start as its answer will be stated, in phase.
pub fn steady_start_allowed(spec: &StreamSpec) -> bool {
    spec.policy.direct
        && spec.record_tracks == 0
        && spec.play_tracks > 0
        && wave_times(spec).is_some_and(|(slack_s, cycle_s)| slack_s >= cycle_s)
        && steady_start_saves_ns(spec) >= 1_000_000_000
}

/// For tracks starting in phase: how long each ring can wait for its refill once all cross the
/// threshold together (before it passes the margin), and the refill cycle, in seconds. None when
/// the starts are staggered.
pub fn wave_times(spec: &StreamSpec) -> Option<(f64, f64)> {
    if spec.stagger {
        return None;
    }
    let rate = spec.format.bytes_per_second() as f64;
    let cap = spec.ring_bytes() as f64;
    let slack_s = (cap - spec.policy.refill_at_bytes as f64 - spec.margin * cap).max(0.0) / rate;
    let cycle_s = spec.policy.read_len(spec.policy.refill_at_bytes).max(4096) as f64 / rate;
    Some((slack_s, cycle_s))
}

/// How much shorter a steady start's run is than the run it stands for, with the same steady
/// part: the full start's (from its first refill where `start_at_first_refill` asks for it),
/// by the first ring it need not wait out, less the warm-up it waits instead, in ns.
pub fn steady_start_saves_ns(spec: &StreamSpec) -> u64 {
    let full = StreamSpec {
        steady_start: false,
        ..spec.clone()
    };
    let (cycle_s, prefill_s) = cycle_and_prefill_s(&full);
    let (_, steady_s) = cycle_and_prefill_s(&StreamSpec {
        steady_start: true,
        ..full.clone()
    });
    ((prefill_s.max(cycle_s) - steady_s).max(0.0) * 1e9) as u64
}

/// Bytes each playback ring starts short of full in a run that starts at the first refill
/// (`StreamSpec::start_at_first_refill`): the whole periods played, from full rings, before
/// the one after which a ring first has room for a read; 0 for every other run, and where it
/// would leave a ring within a period of its margin. The default engine's rings (1 MiB, read
/// when 256 KiB is free) skip 341 periods of 256 frames at 48k/24 mono, 1.82 s.
pub fn head_start_bytes(spec: &StreamSpec) -> u64 {
    if !spec.start_at_first_refill
        || spec.stagger
        || spec.steady_start
        || spec.record_tracks > 0
        || spec.play_tracks == 0
    {
        return 0;
    }
    let (period, ring) = (spec.period_bytes().max(1), spec.ring_bytes());
    let block = crate::content::BLOCK as u64;
    let mut k = 1;
    while k * period <= ring && spec.policy.read_len(k * period) < block {
        k += 1;
    }
    let skip = (k - 1) * period;
    let floor = (spec.margin * ring as f64).ceil() as u64 + period;
    if ring.saturating_sub(skip) < floor {
        0
    } else {
        skip
    }
}

/// [`head_start_bytes`] as time: whole periods.
pub fn head_start_ns(spec: &StreamSpec) -> u64 {
    head_start_bytes(spec) / spec.period_bytes().max(1) * spec.period_ns()
}

/// Seconds of audio between one ring's refills (or flushes): the steady rhythm of the butler.
pub fn refill_cycle_s(spec: &StreamSpec) -> f64 {
    cycle_and_prefill_s(spec).0
}

/// Longest playback file: reads wrap around at its end, as a looping DAW transport would.
pub const PLAY_FILE_MAX_S: f64 = 8.0;

/// The audio each playback track's file holds, real or simulated: the run and a ring, up to
/// `PLAY_FILE_MAX_S` with direct I/O (reads wrap there; longer files would only cost space; a
/// profile reading through the page cache gets the whole run, or its wrapped reads would be
/// served from what the first pass left in the cache), at least a ring and
/// a chunk (a read never laps the ring), in whole frames, blocks and chunks. Whole chunks: a
/// wrap that left a short read would leave the ring out of step with its chunks, and split
/// every later read in two where the ring's memory ends (an IOPS-bound device carried 111
/// tracks instead of 113.8).
pub fn play_file_bytes(spec: &StreamSpec) -> u64 {
    use crate::audio::lcm;
    let unit = lcm(
        lcm(4096, spec.format.bytes_per_frame()),
        spec.policy.chunk_bytes,
    );
    let rate = spec.format.bytes_per_second() as f64;
    // A steady start plays the files of the full run it stands for.
    let saved = if spec.steady_start {
        steady_start_saves_ns(spec)
    } else {
        0
    };
    let run_s = (spec.duration_ns + saved) as f64 / 1e9;
    let secs = if spec.policy.direct {
        (run_s + spec.policy.buffer_s).min(PLAY_FILE_MAX_S)
    } else {
        // Through the page cache a wrapped read would find what the first pass left there,
        // where a program playing a session does not: those files hold the whole run, a full
        // ring ahead of its last period, the largest read and a staggered start's chunk beyond
        // it, so that no read wraps.
        let beyond = spec.ring_bytes() + spec.policy.read_max_bytes + spec.policy.chunk_bytes;
        run_s + beyond as f64 / rate
    };
    let least = (spec.ring_bytes() + spec.policy.chunk_bytes).div_ceil(unit);
    ((secs * rate) as u64 / unit).max(least) * unit
}

/// The most each record track's file may hold: every period of the run, a ring and a chunk, in
/// whole blocks.
pub fn record_file_bytes(spec: &StreamSpec) -> u64 {
    (spec.ticks() * spec.period_bytes() + spec.ring_bytes() + spec.policy.chunk_bytes)
        .div_ceil(4096)
        * 4096
}
