//! The measuring loop shared by the classic workloads: it pulls requests from a pattern, keeps up
//! to the backend's queue depth in flight, fills writes with tagged content, checks the tags of
//! what it reads, and records bytes, requests, latencies and CPU time.

use super::{IoBackend, Op, OpKind, completion_bytes};
use crate::content::{self, FillState};
use crate::control::{Control, ProgressUnit};
use crate::error::{Error, Result};
use crate::stats::{LatencyHist, thread_cpu_s};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// One request a pattern asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpSpec {
    pub kind: OpKind,
    pub file: u32,
    pub offset: u64,
    pub len: u32,
}

/// A source of requests (sequential, random, round robin …). `None` ends the run.
pub trait Pattern: Send {
    fn next_op(&mut self) -> Option<OpSpec>;
    /// The most requests the pattern will ever issue, when it ends by itself.
    fn max_ops(&self) -> Option<u64> {
        None
    }
}

/// A file the driver works on: where it is (for messages) and, for trackbench's own media, the
/// content id its tags carry.
#[derive(Debug, Clone)]
pub struct DriveFile {
    pub path: PathBuf,
    pub content_id: Option<u32>,
}

/// When to stop, besides the pattern running out or a cancel.
#[derive(Debug, Clone, Copy, Default)]
pub struct Limits {
    pub duration: Option<Duration>,
    pub bytes: Option<u64>,
}

/// Totals of one direction.
#[derive(Debug, Clone, Default)]
pub struct DirStats {
    pub ops: u64,
    pub bytes: u64,
    pub latency: LatencyHist,
}

/// What one drive measured.
#[derive(Debug, Clone)]
pub struct DriveStats {
    pub read: DirStats,
    pub write: DirStats,
    pub elapsed: Duration,
    /// CPU time of the issuing thread (user + system).
    pub cpu_s: f64,
    pub interrupted: bool,
    /// Bytes and requests done by each [`TIMELINE_STEP`] since the start: what was done by any
    /// moment, for a studio's stonewalled totals.
    pub timeline: Vec<(u64, u64)>,
    /// In a studio: what this rank did while every rank was still running (see
    /// [`DriveStats::done_by`]).
    pub stonewall: Option<Stonewall>,
}

/// In a studio, after a transfer every rank started together: what this rank did while every
/// rank was still running (ior's stonewalling), so that the studio's total counts only that
/// time. Alone, nothing to do.
pub fn stonewall(ctl: &Control<'_>, s: &mut DriveStats) -> Result<()> {
    if ctl.world.is_alone() {
        return Ok(());
    }
    let all = crate::studio::gather(
        ctl.world,
        "transfer ended",
        &s.elapsed.as_secs_f64(),
        ctl.cancel,
    )?;
    let secs = all.into_iter().fold(f64::INFINITY, f64::min);
    let (bytes, ops) = s.done_by(secs);
    s.stonewall = Some(Stonewall { secs, bytes, ops });
    Ok(())
}

/// The step of a drive's timeline.
pub const TIMELINE_STEP: Duration = Duration::from_millis(10);

/// What one rank of a studio did in the time all ranks were running (ior's stonewalling): from
/// the common start to the moment the first rank finished.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stonewall {
    pub secs: f64,
    pub bytes: f64,
    pub ops: f64,
}

impl DirStats {
    /// One finished request of `bytes`, which took `latency`.
    pub fn count(&mut self, bytes: u64, latency: Duration) {
        self.ops += 1;
        self.bytes += bytes;
        self.latency.record(latency);
    }

    /// Adds what another thread counted in the same direction.
    pub fn merge(&mut self, other: &DirStats) {
        self.ops += other.ops;
        self.bytes += other.bytes;
        self.latency.merge(&other.latency);
    }
}

