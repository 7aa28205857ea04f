//! What a run says of the storage's capacity: the rings' fill trend and the butler's idle share,
//! judged by the capacity rules.

use super::{SHORTFALL_LIMIT_PCT, Shortcoming};
use crate::engine::Sustain;
use serde::{Deserialize, Serialize};

/// A pass needs the butler idle at least this share of the steady part of the run: positive
/// evidence of spare capacity. A device asked for more than it delivers keeps a butler busy
/// without a break once the first ring has played, however large the rings (which may take
/// minutes to drain far enough to show it).
///
/// Real runs: 2%. Devices serve faster after an idle gap than when saturated (a kernel throttle
/// lets a slice's budget through at once, drives have caches), so near the bound idle time is
/// overstated: on a loop device capped at 21 MB/s (bound 145.8 tracks of 48k/24 mono) 145
/// tracks left the butler idle 6.4%, 146 tracks 1.1% and 147 0.2% (docs/lab/capped-devices.md). Simulated
/// runs have no noise: half a percent finds a model's exact bound to within 1%.
pub fn spare_min_pct(simulated: bool) -> f64 {
    if simulated { 0.5 } else { 2.0 }
}

/// Idle share, in percent, that counts as spare capacity even while the rings' fill trend
/// falls a little. The trend of a steady run is biased by up to ±0.5% of the demand (runs at 40%
/// of a capped device's bound measured +0.35% with the butler idle 60%), so a small fall alone
/// proves nothing; but a device that lends time after a gap (a kernel throttle's slice, a
/// drive's cache) keeps a saturated butler idle a few percent of every cycle while the rings
/// slip: on a loop device capped at 21 MB/s with 64K chunks, 146 tracks (0.1% above the bound)
/// left the butler idle 7% over 17 s while the rings lost 0.11% of the demand, and 147 tracks
/// idle 3.4% while losing 0.77%. Below the bound the trend rose (145: -0.5%). So a pass needs
/// the rings not to lose ground (by more than `LOSING_GROUND_PCT`), or this much idle time.
pub const AMPLE_IDLE_PCT: f64 = 10.0;

/// A fill trend falling by more than this share of the demand, in percent, is ground lost:
/// a fortieth of the search's precision, above the simulator's rounding (under 0.001%), below
/// the smallest real loss the rule must catch (0.1% at 146 tracks above).
pub const LOSING_GROUND_PCT: f64 = 0.05;

/// The fall of the fill trend that counts as ground lost, given the trend's standard error
/// (`Sustain::noise_pct`): beyond two standard errors, and at least `LOSING_GROUND_PCT`. A
/// shared virtual disk moves a 7.6 s trend by ±0.5% of the demand from one run to the next (138
/// tracks on the 21 MB/s loop device, 95% of its bound, idle 9.4% both times: +0.50% and
/// -0.47%), which the fixed threshold alone read as lost ground; a loss the device really has is
/// steady and shows over every cycle (147 tracks: 0.77%, well outside its noise).
///
/// The larger of the two, not their sum: with the sum, a search's 7.6 s probe of 146 tracks with
/// 1 s rings (0.1% above that device's bound) lost 0.10-0.12% of the demand against a threshold
/// of 0.11-0.12% (standard error 0.03%), passed one probe in two, and a search answered 146, above
/// the bound. The loss was steady from run to run (±0.006%, six runs); the larger of the two is
/// 0.06% there.
pub fn losing_ground_above(noise_pct: f64) -> f64 {
    LOSING_GROUND_PCT.max(2.0 * noise_pct)
}

