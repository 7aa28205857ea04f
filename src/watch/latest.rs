//! The newest run of a disk against its recent past: what `trackbench watch` says after each
//! run. Each figure the run added to a series is compared with the median of the series' last
//! runs before it ("plays 12% fewer tracks than its median of the last 5 runs since
//! 2026-11-30, beyond its noise of ±3%").
//!
//! A single run is judged, not a step: its change must be at least [`Rule::min_change`] and at
//! least [`LatestRule::z`] times the noise of the difference, which is the new point's own
//! variance plus the median's (each point's sd the larger of its own spread and the window's
//! scatter; a median of n points has about 1.25 / √n of one point's sd). A window needs
//! [`LatestRule::min_runs`] earlier runs: with fewer, the noise is not known and nothing is
//! said but the figure. The history's steps ([`super::steps`]) then confirm a change once two
//! runs stand at the new level. The false-alarm rate is measured in the tests below.

use super::series::{Entry, Series, causes_between};
use super::steps::{Rule, scatter};

/// How the newest run is judged against its window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LatestRule {
    /// How many earlier runs the median is taken over (at most).
    pub last: usize,
    /// Earlier runs needed before a change can be told from noise.
    pub min_runs: usize,
    /// How many standard deviations of the difference a change must be.
    pub z: f64,
    /// The smallest change reported, relative to the median (0.05: 5%).
    pub min_change: f64,
}

impl Default for LatestRule {
    fn default() -> LatestRule {
        LatestRule {
            last: 5,
            min_runs: 3,
            z: 4.0,
            min_change: Rule::default().min_change,
        }
    }
}

/// One figure of the newest run against the median of the runs before it.
#[derive(Debug, Clone, PartialEq)]
pub struct Latest {
    /// The series' disk and question in words ([`Series::disk`], [`Series::what`]).
    pub disk: String,
    pub what: String,
    pub unit: &'static str,
    /// The newest run's figure.
    pub value: f64,
    /// The window: how many earlier runs (0 when the series starts here), their median, and
    /// when the oldest of them ran.
    pub runs: usize,
    pub median: f64,
    pub since: String,
    /// The change from the median, relative (-0.12: 12% fewer), and the noise of that
    /// difference (relative, one standard deviation); None with too few earlier runs.
    pub change: f64,
    pub noise: Option<f64>,
    /// Whether the change stands out of the noise ([`LatestRule`]).
    pub beyond: bool,
    /// What changed since the window's first run that could explain it.
    pub causes: Vec<String>,
}

impl Latest {
    /// Whether this figure got worse beyond its noise: fewer tracks or voices, a lower rate, a
    /// longer load.
    pub fn worse(&self) -> bool {
        let longer_is_worse = self.unit == "s";
        self.beyond && ((self.change < 0.0) != longer_is_worse)
    }
}

/// The median of `v` (not empty).
fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let mid = s.len() / 2;
    if s.len().is_multiple_of(2) {
        (s[mid - 1] + s[mid]) / 2.0
    } else {
        s[mid]
    }
}

/// The newest entry of `s` against the `rule.last` entries before it.
pub fn latest(s: &Series, rule: &LatestRule) -> Option<Latest> {
    let (new, before) = s.entries.split_last()?;
    let window: &[Entry] = &before[before.len().saturating_sub(rule.last)..];
    let values: Vec<f64> = window.iter().map(|e| e.point.value).collect();
    let mut out = Latest {
        disk: s.disk.clone(),
        what: s.what.clone(),
        unit: s.unit,
        value: new.point.value,
        runs: window.len(),
        median: new.point.value,
        since: window
            .first()
            .map_or(String::new(), |e| e.started_at.clone()),
        change: 0.0,
        noise: None,
        beyond: false,
        causes: Vec::new(),
    };
    if window.is_empty() {
        return Some(out);
    }
    let m = median(&values);
    out.median = m;
    out.change = (new.point.value - m) / m.abs().max(f64::MIN_POSITIVE);
    out.causes = causes_between(&window[0], new);
    if window.len() < rule.min_runs {
        return Some(out);
    }
    // The scatter from as much of the series as there is (up to 20 runs): a window of 5 has
    // only 4 successive differences to tell it.
    let history: Vec<f64> = before[before.len().saturating_sub(20)..]
        .iter()
        .map(|e| e.point.value)
        .collect();
    let spread = scatter(&history) / m.abs().max(f64::MIN_POSITIVE);
    let own: Vec<f64> = window.iter().map(|e| e.point.spread).collect();
    let point_sd = spread.max(median(&own));
    let new_sd = point_sd.max(new.point.spread);
    let median_sd = 1.2533 * point_sd / (window.len() as f64).sqrt();
    let noise = (new_sd * new_sd + median_sd * median_sd).sqrt();
    out.noise = Some(noise);
    out.beyond = out.change.abs() >= rule.min_change && out.change.abs() >= rule.z * noise;
    Some(out)
}

