//! The butler's policy: which tracks to serve next and with how large a request. It refills
//! playback rings whose free space reached the profile's threshold and flushes capture rings
//! holding a write's worth, neediest first or in session order. Shared by the real butler thread
//! and the simulation; it only plans and books, the caller issues the I/O.

use super::profile::{Order, Policy};
use super::{Direction, Track};
use crate::io::OpKind;

/// One planned transfer between a ring and its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    pub track: u32,
    /// The file in the backend's table.
    pub file: u32,
    pub kind: OpKind,
    /// Where in ring memory.
    pub ring_offset: u64,
    pub len: u64,
    /// Where in the file.
    pub file_offset: u64,
    /// A read that runs past the ring's end (a `read_whole` profile): it lands in the butler's
    /// own buffer and is copied into the ring, wrapping, when it completes.
    pub wraps_ring: bool,
}

pub struct Planner {
    policy: Policy,
    queue_depth: usize,
    in_flight: usize,
    busy: Vec<bool>,
    cursor: usize,
    candidates: Vec<(u64, u32)>,
    /// Neediest first: the needy tracks of the last scan, neediest first, and how far they have
    /// been handed out. Rings change only on the audio tick (and on the butler's own
    /// completions, which make a track less needy), so the order found by one scan holds until
    /// the next tick: the list is reused until then, or until it runs out, instead of scanning
    /// every track for every request (with 8,000 tracks that took a 278 µs read to a 436 µs cycle).
    list: Vec<u32>,
    list_pos: usize,
    list_mode: (bool, bool),
    stale: bool,
    seen: u64,
    /// Bytes each playback ring keeps free during the locate (`plan` with `play_only`): a quick
    /// locate leaves a ring's last part to the program's own reads (see `engine::run`).
    pub locate_leaves: u64,
    /// Tracks whose rings are ready, counted from the first (`RingsReady`): only those get
    /// requests. All of them once the clock runs.
    ready: usize,
}

/// Most tracks one scan lines up.
const LIST_MAX: usize = 256;

impl Planner {
    /// A planner for `tracks` tracks keeping at most `queue_depth` requests in flight. Allocates
    /// all it will need now.
    pub fn new(policy: Policy, tracks: usize, queue_depth: usize) -> Planner {
        Planner {
            policy,
            queue_depth: queue_depth.max(1),
            in_flight: 0,
            busy: vec![false; tracks],
            cursor: 0,
            candidates: Vec::with_capacity(tracks),
            list: Vec::with_capacity(LIST_MAX.min(tracks)),
            list_pos: 0,
            list_mode: (false, false),
            stale: true,
            seen: 0,
            locate_leaves: 0,
            ready: tracks,
        }
    }

    /// Tracks whose rings may be used, from the first.
    pub fn ready(&self) -> usize {
        self.ready
    }

    /// Only the first `ready` tracks' rings may be used yet (their memory is still being
    /// touched on other threads while the locate fills the ready ones).
    pub fn set_ready(&mut self, ready: usize) {
        if ready != self.ready {
            self.ready = ready;
            self.stale = true;
        }
    }

    /// Tells the planner how many audio ticks have run: after a tick, the rings have changed and
    /// the neediest-first order must be found again.
    pub fn tick_seen(&mut self, ticks: u64) {
        if ticks != self.seen {
            self.seen = ticks;
            self.stale = true;
        }
    }

    /// The rings changed outside the tick (prefill, stagger): scan again.
    pub fn invalidate(&mut self) {
        self.stale = true;
    }

    pub fn queue_depth(&self) -> usize {
        self.queue_depth
    }

    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// The largest read the policy makes.
    pub fn read_max_bytes(&self) -> u64 {
        self.policy.read_max_bytes
    }

    /// Whether a request of track `i` is in flight.
    pub fn busy(&self, i: usize) -> bool {
        self.busy[i]
    }