/// What a run says of the storage's capacity, apart from its own deadlines (xruns, the margin,
/// its length): the rings' fill trend and the butler's idle share, judged by the capacity rules
/// (`SHORTFALL_LIMIT_PCT`, `spare_min_pct`, `losing_ground_above` with `AMPLE_IDLE_PCT`). One
/// computer judges its run by its own; a studio pools its ranks' first
/// ([`CapacityEvidence::pooled`]): they share one storage, and what it carries is its total.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CapacityEvidence {
    /// The fill trend's shortfall of the demand, in percent (negative: the rings gained; None:
    /// too few cycles for a trend).
    pub shortfall_pct: Option<f64>,
    /// The shortfall's standard error, in percent of the demand (0 where the workload does not
    /// measure it: ground lost is then anything beyond `LOSING_GROUND_PCT`).
    pub noise_pct: f64,
    /// Share of the steady part in which the butler had nothing to do, in percent (None: the
    /// run was too short to tell).
    pub idle_pct: Option<f64>,
    /// The idle share that may outweigh a small loss of ground: `idle_pct`, or for a sampler the
    /// smaller of it and its second half's (idle time a device lent early does not count).
    pub ground_idle_pct: Option<f64>,
    /// The least idle share that counts as spare capacity (`spare_min_pct`).
    pub spare_min_pct: f64,
    /// Through the page cache: the trend of the rings and the read-ahead together
    /// (`StreamOutcome::buffered_sustain`), as a shortfall of the demand and its standard
    /// error, in percent. None where it is not measured (direct I/O, a device without
    /// counters, a studio's pooled evidence: its ranks share the counters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffered_shortfall_pct: Option<f64>,
    #[serde(default)]
    pub buffered_noise_pct: f64,
    /// How many standard errors of the rings' trend (`noise_pct`) a drain must exceed besides
    /// `SHORTFALL_LIMIT_PCT` to count: 0 where the limit alone decides, `PAGE_CACHE_SIGMAS`
    /// through the page cache (see there).
    #[serde(default)]
    pub draining_sigmas: f64,
    /// The most of a drain, in percent of the demand, that the run's longest single hold
    /// accounts for ([`one_hold_pct`]). None where the run measured no hold or no trend.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub one_hold_pct: Option<f64>,
}

/// The longest the rings waited on any one thing in a run, in ms: one request in flight (read
/// or write, from its submission to its completion, after the locate) or the butler's thread
/// waiting for a CPU. None where nothing was measured.
pub fn longest_hold_ms(
    read_max_us: Option<f64>,
    write_max_us: Option<f64>,
    cpu_wait_max_ms: Option<f64>,
) -> Option<f64> {
    [
        read_max_us.map(|u| u / 1000.0),
        write_max_us.map(|u| u / 1000.0),
        cpu_wait_max_ms,
    ]
    .into_iter()
    .flatten()
    .reduce(f64::max)
}

/// The most of a fill trend's shortfall, in percent of the demand, that one hold of `hold_ms`
/// accounts for over a trend of `window_ms`. Rings held for h lose h of audio and, where the
/// device has the rate, win it back; the least-squares slope of any dip no deeper than h over
/// a window T is at most 1.5 h / T (a step of h halfway through it). None without a window.
pub fn one_hold_pct(hold_ms: f64, window_ms: f64) -> Option<f64> {
    (window_ms > 0.0).then(|| 150.0 * hold_ms / window_ms)
}

impl CapacityEvidence {
    /// A stream's: its fill trend and the butler's idle share over the steady part.
    pub fn of_stream(sustain: Option<Sustain>, idle_pct: Option<f64>, simulated: bool) -> Self {
        CapacityEvidence {
            shortfall_pct: sustain.map(|s| s.shortfall_pct),
            noise_pct: sustain.map_or(0.0, |s| s.noise_pct),
            idle_pct,
            ground_idle_pct: idle_pct,
            spare_min_pct: spare_min_pct(simulated),
            buffered_shortfall_pct: None,
            buffered_noise_pct: 0.0,
            draining_sigmas: 0.0,
            one_hold_pct: None,
        }
    }

    /// With the run's longest single hold (`longest_hold_ms`) set against the rings' trend:
    /// the drain that one hold accounts for (`one_hold_pct`).
    pub fn with_hold(self, hold_ms: Option<f64>, sustain: Option<Sustain>) -> Self {
        CapacityEvidence {
            one_hold_pct: hold_ms
                .zip(sustain)
                .and_then(|(h, s)| one_hold_pct(h, s.to_ms - s.from_ms)),
            ..self
        }
    }

