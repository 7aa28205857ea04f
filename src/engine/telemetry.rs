//! Fill over time in fixed memory: the worst and the mean ring headroom, averaged into at most
//! `MAX_POINTS` points however long the run.

use serde::{Deserialize, Serialize};

/// One point of the fill-over-time chart: the worst and the mean headroom over all tracks.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FillPoint {
    pub t_ms: f64,
    pub worst_pct: f64,
    pub mean_pct: f64,
}

/// Most points a run's chart keeps.
pub const MAX_POINTS: usize = 512;

pub struct FillSeries {
    points: Vec<FillPoint>,
    ticks_per_point: u64,
    period_ns: u64,
    // The point being gathered.
    worst: f64,
    mean_sum: f64,
    n: u64,
    tick: u64,
}

impl FillSeries {
    /// A series for about `total_ticks` ticks of `period_ns`; allocates everything now.
    pub fn new(total_ticks: u64, period_ns: u64) -> FillSeries {
        FillSeries {
            points: Vec::with_capacity(MAX_POINTS),
            ticks_per_point: total_ticks.div_ceil(MAX_POINTS as u64 / 2).max(1),
            period_ns,
            worst: f64::INFINITY,
            mean_sum: 0.0,
            n: 0,
            tick: 0,
        }
    }

    /// One tick's worst and mean headroom, as fractions of ring capacity.
    pub fn record(&mut self, worst: f64, mean: f64) {
        self.worst = self.worst.min(worst);
        self.mean_sum += mean;
        self.n += 1;
        self.tick += 1;
        if self.n == self.ticks_per_point {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if self.n == 0 {
            return;
        }
        if self.points.len() == MAX_POINTS {
            // Halve the resolution in place: never grows past what was allocated.
            for i in 0..MAX_POINTS / 2 {
                let (a, b) = (self.points[2 * i], self.points[2 * i + 1]);
                self.points[i] = FillPoint {
                    t_ms: b.t_ms,
                    worst_pct: a.worst_pct.min(b.worst_pct),
                    mean_pct: (a.mean_pct + b.mean_pct) / 2.0,
                };
            }
            self.points.truncate(MAX_POINTS / 2);
            self.ticks_per_point *= 2;
        }
        self.points.push(FillPoint {
            t_ms: (self.tick * self.period_ns) as f64 / 1e6,
            worst_pct: 100.0 * self.worst,
            mean_pct: 100.0 * self.mean_sum / self.n as f64,
        });
        self.worst = f64::INFINITY;
        self.mean_sum = 0.0;
        self.n = 0;
    }

    pub fn finish(mut self) -> Vec<FillPoint> {
        self.flush();
        self.points
    }
}

/// One point of the tick's lag: the least wake-up lateness among a few ticks, at the scheduled
/// time of the last of them (ms since the first tick, as a fill point's).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LagPoint {
    pub t_ms: f64,
    pub late_ms: f64,
}

/// How far behind its schedule the tick ran, in fixed memory allocated before the run: each
/// point keeps the least lateness of its ticks, so a wake-up delayed once (a host's hiccup,
/// which the ticks after it catch up) vanishes, and only a tick that stays behind, its work
/// longer than its period, raises the floor.
pub struct LagSeries {
    points: Vec<LagPoint>,
    ticks_per_point: u64,
    period_ns: u64,
    least_ns: u64,
    n: u64,
    tick: u64,
}

impl LagSeries {
    /// A series for at most `total_ticks` ticks of `period_ns`; allocates everything now.
    pub fn new(total_ticks: u64, period_ns: u64) -> LagSeries {
        LagSeries {
            points: Vec::with_capacity(MAX_POINTS),
            ticks_per_point: total_ticks.div_ceil(MAX_POINTS as u64 / 2).max(1),
            period_ns,
            least_ns: u64::MAX,
            n: 0,
            tick: 0,
        }
    }