    /// Appends up to (queue depth − in flight) requests to `out`. `play_only` is for the locate
    /// (prefill) phase; `final_flush` empties capture rings of whatever whole blocks they hold.
    pub fn plan(
        &mut self,
        tracks: &[Track],
        play_only: bool,
        final_flush: bool,
        out: &mut Vec<Request>,
    ) {
        let room = self.queue_depth - self.in_flight;
        if room == 0 {
            return;
        }
        let n = tracks.len().min(self.ready);
        if n == 0 {
            return;
        }
        let before = out.len();
        match self.policy.order {
            Order::Session => {
                // One pass over the tracks in session order, from the one after the last
                // planned (the cursor moves as requests are planned, the pass does not).
                let start = self.cursor;
                let mut k = 0;
                while k < n && out.len() - before < room {
                    let i = (start + k) % n;
                    if let Some(r) = self.request_for(tracks, i, play_only, final_flush) {
                        self.busy[i] = true;
                        out.push(r);
                        self.cursor = (i + 1) % n;
                    }
                    k += 1;
                }
            }
            Order::Neediest => {
                let mode = (play_only, final_flush);
                let mut scanned = false;
                while out.len() - before < room {
                    if self.stale || self.list_mode != mode || self.list_pos == self.list.len() {
                        if scanned {
                            break; // a fresh scan found nothing more
                        }
                        self.scan(tracks, mode);
                        scanned = true;
                    }
                    let Some(&i) = self.list.get(self.list_pos) else {
                        break;
                    };
                    self.list_pos += 1;
                    // Planned now, from the ring as it is: still needy, and not yet in flight.
                    // Marked busy at once: a list reused from an earlier call may run out here
                    // and a fresh scan would otherwise line the same track up again.
                    if let Some(r) = self.request_for(tracks, i as usize, play_only, final_flush) {
                        self.busy[i as usize] = true;
                        out.push(r);
                    }
                }
            }
        }
        self.in_flight += out.len() - before;
    }

    /// Lines up the needy tracks, emptiest playback / fullest capture ring first (ties in
    /// track order), at most `LIST_MAX` of them.
    fn scan(&mut self, tracks: &[Track], (play_only, final_flush): (bool, bool)) {
        self.candidates.clear();
        for (i, t) in tracks.iter().enumerate().take(self.ready) {
            if self
                .request_for(tracks, i, play_only, final_flush)
                .is_some()
            {
                // Headroom as a share of capacity, in fixed point: lower is needier.
                let key = (t.headroom() << 20) / t.ring.capacity();
                self.candidates.push((key, i as u32));
            }
        }
        let most = self
            .policy
            .pass_streams
            .map_or(LIST_MAX, |n| (n as usize).clamp(1, LIST_MAX));
        let take = most.min(self.candidates.len());
        if take < self.candidates.len() {
            self.candidates.select_nth_unstable(take);
        }
        self.candidates[..take].sort_unstable();
        self.list.clear();
        self.list
            .extend(self.candidates[..take].iter().map(|c| c.1));
        self.list_pos = 0;
        self.list_mode = (play_only, final_flush);
        self.stale = false;
    }