    /// Whether a drain of `shortfall_pct` is one hold's, not the device's rate: no more than
    /// the longest hold accounts for (`one_hold_pct`), with the butler idle `AMPLE_IDLE_PCT` or
    /// more (`ground_idle_pct`), so that it caught up between the holds. A first guess of one
    /// track, searched beside a dozen other searches, drained 5.2% over 5.9 s with its ring at
    /// worst two thirds full; a real run of 4 recorded tracks drained 2.8% behind a write held
    /// 183 ms, its butler idle 87%. A device short of the rate leaves the butler no such idle
    /// time (three workstations on a loop device capped at 21 MB/s, 1.03 times its bound: 2.7%
    /// lost, the least idle 0%; docs/lab/studio.md).
    pub fn drain_is_one_hold(&self, shortfall_pct: f64) -> bool {
        self.one_hold_pct.is_some_and(|h| shortfall_pct <= h)
            && self.ground_idle_pct.is_some_and(|i| i >= AMPLE_IDLE_PCT)
    }

    /// Of a run through the page cache (`true`): a drain counts only beyond
    /// `PAGE_CACHE_SIGMAS` standard errors of the rings' trend as well as the limit.
    pub fn through_page_cache(self, page_cache: bool) -> Self {
        CapacityEvidence {
            draining_sigmas: if page_cache { PAGE_CACHE_SIGMAS } else { 0.0 },
            ..self
        }
    }

    /// With the trend of what the rings and the page cache hold together, where measured.
    pub fn with_buffered(self, buffered: Option<Sustain>) -> Self {
        CapacityEvidence {
            buffered_shortfall_pct: buffered.map(|b| b.shortfall_pct),
            buffered_noise_pct: buffered.map_or(0.0, |b| b.noise_pct),
            ..self
        }
    }

    /// The first capacity rule the evidence breaks: the rings draining, no spare time, or
    /// ground lost without ample idle time to outweigh it.
    pub fn shortcoming(&self) -> Option<Shortcoming> {
        if let Some(s) = self
            .shortfall_pct
            .filter(|&s| s > SHORTFALL_LIMIT_PCT && s > self.draining_sigmas * self.noise_pct)
            .filter(|&s| !self.drain_is_one_hold(s))
        {
            Some(Shortcoming::Draining { shortfall_pct: s })
        } else if let Some(idle_pct) = self.idle_pct.filter(|&i| i < self.spare_min_pct) {
            Some(Shortcoming::NoSpareCapacity {
                idle_pct,
                needed_pct: self.spare_min_pct,
            })
        } else if let (Some(s), Some(idle_pct)) = (
            self.shortfall_pct
                .filter(|&s| s > losing_ground_above(self.noise_pct)),
            self.ground_idle_pct.filter(|&i| i < AMPLE_IDLE_PCT),
        ) {
            Some(Shortcoming::LosingGround {
                shortfall_pct: s,
                idle_pct,
                ample_pct: AMPLE_IDLE_PCT,
            })
        } else {
            // The butler's idle time says nothing here: its reads were served from the page
            // cache while the device read ahead, so no idle share outweighs this loss.
            let noise_pct = self.buffered_noise_pct;
            self.buffered_shortfall_pct
                .filter(|&s| s > BUFFERED_SIGMAS * noise_pct && s > LOSING_GROUND_PCT)
                .map(|shortfall_pct| Shortcoming::DeviceBehind {
                    shortfall_pct,
                    noise_pct,
                })
        }
    }