    /// One tick's wake-up lateness.
    pub fn record(&mut self, late_ns: u64) {
        self.least_ns = self.least_ns.min(late_ns);
        self.n += 1;
        self.tick += 1;
        if self.n == self.ticks_per_point {
            self.flush();
        }
    }

    fn flush(&mut self) {
        // A run has no more ticks than the series was made for, so it never fills; were it
        // to, the point is dropped rather than memory allocated on the real-time thread.
        if self.n > 0 && self.points.len() < self.points.capacity() {
            self.points.push(LagPoint {
                t_ms: (self.tick * self.period_ns) as f64 / 1e6,
                late_ms: self.least_ns as f64 / 1e6,
            });
        }
        self.least_ns = u64::MAX;
        self.n = 0;
    }

    /// The run stops at its last recorded tick because that tick is too far behind to pass
    /// (`TickReport::stopped_behind`): the point it ends on is that tick's lateness, not the
    /// least of its partial point, which a stall that came after the point's first ticks
    /// would hide (a probe stalled for minutes once passed).
    pub fn stop_behind(&mut self, late_ns: u64) {
        self.flush();
        // `new` leaves room for the last point past the ones `record` flushes.
        if self.points.len() < self.points.capacity() {
            self.points.push(LagPoint {
                t_ms: (self.tick * self.period_ns) as f64 / 1e6,
                late_ms: late_ns as f64 / 1e6,
            });
        }
    }

    pub fn finish(mut self) -> Vec<LagPoint> {
        self.flush();
        self.points
    }
}

/// How much of each end of a window the lag there is the least lateness of: at least a second
/// (a throttle that stalls a thread for most of a period and lets it catch up in the rest, as
/// the kernel's real-time throttling does, shows its catch-up within one), and at least three
/// points.
const LAG_END_MS: f64 = 1000.0;
const LAG_END_POINTS: usize = 3;

/// The share of the demand, in percent, that the tick did not ask for over `from_ms..=to_ms`
/// (tick time) because it fell behind its schedule: the lag's growth over the window, set
/// against the wall time that part took (its length plus that growth). The lag at each end is
/// the least lateness over the span that follows it (`LAG_END_MS`), so a tick that keeps up
/// gives 0 however late single wake-ups were, and a steady lag's growth is measured from the
/// window's start to the last span's. None where the window is too short for both spans.
pub fn tick_behind_pct(lag: &[LagPoint], from_ms: f64, to_ms: f64) -> Option<f64> {
    let w: Vec<&LagPoint> = lag
        .iter()
        .filter(|p| p.t_ms > from_ms && p.t_ms <= to_ms)
        .collect();
    let step_ms = match w.as_slice() {
        [a, b, ..] => b.t_ms - a.t_ms,
        _ => return None,
    };
    let span_ms = LAG_END_MS.max(LAG_END_POINTS as f64 * step_ms);
    let least_from = |t0: f64| {
        w.iter()
            .filter(|p| p.t_ms > t0 && p.t_ms <= t0 + span_ms)
            .map(|p| p.late_ms)
            .fold(f64::INFINITY, f64::min)
    };
    let last_from = to_ms - span_ms;
    if last_from - from_ms < span_ms {
        return None;
    }
    let growth = (least_from(last_from) - least_from(from_ms)).max(0.0);
    growth
        .is_finite()
        .then(|| 100.0 * growth / (last_from - from_ms + growth))
}

/// The share of the demand, in percent, that a run stopped for its tick's lag
/// (`TickReport::stopped_behind`) did not ask for, over all of it: its last lateness set against
/// the wall time it took. None without a point.
pub fn tick_behind_whole_pct(lag: &[LagPoint]) -> Option<f64> {
    lag.last()
        .filter(|l| l.t_ms + l.late_ms > 0.0)
        .map(|l| 100.0 * l.late_ms / (l.t_ms + l.late_ms))
}

