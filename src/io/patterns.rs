//! Request patterns: sequential (optionally wrapping), uniform random with a read share, the same
//! sector over and over, and round robin over several files.

use super::OpKind;
use super::driver::{OpSpec, Pattern};
use rand::{Rng, SeedableRng, rngs::SmallRng};

/// `bs`-sized requests from `start` to `end`; the last one may be shorter. With `wrap`, starts over.
pub struct Sequential {
    kind: OpKind,
    file: u32,
    start: u64,
    end: u64,
    at: u64,
    bs: u32,
    wrap: bool,
}

impl Sequential {
    pub fn new(kind: OpKind, file: u32, start: u64, end: u64, bs: u32, wrap: bool) -> Self {
        assert!(
            bs > 0 && start <= end,
            "sequential pattern over {start}..{end} by {bs}"
        );
        Sequential {
            kind,
            file,
            start,
            end,
            at: start,
            bs,
            wrap,
        }
    }
}

impl Pattern for Sequential {
    fn next_op(&mut self) -> Option<OpSpec> {
        if self.at >= self.end {
            if !self.wrap || self.start == self.end {
                return None;
            }
            self.at = self.start;
        }
        let len = (self.end - self.at).min(u64::from(self.bs)) as u32;
        let op = OpSpec {
            kind: self.kind,
            file: self.file,
            offset: self.at,
            len,
        };
        self.at += u64::from(len);
        Some(op)
    }

    fn max_ops(&self) -> Option<u64> {
        (!self.wrap).then(|| (self.end - self.start).div_ceil(u64::from(self.bs)))
    }
}

/// Each range written (or read) from start to end in `bs`-sized requests, one file after the
/// next: with several requests in flight only neighbouring files overlap, so each file is laid
/// down in one piece as a recorded take would be.
pub struct FileAfterFile {
    ranges: Vec<(u64, u64)>,
    file: usize,
    at: u64,
    bs: u32,
    kind: OpKind,
}

impl FileAfterFile {
    pub fn new(kind: OpKind, ranges: Vec<(u64, u64)>, bs: u32) -> Self {
        assert!(bs > 0, "file after file by 0 bytes");
        let at = ranges.first().map_or(0, |r| r.0);
        FileAfterFile {
            ranges,
            file: 0,
            at,
            bs,
            kind,
        }
    }
}

impl Pattern for FileAfterFile {
    fn next_op(&mut self) -> Option<OpSpec> {
        loop {
            let &(_, end) = self.ranges.get(self.file)?;
            if self.at < end {
                let len = (end - self.at).min(u64::from(self.bs)) as u32;
                let op = OpSpec {
                    kind: self.kind,
                    file: self.file as u32,
                    offset: self.at,
                    len,
                };
                self.at += u64::from(len);
                return Some(op);
            }
            self.file += 1;
            self.at = self.ranges.get(self.file).map_or(0, |r| r.0);
        }
    }

    fn max_ops(&self) -> Option<u64> {
        Some(
            self.ranges
                .iter()
                .map(|&(s, e)| e.saturating_sub(s).div_ceil(u64::from(self.bs)))
                .sum(),
        )
    }
}

/// Uniformly random `bs`-aligned requests in `start..end`, a share `read_fraction` of them reads.
pub struct Random {
    file: u32,
    start: u64,
    slots: u64,
    bs: u32,
    read_fraction: f64,
    rng: SmallRng,
}

impl Random {
    /// `seed` makes runs repeatable (fio's randrepeat) while letting each run differ.
    pub fn new(file: u32, start: u64, end: u64, bs: u32, read_fraction: f64, seed: u64) -> Self {
        let slots = (end - start) / u64::from(bs);
        assert!(
            slots > 0,
            "random pattern needs room for one {bs}-byte request"
        );
        Random {
            file,
            start,
            slots,
            bs,
            read_fraction,
            rng: SmallRng::seed_from_u64(seed),
        }
    }
}

impl Pattern for Random {
    fn next_op(&mut self) -> Option<OpSpec> {
        let slot = self.rng.random_range(0..self.slots);
        let kind = if self.read_fraction >= 1.0 || self.rng.random::<f64>() < self.read_fraction {
            OpKind::Read
        } else {
            OpKind::Write
        };
        Some(OpSpec {
            kind,
            file: self.file,
            offset: self.start + slot * u64::from(self.bs),
            len: self.bs,
        })
    }
}

