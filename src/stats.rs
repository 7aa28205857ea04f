//! Statistics: latency histograms and their percentiles, CPU time, and the spread of repeated runs.

use hdrhistogram::Histogram as Hdr;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Request latencies in nanoseconds, 3 significant digits, in fixed memory.
#[derive(Clone)]
pub struct LatencyHist {
    h: Hdr<u64>,
}

impl Default for LatencyHist {
    fn default() -> Self {
        // 1 ns .. 100 s at 3 significant figures: a fixed ~200 KiB, never resized.
        let h = Hdr::new_with_bounds(1, 100_000_000_000, 3).expect("valid histogram bounds");
        LatencyHist { h }
    }
}

impl std::fmt::Debug for LatencyHist {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LatencyHist({:?})", self.summary())
    }
}

impl LatencyHist {
    pub fn record(&mut self, d: Duration) {
        let ns = (d.as_nanos() as u64).clamp(1, 100_000_000_000);
        self.h.saturating_record(ns);
    }
    pub fn count(&self) -> u64 {
        self.h.len()
    }
    pub fn merge(&mut self, other: &LatencyHist) {
        // Same bounds on both sides, so adding cannot fail.
        let _ = self.h.add(&other.h);
    }
    /// Mean, percentiles and maximum in microseconds.
    pub fn summary(&self) -> LatencySummary {
        let us = |ns: u64| ns as f64 / 1000.0;
        LatencySummary {
            count: self.h.len(),
            mean_us: self.h.mean() / 1000.0,
            p50_us: us(self.h.value_at_quantile(0.5)),
            p99_us: us(self.h.value_at_quantile(0.99)),
            p999_us: us(self.h.value_at_quantile(0.999)),
            max_us: us(self.h.max()),
        }
    }

    /// The latency at quantile `q` (0..=1), in microseconds.
    pub fn quantile_us(&self, q: f64) -> f64 {
        self.h.value_at_quantile(q) as f64 / 1000.0
    }

    /// The distribution as a chart draws it (see [`Histogram`]); None when nothing was recorded.
    pub fn histogram(&self) -> Option<Histogram> {
        if self.h.is_empty() {
            return None;
        }
        let bucket = |ns: u64| -> i32 {
            // A latency on an edge belongs to the bucket below it (floating-point slack).
            ((ns.max(1) as f64 / 1000.0).ln() / Histogram::STEP.ln() - 1e-9).ceil() as i32
        };
        let (lo, hi) = (bucket(self.h.min()), bucket(self.h.max()));
        let mut counts = vec![0u64; (hi - lo + 1) as usize];
        for v in self.h.iter_recorded() {
            let b = bucket(self.h.lowest_equivalent(v.value_iterated_to())).clamp(lo, hi);
            counts[(b - lo) as usize] += v.count_at_value();
        }
        Some(Histogram {
            buckets: counts
                .into_iter()
                .enumerate()
                .map(|(i, count)| HistBucket {
                    le_us: Histogram::STEP.powi(lo + i as i32),
                    count,
                })
                .collect(),
        })
    }
}

/// A latency distribution for charts: counts in buckets whose upper edges grow by a fixed factor
/// (a quarter of an octave), from the bucket of the shortest latency seen to that of the longest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Histogram {
    pub buckets: Vec<HistBucket>,
}

impl Histogram {
    /// Each bucket's upper edge is this factor times the one before: 2^(1/4).
    pub const STEP: f64 = 1.189_207_115_002_721;

    pub fn total(&self) -> u64 {
        self.buckets.iter().map(|b| b.count).sum()
    }
}

/// Latencies above the previous bucket's edge and at most `le_us` microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct HistBucket {
    pub le_us: f64,
    pub count: u64,
}

/// The shape of a latency distribution.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    pub count: u64,
    pub mean_us: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub max_us: f64,
}

/// The longest stretch the calling thread waited on a run queue for a CPU, between two of its
/// calls to [`CpuWait::sample`] (and the whole of such waiting): the kernel's per-thread
/// `run_delay` (Linux, `/proc/thread-self/schedstat`, its second field), read through a file
/// kept open. A thread that was ready to run and did not, because the CPUs were busy with
/// something else, shows here; one that slept or waited for a device does not. Nothing is
/// known elsewhere (`max_ns` stays None).
pub struct CpuWait {
    #[cfg(target_os = "linux")]
    file: Option<std::fs::File>,
    last_ns: Option<u64>,
    /// The longest wait between two samples, in nanoseconds.
    pub max_ns: Option<u64>,
    /// All the waiting since the first sample, in nanoseconds.
    pub total_ns: Option<u64>,
}

