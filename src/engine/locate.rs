//! The locate: every playback ring filled before the clock starts — by the butler's own reads
//! as a program locates, by a deeper queue that saves a search's probes time, or from what the
//! files hold (a search's direct-I/O probes) — with the page cache's read-ahead left as the
//! program's own locate leaves it.

use super::butler::{Butler, RING_WAIT};
use super::planner::Planner;
use super::seams::{Files, Timing};
use super::{Direction, StreamSpec, Track};
use crate::clock::Clock;
use crate::control::{Control, ProgressUnit};
use crate::error::{Error, Result};
use crate::io::IoBackend;
use crate::target::DeviceInfo;
use std::fs::File;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Fills every playback ring of `spec`'s run with `b` (or `quick`, a deeper queue, where given)
/// before the clock starts, and waits for every ring's memory. Returns the locate's own time,
/// in ns: not what it waited for ring memory with nothing to read.
pub(super) fn locate<Tm: Timing>(
    spec: &StreamSpec,
    tracks: &[Track],
    b: &mut Butler<'_>,
    quick: Option<&mut dyn IoBackend>,
    clock: &dyn Clock,
    device: Option<&DeviceInfo>,
    ctl: &Control<'_>,
) -> Result<u64> {
    let files = b.files;
    let locate_start = clock.now_ns();
    ctl.progress.begin(
        "locate (prefilling rings)",
        u64::from(spec.play_tracks) * spec.ring_bytes(),
        ProgressUnit::Bytes,
    );
    if let Some(open) = files.page_cache {
        read_headers(tracks, open, files.names)?;
    }
    let from_content = spec.locate_from_content
        && Tm::REAL
        && files.page_cache.is_none()
        && tracks
            .iter()
            .all(|t| t.dir != Direction::Play || t.ring.has_memory());
    let mut ring_wait_ns = match quick {
        _ if from_content => {
            b.read_bytes = fill_from_content(&b.planner, tracks, files, ctl)?;
            0
        }
        Some(q) if spec.play_tracks > 0 => quick_locate(spec, tracks, b, q, clock, device, ctl)?,
        _ => b.prefill(tracks, clock, ctl)?,
    };
    // The clock starts on rings that are all ready (the capture rings, after the playback
    // rings, may still be being touched).
    let t = clock.now_ns();
    while files.ready_rings(tracks.len()) < tracks.len() {
        if ctl.cancelled() {
            return Err(Error::Interrupted);
        }
        std::thread::sleep(RING_WAIT);
    }
    ring_wait_ns += clock.now_ns() - t;
    ctl.progress.end();
    Ok((clock.now_ns() - locate_start).saturating_sub(ring_wait_ns))
}

/// A locate through a deeper queue (`quick`), which saves a search's probes time. Through the
/// page cache, what the locate's reads leave in the kernel's read-ahead state is part of what
/// the run measures: a program that locates with its own reads has ramped every file's
/// read-ahead window up by the time it rolls. So the quick locate reads each ring but its last
/// part under random-access advice (the reads exactly as asked, no read-ahead), and the
/// program's own reads (`b`) fill that part: the roll then starts with the program's read-ahead
/// state. Without this, on a device capped at 160 I/Os a second, the roll's first reads of
/// ardour-small's 24-bit files went to the device in 16 KiB windows, and 84 tracks failed where
/// 100 pass after the program's own locate. Returns the time it waited for ring memory.
fn quick_locate(
    spec: &StreamSpec,
    tracks: &[Track],
    b: &mut Butler<'_>,
    quick: &mut dyn IoBackend,
    clock: &dyn Clock,
    device: Option<&DeviceInfo>,
    ctl: &Control<'_>,
) -> Result<u64> {
    let files = b.files;
    let tail = files
        .page_cache
        .map_or(0, |_| locate_tail_bytes(spec, device));
    let advise = |random: bool| {
        for f in files.page_cache.into_iter().flatten() {
            crate::platform::advise_random(f, random);
        }
    };
    advise(true);
    let mut q = Butler::new(&spec.policy, tracks.len(), quick, files);
    q.planner.locate_leaves = tail;
    let filled = q.prefill(tracks, clock, ctl);
    advise(false);
    let mut waited = filled?;
    if tail > 0 {
        b.read_bytes = q.read_bytes;
        waited += b.prefill(tracks, clock, ctl)?;
    }
    Ok(waited)
}