impl DriveStats {
    pub fn bytes(&self) -> u64 {
        self.read.bytes + self.write.bytes
    }
    pub fn ops(&self) -> u64 {
        self.read.ops + self.write.ops
    }
    /// CPU time as a percentage of one core over the run.
    pub fn cpu_pct(&self) -> f64 {
        let s = self.elapsed.as_secs_f64();
        if s > 0.0 { 100.0 * self.cpu_s / s } else { 0.0 }
    }
    /// Bytes and requests done by `secs` after the start, from the timeline (linear between
    /// its steps; all of it from the end on).
    pub fn done_by(&self, secs: f64) -> (f64, f64) {
        let total = self.elapsed.as_secs_f64();
        if secs >= total || self.timeline.is_empty() {
            return (self.bytes() as f64, self.ops() as f64);
        }
        let step = TIMELINE_STEP.as_secs_f64();
        let at = |i: usize| -> (f64, f64) {
            if i == 0 {
                (0.0, 0.0)
            } else {
                let (b, o) = self.timeline[(i - 1).min(self.timeline.len() - 1)];
                (b as f64, o as f64)
            }
        };
        let k = (secs / step).floor().max(0.0) as usize;
        let frac = secs / step - k as f64;
        let (b0, o0) = at(k);
        let (b1, o1) = if k < self.timeline.len() {
            at(k + 1)
        } else {
            (self.bytes() as f64, self.ops() as f64)
        };
        (b0 + (b1 - b0) * frac, o0 + (o1 - o0) * frac)
    }
    /// CPU seconds per gigabyte (1e9 bytes) moved.
    pub fn cpu_s_per_gb(&self) -> f64 {
        let gb = self.bytes() as f64 / 1e9;
        if gb > 0.0 { self.cpu_s / gb } else { 0.0 }
    }
}

const PROGRESS_EVERY: Duration = Duration::from_millis(50);

/// What the loop needs to issue the next request: what it works on and when to stop, the free
/// slots, what each busy one holds, and whether to stop issuing.
struct Issuer<'a, 'c> {
    files: &'a [DriveFile],
    limits: Limits,
    deadline: Option<Instant>,
    label: &'a str,
    ctl: &'a Control<'c>,
    free: Vec<u32>,
    pending: Vec<Option<(OpSpec, Instant)>>,
    fill_state: Vec<FillState>,
    issued_bytes: u64,
    in_flight: usize,
    stopping: bool,
    interrupted: bool,
}

impl Issuer<'_, '_> {
    /// Issues requests until `qd` are in flight or a limit says stop, and says how many it
    /// issued. `last_completion` stands in for the clock: recent enough for the deadline, and
    /// one clock read less per request.
    fn top_up(
        &mut self,
        backend: &mut dyn IoBackend,
        pattern: &mut dyn Pattern,
        last_completion: Instant,
    ) -> Result<usize> {
        let (files, limits, deadline, label, ctl) =
            (self.files, self.limits, self.deadline, self.label, self.ctl);
        let qd = backend.queue_depth();
        let mut issued = 0;
        while !self.stopping && self.in_flight < qd {
            if ctl.cancelled() {
                self.interrupted = true;
                self.stopping = true;
                break;
            }
            if limits.bytes.is_some_and(|b| self.issued_bytes >= b)
                || deadline.is_some_and(|d| last_completion >= d)
            {
                self.stopping = true;
                break;
            }
            let Some(spec) = pattern.next_op() else {
                self.stopping = true;
                break;
            };
            let Some(slot) = self.free.pop() else {
                unreachable!("in_flight < qd leaves a free slot")
            };
            if spec.kind == OpKind::Write {
                let buf = &mut backend.slot_mut(slot)[..spec.len as usize];
                fill_write(
                    &spec,
                    &files[spec.file as usize],
                    buf,
                    &mut self.fill_state[slot as usize],
                    label,
                )?;
            } else {
                // A read overwrites the slot: the next write there must lay its noise again.
                self.fill_state[slot as usize] = FillState::default();
            }
            let t = Instant::now();
            backend.submit(Op {
                kind: spec.kind,
                file: spec.file,
                offset: spec.offset,
                len: spec.len,
                slot,
                external: std::ptr::null_mut(),
            })?;
            self.pending[slot as usize] = Some((spec, t));
            self.issued_bytes += u64::from(spec.len);
            self.in_flight += 1;
            issued += 1;
        }
        Ok(issued)
    }
}