/// The same request forever: what the drive's (or host's) cache delivers.
pub struct SameSector(pub OpSpec);

impl Pattern for SameSector {
    fn next_op(&mut self) -> Option<OpSpec> {
        Some(self.0)
    }
}

/// Reads `bs` from each file in turn, each file advancing its own cursor and wrapping at its end:
/// N tracks streamed by a serial disk thread (DskBench, Echo Reporter).
pub struct RoundRobin {
    cursors: Vec<(u64, u64, u64)>, // start, end, at
    next: usize,
    bs: u32,
    kind: OpKind,
}

impl RoundRobin {
    pub fn new(ranges: &[(u64, u64)], bs: u32) -> Self {
        assert!(!ranges.is_empty(), "round robin over no files");
        RoundRobin {
            cursors: ranges.iter().map(|&(s, e)| (s, e, s)).collect(),
            next: 0,
            bs,
            kind: OpKind::Read,
        }
    }

    /// The same walk writing (N record tracks flushed by a serial disk thread); the driver fills
    /// each block with the content that belongs there, so files of ours stay valid.
    pub fn writing(mut self) -> Self {
        self.kind = OpKind::Write;
        self
    }
}

impl Pattern for RoundRobin {
    fn next_op(&mut self) -> Option<OpSpec> {
        let file = self.next;
        self.next = (self.next + 1) % self.cursors.len();
        let (start, end, at) = &mut self.cursors[file];
        if *at + u64::from(self.bs) > *end {
            *at = *start;
        }
        if *at + u64::from(self.bs) > *end {
            return None; // file smaller than one block
        }
        let op = OpSpec {
            kind: self.kind,
            file: file as u32,
            offset: *at,
            len: self.bs,
        };
        *at += u64::from(self.bs);
        Some(op)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_after_file_covers_each_range_once_in_order() {
        let mut p = FileAfterFile::new(
            OpKind::Write,
            vec![(4096, 4096 + 6144), (0, 0), (4096, 8192)],
            4096,
        );
        let v: Vec<_> = std::iter::from_fn(|| p.next_op())
            .map(|o| (o.file, o.offset, o.len))
            .collect();
        assert_eq!(v, vec![(0, 4096, 4096), (0, 8192, 2048), (2, 4096, 4096)]);
        assert!(
            FileAfterFile::new(OpKind::Read, vec![], 4096)
                .next_op()
                .is_none()
        );
    }

    #[test]
    fn sequential_ends_short_and_wraps() {
        let mut p = Sequential::new(OpKind::Read, 0, 4096, 4096 + 10240, 4096, false);
        let v: Vec<_> = std::iter::from_fn(|| p.next_op())
            .map(|o| (o.offset, o.len))
            .collect();
        assert_eq!(v, vec![(4096, 4096), (8192, 4096), (12288, 2048)]);
        let mut p = Sequential::new(OpKind::Read, 0, 0, 8192, 4096, true);
        let v: Vec<_> = (0..3).map(|_| p.next_op().unwrap().offset).collect();
        assert_eq!(v, vec![0, 4096, 0]);
    }

    #[test]
    fn random_is_aligned_in_range_and_mixes() {
        let mut p = Random::new(0, 4096, 4096 + 1024 * 8192, 8192, 0.7, 1);
        let mut reads = 0;
        for _ in 0..10_000 {
            let o = p.next_op().unwrap();
            assert_eq!((o.offset - 4096) % 8192, 0);
            assert!(o.offset + 8192 <= 4096 + 1024 * 8192);
            reads += usize::from(o.kind == OpKind::Read);
        }
        assert!((6700..7300).contains(&reads), "{reads}");
    }

    #[test]
    fn round_robin_visits_files_in_turn() {
        let mut p = RoundRobin::new(&[(0, 8192), (4096, 12288)], 4096);
        let v: Vec<_> = (0..6)
            .map(|_| {
                let o = p.next_op().unwrap();
                (o.file, o.offset)
            })
            .collect();
        assert_eq!(
            v,
            vec![(0, 0), (1, 4096), (0, 4096), (1, 8192), (0, 0), (1, 4096)]
        );
    }
}