/// The locate of a run whose reads bypass the page cache and whose locate is not measured (a
/// search's probes, `StreamSpec::locate_from_content`): every playback ring filled as the
/// planner's locate fills it, with what its file holds there (`content::fill_range`, the
/// generator the files were written from), on every CPU at once. The ring then holds byte for
/// byte what the locate's reads would have brought, the roll's content check covers it, and
/// the roll's first reads continue where those reads would have ended. Returns the bytes filled.
fn fill_from_content(
    planner: &Planner,
    tracks: &[Track],
    files: &Files<'_>,
    ctl: &Control<'_>,
) -> Result<u64> {
    let done = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let cancel = ctl.cancel;
    let ready = |i: usize| files.rings_ready.is_none_or(|r| r.count() > i);
    let fill_track = |i: usize| {
        let t = &tracks[i];
        // Its ring's memory first (touched on other threads meanwhile).
        while !ready(i) {
            if stop.load(Ordering::Relaxed) || cancel.load(Ordering::Relaxed) {
                return;
            }
            std::thread::sleep(RING_WAIT);
        }
        while let Some(r) = planner.locate_request(tracks, i) {
            let cap = t.ring.capacity();
            let first = (cap - r.ring_offset).min(r.len);
            for (at, len, file_offset) in [
                (r.ring_offset, first, r.file_offset),
                (0, r.len - first, r.file_offset + first),
            ] {
                if len == 0 {
                    continue;
                }
                // SAFETY: the planner handed this request the ring's free region from
                // `ring_offset` on (wrapping at the end of ring memory), and nothing else
                // touches a ring before the clock starts.
                if let Some(p) = unsafe { t.ring.ptr(at) } {
                    let dst = unsafe { std::slice::from_raw_parts_mut(p, len as usize) };
                    crate::content::fill_range(dst, t.content_id(), file_offset);
                }
            }
            t.ring.commit_produce(r.len);
            done.fetch_add(r.len, Ordering::Relaxed);
        }
    };
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 16);
    let next = AtomicU64::new(0);
    // Tracks are handed out in batches: each worker takes the next one. False when none is left.
    const BATCH: u64 = 64;
    let batch = || {
        let from = (next.fetch_add(BATCH, Ordering::Relaxed) as usize).min(tracks.len());
        let to = (from + BATCH as usize).min(tracks.len());
        for (i, t) in tracks.iter().enumerate().take(to).skip(from) {
            if t.dir == Direction::Play {
                fill_track(i);
            }
        }
        to < tracks.len()
    };
    std::thread::scope(|s| {
        for _ in 1..workers {
            s.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    if !batch() {
                        break;
                    }
                }
            });
        }
        // This thread works too, and keeps the progress bar and the cancellation.
        loop {
            if ctl.cancelled() {
                stop.store(true, Ordering::Relaxed);
                break;
            }
            let more = batch();
            ctl.progress.set(done.load(Ordering::Relaxed));
            if !more {
                break;
            }
        }
    });
    if stop.load(Ordering::Relaxed) {
        return Err(Error::Interrupted);
    }
    Ok(done.into_inner())
}