/// Each series the result `id` ends, judged; the result's own figures first in the order the
/// series came.
pub fn of_result(series: &[Series], id: i64, rule: &LatestRule) -> Vec<Latest> {
    series
        .iter()
        .filter(|s| s.entries.last().is_some_and(|e| e.id == id))
        .filter_map(|s| latest(s, rule))
        .collect()
}

/// A date as a person reads it: the day of an RFC 3339 time.
fn day(t: &str) -> &str {
    t.get(..10).unwrap_or(t)
}

/// How a figure is shown: counts whole, other figures as every presenter shows them.
fn shown(unit: &str, v: f64) -> String {
    match unit {
        "tracks" | "voices" => format!("{v:.0}"),
        _ => crate::units::fmt_figure(v),
    }
}

/// The change in words, as the disk's doing: "plays 12% fewer tracks", "streams 8% more voices",
/// "loads its template 9% slower", "gives 15% less seq read MB/s".
fn doing(l: &Latest) -> String {
    let pct = format!("{:.0}%", 100.0 * l.change.abs());
    let less = l.change < 0.0;
    let what = l.what.as_str();
    match l.unit {
        "tracks" => {
            let verb = if what.starts_with("record") {
                "records"
            } else {
                "plays"
            };
            let more = if less { "fewer" } else { "more" };
            let also = if what.contains("while recording") {
                " while recording"
            } else {
                ""
            };
            format!("{verb} {pct} {more} tracks{also}")
        }
        "voices" => format!(
            "streams {pct} {} voices",
            if less { "fewer" } else { "more" }
        ),
        "s" => format!(
            "takes {pct} {} for {what}",
            if less { "less time" } else { "longer" }
        ),
        _ => format!("gives {pct} {} {what}", if less { "less" } else { "more" }),
    }
}

/// The window in words: "its median of the last 5 runs since 2026-11-30".
fn window(l: &Latest) -> String {
    format!(
        "its median of the last {} run{} since {}",
        l.runs,
        if l.runs == 1 { "" } else { "s" },
        day(&l.since)
    )
}

/// A changed figure in a sentence, from the disk's side: "plays 12% fewer tracks than its
/// median of the last 5 runs since 2026-11-30 (127 against 144), beyond its noise of ±3%; the
/// disk went from 40% to 85% full".
pub fn words(l: &Latest) -> String {
    let mut w = format!(
        "{} than {} ({} against {}), beyond its noise of ±{}%",
        doing(l),
        window(l),
        shown(l.unit, l.value),
        shown(l.unit, l.median),
        crate::units::fmt_figure(100.0 * l.noise.unwrap_or(0.0))
    );
    for c in &l.causes {
        w.push_str("; ");
        w.push_str(c);
    }
    w
}

/// One figure as a line of the list under the sentence: "playback tracks: 127, -12% from 144,
/// beyond its noise of ±3%".
pub fn line(l: &Latest) -> String {
    let value = shown(l.unit, l.value);
    let mut w = match l.noise {
        _ if l.runs == 0 => format!("{}: {value}", l.what),
        None => format!(
            "{}: {value}, {:+.0}% from {} (its noise is known after {} earlier runs)",
            l.what,
            100.0 * l.change,
            shown(l.unit, l.median),
            LatestRule::default().min_runs
        ),
        Some(n) => format!(
            "{}: {value}, {:+.0}% from {}, {} its noise of ±{}%",
            l.what,
            100.0 * l.change,
            shown(l.unit, l.median),
            if l.beyond { "beyond" } else { "within" },
            crate::units::fmt_figure(100.0 * n)
        ),
    };
    for c in l.causes.iter().filter(|_| l.beyond) {
        w.push_str("; ");
        w.push_str(c);
    }
    w
}

