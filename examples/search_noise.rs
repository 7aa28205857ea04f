//! How many probes the capacity search (`trackbench::search::find_max`, the real one) takes,
//! and where it lands, against a modelled device whose rate moves from probe to probe: the
//! figures behind docs/lab/search-time.md's "How many probes a search needs" (issue 18's 90 s).
//!
//! ```text
//! cargo run --release --example search_noise -- [capped|throttle|quiet|host|disk|jumpy] [searches] [tolerance]
//! ```
//!
//! (the tolerance is the search's, 0.02 as `play --find-max` searches; a wider one shows what a
//! coarser answer would buy).
//!
//! The device carries `C` = 9000 tracks on average. Each probe meets a rate of
//! `C × drift × (1 + noise·N(0,1))`, where `drift` is a random walk (`drift·N(0,1)` a probe): a
//! count at or under that rate passes, above it fails. What a probe estimates is modelled on what
//! this machine's probes reported (`capacity.probes[].estimate`): a pass knows how much it left
//! idle, an upper estimate (the rate, up to `pass_high` above: kinder than this machine, whose
//! passes estimated 45% above their count, 7003 estimating 10162, and once 84%, 10068 estimating
//! 18540); a failure either knows what it delivered (the rate within `fail_noise`) or,
//! `no_spare` of the time when the count is within 5% of the rate, found no spare capacity and
//! delivered about what it asked (2% under to 8% over it). The first guess falls anywhere in
//! [`guess_low`, `guess_high`] × `C`, as the sequential rate's guess does. The time of a search
//! is modelled on this machine's default `play --find-max`, whatever the noise: a first probe of
//! 28 s (its files laid out), 12.5 s for each later one that steers the search (started in the
//! steady state), 14.5 s for each confirmation (in phase), 5 s at the end, and 3 ms for every
//! track beyond the first guess that a probe asked for (its file laid out and deleted).
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use trackbench::search::{ProbeResult, find_max};
use trackbench::verdict::Verdict;

struct Noise {
    noise: f64,
    drift: f64,
    pass_high: f64,
    fail_noise: f64,
    no_spare: f64,
    guess_low: f64,
    guess_high: f64,
    /// The chance, each probe, that the rate jumps and stays there: by 5-15%, up or down.
    jump: f64,
    /// Passes estimate anywhere from the rate to `pass_high` above it evenly on a log scale
    /// (a throttle's), rather than evenly.
    pass_log: bool,
}

const RATE: f64 = 9000.0;

/// The host as this machine's default searches meet it: the first guess (64 files read round
/// robin, 1 in flight) 0.64-0.80 of the answer (4740 for 6765, 4520 for 6797, 6044 for
/// 7579-9429).
const DISK: Noise = Noise {
    noise: 0.04,
    drift: 0.02,
    pass_high: 0.15,
    fail_noise: 0.03,
    no_spare: 0.4,
    guess_low: 0.62,
    guess_high: 0.82,
    jump: 0.0,
    pass_log: false,
};

