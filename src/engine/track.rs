//! One stream of the engine: a track's ring (or a sampler voice's), the file it streams from
//! or to, and the tick's accounting of it.

use super::ring::Ring;
use super::spec::Direction;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

/// One stream: a track's ring (or a sampler voice's), the file it streams from or to, and the
/// tick's accounting.
///
/// A track is bound to one file for the whole run. A sampler voice is bound again at every note:
/// the binding is atomic, written by the butler only while nothing of the voice is in flight, and
/// published to the tick through the scenario's own hand-over.
pub struct Track {
    pub dir: Direction,
    pub ring: Ring,
    /// The file in the backend's table.
    file: AtomicU32,
    /// Content id of the file's tags.
    content_id: AtomicU32,
    /// Where the stream's byte 0 lies in the file.
    data_start: AtomicU64,
    /// Playback: the stream's length (a track's reads wrap at its end, a voice stops there).
    /// Record: the most it may hold.
    data_len: AtomicU64,
    /// A track loops its file; a voice plays its sample once.
    wraps: bool,
    /// The butler may plan requests for it (a voice between notes may not).
    active: AtomicBool,
    // Written by the tick only.
    pub xruns: AtomicU32,
    pub first_xrun_ns: AtomicU64,
    /// Lowest headroom seen (playback: bytes left after a period; capture: room left).
    pub min_headroom: AtomicU64,
}

impl Track {
    /// A track streaming `data_len` bytes of `file` (the backend's file `file`, content id
    /// `content_id`) from `data_start` on; playback wraps at its end.
    pub fn new(
        dir: Direction,
        ring: Ring,
        file: u32,
        content_id: u32,
        data_start: u64,
        data_len: u64,
    ) -> Track {
        let cap = ring.capacity();
        Track {
            dir,
            ring,
            file: AtomicU32::new(file),
            content_id: AtomicU32::new(content_id),
            data_start: AtomicU64::new(data_start),
            data_len: AtomicU64::new(data_len),
            wraps: true,
            active: AtomicBool::new(true),
            xruns: AtomicU32::new(0),
            first_xrun_ns: AtomicU64::new(u64::MAX),
            min_headroom: AtomicU64::new(cap),
        }
    }

    /// A sampler voice: a playback stream bound to no file until its first note.
    pub fn voice(ring: Ring) -> Track {
        let mut t = Track::new(Direction::Play, ring, 0, 0, 0, 0);
        t.wraps = false;
        *t.active.get_mut() = false;
        t
    }

    /// Binds the stream to `len` bytes of `file` from `start` on, with an empty ring. The
    /// butler calls it while nothing of this stream is in flight and the tick leaves its ring
    /// alone (the scenario's hand-over publishes it).
    pub fn rebind(&self, file: u32, content_id: u32, start: u64, len: u64) {
        self.ring.reset();
        self.file.store(file, Ordering::Relaxed);
        self.content_id.store(content_id, Ordering::Relaxed);
        self.data_start.store(start, Ordering::Relaxed);
        self.data_len.store(len, Ordering::Relaxed);
        self.active.store(len > 0, Ordering::Release);
    }

    /// Stops planning requests for the stream (a voice whose note ended or was stolen).
    pub fn deactivate(&self) {
        self.active.store(false, Ordering::Release);
    }

    pub fn active(&self) -> bool {
        self.active.load(Ordering::Acquire)
    }
    pub fn file(&self) -> u32 {
        self.file.load(Ordering::Relaxed)
    }
    pub fn content_id(&self) -> u32 {
        self.content_id.load(Ordering::Relaxed)
    }
    pub fn data_start(&self) -> u64 {
        self.data_start.load(Ordering::Relaxed)
    }
    pub fn data_len(&self) -> u64 {
        self.data_len.load(Ordering::Relaxed)
    }
    pub fn wraps(&self) -> bool {
        self.wraps
    }

    /// Playback: bytes in the ring. Capture: room in the ring.
    pub fn headroom(&self) -> u64 {
        match self.dir {
            Direction::Play => self.ring.fill(),
            Direction::Record => self.ring.free(),
        }
    }

    /// The file offset of stream byte `pos` (a track's playback wraps at the end of the audio).
    pub fn file_offset(&self, pos: u64) -> u64 {
        let start = self.data_start();
        match self.dir {
            Direction::Play if self.wraps => start + pos % self.data_len().max(1),
            _ => start + pos,
        }
    }

    /// What the track went through, as track `index` of rings of `ring_bytes`.
    pub fn report(&self, index: u32, ring_bytes: u64) -> TrackReport {
        let first = self.first_xrun_ns.load(Ordering::Relaxed);
        TrackReport {
            index,
            dir: self.dir,
            xruns: self.xruns.load(Ordering::Relaxed),
            first_xrun_ms: (first != u64::MAX).then(|| first as f64 / 1e6),
            min_headroom_pct: 100.0 * self.min_headroom.load(Ordering::Relaxed) as f64
                / ring_bytes as f64,
        }
    }

    pub(crate) fn note_xrun(&self, t_ns: u64) {
        self.xruns.fetch_add(1, Ordering::Relaxed);
        if self.first_xrun_ns.load(Ordering::Relaxed) == u64::MAX {
            self.first_xrun_ns.store(t_ns, Ordering::Relaxed);
        }
    }
}

/// What one track went through.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrackReport {
    pub index: u32,
    pub dir: Direction,
    pub xruns: u32,
    pub first_xrun_ms: Option<f64>,
    /// Lowest headroom as a share of the ring, in percent.
    pub min_headroom_pct: f64,
}