/// The one sentence `watch` opens with: whether this disk has changed, by the figure that
/// changed most beyond its noise (worse first); when none did, how many figures were judged
/// and against what.
pub fn verdict(all: &[Latest]) -> String {
    let changed = |worse: bool| {
        all.iter()
            .filter(|l| l.beyond && l.worse() == worse)
            .max_by(|a, b| a.change.abs().total_cmp(&b.change.abs()))
    };
    if let Some(l) = changed(true).or_else(|| changed(false)) {
        let others = all.iter().filter(|o| o.beyond).count() - 1;
        let more = match others {
            0 => String::new(),
            n => format!(" ({n} other figure{} too)", if n == 1 { "" } else { "s" }),
        };
        let how = if l.worse() { "is slower" } else { "is faster" };
        return format!("This disk {how}: it {}{more}.", words(l));
    }
    let judged = all.iter().filter(|l| l.noise.is_some()).count();
    let runs = all.iter().map(|l| l.runs).max().unwrap_or(0);
    match all.first() {
        Some(l) if judged > 0 => format!(
            "This disk has not changed beyond its noise: {judged} figure{} within it, against {}.",
            if judged == 1 { "" } else { "s" },
            window(l)
        ),
        Some(_) if runs == 0 => {
            "This is the first run of this disk at these settings: nothing to compare yet.".into()
        }
        Some(_) => format!(
            "Too few earlier runs of this disk at these settings to know its noise: {runs} of {}.",
            LatestRule::default().min_runs
        ),
        None => "Nothing this run measured is watched (tracks, voices, a template load, sequential and random rates).".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::watch::steps::Point;
    use crate::watch::steps::tests::Noise;

    fn series(values: &[f64], spread: f64, unit: &'static str) -> Series {
        Series {
            disk: "/mnt/audio (Disk A)".into(),
            what: "playback tracks".into(),
            unit,
            key: String::new(),
            entries: values
                .iter()
                .enumerate()
                .map(|(i, &value)| Entry {
                    id: i as i64 + 1,
                    started_at: format!("2026-11-{:02}T10:00:00Z", i + 1),
                    point: Point { value, spread },
                    fill: Some(0.4),
                    health: None,
                })
                .collect(),
        }
    }

    #[test]
    fn a_run_twelve_percent_down_is_said_against_the_median_of_the_last_five() {
        let s = series(
            &[150.0, 144.0, 145.0, 143.0, 144.0, 146.0, 127.0],
            0.02,
            "tracks",
        );
        let l = latest(&s, &LatestRule::default()).unwrap();
        assert_eq!((l.runs, l.median), (5, 144.0));
        assert!((l.change + 0.118).abs() < 0.001, "{l:?}");
        assert!(l.beyond && l.worse(), "{l:?}");
        let w = verdict(&[l]);
        assert_eq!(
            w,
            "This disk is slower: it plays 12% fewer tracks than its median of the last 5 runs \
             since 2026-11-02 (127 against 144), beyond its noise of ±2.29%."
        );
    }

    #[test]
    fn within_noise_too_few_runs_and_a_first_run_are_each_said() {
        let rule = LatestRule::default();
        let flat = latest(
            &series(&[144.0, 145.0, 143.0, 141.0], 0.02, "tracks"),
            &rule,
        );
        let flat = flat.unwrap();
        assert!(!flat.beyond && flat.noise.is_some());
        assert_eq!(
            verdict(std::slice::from_ref(&flat)),
            "This disk has not changed beyond its noise: 1 figure within it, against its median \
             of the last 3 runs since 2026-11-01."
        );
        assert!(
            line(&flat).starts_with("playback tracks: 141, -2% from 144, within its noise of ±"),
            "{}",
            line(&flat)
        );
        let few = latest(&series(&[144.0, 100.0], 0.02, "tracks"), &rule).unwrap();
        assert!(!few.beyond && few.noise.is_none());
        assert_eq!(
            verdict(std::slice::from_ref(&few)),
            "Too few earlier runs of this disk at these settings to know its noise: 1 of 3."
        );
        assert_eq!(
            line(&few),
            "playback tracks: 100, -31% from 144 (its noise is known after 3 earlier runs)"
        );
        let first = latest(&series(&[144.0], 0.02, "tracks"), &rule).unwrap();
        assert_eq!(
            verdict(std::slice::from_ref(&first)),
            "This is the first run of this disk at these settings: nothing to compare yet."
        );
        assert_eq!(line(&first), "playback tracks: 144");
    }

    #[test]
    fn a_longer_load_is_worse_and_a_faster_rate_is_not() {
        let rule = LatestRule::default();
        let load = latest(&series(&[10.0, 10.1, 9.9, 10.0, 13.0], 0.01, "s"), &rule).unwrap();
        assert!(load.beyond && load.worse());
        let rate = latest(
            &series(&[100.0, 101.0, 99.0, 100.0, 130.0], 0.01, "MB/s"),
            &rule,
        );
        let rate = rate.unwrap();
        assert!(rate.beyond && !rate.worse());
        assert!(verdict(&[rate.clone(), load]).starts_with("This disk is slower: it takes 30%"));
        assert!(verdict(&[rate]).starts_with("This disk is faster: it gives 30% more"));
    }

    /// The false-alarm rate of one run judged, measured: 2,000 unchanged series of 4 to 12
    /// runs at 3% normal noise, each point claiming 2%, and the same with one run in ten off
    /// by a further ±10%. A newest run 15% down stands 4 noises out at 3% noise (caught about
    /// half the time: the history's step, two runs later, finds the rest) and always at 1%.
    #[test]
    fn false_alarms_of_the_newest_run_are_measured() {
        let rule = LatestRule::default();
        let mut noise = Noise(0x5eed);
        let (mut alarms, mut heavy, mut caught, mut caught_quiet) = (0, 0, 0, 0);
        for i in 0..2000 {
            let n = 4 + i % 9;
            let mut v: Vec<f64> = (0..n)
                .map(|_| 100.0 * (1.0 + 0.03 * noise.normal()))
                .collect();
            if latest(&series(&v, 0.02, "tracks"), &rule).is_some_and(|l| l.beyond) {
                alarms += 1;
            }
            let tails: Vec<f64> = v
                .iter()
                .map(|x| {
                    let off = noise.uniform() < 0.1;
                    x * (1.0
                        + if off {
                            0.1 * noise.normal().signum()
                        } else {
                            0.0
                        })
                })
                .collect();
            if latest(&series(&tails, 0.02, "tracks"), &rule).is_some_and(|l| l.beyond) {
                heavy += 1;
            }
            *v.last_mut().unwrap() *= 0.85;
            if latest(&series(&v, 0.02, "tracks"), &rule).is_some_and(|l| l.worse()) {
                caught += 1;
            }
            // A steadier disk: 1% between runs, as a capped device or a quiet SSD gives.
            let mut quiet: Vec<f64> = (0..n)
                .map(|_| 100.0 * (1.0 + 0.01 * noise.normal()))
                .collect();
            *quiet.last_mut().unwrap() *= 0.85;
            if latest(&series(&quiet, 0.01, "tracks"), &rule).is_some_and(|l| l.worse()) {
                caught_quiet += 1;
            }
        }
        eprintln!(
            "measured: {alarms} false alarms in 2000, {heavy} with outliers; 15% falls caught in {caught} at 3% noise, {caught_quiet} at 1%"
        );
        assert!(alarms <= 10, "{alarms} false alarms in 2000 (over 0.5%)");
        assert!(
            heavy <= 100,
            "{heavy} false alarms in 2000 with outliers (over 5%)"
        );
        assert!(
            caught >= 900,
            "15% falls caught in {caught} of 2000 at 3% noise"
        );
        assert!(
            caught_quiet >= 1990,
            "15% falls caught in {caught_quiet} of 2000 at 1%"
        );
    }
}
