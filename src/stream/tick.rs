//! The audio tick: once per period it takes one period from every playback ring (touching the
//! bytes and checking their tags) and puts one period of tagged audio into every capture ring.
//! A playback ring short of a period is an underrun, a capture ring without room an overrun.
//! Nothing here allocates, locks or blocks.

use super::telemetry::FillSeries;
use super::{Direction, Track};
use crate::content;
use std::sync::atomic::Ordering;

pub struct Tick {
    period_bytes: u64,
    pub series: FillSeries,
    pub underruns: u64,
    pub overruns: u64,
    pub ticks: u64,
    /// Lowest headroom of any ring, as a fraction of its capacity.
    pub worst: f64,
    /// The first content mismatch: track and file offset.
    pub verify_error: Option<(u32, u64)>,
    /// Folds the bytes played, so touching them cannot be optimised away.
    pub checksum: u64,
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
            verify_error: None,
            checksum: 0,
        }
    }

    /// One period at time `t_ns` (since the clock started).
    pub fn run(&mut self, tracks: &[Track], t_ns: u64) {
        let p = self.period_bytes;
        let mut worst = f64::INFINITY;
        let mut sum = 0.0;
        for (i, t) in tracks.iter().enumerate() {
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
                            self.play_bytes(i as u32, t);
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

    /// Reads the period's bytes out of the ring and checks them: the tags of the blocks
    /// starting in it, and every other byte against the noise written there (a payload
    /// overwritten on the disk is caught, not only a misplaced block).
    fn play_bytes(&mut self, index: u32, t: &Track) {
        let p = self.period_bytes;
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
                if let Some(off) = content::noise_mismatch(bytes, t.file_offset(pos))
                    && self.verify_error.is_none()
                {
                    self.verify_error = Some((index, off));
                }
                self.checksum = self.checksum.rotate_left(7) ^ u64::from(bytes[0]);
            }
            done += n;
        }
        let mut b = tail.div_ceil(block) * block;
        while b < tail + p {
            // SAFETY: the block starts inside the consumer's region; reads come in whole blocks, so
            // its 16-byte tag is there too.
            if let Some(ptr) = unsafe { t.ring.ptr(b % cap) } {
                let tag = unsafe { std::slice::from_raw_parts(ptr, 16) };
                let off = t.file_offset(b);
                if !content::check_tag(tag, t.content_id, off) && self.verify_error.is_none() {
                    self.verify_error = Some((index, off));
                }
            }
            b += block;
        }
    }
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
            content::fill_range(buf, t.content_id, t.file_offset(head + done));
        }
        done += n;
    }
}