impl CpuWait {
    /// For the calling thread (the file names it when opened).
    pub fn of_this_thread() -> CpuWait {
        let mut w = CpuWait {
            #[cfg(target_os = "linux")]
            file: std::fs::File::open("/proc/thread-self/schedstat").ok(),
            last_ns: None,
            max_ns: None,
            total_ns: None,
        };
        w.last_ns = w.read();
        w
    }

    #[cfg(target_os = "linux")]
    fn read(&mut self) -> Option<u64> {
        use std::os::unix::fs::FileExt;
        let f = self.file.as_ref()?;
        let mut buf = [0u8; 96];
        let n = f.read_at(&mut buf, 0).ok()?;
        let text = std::str::from_utf8(&buf[..n]).ok()?;
        text.split_ascii_whitespace().nth(1)?.parse().ok()
    }

    #[cfg(not(target_os = "linux"))]
    fn read(&mut self) -> Option<u64> {
        None
    }

    /// Books the waiting since the last sample.
    pub fn sample(&mut self) {
        let (Some(before), Some(now)) = (self.last_ns, self.read()) else {
            return;
        };
        let waited = now.saturating_sub(before);
        self.max_ns = Some(self.max_ns.unwrap_or(0).max(waited));
        self.total_ns = Some(self.total_ns.unwrap_or(0) + waited);
        self.last_ns = Some(now);
    }
}

/// CPU time used by the calling thread so far (user + system), in seconds, from the thread's
/// CPU clock (nanosecond resolution, unlike getrusage's tick-sampled split).
#[cfg(unix)]
pub fn thread_cpu_s() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid out-pointer.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } != 0 {
        return 0.0;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

/// CPU time used by the calling thread so far (kernel + user), in seconds (GetThreadTimes).
#[cfg(windows)]
pub fn thread_cpu_s() -> f64 {
    use windows_sys::Win32::Foundation::FILETIME;
    use windows_sys::Win32::System::Threading::{GetCurrentThread, GetThreadTimes};
    let zero = FILETIME {
        dwLowDateTime: 0,
        dwHighDateTime: 0,
    };
    let (mut c, mut e, mut k, mut u) = (zero, zero, zero, zero);
    // SAFETY: the pseudo-handle of the calling thread and valid out-pointers.
    if unsafe { GetThreadTimes(GetCurrentThread(), &mut c, &mut e, &mut k, &mut u) } == 0 {
        return 0.0;
    }
    let t = |f: FILETIME| ((u64::from(f.dwHighDateTime) << 32) | u64::from(f.dwLowDateTime)) as f64;
    // FILETIME counts 100 ns.
    (t(k) + t(u)) / 1e7
}

/// Median, extremes and coefficient of variation of one figure over repeated runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// Standard deviation over mean (population), 0 for one run.
    pub cv: f64,
    /// Every run's value, in order.
    pub runs: Vec<f64>,
}

impl Spread {
    /// `values` must not be empty.
    pub fn of(values: &[f64]) -> Spread {
        assert!(!values.is_empty(), "a spread needs at least one value");
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        let mean = v.iter().sum::<f64>() / n as f64;
        let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        let cv = if mean.abs() > 0.0 {
            var.sqrt() / mean.abs()
        } else {
            0.0
        };
        Spread {
            median,
            min: v[0],
            max: v[n - 1],
            cv,
            runs: values.to_vec(),
        }
    }