/// Reads every playback file's header through the page cache, as a program does when it opens
/// a file to play it (libsndfile's `sf_open` parses the header from byte 0 before a single
/// sample is read). The kernel's read-ahead takes note: a file whose first page was read is a
/// stream from its start, so the audio's first read is read ahead of as a sequential one,
/// where a first read at the audio's page with nothing before it cached is taken for a random
/// read and read as asked. That head start is part of what the program gets: on a device
/// capped at 21 MB/s, ardour-small's 85 float tracks ran dry as their first rings ran out
/// (5.33 s in, the butler idle 60%) without it, and passed with the butler idle 65-71% with it,
/// as Ardour plays 95-104 there.
fn read_headers(tracks: &[Track], open: &[&File], names: &[PathBuf]) -> Result<()> {
    use crate::platform::FileAt;
    let mut header = [0u8; 4096];
    for (i, t) in tracks.iter().enumerate() {
        let (Direction::Play, Some(f)) = (t.dir, open.get(i)) else {
            continue;
        };
        let len = t.data_start().min(header.len() as u64) as usize;
        f.read_exact_at(&mut header[..len], 0).map_err(|e| {
            let name = names
                .get(i)
                .map_or_else(String::new, |p| p.display().to_string());
            Error::io(format!("cannot read the header of {name}"), e)
        })?;
    }
    Ok(())
}