    /// What the device carries, as a share of the run's count, where the evidence tells: a run
    /// that broke a capacity rule saturated the device and delivered what it gives, which the
    /// fill trend measures; one that kept them left the butler idle, which bounds it from above
    /// (a device serves faster after idle gaps). None when the run was too short for either.
    pub fn share(&self) -> Option<f64> {
        match self.shortcoming() {
            None => self.idle_pct.map(|i| 1.0 / (1.0 - i / 100.0).max(0.01)),
            Some(Shortcoming::DeviceBehind { shortfall_pct, .. }) => {
                Some(1.0 - shortfall_pct / 100.0)
            }
            Some(_) => self.shortfall_pct.map(|s| 1.0 - s / 100.0),
        }
    }

    /// The storage's evidence from every workstation's on it, each streaming the same demand
    /// (a studio's ranks run one plan): the rings' mean shortfall, its standard error as of
    /// independent measurements (√Σσ² / n), and the least idle share (the storage rests only
    /// while every workstation's butler does, so no more than the least of them). A rank's
    /// trend alone moves with its share of a storage that serves them in turn: on a loop device
    /// capped at 21 MB/s, three ranks at 0.9 of its bound, each idle over 13%, lost 4.59% and
    /// gained 4.23% and 0.37% over the same 7.6 s; a storage that cannot carry the demand shows
    /// in the mean (at 1.03 of the bound: 2.7%, idle 0%). None without evidence.
    pub fn pooled(all: &[CapacityEvidence]) -> Option<CapacityEvidence> {
        let n = all.len() as f64;
        if all.is_empty() {
            return None;
        }
        let every = |f: fn(&CapacityEvidence) -> Option<f64>| -> Option<Vec<f64>> {
            all.iter().map(f).collect()
        };
        let least = |v: Vec<f64>| v.into_iter().fold(f64::INFINITY, f64::min);
        Some(CapacityEvidence {
            shortfall_pct: every(|e| e.shortfall_pct).map(|v| v.iter().sum::<f64>() / n),
            noise_pct: all.iter().map(|e| e.noise_pct.powi(2)).sum::<f64>().sqrt() / n,
            idle_pct: every(|e| e.idle_pct).map(least),
            ground_idle_pct: every(|e| e.ground_idle_pct).map(least),
            spare_min_pct: all.iter().map(|e| e.spare_min_pct).fold(0.0, f64::max),
            // Every rank reads the one device's counters, which count all of them.
            buffered_shortfall_pct: None,
            buffered_noise_pct: 0.0,
            draining_sigmas: all.iter().map(|e| e.draining_sigmas).fold(0.0, f64::max),
            // Each rank's mean shortfall, if its hold accounts for it, is within the mean.
            one_hold_pct: every(|e| e.one_hold_pct).map(|v| v.iter().sum::<f64>() / n),
        })
    }
}

/// What a run that ended with `shortcoming` tells of the count it carries, as a share of its
/// own: the capacity evidence's `share` where a capacity rule decided or none did; for a tick
/// that fell behind, the share of the demand it kept up with (the machine's bound, whatever the
/// device's); where a ring fell below the margin first, the rings' trend if it shows them
/// draining by one of the capacity rules (the share the device delivered: a count far above a
/// device's rate takes the first ring below the margin before any capacity rule decides, and a
/// search that had nothing to aim with bisected blind); nothing otherwise, where the run
/// missed a deadline of its own. Not from a run with xruns: a ring run dry stops draining, so
/// the trend understates the loss (200 tracks on a device that carries 100 showed 0.68, not
/// 0.50).
pub fn capacity_share(
    shortcoming: Option<Shortcoming>,
    evidence: impl FnOnce() -> CapacityEvidence,
) -> Option<f64> {
    match shortcoming {
        Some(Shortcoming::TickBehind { behind_pct, .. }) => Some(1.0 - behind_pct / 100.0),
        Some(Shortcoming::BelowMargin { .. }) => {
            let e = evidence();
            e.shortcoming()
                .and_then(|_| e.share())
                .filter(|&share| share < 1.0)
        }
        Some(s) if !s.is_capacity() => None,
        _ => evidence().share(),
    }
}

