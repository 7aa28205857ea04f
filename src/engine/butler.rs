//! The butler: the disk thread's hands. It turns the planner's requests (`planner`) into
//! backend operations on ring memory, books their completions (latency, bytes, the scenario's
//! side), fills every playback ring before the clock starts (the locate's reads), and waits for
//! what is in flight before ring memory may go.

use super::Track;
use super::planner::{Planner, Request};
use super::seams::{ButlerSide, Files, Tracks};
use crate::clock::Clock;
use crate::control::Control;
use crate::error::{Error, Result};
use crate::io::{AlignedBuf, Completion, IoBackend, Op, OpKind, completion_bytes};
use crate::stats::LatencyHist;

/// How long the locate sleeps while it waits for ring memory with nothing else to do.
pub(super) const RING_WAIT: std::time::Duration = std::time::Duration::from_micros(500);

/// Rings made ready that the locate's planner hears of at once (see `Butler::prefill`).
pub(super) const READY_STEP: usize = 256;

/// The butler: turns the planner's requests into backend operations on ring memory and books
/// their completions.
pub struct Butler<'a> {
    pub planner: Planner,
    backend: &'a mut dyn IoBackend,
    pending: Vec<Option<(Request, u64)>>,
    free_slots: Vec<u32>,
    planned: Vec<Request>,
    done: Vec<Completion>,
    pub read_lat: LatencyHist,
    pub write_lat: LatencyHist,
    pub read_bytes: u64,
    pub written_bytes: u64,
    pub(super) files: &'a Files<'a>,
    /// Where the run's clock started (0 while locating).
    pub(super) t0: u64,
    /// A `read_whole` profile's own buffer for each request slot: a read that runs past the
    /// ring's end lands here and is copied into the ring when it completes. Allocated the first
    /// time a slot carries such a read (never in a simulation, whose rings have no memory, nor
    /// in a locate, whose reads fill rings from their start).
    scratch: Vec<Option<AlignedBuf>>,
    /// Through the page cache: where each file was last read, to see a read wrap to its start.
    last_read_at: Vec<u64>,
}