/// When the butler had nothing to do (no request in flight and no ring needing one), in
/// fixed-size time buckets allocated before the run: the positive evidence that a device had
/// capacity to spare. A serial butler that is never idle is a device running at its limit,
/// whether or not the rings have drained far enough yet to show it.
pub struct IdleLog {
    bucket_ns: u64,
    idle_ns: Vec<u64>,
}

/// Most buckets an idle log keeps.
const IDLE_BUCKETS_MAX: u64 = 1 << 17;

impl IdleLog {
    /// A log for a run of about `total_ns`; buckets of 1 ms or more.
    pub fn new(total_ns: u64) -> IdleLog {
        let bucket_ns = total_ns.div_ceil(IDLE_BUCKETS_MAX).max(1_000_000);
        IdleLog {
            bucket_ns,
            idle_ns: vec![0; (total_ns / bucket_ns + 2) as usize],
        }
    }

    /// The butler was idle from `from_ns` to `to_ns` (run time). Time past the end of the log
    /// is booked in its last bucket.
    pub fn add(&mut self, from_ns: u64, to_ns: u64) {
        let last = self.idle_ns.len() - 1;
        let mut t = from_ns;
        while t < to_ns {
            let b = (t / self.bucket_ns) as usize;
            let end = ((b as u64 + 1) * self.bucket_ns).min(to_ns);
            self.idle_ns[b.min(last)] += end - t;
            t = end;
        }
    }

    /// Share of [from_ns, to_ns) the butler was idle, 0..=1; partial buckets count pro rata.
    pub fn share(&self, from_ns: u64, to_ns: u64) -> f64 {
        if to_ns <= from_ns {
            return 0.0;
        }
        let mut idle = 0.0;
        let (first, last) = (from_ns / self.bucket_ns, (to_ns - 1) / self.bucket_ns);
        for b in first..=last.min(self.idle_ns.len() as u64 - 1) {
            let (b0, b1) = (b * self.bucket_ns, (b + 1) * self.bucket_ns);
            let overlap = b1.min(to_ns) - b0.max(from_ns);
            idle += self.idle_ns[b as usize] as f64 * overlap as f64 / self.bucket_ns as f64;
        }
        (idle / (to_ns - from_ns) as f64).clamp(0.0, 1.0)
    }
}

/// Whether the butler kept up over the steady part of a run, from the mean headroom's trend.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Sustain {
    /// What the butler fell short of the tracks' demand by, in percent (negative: it gained).
    pub shortfall_pct: f64,
    /// At that shortfall, seconds until the average ring reaches the margin (None: not draining).
    pub margin_in_s: Option<f64>,
    /// The shortfall's standard error, in percent of the demand: how far the device's own
    /// noise moves the trend over this window (the scatter of the cycle-averaged fill about
    /// its line, counting one independent value per refill cycle). 0 in documents older
    /// than the figure.
    #[serde(default)]
    pub noise_pct: f64,
    /// The part of the run the trend was taken over.
    pub from_ms: f64,
    pub to_ms: f64,
}