/// How many standard errors of its trend the page cache's share of the buffer must lose to
/// count as the device falling behind. Three, not the rings' two: the lead a locate leaves
/// settles in steps of a whole read-ahead window, a wobble the residuals understate (one
/// track, ardour-small float, 34 s at a fiftieth of a 21 MB/s cap: 2.79% with a noise of
/// 1.37%; 104 tracks at 0.95 of it: 1.01%, 0.72%), while a device that cannot keep up reads at
/// its cap without pause and its trend is smooth (111 tracks, 1.015 of the cap: 1.59% and
/// 0.16%, 1.77% and 0.24%).
pub const BUFFERED_SIGMAS: f64 = 3.0;

/// How many standard errors of the rings' trend a run through the page cache must lose, as
/// well as `SHORTFALL_LIMIT_PCT`, for its rings to count as draining. There the kernel's
/// read-ahead serves a whole wave of refills at once, the tracks refill in phase, and a probe's
/// 7 s trend carries the wave's phase: on a device capped at 100 I/Os a second (128 KiB
/// read-ahead, its I/Os 384 KiB, about 200 float tracks' worth), 60 ardour-small float tracks
/// for a probe's 12.4 s lost 2.42% of the demand with a standard error of 1.22% (twice; the
/// butler idle 99.8%), 110 tracks 4.59% (1.62%) and 1.39% (2.33%), idle 79-92%, and 30 s of
/// 110 lost 0.11% (0.16%). A
/// device that cannot carry the count drains the rings steadily, outside that noise; near its
/// bound, where the rings' trend cannot tell, the device's own (`DeviceBehind`) judges the runs
/// long enough for it, a search's confirmations among them.
pub const PAGE_CACHE_SIGMAS: f64 = 3.0;
#[cfg(test)]
mod tests {
    use super::*;

    fn trend(shortfall_pct: f64, noise_pct: f64) -> Option<Sustain> {
        Some(Sustain {
            shortfall_pct,
            margin_in_s: None,
            noise_pct,
            from_ms: 5000.0,
            to_ms: 34000.0,
        })
    }

    /// A run a ring below the margin ended tells what the device delivered where its rings'
    /// trend shows them draining, and nothing where they held (a hold took the ring there, not
    /// the device's rate); a run with xruns, never (a ring run dry stops draining).
    #[test]
    fn a_ring_below_the_margin_estimates_by_the_rings_trend_only_where_they_drained() {
        let below = Some(Shortcoming::BelowMargin {
            worst_pct: 12.0,
            margin_pct: 20.0,
        });
        // The fresh clone's first probe of a 1 s-ring search, 72 tracks on a capped device
        // short of its rate: 12.8% ± 6.8% lost over the 4.1 s it ran, no idle share yet.
        let draining = || CapacityEvidence::of_stream(trend(12.82, 6.785), None, false);
        let share = capacity_share(below, draining).unwrap();
        assert!((share - 0.8718).abs() < 1e-9, "{share}");
        let held = || CapacityEvidence::of_stream(trend(0.3, 0.2), Some(40.0), false);
        assert_eq!(capacity_share(below, held), None);
        let short = || CapacityEvidence::of_stream(None, None, false);
        assert_eq!(capacity_share(below, short), None);
        let xruns = Some(Shortcoming::Xruns { count: 3 });
        assert_eq!(capacity_share(xruns, draining), None);
    }