/// Runs `pattern` on `backend` until it ends, a limit is reached, or the run is cancelled.
///
/// Each slot is refilled as soon as its completion has been checked, and sent to the device
/// before the next completion of the same batch is looked at, one request at a time as fio's
/// loop does: a device that finishes a whole queue's worth at once (a virtual disk often does)
/// would otherwise sit idle while the loop checks them all and then get them back as one batch,
/// which kept its queue in lockstep and cost a fifth of fio's rate at queue depth 32.
pub fn drive(
    backend: &mut dyn IoBackend,
    files: &[DriveFile],
    pattern: &mut dyn Pattern,
    limits: Limits,
    label: &str,
    ctl: &Control<'_>,
) -> Result<DriveStats> {
    let qd = backend.queue_depth();
    let start = Instant::now();
    let mut is = Issuer {
        files,
        limits,
        deadline: limits.duration.map(|d| start + d),
        label,
        ctl,
        free: (0..qd as u32).rev().collect(),
        pending: vec![None; qd],
        fill_state: vec![FillState::default(); qd],
        issued_bytes: 0,
        in_flight: 0,
        stopping: false,
        interrupted: false,
    };
    let mut done = Vec::with_capacity(qd);
    let mut read = DirStats::default();
    let mut write = DirStats::default();
    let (total, unit) = match (limits.bytes, limits.duration) {
        (Some(b), _) => (b, ProgressUnit::Bytes),
        (None, Some(d)) => (d.as_millis() as u64, ProgressUnit::Millis),
        (None, None) => (0, ProgressUnit::Bytes),
    };
    ctl.progress.begin(label, total, unit);
    let cpu0 = thread_cpu_s();
    let mut last_progress = start;
    let mut last_completion = start;
    // Only a studio's ranks need the timeline (for their stonewalled totals).
    let mut timeline = Vec::new();
    let mut next_mark = (!ctl.world.is_alone()).then(|| start + TIMELINE_STEP);

    is.top_up(backend, pattern, last_completion)?;
    while is.in_flight > 0 {
        done.clear();
        backend.complete(1, &mut done)?;
        let now = Instant::now();
        last_completion = now;
        for (i, c) in done.iter().enumerate() {
            let Some((spec, t)) = is.pending[c.slot as usize].take() else {
                unreachable!("completion for an idle slot {}", c.slot)
            };
            is.in_flight -= 1;
            let f = &files[spec.file as usize];
            let n = check_completion(&spec, f, c.result, backend.slot(c.slot), read.ops)?;
            match spec.kind {
                OpKind::Read => &mut read,
                OpKind::Write => &mut write,
            }
            .count(n, now - t);
            is.free.push(c.slot);
            // The slot is free again: its next request goes to the device now, not after the
            // rest of the batch has been checked. After the batch's last one, the wait for the
            // next completion sends it.
            let issued = is.top_up(backend, pattern, last_completion)?;
            if issued > 0 && i + 1 < done.len() {
                backend.flush()?;
            }
        }
        // Entry i holds what was done by (i + 1) steps: each step passed gets the totals so far.
        if let Some(mark) = next_mark.as_mut() {
            while now >= *mark {
                timeline.push((read.bytes + write.bytes, read.ops + write.ops));
                *mark += TIMELINE_STEP;
            }
        }
        if now - last_progress >= PROGRESS_EVERY {
            last_progress = now;
            ctl.progress.set(match unit {
                ProgressUnit::Bytes => read.bytes + write.bytes,
                ProgressUnit::Millis => (now - start).as_millis() as u64,
                ProgressUnit::Count => read.ops + write.ops,
            });
        }
    }
    let cpu_s = thread_cpu_s() - cpu0;
    ctl.progress.end();
    Ok(DriveStats {
        read,
        write,
        elapsed: last_completion - start,
        cpu_s,
        interrupted: is.interrupted,
        timeline,
        stonewall: None,
    })
}