fn normal(r: &mut SmallRng) -> f64 {
    let u1: f64 = r.random::<f64>().max(1e-12);
    let u2: f64 = r.random();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

fn outcome(pass: bool, estimate: f64) -> ProbeResult {
    ProbeResult {
        verdict: if pass {
            Verdict::Pass
        } else {
            Verdict::Marginal
        },
        shortcoming: None,
        worst_headroom_pct: 0.0,
        xruns: 0,
        estimate: Some(estimate),
        figures: Default::default(),
        ranks: Vec::new(),
        program_locate: false,
        evidence: None,
        storage: None,
        ran_s: None,
        steady_start: false,
    }
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let name = args.first().map_or("host", String::as_str);
    let searches: usize = match args.get(1) {
        Some(s) => s
            .parse()
            .map_err(|e| anyhow::anyhow!("searches {s:?}: {e} (a whole number)"))?,
        None => 4000,
    };
    let tolerance: f64 = match args.get(2) {
        Some(s) => s
            .parse()
            .ok()
            .filter(|t| (0.001..0.5).contains(t))
            .ok_or_else(|| anyhow::anyhow!("tolerance {s:?}: a fraction from 0.001 to 0.5"))?,
        None => 0.02,
    };
    let m = match name {
        // A device whose rate the kernel caps: the same rate every probe, estimates close.
        "capped" => Noise {
            noise: 0.005,
            drift: 0.0,
            pass_high: 0.03,
            fail_noise: 0.005,
            no_spare: 0.0,
            guess_low: 0.75,
            guess_high: 1.05,
            jump: 0.0,
            pass_log: false,
        },
        // A kernel throttle as the capped fixture's steady probes meet it: the rate exact, but a
        // pass lets every read through at once while the group is under its rate, so its idle
        // share says little (137-138 tracks of 145.8 left the butler idle 29%, and 90-99%): its
        // estimate anywhere from the rate to 60 times it, evenly on a log scale.
        "throttle" => Noise {
            noise: 0.005,
            drift: 0.0,
            pass_high: 59.0,
            fail_noise: 0.005,
            no_spare: 0.0,
            guess_low: 0.75,
            guess_high: 1.05,
            jump: 0.0,
            pass_log: true,
        },
        // A steadier host than this one.
        "quiet" => Noise {
            noise: 0.02,
            drift: 0.005,
            pass_high: 0.15,
            fail_noise: 0.03,
            no_spare: 0.4,
            guess_low: 0.75,
            guess_high: 1.05,
            jump: 0.0,
            pass_log: false,
        },
        // This machine's host-cached disk: one count passes and fails within two minutes
        // (10089 passed, then failed its confirmation; 8826 failed after 8731 passed).
        "host" => Noise {
            noise: 0.04,
            drift: 0.02,
            pass_high: 0.15,
            fail_noise: 0.03,
            no_spare: 0.4,
            guess_low: 0.75,
            guess_high: 1.05,
            jump: 0.0,
            pass_log: false,
        },
        "disk" => DISK,
        // The disk with the host's moves of a tenth: a search whose steering probes passed
        // 7356 (idle 7-9%) saw its confirmation there deliver 6356, and 6434 was its answer.
        "jumpy" => Noise { jump: 0.05, ..DISK },
        other => {
            anyhow::bail!("unknown noise {other:?}: capped, throttle, quiet, host, disk or jumpy")
        }
    };
    // `PASS_HIGH=X` makes passes estimate up to X above the rate (this disk's have been 45% and
    // 65% high).
    let m = Noise {
        pass_high: std::env::var("PASS_HIGH")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(m.pass_high),
        ..m
    };
    // `TRAILS=N` prints the first N searches' trails on stderr.
    let trails: usize = std::env::var("TRAILS")
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or(0);
    let mut seeds = SmallRng::seed_from_u64(7);
    let (mut probes, mut times, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    let mut above = 0usize;
    for _ in 0..searches {
        let mut r = SmallRng::seed_from_u64(seeds.random());
        let guess = (RATE * r.random_range(m.guess_low..m.guess_high)) as u32;
        let mut drift = 1.0f64;
        let cap = find_max(guess, 1_000_000, tolerance, |n, _confirmation| {
            drift *= 1.0 + m.drift * normal(&mut r);
            if m.jump > 0.0 && r.random::<f64>() < m.jump {
                let by = r.random_range(0.05..0.15);
                drift *= if r.random::<bool>() {
                    1.0 + by
                } else {
                    1.0 - by
                };
            }
            let rate = RATE * drift * (1.0 + m.noise * normal(&mut r));
            let n = f64::from(n);
            Ok(Some(if n <= rate {
                let high = if m.pass_log {
                    (r.random_range(0.0..=(1.0 + m.pass_high).ln())).exp()
                } else {
                    1.0 + r.random_range(0.0..=m.pass_high)
                };
                outcome(true, rate * high)
            } else if n <= rate * 1.05 && r.random::<f64>() < m.no_spare {
                outcome(false, n * (1.0 + r.random_range(-0.02..0.08)))
            } else {
                outcome(false, rate * (1.0 + m.fail_noise * normal(&mut r)))
            }))
        })?;
        let k = cap.probes.len();
        if trails > probes.len() {
            let t: Vec<String> = cap
                .probes
                .iter()
                .map(|p| {
                    let c = if p.confirmation { "confirm " } else { "" };
                    let v = if p.verdict == Verdict::Pass { "+" } else { "-" };
                    format!("{c}{}{v}", p.count)
                })
                .collect();
            eprintln!("guess {guess}: {} -> {}", t.join(", "), cap.answer);
        }
        let confirmations = cap.probes.iter().filter(|p| p.confirmation).count() as f64;
        probes.push(k as f64);
        // Every track beyond the first guess's that a probe asks for is laid out (1.5 MiB at
        // about 0.75 GB/s) and deleted at the end (about 1 ms): 3 ms a track.
        let most = cap.probes.iter().map(|p| p.count).max().unwrap_or(guess);
        let grown = f64::from(most.saturating_sub(guess));
        times.push(
            28.0 + 12.5 * (k as f64 - 1.0 - confirmations)
                + 14.5 * confirmations
                + 5.0
                + 0.003 * grown,
        );
        ratios.push(f64::from(cap.answer) / RATE);
        above += usize::from(f64::from(cap.answer) > RATE);
    }
    for v in [&mut probes, &mut times, &mut ratios] {
        v.sort_by(f64::total_cmp);
    }
    let n = searches as f64;
    let four = probes.iter().filter(|&&k| k <= 4.0).count() as f64 / n;
    let under = times.iter().filter(|&&t| t < 90.0).count() as f64 / n;
    println!(
        "{name}, tolerance {tolerance}: {searches} searches; probes mean {:.2}, median {}, at most four {:.0}%; modelled \
         time median {:.0} s, under 90 s {:.0}%; answer / mean rate p10 {:.3}, median {:.3}, \
         p90 {:.3}, above the mean rate {:.0}%",
        probes.iter().sum::<f64>() / n,
        quantile(&probes, 0.5),
        100.0 * four,
        quantile(&times, 0.5),
        100.0 * under,
        quantile(&ratios, 0.1),
        quantile(&ratios, 0.5),
        quantile(&ratios, 0.9),
        100.0 * above as f64 / n,
    );
    Ok(())
}