    /// Through the page cache the butler idles on cached reads while the device falls behind:
    /// the trend of rings and read-ahead together decides, and no idle share outweighs it.
    #[test]
    fn the_device_falling_behind_the_page_cache_is_not_a_pass_however_idle_the_butler() {
        // 111 float tracks on a 21 MB/s cap (1.5% over it): the rings held, the butler idled 34%.
        let rings = trend(0.21, 1.47);
        let e = CapacityEvidence::of_stream(rings, Some(34.4), false);
        assert_eq!(e.shortcoming(), None, "the rings alone pass it");
        let e = e.with_buffered(trend(1.77, 0.24));
        assert!(
            matches!(
                e.shortcoming(),
                Some(Shortcoming::DeviceBehind { shortfall_pct, .. }) if shortfall_pct == 1.77
            ),
            "{:?}",
            e.shortcoming()
        );
        assert!(
            e.shortcoming()
                .is_some_and(|s| s.is_capacity() && s.is_failure())
        );
        // What the device delivered aims the search: 1.77% short of the count.
        assert!((e.share().unwrap() - 0.9823).abs() < 1e-9);
        // Within three times its noise it passes (104 tracks, 0.95 of the cap: 1.01% with a
        // noise of 0.72%; one track: 2.79% and 1.37%; a settling lead's trend wobbles), beyond
        // it it does not.
        let e = CapacityEvidence::of_stream(rings, Some(78.3), false);
        assert_eq!(e.with_buffered(trend(1.01, 0.72)).shortcoming(), None);
        assert_eq!(e.with_buffered(trend(2.79, 1.37)).shortcoming(), None);
        assert!(e.with_buffered(trend(2.5, 0.8)).shortcoming().is_some());
        // Not measured (direct I/O, no device counters): the rings' rules alone.
        assert_eq!(e.with_buffered(None).shortcoming(), None);
        // A studio's pooled evidence leaves it out: every rank reads the same counters.
        let pooled = CapacityEvidence::pooled(&[e.with_buffered(trend(5.0, 0.1))]).unwrap();
        assert_eq!(pooled.buffered_shortfall_pct, None);
    }

