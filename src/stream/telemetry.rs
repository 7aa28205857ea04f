//! Fill over time in fixed memory: the worst and the mean ring headroom, averaged into at most
//! `MAX_POINTS` points however long the run.

use super::FillPoint;

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

#[cfg(test)]
mod tests {
    use super::*;

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