impl<'a> Butler<'a> {
    pub fn new(
        policy: &super::Policy,
        tracks: usize,
        backend: &'a mut dyn IoBackend,
        files: &'a Files<'a>,
    ) -> Butler<'a> {
        let qd = backend.queue_depth();
        Butler {
            planner: Planner::new(policy.clone(), tracks, qd),
            backend,
            pending: vec![None; qd],
            free_slots: (0..qd as u32).rev().collect(),
            planned: Vec::with_capacity(qd),
            done: Vec::with_capacity(qd),
            read_lat: LatencyHist::default(),
            write_lat: LatencyHist::default(),
            read_bytes: 0,
            written_bytes: 0,
            files,
            t0: 0,
            scratch: (0..qd).map(|_| None).collect(),
            last_read_at: vec![0; files.page_cache.map_or(0, <[_]>::len)],
        }
    }

    /// Plans and issues what the rings need now.
    pub(super) fn issue(
        &mut self,
        tracks: &[Track],
        play_only: bool,
        final_flush: bool,
        now: u64,
    ) -> Result<()> {
        self.planned.clear();
        self.planner
            .plan(tracks, play_only, final_flush, &mut self.planned);
        for i in 0..self.planned.len() {
            let r = self.planned[i];
            let t = &tracks[r.track as usize];
            // Through the page cache a read that wraps to the file's start would find what the
            // first pass left cached, where a program playing a long take reads cold: the file's
            // pages go first. (Its files hold the whole run, so this is the exception.)
            if r.kind == OpKind::Read
                && !self.files.drop_behind
                && let Some(files) = self.files.page_cache
                && let Some(last) = self.last_read_at.get_mut(r.file as usize)
            {
                if r.file_offset < *last {
                    crate::dataset::drop_pages(files[r.file as usize], 0, 0);
                }
                *last = r.file_offset;
            }
            // SAFETY: the planner hands out a region of the ring owned by the butler (free space
            // for a read, filled data for a write) until the request is booked complete. A
            // simulated ring has no memory, and a simulated device moves no data.
            let slot = self
                .free_slots
                .pop()
                .expect("the planner stays within the queue depth");
            let ptr = if r.wraps_ring && t.ring.has_memory() {
                let buf = match &mut self.scratch[slot as usize] {
                    Some(buf) => buf,
                    empty => empty.insert(AlignedBuf::try_new(
                        self.planner.read_max_bytes().min(t.ring.capacity()) as usize,
                    )?),
                };
                buf.as_mut_ptr()
            } else {
                unsafe { t.ring.ptr(r.ring_offset) }.unwrap_or(std::ptr::null_mut())
            };
            // Stamped before submitting: a synchronous backend finishes inside submit().
            self.pending[slot as usize] = Some((r, now));
            self.backend.submit(Op {
                kind: r.kind,
                file: r.file,
                offset: r.file_offset,
                len: r.len as u32,
                slot,
                external: ptr,
            })?;
        }
        Ok(())
    }

    /// Books what completed by `deadline` (at least one without a deadline) and returns how
    /// many. Every completion is booked, even a failed one, so the count in flight stays true;
    /// the first failure is returned after all are booked.
    pub(super) fn reap(
        &mut self,
        tracks: &[Track],
        deadline: Option<u64>,
        clock: &dyn Clock,
        side: &mut dyn ButlerSide,
    ) -> Result<usize> {
        self.done.clear();
        self.backend.complete_by(deadline, &mut self.done)?;
        let now = clock.now_ns();
        let mut first_err = None;
        for k in 0..self.done.len() {
            let c = self.done[k];
            let (r, sent) = self.pending[c.slot as usize]
                .take()
                .expect("completion of a pending request");
            self.free_slots.push(c.slot);
            if r.wraps_ring
                && c.result == r.len as i64
                && let Some(buf) = &self.scratch[c.slot as usize]
            {
                copy_into_ring(&tracks[r.track as usize], &r, buf);
            }
            self.planner.complete(tracks, &r);
            side.completed(tracks, &mut self.planner, &r, now.saturating_sub(self.t0));
            let path = &self.files.names[r.file as usize];
            let op = r.kind.as_str();
            let what = || {
                format!(
                    "{op} of {} bytes at {} in {}",
                    r.len,
                    r.file_offset,
                    path.display()
                )
            };
            let n = match completion_bytes(c.result, what) {
                Ok(n) => n,
                Err(e) => {
                    first_err.get_or_insert(e);
                    continue;
                }
            };
            if n != r.len {
                first_err.get_or_insert(Error::ShortIo {
                    op,
                    path: path.clone(),
                    offset: r.file_offset,
                    len: r.len,
                    got: n,
                });
                continue;
            }
            let latency = std::time::Duration::from_nanos(now.saturating_sub(sent));
            match r.kind {
                OpKind::Read => {
                    self.read_lat.record(latency);
                    self.read_bytes += n;
                    if let Some(files) = self.files.page_cache.filter(|_| self.files.drop_behind) {
                        crate::dataset::drop_pages(files[r.file as usize], r.file_offset, r.len);
                    }
                }
                OpKind::Write => {
                    self.write_lat.record(latency);
                    self.written_bytes += n;
                }
            }
        }
        first_err.map_or(Ok(self.done.len()), Err)
    }

    /// Fills every playback ring (the locate), each once its memory is ready. Returns the
    /// time it waited for ring memory (not the locate's own time): all of the time it had
    /// nothing in flight for want of a ready ring, and the share of its queue left empty for
    /// that want while reads were in flight.
    pub(super) fn prefill(
        &mut self,
        tracks: &[Track],
        clock: &dyn Clock,
        ctl: &Control<'_>,
    ) -> Result<u64> {
        let mut waited = 0;
        let depth = self.planner.queue_depth();
        loop {
            if ctl.cancelled() {
                self.drain(tracks, clock)?;
                return Err(Error::Interrupted);
            }
            // Rings become ready one by one; the planner hears of them in steps (each step
            // costs it a fresh scan of the tracks), or at once when its queue is half empty.
            let ready = self.files.ready_rings(tracks.len());
            if ready == tracks.len()
                || ready >= self.planner.ready() + READY_STEP
                || self.planner.in_flight() <= depth / 2
            {
                self.planner.set_ready(ready);
            }
            self.issue(tracks, true, false, clock.now_ns())?;
            let in_flight = self.planner.in_flight();
            let gated = self.planner.ready() < tracks.len();
            if in_flight == 0 {
                if !gated {
                    return Ok(waited);
                }
                let t = clock.now_ns();
                std::thread::sleep(RING_WAIT);
                waited += clock.now_ns() - t;
                continue;
            }
            let t = clock.now_ns();
            self.reap(tracks, None, clock, &mut Tracks)?;
            if gated && in_flight < depth {
                let empty = (depth - in_flight) as u64;
                waited += (clock.now_ns() - t) * empty / depth as u64;
            }
            ctl.progress.set(self.read_bytes);
        }
    }

    /// Writes out what the capture rings still hold, once the ticks have stopped.
    pub(super) fn flush_capture(&mut self, tracks: &[Track], clock: &dyn Clock) -> Result<()> {
        loop {
            self.issue(tracks, false, true, clock.now_ns())?;
            if self.planner.in_flight() == 0 {
                return Ok(());
            }
            self.reap(tracks, None, clock, &mut Tracks)?;
        }
    }

    /// Waits for everything in flight (ring memory must not be freed under the kernel).
    pub(super) fn drain(&mut self, tracks: &[Track], clock: &dyn Clock) -> Result<()> {
        let mut first_err = None;
        while self.planner.in_flight() > 0 {
            let before = self.planner.in_flight();
            if let Err(e) = self.reap(tracks, None, clock, &mut Tracks) {
                let stuck = self.planner.in_flight() == before;
                first_err.get_or_insert(e);
                if stuck {
                    break; // the backend itself failed: nothing more will complete
                }
            }
        }
        first_err.map_or(Ok(()), Err)
    }
}

/// Copies a read that ran past the ring's end from the butler's buffer into the ring: up to
/// the end of ring memory, the rest from its start (what Ardour's PlaybackBuffer::write does
/// with a refill read into its sum_buffer).
fn copy_into_ring(t: &Track, r: &Request, scratch: &AlignedBuf) {
    let cap = t.ring.capacity();
    let len = r.len as usize;
    let first = ((cap - r.ring_offset) as usize).min(len);
    let src = &scratch[..len];
    // SAFETY: the planner handed this request the ring's free space from `ring_offset` on,
    // `len` bytes of it wrapping at the end of ring memory, and nobody else touches it until
    // the request is booked complete (which follows this copy).
    unsafe {
        if let Some(p) = t.ring.ptr(r.ring_offset) {
            std::ptr::copy_nonoverlapping(src.as_ptr(), p, first);
        }
        if len > first
            && let Some(p) = t.ring.ptr(0)
        {
            std::ptr::copy_nonoverlapping(src[first..].as_ptr(), p, len - first);
        }
    }
}
