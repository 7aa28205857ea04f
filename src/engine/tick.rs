//! The audio tick: once per period it takes one period from every playback ring (touching the
//! bytes and checking their tags) and puts one period of tagged audio into every capture ring.
//! A playback ring short of a period is an underrun, a capture ring without room an overrun.
//! Nothing here allocates, locks or blocks.

use super::telemetry::FillSeries;
use super::{Direction, Track};
use crate::content;
use std::sync::atomic::Ordering;

/// How many tracks ahead the tick asks for a playback ring's next period: 2 to 8 ahead kept
/// 11,000 tracks' tick at 55-57% of a CPU on this machine, 16 at 60%, none at 75%.
const PREFETCH_TRACKS: usize = 4;

pub struct Tick {
    period_bytes: u64,
    pub series: FillSeries,
    pub underruns: u64,
    pub overruns: u64,
    pub ticks: u64,
    /// Lowest headroom of any ring, as a fraction of its capacity.
    pub worst: f64,
    /// What playing found.
    pub played: Played,
}

impl Tick {
    pub fn new(period_bytes: u64, period_ns: u64, total_ticks: u64) -> Tick {
        // The check compares with the noise pool: built here, never on the real-time path.
        content::warm();
        Tick {
            period_bytes,
            series: FillSeries::new(total_ticks, period_ns),
            underruns: 0,
            overruns: 0,
            ticks: 0,
            worst: 1.0,
            played: Played::default(),
        }
    }

    /// One period at time `t_ns` (since the clock started).
    pub fn run(&mut self, tracks: &[Track], t_ns: u64) {
        let p = self.period_bytes;
        let mut worst = f64::INFINITY;
        let mut sum = 0.0;
        for (i, t) in tracks.iter().enumerate() {
            // The period a few tracks on, asked for now: its memory's latency then overlaps
            // this track's check instead of following it.
            if let Some(next) = tracks.get(i + PREFETCH_TRACKS)
                && next.dir == Direction::Play
            {
                next.ring.prefetch_consumer(p);
            }
            let cap = t.ring.capacity();
            let headroom = match t.dir {
                Direction::Play => {
                    let fill = t.ring.fill();
                    if fill < p {
                        self.underruns += 1;
                        t.note_xrun(t_ns);
                        fill
                    } else {
                        if t.ring.has_memory() {
                            play_ring_bytes(&mut self.played, i as u32, t, p);
                        }
                        t.ring.commit_consume(p);
                        fill - p
                    }
                }
                Direction::Record => {
                    let free = t.ring.free();
                    if free < p {
                        self.overruns += 1;
                        t.note_xrun(t_ns);
                        free
                    } else {
                        if t.ring.has_memory() {
                            record_bytes(t, p);
                        }
                        t.ring.commit_produce(p);
                        free - p
                    }
                }
            };
            if headroom < t.min_headroom.load(Ordering::Relaxed) {
                t.min_headroom.store(headroom, Ordering::Relaxed);
            }
            let frac = headroom as f64 / cap as f64;
            worst = worst.min(frac);
            sum += frac;
        }
        if !tracks.is_empty() {
            self.worst = self.worst.min(worst);
            self.series.record(worst, sum / tracks.len() as f64);
        }
        self.ticks += 1;
    }
}

/// What playing found wrong first, and a fold of what was played (so touching the bytes cannot
/// be optimised away).
#[derive(Debug, Default)]
pub struct Played {
    /// The first content mismatch: stream and file offset.
    pub verify_error: Option<(u32, u64)>,
    pub checksum: u64,
}

/// Reads `p` bytes from the head of stream `index`'s ring (`t`) and checks them: the tags of the
/// blocks starting in them, and every other byte against the noise written there (a payload
/// overwritten on the disk is caught, not only a misplaced block). The caller consumes them.
pub(crate) fn play_ring_bytes(played: &mut Played, index: u32, t: &Track, p: u64) {
    let tail = t.ring.consumed();
    let cap = t.ring.capacity();
    let block = content::BLOCK as u64;
    let mut done = 0;
    while done < p {
        let pos = tail + done;
        let at = pos % cap;
        // One block's piece at a time: ring positions and file offsets share their block
        // alignment (reads are whole blocks), and a piece never crosses the file's wrap.
        let n = (p - done).min(cap - at).min(block - pos % block);
        // SAFETY: [tail, tail + p) is filled (checked by the caller) and owned by the consumer.
        if let Some(ptr) = unsafe { t.ring.ptr(at) } {
            let bytes = unsafe { std::slice::from_raw_parts(ptr, n as usize) };
            // A block starting here: reads come in whole blocks, so its 16-byte tag is in the
            // ring even where the period ends sooner.
            // SAFETY: as above; the tag lies inside the block the read brought.
            let tag = pos
                .is_multiple_of(block)
                .then(|| unsafe { std::slice::from_raw_parts(ptr, 16) });
            check_piece(
                played,
                index,
                bytes,
                tag,
                t.file_offset(pos),
                t.content_id(),
            );
        }
        done += n;
    }
}

/// Checks `bytes`, which were read from file offset `offset` (within one block): the noise,
/// and `tag`, the block's first 16 bytes, where a block starts there.
pub(crate) fn check_piece(
    played: &mut Played,
    index: u32,
    bytes: &[u8],
    tag: Option<&[u8]>,
    offset: u64,
    id: u32,
) {
    if let Some(off) = content::noise_mismatch(bytes, offset)
        && played.verify_error.is_none()
    {
        played.verify_error = Some((index, off));
    }
    if let Some(tag) = tag
        && !content::check_tag(tag, id, offset)
        && played.verify_error.is_none()
    {
        played.verify_error = Some((index, offset));
    }
    played.checksum = played.checksum.rotate_left(7) ^ u64::from(bytes[0]);
}

/// Writes one period of the track's tagged audio into its capture ring (the caller commits it).
pub(crate) fn record_bytes(t: &Track, p: u64) {
    let head = t.ring.produced();
    let cap = t.ring.capacity();
    let mut done = 0;
    while done < p {
        let at = (head + done) % cap;
        let n = (p - done).min(cap - at);
        // SAFETY: [head, head + p) is free (checked by the caller) and owned by the producer.
        if let Some(ptr) = unsafe { t.ring.ptr(at) } {
            let buf = unsafe { std::slice::from_raw_parts_mut(ptr, n as usize) };
            content::fill_range(buf, t.content_id(), t.file_offset(head + done));
        }
        done += n;
    }
}