/// What a quick locate leaves of each playback ring to the program's own reads: enough for the
/// kernel's read-ahead window to grow from its first size to the device's read-ahead (each
/// window at most doubles the last, so twice the read-ahead), and at least one of the
/// program's refills; at most the ring.
pub(super) fn locate_tail_bytes(spec: &StreamSpec, device: Option<&DeviceInfo>) -> u64 {
    /// Linux's default read-ahead, where the device's is not known.
    const DEFAULT_READ_AHEAD: u64 = 128 << 10;
    let p = &spec.policy;
    let ra = device
        .and_then(DeviceInfo::read_ahead_bytes)
        .unwrap_or(DEFAULT_READ_AHEAD);
    let round = p.read_round_bytes.max(4096);
    let tail = (2 * ra).max(p.refill_at_bytes).max(p.read_min_bytes);
    tail.div_ceil(round)
        .saturating_mul(round)
        .min(spec.ring_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audio::Format;
    use crate::engine::Policy;

    fn spec(profile: &str, format: &str) -> StreamSpec {
        let format = Format::parse(format).unwrap();
        let policy = Policy::named(profile, &format).unwrap();
        StreamSpec {
            period_frames: 1024,
            margin: 0.0,
            locate_queue_depth: Some(32),
            stop_early: true,
            ..StreamSpec::new(format, policy, (1, 0))
        }
    }

    /// A locate that fills rings without reading leaves each playback ring holding what its file
    /// holds where the locate's reads would have read (wrapping at the stream's end, as they
    /// do), leaves capture rings alone, and the roll's first read continues where the locate's
    /// reads would have ended.
    #[test]
    fn a_locate_from_content_fills_rings_as_the_locates_reads_would() {
        use crate::engine::ring::Ring;
        let s = spec("trackbench", "48k/24/mono");
        let chunk = s.policy.chunk_bytes;
        let cap = 4 * chunk;
        let tracks = vec![
            Track::new(
                Direction::Play,
                Ring::new(cap, chunk, true),
                0,
                7,
                4096,
                10 * chunk,
            ),
            // A stream shorter than its ring: the locate's reads wrap at its end.
            Track::new(
                Direction::Play,
                Ring::new(cap, chunk, true),
                1,
                8,
                8192,
                3 * chunk,
            ),
            Track::new(
                Direction::Record,
                Ring::new(cap, chunk, true),
                2,
                9,
                0,
                10 * chunk,
            ),
        ];
        let planner = Planner::new(s.policy.clone(), tracks.len(), 1);
        let cancel = AtomicBool::new(false);
        let ctl = Control {
            cancel: &cancel,
            progress: &crate::control::NoProgress,
            world: &crate::studio::Alone,
        };
        let files = Files {
            names: &[],
            page_cache: None,
            drop_behind: false,
            rings_ready: None,
        };
        assert_eq!(
            fill_from_content(&planner, &tracks, &files, &ctl).unwrap(),
            2 * cap
        );
        for t in &tracks[..2] {
            assert_eq!(t.ring.fill(), cap);
            let mut want = vec![0u8; cap as usize];
            let mut at = 0u64;
            while at < cap {
                let n = (t.data_len() - at % t.data_len()).min(cap - at);
                let (a, b) = (at as usize, (at + n) as usize);
                crate::content::fill_range(&mut want[a..b], t.content_id(), t.file_offset(at));
                at += n;
            }
            let mut got = vec![0u8; cap as usize];
            assert!(t.ring.pop(&mut got));
            assert!(got == want, "ring content differs from the file's");
        }
        assert_eq!(tracks[2].ring.fill(), 0);
        let next = planner.locate_request(&tracks, 0).unwrap();
        assert_eq!(next.file_offset, 4096 + cap);
        let wrapped = planner.locate_request(&tracks, 1).unwrap();
        assert_eq!(wrapped.file_offset, 8192 + cap % (3 * chunk));
        // Interrupted before it starts: nothing is filled and the run says so.
        cancel.store(true, Ordering::Relaxed);
        let fresh = [Track::new(
            Direction::Play,
            Ring::new(cap, chunk, true),
            0,
            7,
            4096,
            10 * chunk,
        )];
        assert!(matches!(
            fill_from_content(&planner, &fresh, &files, &ctl),
            Err(Error::Interrupted)
        ));
    }

    /// Rings whose memory is still being touched are filled only once it is: a ring filled
    /// before its touch would be zeroed by it, and its content would not be the file's.
    #[test]
    fn a_locate_fills_a_ring_only_once_its_memory_is_ready() {
        use crate::engine::ring::{Ring, RingMemory, RingsReady};
        let s = spec("trackbench", "48k/24/mono");
        let chunk = s.policy.chunk_bytes;
        let cap = 2 * chunk;
        let mut m = RingMemory::new();
        let (bufs, ready) = m.lend(6, cap as usize).unwrap();
        assert_eq!(ready, 0);
        let tracks: Vec<Track> = bufs
            .into_iter()
            .enumerate()
            .map(|(i, b)| {
                let ring = Ring::from_buf(cap, chunk, b);
                Track::new(Direction::Play, ring, i as u32, 20 + i as u32, 0, 8 * chunk)
            })
            .collect();
        let gate = RingsReady::new(0, tracks.len());
        let planner = Planner::new(s.policy.clone(), tracks.len(), 1);
        let cancel = AtomicBool::new(false);
        let ctl = Control {
            cancel: &cancel,
            progress: &crate::control::NoProgress,
            world: &crate::studio::Alone,
        };
        let files = Files {
            names: &[],
            page_cache: None,
            drop_behind: false,
            rings_ready: Some(&gate),
        };
        let filled = std::thread::scope(|sc| {
            sc.spawn(|| {
                loop {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                    if !gate.touch_next(&tracks) {
                        break;
                    }
                }
            });
            fill_from_content(&planner, &tracks, &files, &ctl)
        });
        assert_eq!(filled.unwrap(), 6 * cap);
        for t in &tracks {
            let mut want = vec![0u8; cap as usize];
            crate::content::fill_range(&mut want, t.content_id(), t.file_offset(0));
            let mut got = vec![0u8; cap as usize];
            assert!(t.ring.pop(&mut got));
            assert!(
                got == want,
                "track {}: not the file's content",
                t.content_id()
            );
        }
    }

    /// Twice the read-ahead (Linux's 128 KiB where the device is not known), at least a refill
    /// of the program's, rounded to its reads, at most the ring.
    #[test]
    fn the_locate_tail_lets_the_read_ahead_grow_and_fits_the_ring() {
        let s = spec("ardour-small", "48k/24/mono");
        assert_eq!(locate_tail_bytes(&s, None), 256 << 10);
        // ardour-medium's float chunk is 1 MiB: one refill of it.
        let m = spec("ardour-medium", "48k/32f/mono");
        assert_eq!(locate_tail_bytes(&m, None), 1 << 20);
        // A device whose read-ahead cannot be read: Linux's default.
        let d = DeviceInfo {
            name: "no-such-device".into(),
            partition: None,
            model: None,
            rotational: None,
            scheduler: None,
            logical_block_bytes: None,
            size_bytes: None,
            serial: None,
            wwn: None,
        };
        assert_eq!(d.read_ahead_bytes(), None);
        assert_eq!(locate_tail_bytes(&s, Some(&d)), 256 << 10);
    }
}