    fn request_for(
        &self,
        tracks: &[Track],
        i: usize,
        play_only: bool,
        final_flush: bool,
    ) -> Option<Request> {
        let t = &tracks[i];
        if self.busy[i] || !t.active() || i >= self.ready {
            return None;
        }
        let block = 4096;
        match t.dir {
            Direction::Play => {
                let free = if play_only {
                    t.ring.free().saturating_sub(self.locate_leaves)
                } else {
                    t.ring.free()
                };
                let want = self.policy.read_len(free);
                if want == 0 {
                    return None;
                }
                let (at, contiguous) = t.ring.producer_region(want);
                // A program that reads a refill whole into its own buffer asks the kernel for
                // all of it at once, wherever the ring's end falls.
                let room = if self.policy.read_whole {
                    want
                } else {
                    contiguous
                };
                let pos = t.ring.produced();
                let data_len = t.data_len();
                // A track's reads wrap at the end of its file; a voice's stop there. Streams are
                // whole blocks long.
                let to_end = if t.wraps() {
                    data_len - pos % data_len.max(1)
                } else {
                    data_len.saturating_sub(pos)
                };
                let len = room.min(to_end) / block * block;
                (len > 0).then(|| Request {
                    track: i as u32,
                    file: t.file(),
                    kind: OpKind::Read,
                    ring_offset: at,
                    len,
                    file_offset: t.file_offset(pos),
                    wraps_ring: len > contiguous,
                })
            }
            Direction::Record if !play_only => {
                let fill = t.ring.fill();
                let threshold = if final_flush {
                    block
                } else {
                    self.policy.write_bytes
                };
                if fill < threshold {
                    return None;
                }
                let (at, contiguous) = t.ring.consumer_region(self.policy.write_bytes.min(fill));
                let pos = t.ring.consumed();
                let len = contiguous.min(t.data_len().saturating_sub(pos)) / block * block;
                (len > 0).then(|| Request {
                    track: i as u32,
                    file: t.file(),
                    kind: OpKind::Write,
                    ring_offset: at,
                    len,
                    file_offset: t.file_offset(pos),
                    wraps_ring: false,
                })
            }
            Direction::Record => None,
        }
    }

    /// The read a locate would issue next for playback track `i` (None once its ring is as full
    /// as a locate fills it): for a locate that fills rings without reading
    /// (`StreamSpec::locate_from_content`). Books nothing.
    pub fn locate_request(&self, tracks: &[Track], i: usize) -> Option<Request> {
        self.request_for(tracks, i, true, false)
    }