/// Lays a write's tagged content into `buf`; only trackbench's own media may be written.
pub(crate) fn fill_write(
    spec: &OpSpec,
    f: &DriveFile,
    buf: &mut [u8],
    state: &mut FillState,
    label: &str,
) -> Result<()> {
    let id = f.content_id.ok_or_else(|| Error::WriteRefused {
        path: f.path.clone(),
        kind: "file trackbench did not create",
        what: label.to_string(),
    })?;
    content::fill(buf, id, spec.offset, state);
    Ok(())
}

/// Checks a finished request: that it moved all its bytes and, for a read of trackbench's own
/// media, that every tag is right and a slice of one block's noise too (a different block and
/// slice for each `nth_read`, `content::noise_sample`). `buf` is the request's buffer. Gives the
/// bytes moved.
pub(crate) fn check_completion(
    spec: &OpSpec,
    f: &DriveFile,
    result: i64,
    buf: &[u8],
    nth_read: u64,
) -> Result<u64> {
    let op = spec.kind.as_str();
    let what = || {
        format!(
            "{op} of {} bytes at offset {} in {} failed",
            spec.len,
            spec.offset,
            f.path.display()
        )
    };
    let n = completion_bytes(result, what)?;
    if n != u64::from(spec.len) {
        return Err(Error::ShortIo {
            op,
            path: f.path.clone(),
            offset: spec.offset,
            len: u64::from(spec.len),
            got: n,
        });
    }
    if let (OpKind::Read, Some(id)) = (spec.kind, f.content_id) {
        let buf = &buf[..spec.len as usize];
        content::verify(buf, id, spec.offset, false).map_err(|m| Error::Verify {
            path: f.path.clone(),
            offset: m.offset,
            detail: m.detail,
        })?;
        let (k, len) = content::noise_sample(spec.len as usize, nth_read);
        let piece = &buf[k.min(buf.len())..(k + len).min(buf.len())];
        if let Some(off) = content::noise_mismatch(piece, spec.offset + k as u64) {
            return Err(Error::Verify {
                path: f.path.clone(),
                offset: off,
                detail: "tag is right but the noise differs (corrupted data)".into(),
            });
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::control::NoProgress;
    use crate::io::{AlignedBuf, Completion};
    use std::sync::atomic::AtomicBool;

    /// A backend over memory, to check the driver's bookkeeping exactly.
    struct MemBackend {
        data: Vec<u8>,
        bufs: Vec<AlignedBuf>,
        queue: Vec<Op>,
        max_seen_in_flight: usize,
        /// What the driver asked for, in order: s(ubmit), f(lush), c(omplete).
        calls: String,
    }

    impl MemBackend {
        /// `slots` buffers of `buf_len` bytes over `data_len` bytes of zeroes.
        fn new(slots: usize, buf_len: usize, data_len: usize) -> MemBackend {
            MemBackend {
                data: vec![0; data_len],
                bufs: (0..slots).map(|_| AlignedBuf::new(buf_len)).collect(),
                queue: vec![],
                max_seen_in_flight: 0,
                calls: String::new(),
            }
        }
    }

    impl IoBackend for MemBackend {
        fn name(&self) -> &'static str {
            "mem"
        }
        fn queue_depth(&self) -> usize {
            self.bufs.len()
        }
        fn slot(&self, s: u32) -> &[u8] {
            &self.bufs[s as usize]
        }
        fn slot_mut(&mut self, s: u32) -> &mut [u8] {
            &mut self.bufs[s as usize]
        }
        fn submit(&mut self, op: Op) -> Result<()> {
            self.calls.push('s');
            self.queue.push(op);
            self.max_seen_in_flight = self.max_seen_in_flight.max(self.queue.len());
            Ok(())
        }
        fn flush(&mut self) -> Result<()> {
            self.calls.push('f');
            Ok(())
        }
        fn complete(&mut self, _min: usize, out: &mut Vec<Completion>) -> Result<()> {
            self.calls.push('c');
            for op in self.queue.drain(..) {
                let (o, l) = (op.offset as usize, op.len as usize);
                let b = &mut self.bufs[op.slot as usize];
                match op.kind {
                    OpKind::Read => b[..l].copy_from_slice(&self.data[o..o + l]),
                    OpKind::Write => self.data[o..o + l].copy_from_slice(&b[..l]),
                }
                out.push(Completion {
                    slot: op.slot,
                    result: l as i64,
                });
            }
            Ok(())
        }
    }

    struct Seq {
        kind: OpKind,
        at: u64,
        end: u64,
        bs: u32,
    }
    impl Pattern for Seq {
        fn next_op(&mut self) -> Option<OpSpec> {
            (self.at < self.end).then(|| {
                let o = self.at;
                self.at += u64::from(self.bs);
                OpSpec {
                    kind: self.kind,
                    file: 0,
                    offset: o,
                    len: self.bs,
                }
            })
        }
    }

    #[test]
    fn what_was_done_by_a_moment_comes_from_the_timeline() {
        // 10 MB by each 10 ms step, 40 ms in all (the last step partly done).
        let s = DriveStats {
            read: DirStats {
                ops: 40,
                bytes: 40_000_000,
                latency: Default::default(),
            },
            write: DirStats::default(),
            elapsed: Duration::from_millis(40),
            cpu_s: 0.0,
            interrupted: false,
            timeline: vec![(10_000_000, 10), (20_000_000, 20), (30_000_000, 30)],
            stonewall: None,
        };
        let near = |secs: f64, bytes: f64, ops: f64| {
            let (b, o) = s.done_by(secs);
            assert!(
                (b - bytes).abs() < 1.0 && (o - ops).abs() < 1e-6,
                "by {secs}: {b} {o}"
            );
        };
        near(0.0, 0.0, 0.0);
        near(0.005, 5e6, 5.0);
        near(0.02, 20e6, 20.0);
        near(0.035, 35e6, 35.0);
        near(1.0, 40e6, 40.0);
    }

    /// The memory backend finishes everything in flight at once, as a virtual disk often does:
    /// each checked slot's next request goes to the device (submitted and flushed) before the
    /// next completion is checked; after the batch's last one the wait itself sends it, and
    /// with nothing left to issue nothing is flushed.
    #[test]
    fn a_freed_slot_is_refilled_before_the_next_completion_is_checked() {
        let mut be = MemBackend::new(4, 4096, 1 << 20);
        let files = [DriveFile {
            path: "mem".into(),
            content_id: None,
        }];
        let cancel = AtomicBool::new(false);
        let ctl = Control {
            cancel: &cancel,
            progress: &NoProgress,
            world: &crate::studio::Alone,
        };
        let mut r = Seq {
            kind: OpKind::Read,
            at: 0,
            end: 12 * 4096,
            bs: 4096,
        };
        let s = drive(&mut be, &files, &mut r, Limits::default(), "r", &ctl).unwrap();
        assert_eq!((s.read.ops, s.read.bytes), (12, 12 * 4096));
        assert_eq!(be.calls, "sssscsfsfsfscsfsfsfsc");
        assert_eq!(be.max_seen_in_flight, 4);
    }

    #[test]
    fn writes_then_reads_verify_and_count() {
        let mut be = MemBackend::new(4, 65536, 1 << 20);
        let files = [DriveFile {
            path: "mem".into(),
            content_id: Some(9),
        }];
        let cancel = AtomicBool::new(false);
        let ctl = Control {
            cancel: &cancel,
            progress: &NoProgress,
            world: &crate::studio::Alone,
        };
        let mut w = Seq {
            kind: OpKind::Write,
            at: 0,
            end: 1 << 20,
            bs: 65536,
        };
        let s = drive(&mut be, &files, &mut w, Limits::default(), "w", &ctl).unwrap();
        assert_eq!((s.write.ops, s.write.bytes, s.read.ops), (16, 1 << 20, 0));
        assert_eq!(be.max_seen_in_flight, 4);
        let mut r = Seq {
            kind: OpKind::Read,
            at: 0,
            end: 1 << 20,
            bs: 65536,
        };
        let lim = Limits {
            bytes: Some(512 * 1024),
            duration: None,
        };
        let s = drive(&mut be, &files, &mut r, lim, "r", &ctl).unwrap();
        assert_eq!((s.read.ops, s.read.bytes), (8, 512 * 1024));
        assert_eq!(s.read.latency.count(), 8);
        assert!(!s.interrupted);

        // Corrupt one block: the read fails with the offset named.
        be.data[3 * 4096 + 9] ^= 0xff;
        let mut r = Seq {
            kind: OpKind::Read,
            at: 0,
            end: 1 << 20,
            bs: 65536,
        };
        let e = drive(&mut be, &files, &mut r, Limits::default(), "r", &ctl).unwrap_err();
        assert!(matches!(e, Error::Verify { offset: 12288, .. }), "{e}");
    }

    /// Plays back a fixed list of requests.
    struct Script(std::vec::IntoIter<OpSpec>);
    impl Pattern for Script {
        fn next_op(&mut self) -> Option<OpSpec> {
            self.0.next()
        }
    }

    #[test]
    fn a_write_after_a_read_in_the_same_slot_writes_the_right_noise() {
        // One slot, so every request reuses it: write phase 0, read another phase into it, then
        // write phase 0 again (1 MiB further on, where the noise repeats). The second write must
        // not keep the read's bytes as its noise. `run`'s mix did, and a later read caught it.
        let len = 2 << 20;
        let mut be = MemBackend::new(1, 8192, len);
        let files = [DriveFile {
            path: "mem".into(),
            content_id: Some(3),
        }];
        let cancel = AtomicBool::new(false);
        let ctl = Control {
            cancel: &cancel,
            progress: &NoProgress,
            world: &crate::studio::Alone,
        };
        let mut lay = Seq {
            kind: OpKind::Write,
            at: 0,
            end: len as u64,
            bs: 8192,
        };
        drive(&mut be, &files, &mut lay, Limits::default(), "w", &ctl).unwrap();
        let op = |kind, offset| OpSpec {
            kind,
            file: 0,
            offset,
            len: 8192,
        };
        let mut mixed = Script(
            vec![
                op(OpKind::Write, 0),
                op(OpKind::Read, 65536),
                op(OpKind::Write, 1 << 20),
                op(OpKind::Read, 8192),
                op(OpKind::Write, (1 << 20) + 8192),
            ]
            .into_iter(),
        );
        drive(&mut be, &files, &mut mixed, Limits::default(), "mix", &ctl).unwrap();
        content::verify(&be.data, 3, 0, true).unwrap();
    }

    #[test]
    fn cancel_stops_before_issuing() {
        let mut be = MemBackend::new(1, 4096, 1 << 20);
        let files = [DriveFile {
            path: "mem".into(),
            content_id: None,
        }];
        let cancel = AtomicBool::new(true);
        let ctl = Control {
            cancel: &cancel,
            progress: &NoProgress,
            world: &crate::studio::Alone,
        };
        let mut r = Seq {
            kind: OpKind::Read,
            at: 0,
            end: 1 << 20,
            bs: 4096,
        };
        let s = drive(&mut be, &files, &mut r, Limits::default(), "r", &ctl).unwrap();
        assert!(s.interrupted);
        assert_eq!(s.ops(), 0);
    }
}