/// The trend of the mean headroom after `from_ms`: the series averaged over whole refill cycles
/// of `cycle_ms` (which cancels the saw-tooth of tracks refilled in waves), then a least-squares
/// slope. A falling mean headroom is audio the butler did not bring: a slope of `s` ring shares
/// per second is `s × ring_s` seconds of audio lost per second, a shortfall of that share of the
/// demand. None when fewer than two whole cycles follow `from_ms`.
pub fn sustain(
    points: &[FillPoint],
    from_ms: f64,
    cycle_ms: f64,
    ring_s: f64,
    margin: f64,
) -> Option<Sustain> {
    let w: Vec<&FillPoint> = points.iter().filter(|p| p.t_ms > from_ms).collect();
    let to_ms = w.last()?.t_ms;
    if cycle_ms <= 0.0 || to_ms - from_ms < 2.0 * cycle_ms || w.len() < 8 {
        return None;
    }
    // Moving average over one cycle, at every point a whole cycle after the start.
    let (mut sum, mut lo) = (0.0, 0usize);
    let mut avg: Vec<(f64, f64)> = Vec::with_capacity(w.len());
    for (i, p) in w.iter().enumerate() {
        sum += p.mean_pct;
        while w[lo].t_ms <= p.t_ms - cycle_ms {
            sum -= w[lo].mean_pct;
            lo += 1;
        }
        if p.t_ms - from_ms >= cycle_ms {
            avg.push((
                p.t_ms / 1000.0 - cycle_ms / 2000.0,
                sum / (i + 1 - lo) as f64,
            ));
        }
    }
    if avg.len() < 2 {
        return None;
    }
    let n = avg.len() as f64;
    let (mt, my) = avg
        .iter()
        .fold((0.0, 0.0), |(a, b), (t, y)| (a + t / n, b + y / n));
    let (sxy, sxx) = avg.iter().fold((0.0, 0.0), |(a, b), (t, y)| {
        (a + (t - mt) * (y - my), b + (t - mt) * (t - mt))
    });
    if sxx <= 0.0 {
        return None;
    }
    // Percent of the ring per second.
    let slope = sxy / sxx;
    let shortfall = -slope / 100.0 * ring_s;
    let last = avg.last().map_or(my, |a| a.1) / 100.0;
    // The slope's standard error from the residuals; the moving average makes the points of
    // one cycle one value, so the count of independent values is the cycles, not the points.
    let resid = avg
        .iter()
        .map(|(t, y)| (y - my - slope * (t - mt)).powi(2))
        .sum::<f64>();
    let per_cycle = n / ((to_ms - from_ms) / cycle_ms).max(1.0);
    let se_slope = if n > 2.0 {
        (resid / (n - 2.0) / sxx * per_cycle.max(1.0)).sqrt()
    } else {
        0.0
    };
    Some(Sustain {
        shortfall_pct: 100.0 * shortfall,
        noise_pct: se_slope / 100.0 * ring_s * 100.0,
        margin_in_s: (shortfall > 0.0).then(|| (last - margin).max(0.0) * ring_s / shortfall),
        from_ms,
        to_ms,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(f: impl Fn(f64) -> f64, ms: f64, step_ms: f64) -> Vec<FillPoint> {
        (1..=(ms / step_ms) as usize)
            .map(|i| {
                let t = i as f64 * step_ms;
                FillPoint {
                    t_ms: t,
                    worst_pct: 0.0,
                    mean_pct: f(t / 1000.0),
                }
            })
            .collect()
    }

    /// The lag series of a run of `ticks` ticks of 5.33 ms whose tick `k` woke `late(k)` ms
    /// late, and its points.
    fn lag_of(ticks: u64, late: impl Fn(u64) -> f64) -> Vec<LagPoint> {
        let period_ns = 5_333_333;
        let mut l = LagSeries::new(ticks, period_ns);
        let cap = l.points.capacity();
        for k in 0..ticks {
            l.record((late(k) * 1e6) as u64);
        }
        assert_eq!(l.points.capacity(), cap, "the series allocated on the way");
        l.finish()
    }

    #[test]
    fn a_run_stopped_behind_ends_on_the_lateness_it_stopped_for() {
        // 1000 ticks on time, then one that wakes 20 s late (a stall longer than the run): the
        // run stops there, and the whole run's share not asked for is that lateness against the
        // wall time, not the least lateness of the point the stall fell in (0.1 ms).
        let period_ns = 5_333_333;
        let mut l = LagSeries::new(2800, period_ns);
        let cap = l.points.capacity();
        for _ in 0..1000 {
            l.record(100_000);
        }
        l.record(20_000_000_000);
        l.stop_behind(20_000_000_000);
        assert_eq!(l.points.capacity(), cap, "the series allocated on the way");
        let lag = l.finish();
        let last = lag.last().unwrap();
        assert_eq!(last.late_ms, 20_000.0);
        let b = tick_behind_whole_pct(&lag).unwrap();
        let t = 1001.0 * 16.0 / 3.0;
        assert!((b - 100.0 * 20_000.0 / (t + 20_000.0)).abs() < 0.01, "{b}");
        assert!(b > 50.0, "{b}");
        // Stopping at a point's end leaves room for it as well.
        let mut l = LagSeries::new(512, period_ns);
        for _ in 0..512 {
            l.record(100_000);
        }
        l.stop_behind(9_000_000_000);
        assert_eq!(l.finish().last().unwrap().late_ms, 9_000.0);
    }

    #[test]
    fn a_tick_whose_work_outlasts_its_period_falls_behind_by_the_excess() {
        // Each period's work takes 1.1 periods: every tick wakes 0.1 period later than the one
        // before, and over any window the tick asks for 1/1.1 of the demand, 9.1% short.
        let p = 16.0 / 3.0;
        let lag = lag_of(2800, |k| 0.1 * p * k as f64);
        let b = tick_behind_pct(&lag, 5_000.0, 14_900.0).expect("long enough");
        assert!((b - 100.0 / 11.0).abs() < 0.3, "{b}");
        // Half a percent behind shows as such.
        let lag = lag_of(2800, |k| 0.005 * p * k as f64);
        let b = tick_behind_pct(&lag, 5_000.0, 14_900.0).expect("long enough");
        assert!((b - 0.5).abs() < 0.05, "{b}");
    }

    /// The wake-up lateness, in ms, of 2800 ticks of 5.33 ms under a throttle that lets the
    /// tick run `run_ms` of every 100 ms and stalls it the rest (a stall begins only as it
    /// wakes), each period's work taking `work` of a period.
    fn throttled(run_ms: f64, work: f64) -> Vec<f64> {
        let p = 16.0 / 3.0;
        let mut late = 0.0f64;
        (0..2800u64)
            .map(|k| {
                let wall = k as f64 * p + late;
                if wall % 100.0 >= run_ms {
                    late += 100.0 - wall % 100.0;
                }
                let now = late;
                late = (late - (1.0 - work) * p).max(0.0);
                now
            })
            .collect()
    }

    #[test]
    fn a_throttle_that_stalls_the_tick_and_lets_it_catch_up_is_not_behind() {
        // The kernel's real-time throttling as a cpu group's 100 ms period gives it: the tick
        // runs 10 ms of every 100 and stalls 90; each period's work takes a twentieth of a
        // period, half what it gets, so each stall is made up before the next.
        let lags = throttled(10.0, 0.05);
        assert!(lags.iter().any(|&l| l > 80.0), "the model stalls");
        let lag = lag_of(2800, |k| lags[k as usize]);
        let b = tick_behind_pct(&lag, 5_000.0, 14_900.0).expect("long enough");
        assert!(b < 0.01, "{b}");
        // Given a twentieth of its time for work that needs a tenth, it falls behind by about
        // half (the model stalls it only as it wakes).
        let lags = throttled(5.0, 0.1);
        let lag = lag_of(2800, |k| lags[k as usize]);
        let b = tick_behind_pct(&lag, 5_000.0, 14_900.0).expect("long enough");
        assert!((b - 50.0).abs() < 5.0, "{b}");
    }

    #[test]
    fn late_wake_ups_the_tick_catches_up_are_not_behind() {
        // Jitter of up to 0.3 ms, and a 200 ms stall at 10 s that the ticks after it make up
        // (each ran a tenth of a period, so the lateness falls back within 40 periods).
        let p = 16.0 / 3.0;
        let stall = 1875;
        let lag = lag_of(2800, |k| {
            let jitter = 0.3 * ((k * 7919) % 13) as f64 / 13.0;
            let caught = if k >= stall {
                (200.0 - 0.9 * p * (k - stall) as f64).max(0.0)
            } else {
                0.0
            };
            jitter + caught
        });
        let b = tick_behind_pct(&lag, 5_000.0, 14_900.0).expect("long enough");
        assert!(b < 0.01, "{b}");
        // Nor is a tick already late when the window opens and no later at its end.
        let lag = lag_of(2800, |k| {
            if k < 1000 {
                0.1 * p * k as f64
            } else {
                100.0 * p
            }
        });
        let b = tick_behind_pct(&lag, 6_000.0, 14_900.0).expect("long enough");
        assert!(b < 0.01, "{b}");
        // A window too short for a span at each end tells nothing.
        assert_eq!(tick_behind_pct(&lag, 13_000.0, 14_900.0), None);
    }

    #[test]
    fn a_steady_saw_tooth_is_not_a_shortfall() {
        // Refill waves every 1.8 s: the mean headroom swings 50..100% but does not drift.
        let p = series(|t| 75.0 + 25.0 * ((t / 1.8).fract() - 0.5), 14_000.0, 25.0);
        let s = sustain(&p, 3_600.0, 1_800.0, 3.6, 0.2).expect("long enough");
        assert!(s.shortfall_pct.abs() < 0.3, "{s:?}");
        assert!(s.margin_in_s.is_none() || s.shortfall_pct < 0.3);
    }

    #[test]
    fn a_drift_is_the_share_of_demand_missing() {
        // The butler brings 95% of what plays: the average ring loses 0.05 s of audio per second,
        // 0.05 / 3.6 of the ring per second.
        let drift = 100.0 * 0.05 / 3.6;
        let p = series(
            |t| 75.0 - drift * t + 20.0 * ((t / 1.8).fract() - 0.5),
            14_000.0,
            25.0,
        );
        let s = sustain(&p, 3_600.0, 1_800.0, 3.6, 0.2).expect("long enough");
        assert!((s.shortfall_pct - 5.0).abs() < 0.2, "{s:?}");
        let m = s.margin_in_s.expect("draining");
        assert!(m > 0.0 && m < 60.0, "{m}");
    }

    #[test]
    fn too_short_to_judge() {
        let p = series(|_| 75.0, 5_000.0, 25.0);
        assert!(sustain(&p, 3_600.0, 1_800.0, 3.6, 0.2).is_none());
    }

    #[test]
    fn idle_share_over_any_window() {
        let mut l = IdleLog::new(10_000_000_000);
        // Idle for the second half of every 100 ms.
        for k in 0..100u64 {
            l.add(k * 100_000_000 + 50_000_000, (k + 1) * 100_000_000);
        }
        assert!((l.share(0, 10_000_000_000) - 0.5).abs() < 1e-9);
        assert!((l.share(2_000_000_000, 5_000_000_000) - 0.5).abs() < 1e-9);
        assert!((l.share(50_000_000, 100_000_000) - 1.0).abs() < 1e-9);
        assert_eq!(l.share(0, 50_000_000), 0.0);
        // Past the end: booked, never out of bounds.
        l.add(20_000_000_000, 21_000_000_000);
        assert!(l.share(0, 30_000_000_000) > 0.0);
    }

    #[test]
    fn bounded_and_keeps_the_worst() {
        let mut s = FillSeries::new(100, 1_000_000);
        for i in 0..100_000u64 {
            let worst = if i == 77_777 { 0.01 } else { 0.5 };
            s.record(worst, 0.75);
        }
        let p = s.finish();
        assert!(
            p.len() <= MAX_POINTS && p.len() > MAX_POINTS / 4,
            "{}",
            p.len()
        );
        assert!(p.iter().any(|x| (x.worst_pct - 1.0).abs() < 1e-9));
        assert!(p.iter().all(|x| (x.mean_pct - 75.0).abs() < 1e-9));
        assert_eq!(p.last().unwrap().t_ms, 100_000.0);
    }
}
