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
    /// locate leaves a ring's last part to the program's own reads (see `stream_loop::run`).
    pub locate_leaves: u64,
    /// Tracks whose rings are ready, counted from the first (`RingsReady`): only those get
    /// requests. All of them once the clock runs.
    ready: usize,
    /// Bytes every tick takes from every ring (`set_uniform_ticks`; 0: ticks that do not). Such
    /// a tick lowers every ring's headroom by the same amount, so where the rings are of one
    /// size the order a scan found still holds after it: the list is kept across ticks and
    /// scanned again only when it runs out and a track may have become needy since. Scanning
    /// every track on every tick was 70% of a simulated search's time (the butler's policy, not
    /// the device, is what a model's run computes) and a scan of every ring per period in a real
    /// butler at thousands of tracks.
    uniform_bytes: u64,
    /// The list holds every track that was needy at the last scan, and every track not in it
    /// ranks after its last entry: once it runs out, nothing is needy until `wake`.
    whole_list: bool,
    /// How much of the list outlives a tick: the entries before the first track that was not
    /// needy yet (ranking before needy ones, a capture ring whose flush threshold differs from
    /// playback's refill point). The rest is planned at once and dropped at the next tick.
    kept: usize,
    /// The tick count by which a track not needy at the last scan (or at its last completion)
    /// may have become needy.
    wake: u64,
    #[cfg(test)]
    scans: u64,
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
            uniform_bytes: 0,
            whole_list: false,
            kept: 0,
            wake: 0,
            #[cfg(test)]
            scans: 0,
        }
    }

    /// Every tick takes `period_bytes` from every playback ring and puts as much into every
    /// capture ring, on every track, from the start of the roll to its end (a fixed set of
    /// tracks; not a sampler's voices), and the rings are all of one size (the neediest order is
    /// then the headroom's): the planner may keep its neediest-first list across ticks. A tick that could not take its period (an xrun) leaves that ring as it was, and
    /// the list's order near the bottom is then a period off until the next scan.
    pub fn set_uniform_ticks(&mut self, period_bytes: u64) {
        self.uniform_bytes = period_bytes;
    }

    /// Whether the order of the last scan outlives a tick.
    fn order_kept(&self) -> bool {
        self.uniform_bytes > 0
            && self.policy.order == Order::Neediest
            && self.policy.pass_streams.is_none()
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
            if !self.order_kept() {
                self.stale = true;
            } else if self.kept < self.list.len() {
                self.list.truncate(self.kept.max(self.list_pos));
                self.kept = self.list.len();
            }
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
                    let ran_out = self.list_pos == self.list.len();
                    if self.stale || self.list_mode != mode || (ran_out && self.may_be_needy()) {
                        if scanned {
                            break; // a fresh scan found nothing more
                        }
                        self.scan(tracks, mode);
                        scanned = true;
                    } else if ran_out {
                        break; // nothing has become needy since the last scan
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

    /// Whether a track may be needy that the list does not hold: always, unless the last
    /// scan's order outlives the ticks, its list held every needy track, and no track can have
    /// become needy since (`wake`).
    fn may_be_needy(&self) -> bool {
        !self.order_kept() || !self.whole_list || self.seen >= self.wake
    }

    /// Where track `i` stands in the neediest-first order: its headroom as a share of its
    /// ring's capacity, in fixed point (lower is needier), ties in track order.
    fn rank(tracks: &[Track], i: u32) -> (u64, u32) {
        let t = &tracks[i as usize];
        ((t.headroom() << 20) / t.ring.capacity(), i)
    }

    /// Bytes the ticks must take (or, for a capture ring, bring) before track `t`, not needy
    /// now, may become needy; None where no tick can make it so.
    fn slack(&self, t: &Track, play_only: bool, final_flush: bool) -> Option<u64> {
        if !t.active() {
            return None;
        }
        match t.dir {
            Direction::Play => {
                let leaves = if play_only { self.locate_leaves } else { 0 };
                Some((self.policy.refill_at_bytes + leaves).saturating_sub(t.ring.free()))
            }
            Direction::Record if !play_only => {
                let threshold = if final_flush {
                    4096
                } else {
                    self.policy.write_bytes
                };
                Some(threshold.saturating_sub(t.ring.fill()))
            }
            Direction::Record => None,
        }
    }

    /// The tick count by which `slack` bytes have been taken: at least the next tick.
    fn wake_after(&self, slack: u64) -> u64 {
        self.seen
            .saturating_add(slack.div_ceil(self.uniform_bytes.max(1)).max(1))
    }

    /// Lines up the needy tracks, emptiest playback / fullest capture ring first (ties in
    /// track order), at most `LIST_MAX` of them.
    fn scan(&mut self, tracks: &[Track], (play_only, final_flush): (bool, bool)) {
        #[cfg(test)]
        {
            self.scans += 1;
        }
        self.candidates.clear();
        let n = tracks.len().min(self.ready);
        let keep = self.order_kept();
        // The neediest track that is not needy now, and when the first such may become so.
        let mut first_not_needy: Option<(u64, u32)> = None;
        let mut wake = u64::MAX;
        for (i, t) in tracks.iter().enumerate().take(n) {
            if self
                .request_for(tracks, i, play_only, final_flush)
                .is_some()
            {
                self.candidates.push(Self::rank(tracks, i as u32));
            } else if keep
                && !self.busy[i]
                && let Some(s) = self.slack(t, play_only, final_flush)
            {
                wake = wake.min(self.wake_after(s));
                let r = Self::rank(tracks, i as u32);
                first_not_needy = Some(first_not_needy.map_or(r, |f| f.min(r)));
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
        // Kept across ticks, the list ends before the first track that is not needy yet: such
        // a track keeps its place in the order as the ticks take from every ring alike, and
        // once needy it would be needier than what the list holds after it.
        let upto = first_not_needy.map_or(take, |f| {
            self.candidates[..take].partition_point(|c| *c < f)
        });
        self.list.clear();
        self.list
            .extend(self.candidates[..take].iter().map(|c| c.1));
        self.kept = upto;
        self.whole_list = upto == self.candidates.len();
        self.wake = wake;
        self.list_pos = 0;
        self.list_mode = (play_only, final_flush);
        self.stale = false;
    }

    /// A track's request completed: where the list outlives the ticks, a track still needy
    /// takes its place in it (or, ranking after all it holds, is left to the next scan), and
    /// one that is not says when it may be again.
    fn rejoin(&mut self, tracks: &[Track], i: u32) {
        if self.stale || !self.order_kept() {
            return;
        }
        let (play_only, final_flush) = self.list_mode;
        if self
            .request_for(tracks, i as usize, play_only, final_flush)
            .is_none()
        {
            if let Some(s) = self.slack(&tracks[i as usize], play_only, final_flush) {
                self.wake = self.wake.min(self.wake_after(s));
            }
            return;
        }
        let me = Self::rank(tracks, i);
        let last = self.list[self.list_pos..].last().copied();
        if last.is_none_or(|l| me >= Self::rank(tracks, l)) {
            // After everything listed: tracks the list does not hold may rank before it.
            self.whole_list = false;
            return;
        }
        if self.list.len() == self.list.capacity() {
            // Room without allocating: what has been handed out goes first.
            self.list.drain(..self.list_pos);
            self.kept = self.kept.saturating_sub(self.list_pos);
            self.list_pos = 0;
            if self.list.len() == self.list.capacity() {
                self.list.pop();
                self.kept = self.kept.min(self.list.len());
                self.whole_list = false;
            }
        }
        let at = self.list_pos
            + self.list[self.list_pos..].partition_point(|&j| Self::rank(tracks, j) < me);
        self.list.insert(at, i);
        if at < self.kept {
            self.kept += 1;
        }
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
        self.rejoin(tracks, r.track);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audio::Format;
    use crate::engine::ring::Ring;

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

    /// With ticks that take a period from every ring, the list is kept across ticks; every
    /// call still plans the neediest tracks of that moment, as a scan of every track would
    /// find them, and leaves none needy while the queue has room: playback alone, and playback
    /// beside capture (whose thresholds differ), with requests completing in any order.
    #[test]
    fn a_list_kept_across_uniform_ticks_plans_what_a_full_scan_would() {
        let chunk = 64 << 10;
        let period = 768;
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move |n: u64| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng % n
        };
        for (tracks_n, record_n, qd) in [(40u32, 0u32, 1usize), (30, 12, 3), (300, 0, 4)] {
            let mut p = Policy::named("trackbench", &Format::default())
                .unwrap()
                .with_chunk(chunk);
            // Capture flushed at another threshold than playback's refill.
            p.write_bytes = chunk / 2;
            let tracks: Vec<Track> = (0..tracks_n + record_n)
                .map(|i| {
                    let r = Ring::new(8 * chunk, chunk, false);
                    let dir = if i < tracks_n {
                        // Rings from a quarter to full, at whole blocks.
                        r.commit_produce(8 * chunk);
                        r.commit_consume(next(6 * chunk / 4096) * 4096);
                        Direction::Play
                    } else {
                        r.commit_produce(next(chunk / 4096) * 4096);
                        Direction::Record
                    };
                    Track::new(dir, r, i, i + 1, 4096, 1 << 40)
                })
                .collect();
            let mut pl = Planner::new(p, tracks.len(), qd);
            pl.set_uniform_ticks(period);
            let mut in_flight: Vec<Request> = vec![];
            let mut ticks = 0u64;
            for step in 0..20_000 {
                // What a scan of every track finds now, neediest first.
                let mut want: Vec<(u64, u32)> = (0..tracks.len())
                    .filter(|&i| pl.request_for(&tracks, i, false, false).is_some())
                    .map(|i| Planner::rank(&tracks, i as u32))
                    .collect();
                want.sort_unstable();
                let room = qd - pl.in_flight();
                want.truncate(room);
                let mut out = vec![];
                pl.plan(&tracks, false, false, &mut out);
                let got: Vec<u32> = out.iter().map(|r| r.track).collect();
                let want: Vec<u32> = want.iter().map(|w| w.1).collect();
                assert_eq!(got, want, "step {step}, tick {ticks}, qd {qd}");
                in_flight.extend(out);
                // Some of what is in flight completes, in any order.
                let mut k = in_flight.len();
                while k > 0 {
                    k -= 1;
                    if next(3) > 0 {
                        let r = in_flight.swap_remove(k);
                        pl.complete(&tracks, &r);
                    }
                }
                // Now and then a tick: a period from every ring, none short of it.
                if next(4) == 0 {
                    for t in &tracks {
                        match t.dir {
                            Direction::Play => {
                                assert!(
                                    t.ring.fill() >= period,
                                    "an underrun: the test is too hard"
                                );
                                t.ring.commit_consume(period);
                            }
                            Direction::Record => {
                                assert!(t.ring.free() >= period, "an overrun");
                                t.ring.commit_produce(period);
                            }
                        }
                    }
                    ticks += 1;
                    pl.tick_seen(ticks);
                }
            }
            assert!(
                ticks > 4000 && pl.scans < ticks / 2,
                "{} scans in {ticks} ticks",
                pl.scans
            );
        }
    }

    /// Kept across ticks, a list is scanned again as soon as a track may have become needy:
    /// a ring a tick or two from its refill point is planned on the tick it reaches it.
    #[test]
    fn a_kept_list_wakes_on_the_tick_a_ring_reaches_its_refill_point() {
        let chunk = 64 << 10;
        let period = 4096;
        let p = Policy::named("trackbench", &Format::default())
            .unwrap()
            .with_chunk(chunk);
        // Free space 2.5 periods short of the refill point.
        let cap = 8 * chunk;
        let tracks = vec![play_track(
            cap - p.refill_at_bytes + 5 * period / 2,
            cap,
            chunk,
        )];
        let mut pl = Planner::new(p, 1, 1);
        pl.set_uniform_ticks(period);
        let mut out = vec![];
        for tick in 1..=3 {
            pl.plan(&tracks, false, false, &mut out);
            assert!(out.is_empty(), "not needy before tick 3");
            tracks[0].ring.commit_consume(period);
            pl.tick_seen(tick);
        }
        pl.plan(&tracks, false, false, &mut out);
        assert_eq!(out.len(), 1, "needy at tick 3");
        assert_eq!(pl.scans, 2, "scanned at the start and at tick 3 only");
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