    /// Books a finished request: the data is in the ring (read) or on disk (write).
    pub fn complete(&mut self, tracks: &[Track], r: &Request) {
        let t = &tracks[r.track as usize];
        match r.kind {
            OpKind::Read => t.ring.commit_produce(r.len),
            OpKind::Write => t.ring.commit_consume(r.len),
        }
        assert!(
            self.busy[r.track as usize],
            "completion for an idle track {}",
            r.track
        );
        self.busy[r.track as usize] = false;
        self.in_flight -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audio::Format;
    use crate::stream::ring::Ring;

    fn play_track(fill: u64, cap: u64, chunk: u64) -> Track {
        let r = Ring::new(cap, chunk, false);
        r.commit_produce(cap);
        r.commit_consume(cap - fill);
        Track::new(Direction::Play, r, 0, 1, 4096, 1 << 30)
    }

    #[test]
    fn neediest_first_then_session_order() {
        let chunk = 256 << 10;
        let tracks: Vec<Track> = [4u64, 1, 3, 2]
            .iter()
            .map(|c| play_track(c * chunk, 8 * chunk, chunk))
            .collect();
        let p = Policy::named("trackbench", &Format::default()).unwrap();
        let mut pl = Planner::new(p.clone(), tracks.len(), 2);
        let mut out = vec![];
        pl.plan(&tracks, false, false, &mut out);
        assert_eq!(out.iter().map(|r| r.track).collect::<Vec<_>>(), vec![1, 3]);
        assert!(out.iter().all(|r| r.len == chunk && r.kind == OpKind::Read));
        // Nothing more while the queue is full.
        pl.plan(&tracks, false, false, &mut out);
        assert_eq!(out.len(), 2);
        pl.complete(&tracks, &out[0]);
        assert_eq!(tracks[1].ring.fill(), 2 * chunk);

        let mut session = p;
        session.order = Order::Session;
        let mut pl = Planner::new(session, tracks.len(), 1);
        let mut seen = vec![];
        for _ in 0..5 {
            let mut out = vec![];
            pl.plan(&tracks, false, false, &mut out);
            seen.push(out[0].track);
            pl.complete(&tracks, &out[0]);
        }
        assert_eq!(seen, vec![0, 1, 2, 3, 0]);
        // With room for several, one call plans them in session order, none skipped.
        let mut session = Policy::named("trackbench", &Format::default()).unwrap();
        session.order = Order::Session;
        let empty: Vec<Track> = (0..4).map(|_| play_track(0, 8 * chunk, chunk)).collect();
        let mut pl = Planner::new(session, empty.len(), 4);
        let mut out = vec![];
        pl.plan(&empty, false, false, &mut out);
        assert_eq!(
            out.iter().map(|r| r.track).collect::<Vec<_>>(),
            vec![0, 1, 2, 3]
        );
    }

    /// A quick locate leaves the ring's last part free for the program's own reads; the roll's
    /// refills are not held back by it.
    #[test]
    fn a_locate_leaves_what_it_is_told_to_and_the_roll_does_not() {
        let f = Format::parse("48k/24/mono").unwrap();
        let p = Policy::named("ardour-small", &f).unwrap();
        let ring = 4 << 20;
        let tracks = vec![play_track(0, ring, p.chunk_bytes)];
        let cap = tracks[0].ring.capacity();
        let leave = 256 << 10;
        let mut pl = Planner::new(p.clone(), 1, 1);
        pl.locate_leaves = leave;
        let mut more = vec![];
        pl.plan(&tracks, true, false, &mut more);
        assert_eq!(more.len(), 1);
        while let Some(r) = more.pop() {
            assert!(tracks[0].ring.free() - r.len >= leave, "{r:?}");
            pl.complete(&tracks, &r);
            pl.plan(&tracks, true, false, &mut more);
        }
        // The locate filled all it could but what it leaves, which is the program's.
        let free = tracks[0].ring.free();
        assert!(
            free >= leave && free < leave + p.refill_at_bytes,
            "{free} of {cap}"
        );
        pl.plan(&tracks, false, false, &mut more);
        assert_eq!(more.len(), 1, "the roll reads the rest");
        assert!(more[0].len > 0 && more[0].len <= free);
    }

    /// While ring memory is still being made ready, only the ready tracks get requests, in
    /// either order; the rest as they become ready.
    #[test]
    fn only_tracks_whose_rings_are_ready_are_planned() {
        let chunk = 256 << 10;
        let tracks: Vec<Track> = (0..6).map(|_| play_track(0, 8 * chunk, chunk)).collect();
        for order in [Order::Neediest, Order::Session] {
            let mut p = Policy::named("trackbench", &Format::default()).unwrap();
            p.order = order;
            let mut pl = Planner::new(p, tracks.len(), 8);
            pl.set_ready(0);
            let mut out = vec![];
            pl.plan(&tracks, true, false, &mut out);
            assert!(out.is_empty(), "{order:?}: {out:?}");
            pl.set_ready(2);
            pl.plan(&tracks, true, false, &mut out);
            let mut seen: Vec<u32> = out.iter().map(|r| r.track).collect();
            seen.sort_unstable();
            assert_eq!(seen, vec![0, 1], "{order:?}");
            assert_eq!(pl.locate_request(&tracks, 3), None, "{order:?}");
            pl.set_ready(6);
            pl.plan(&tracks, true, false, &mut out);
            let mut seen: Vec<u32> = out.iter().map(|r| r.track).collect();
            seen.sort_unstable();
            assert_eq!(seen, vec![0, 1, 2, 3, 4, 5], "{order:?}");
            for r in &out {
                pl.complete(&tracks, r);
            }
            for t in &tracks {
                t.ring.reset();
            }
        }
    }

    #[test]
    fn a_track_is_never_planned_twice_when_a_reused_list_runs_out() {
        // Queue depth 2, three empty rings: the first call lines up [0, 1, 2] and plans 0 and 1.
        // Once both complete, the next call takes 2 from the old list, runs out, scans again and
        // finds 2 the neediest: it must not be planned a second time.
        let chunk = 256 << 10;
        let tracks: Vec<Track> = (0..3).map(|_| play_track(0, 8 * chunk, chunk)).collect();
        let p = Policy::named("trackbench", &Format::default()).unwrap();
        let mut pl = Planner::new(p, tracks.len(), 2);
        let mut out = vec![];
        pl.plan(&tracks, true, false, &mut out);
        assert_eq!(out.iter().map(|r| r.track).collect::<Vec<_>>(), vec![0, 1]);
        for r in out.clone() {
            pl.complete(&tracks, &r);
        }
        out.clear();
        pl.plan(&tracks, true, false, &mut out);
        let mut seen: Vec<u32> = out.iter().map(|r| r.track).collect();
        seen.dedup();
        assert_eq!(seen.len(), out.len(), "planned twice: {out:?}");
        for r in out.clone() {
            pl.complete(&tracks, &r);
        }
    }

    #[test]
    fn a_program_that_reads_into_its_own_buffer_reads_past_the_rings_end() {
        let f = Format::parse("48k/32f/mono").unwrap();
        let whole = Policy::named("ardour-small", &f).unwrap();
        assert!(
            whole.read_whole,
            "Ardour reads a refill into its sum_buffer"
        );
        let chunk = whole.chunk_bytes;
        let plan = |p: &Policy| {
            let r = Ring::new(4 * chunk, chunk, false);
            // The head 7/8 of the way round: the free space wraps at the ring's end.
            r.commit_produce(3 * chunk + chunk / 2);
            r.commit_consume(3 * chunk + chunk / 2);
            let tracks = vec![Track::new(Direction::Play, r, 0, 1, 4096, 1 << 30)];
            let mut pl = Planner::new(p.clone(), 1, 1);
            let mut out = vec![];
            pl.plan(&tracks, false, false, &mut out);
            out[0]
        };
        let r = plan(&whole);
        assert_eq!((r.ring_offset, r.len), (3 * chunk + chunk / 2, 4 * chunk));
        assert!(
            r.wraps_ring,
            "one read of the whole free space, across the end"
        );
        let straight = Policy {
            read_whole: false,
            ..whole
        };
        let r = plan(&straight);
        assert_eq!(r.len, chunk / 2, "straight into ring memory: up to its end");
        assert!(!r.wraps_ring);
    }

    #[test]
    fn reads_stop_at_the_file_end_and_capture_flushes_in_writes() {
        let chunk = 64 << 10;
        let r = Ring::new(4 * chunk, chunk, false);
        // A file of 100 KiB of audio: the first read takes 64K, the next only the 36K left.
        let tracks = vec![Track::new(Direction::Play, r, 0, 1, 4096, 100 << 10)];
        let p = Policy::named("trackbench", &Format::default())
            .unwrap()
            .with_chunk(chunk);
        let mut pl = Planner::new(p.clone(), 1, 1);
        let mut out = vec![];
        pl.plan(&tracks, false, false, &mut out);
        assert_eq!((out[0].len, out[0].file_offset), (chunk, 4096));
        pl.complete(&tracks, &out[0]);
        out.clear();
        pl.plan(&tracks, false, false, &mut out);
        assert_eq!((out[0].len, out[0].file_offset), (36 << 10, 4096 + chunk));
        pl.complete(&tracks, &out[0]);
        out.clear();
        pl.plan(&tracks, false, false, &mut out);
        assert_eq!(out[0].file_offset, 4096, "wraps to the start of the audio");

        let r = Ring::new(4 * chunk, chunk, false);
        r.commit_produce(chunk + 5000);
        let tracks = vec![Track::new(Direction::Record, r, 0, 2, 4096, 1 << 30)];
        let mut pl = Planner::new(p, 1, 1);
        let mut out = vec![];
        pl.plan(&tracks, true, false, &mut out);
        assert!(out.is_empty(), "no writes while locating");
        pl.plan(&tracks, false, false, &mut out);
        assert_eq!(
            (out[0].kind, out[0].len, out[0].file_offset),
            (OpKind::Write, chunk, 4096)
        );
        pl.complete(&tracks, &out[0]);
        out.clear();
        pl.plan(&tracks, false, false, &mut out);
        assert!(out.is_empty(), "less than a write's worth waits");
        pl.plan(&tracks, false, true, &mut out);
        assert_eq!(
            out[0].len, 4096,
            "the final flush takes the whole blocks left"
        );
    }
}