    /// Through the page cache the rings refill in phase from the read-ahead, and a probe's
    /// trend carries the wave: a drain counts there only beyond its noise as well as the limit;
    /// with direct I/O the limit alone decides, as before.
    #[test]
    fn through_the_page_cache_the_rings_drain_only_beyond_their_noise() {
        let idle = Some(92.3);
        // 110 float tracks, 100 I/Os a second, a probe's 12.4 s: 4.59% with a noise of 1.62%.
        let probe = trend(4.59, 1.62);
        let direct = CapacityEvidence::of_stream(probe, idle, false);
        assert!(matches!(
            direct.shortcoming(),
            Some(Shortcoming::Draining { .. })
        ));
        let cached = direct.through_page_cache(true);
        assert_eq!(cached.shortcoming(), None);
        assert!(
            cached.share().is_some_and(|s| s > 1.0),
            "the idle share aims the search"
        );
        // A device that cannot carry it drains steadily, outside the noise.
        let drained = CapacityEvidence::of_stream(trend(6.0, 0.5), idle, false);
        assert!(matches!(
            drained.through_page_cache(true).shortcoming(),
            Some(Shortcoming::Draining { shortfall_pct }) if shortfall_pct == 6.0
        ));
        // Beyond its noise but under the limit: the limit still holds.
        let small = CapacityEvidence::of_stream(trend(1.9, 0.1), idle, false);
        assert!(!matches!(
            small.through_page_cache(true).shortcoming(),
            Some(Shortcoming::Draining { .. })
        ));
        // The device's own trend still judges what the rings cannot.
        assert!(matches!(
            cached.with_buffered(trend(2.5, 0.4)).shortcoming(),
            Some(Shortcoming::DeviceBehind { .. })
        ));
        // A studio's pooled evidence keeps the rule if any rank read through the cache.
        let pooled = CapacityEvidence::pooled(&[direct, cached]).unwrap();
        assert_eq!(pooled.draining_sigmas, PAGE_CACHE_SIGMAS);
    }
    /// A drain no deeper than one hold explains, with the butler idle between the holds, is
    /// the hold's; a drain beyond it, or without the idle time, is the device's.
    #[test]
    fn a_drain_one_hold_accounts_for_is_not_the_devices_rate() {
        // The bound of a least-squares trend over a step of h halfway through a window T.
        let (t_ms, h_ms) = (6000.0, 400.0);
        let n = 6001;
        let (mut sxy, mut sxx) = (0.0, 0.0);
        for i in 0..n {
            let t = t_ms * i as f64 / (n - 1) as f64;
            let y = if t > t_ms / 2.0 { -h_ms } else { 0.0 };
            sxy += (t - t_ms / 2.0) * y;
            sxx += (t - t_ms / 2.0).powi(2);
        }
        let slope_pct = -100.0 * sxy / sxx;
        let bound = one_hold_pct(h_ms, t_ms).unwrap();
        assert!((slope_pct - bound).abs() < 0.01, "{slope_pct} vs {bound}");
        assert_eq!(one_hold_pct(h_ms, 0.0), None);
        assert_eq!(
            longest_hold_ms(Some(9000.0), Some(183_000.0), Some(4.0)),
            Some(183.0)
        );
        assert_eq!(longest_hold_ms(None, None, None), None);

        // CI's first guess: one recorded track, 5.19% over 5.9 s, a write held about 0.55 s
        // (its ring at worst two thirds full), the butler otherwise idle.
        let window = Some(Sustain {
            shortfall_pct: 5.19,
            margin_in_s: None,
            noise_pct: 0.04,
            from_ms: 2048.0,
            to_ms: 7950.0,
        });
        let held = CapacityEvidence::of_stream(window, Some(85.0), false);
        assert!(matches!(
            held.shortcoming(),
            Some(Shortcoming::Draining { .. })
        ));
        let held = held.with_hold(Some(550.0), window);
        assert!(held.drain_is_one_hold(5.19));
        assert_eq!(held.shortcoming(), None);
        let finding = crate::result::findings::drain_within_one_hold(&held, Some(550.0));
        assert!(
            matches!(finding, Some(crate::result::findings::Finding::DrainWithinOneHold { hold_ms, .. }) if hold_ms == 550.0),
            "{finding:?}"
        );
        // A shorter hold does not account for it.
        let short = held.with_hold(Some(150.0), window);
        assert!(matches!(
            short.shortcoming(),
            Some(Shortcoming::Draining { .. })
        ));
        // Nor does a long one where the butler had no time to spare: a device short of the
        // rate (a studio at 1.03 times a capped device's bound: 2.7% lost, least idle 0%).
        let saturated =
            CapacityEvidence::of_stream(window, Some(0.0), false).with_hold(Some(550.0), window);
        assert!(matches!(
            saturated.shortcoming(),
            Some(Shortcoming::Draining { .. })
        ));
        let little = CapacityEvidence::of_stream(window, Some(AMPLE_IDLE_PCT - 0.1), false)
            .with_hold(Some(550.0), window);
        assert!(matches!(
            little.shortcoming(),
            Some(Shortcoming::Draining { .. })
        ));
        // Through the page cache the read-ahead's own trend still judges the device.
        let cached = held.through_page_cache(true).with_buffered(trend(2.5, 0.4));
        assert!(matches!(
            cached.shortcoming(),
            Some(Shortcoming::DeviceBehind { .. })
        ));
        // A studio: the ranks' mean drain against their mean hold.
        let pooled = CapacityEvidence::pooled(&[held, short]).unwrap();
        let mean = (held.one_hold_pct.unwrap() + short.one_hold_pct.unwrap()) / 2.0;
        assert!((pooled.one_hold_pct.unwrap() - mean).abs() < 1e-9);
        assert_eq!(
            CapacityEvidence::pooled(&[held, saturated.with_hold(None, window)])
                .unwrap()
                .one_hold_pct,
            None
        );
        // Passing documents from before the figure read as before.
        let old: CapacityEvidence = serde_json::from_value(serde_json::json!({
            "shortfall_pct": 5.19, "noise_pct": 0.04, "idle_pct": 85.0,
            "ground_idle_pct": 85.0, "spare_min_pct": 2.0
        }))
        .unwrap();
        assert_eq!(old.one_hold_pct, None);
        assert!(matches!(
            old.shortcoming(),
            Some(Shortcoming::Draining { .. })
        ));
    }
}