    /// When the first of three or more runs stands apart from the rest (a cache warming up, a disk
    /// spinning up), how far it stands apart as a fraction of the others' median.
    pub fn first_run_outlier(&self) -> Option<f64> {
        if self.runs.len() < 3 {
            return None;
        }
        let rest = Spread::of(&self.runs[1..]);
        if rest.median == 0.0 {
            return None;
        }
        let dev = (self.runs[0] - rest.median) / rest.median;
        let band = (rest.max - rest.min) / rest.median.abs();
        (dev.abs() > 0.10 && dev.abs() > 2.0 * band).then_some(dev)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn a_thread_kept_from_a_cpu_says_how_long() {
        // Two threads pinned to one CPU: while one spins, the other, woken from a sleep, waits
        // on the run queue for the spinner's slice. A sleep alone is not a wait for a CPU.
        // The CPU this thread may run on first (a container's set need not hold CPU 0).
        // SAFETY: a zeroed cpu_set_t is a valid empty set; the calls write inside it.
        let cpu = unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set);
            (0..libc::CPU_SETSIZE as usize).find(|&c| libc::CPU_ISSET(c, &set))
        };
        let Some(cpu) = cpu else { return };
        let pin = move || {
            // SAFETY: as above.
            unsafe {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                libc::CPU_SET(cpu, &mut set);
                assert_eq!(
                    libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set),
                    0
                );
            }
        };
        let asleep = std::thread::spawn(|| {
            let mut w = CpuWait::of_this_thread();
            std::thread::sleep(std::time::Duration::from_millis(50));
            w.sample();
            w.max_ns
        })
        .join()
        .unwrap();
        assert!(asleep.is_some_and(|ns| ns < 20_000_000), "{asleep:?}");
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let spin = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                pin();
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {}
            })
        };
        let waited = std::thread::spawn(move || {
            pin();
            let mut w = CpuWait::of_this_thread();
            for _ in 0..20 {
                let t = std::time::Instant::now();
                while t.elapsed() < std::time::Duration::from_millis(5) {}
                w.sample();
            }
            (w.max_ns, w.total_ns)
        })
        .join()
        .unwrap();
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        spin.join().unwrap();
        let (max, total) = (waited.0.unwrap(), waited.1.unwrap());
        assert!(max > 0 && total >= max, "{waited:?}");
        // Sharing one CPU with a spinner for 20 turns of 5 ms of wall time, it waited for
        // a good part of them.
        assert!(total > 10_000_000, "{waited:?}");
    }

    #[test]
    fn spread_of_runs() {
        let s = Spread::of(&[3.0, 1.0, 2.0]);
        assert_eq!((s.median, s.min, s.max), (2.0, 1.0, 3.0));
        assert!((s.cv - (2.0f64 / 3.0).sqrt() / 2.0).abs() < 1e-12);
        assert_eq!(s.runs, vec![3.0, 1.0, 2.0]);
        assert_eq!(Spread::of(&[1.0, 2.0, 3.0, 4.0]).median, 2.5);
        assert_eq!(Spread::of(&[5.0]).cv, 0.0);
    }

    #[test]
    fn first_run_outlier() {
        assert!(
            Spread::of(&[150.0, 100.0, 101.0, 99.0])
                .first_run_outlier()
                .unwrap()
                > 0.4
        );
        assert!(
            Spread::of(&[101.0, 100.0, 101.0, 99.0])
                .first_run_outlier()
                .is_none()
        );
        assert!(Spread::of(&[150.0, 100.0]).first_run_outlier().is_none());
        // A noisy set: the first run is within the others' band.
        assert!(
            Spread::of(&[120.0, 80.0, 130.0, 100.0])
                .first_run_outlier()
                .is_none()
        );
    }

    #[test]
    fn latency_percentiles() {
        let mut h = LatencyHist::default();
        for us in 1..=1000u64 {
            h.record(Duration::from_micros(us));
        }
        let s = h.summary();
        assert_eq!(s.count, 1000);
        assert!((s.p50_us - 500.0).abs() < 1.0, "{s:?}");
        assert!((s.p99_us - 990.0).abs() < 2.0, "{s:?}");
        assert!((s.max_us - 1000.0).abs() < 1.0, "{s:?}");
        assert!((s.mean_us - 500.5).abs() < 1.0, "{s:?}");
        let hist = h.histogram().unwrap();
        assert_eq!(hist.total(), 1000);
        // 1 µs .. 1000 µs in quarter octaves: ten octaves, 41 edges from 1 µs.
        assert_eq!(hist.buckets.len(), 41, "{hist:?}");
        assert!((hist.buckets[0].le_us - 1.0).abs() < 1e-9);
        assert!(hist.buckets.last().unwrap().le_us >= 1000.0);
        // Every latency lies in its bucket: the ones up to 2 µs in the first five.
        assert_eq!(hist.buckets[..5].iter().map(|b| b.count).sum::<u64>(), 2);
        assert!(LatencyHist::default().histogram().is_none());
    }

    #[test]
    fn thread_cpu_grows() {
        let a = thread_cpu_s();
        let mut x = 0u64;
        for i in 0..20_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        assert!(thread_cpu_s() > a);
    }
}
