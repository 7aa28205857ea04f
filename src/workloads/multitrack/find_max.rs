//! A `--find-max` run of play, record or hdr: its searches — the answer's (every point of
//! hdr's curve), and beside it the parallel butler's and the default engine's where asked —
//! each from its first guess, with its row, its trail and its record in the result; then what
//! tracks starting in phase leave of the disk, and the answers' notes.

use super::guess::{Estimates, wave_bound};
use super::{HDR_RATIOS, Multitrack, StreamKind, planned_duration_s};
use crate::engine::shape::{head_start_ns, steady_start_saves_ns, wave_times};
use crate::engine::{ButlerMode, Policy, StreamSpec};
use crate::error::Result;
use crate::result::findings::{Finding, SteadyProbe, Way};
use crate::result::metrics as m;
use crate::result::search::{Capacity, CapacityReport, GuessRates, SearchDetail};
use crate::result::{Detail, RunRow, Section, metric};
use crate::workloads::probe::{report, search_trail};
use crate::workloads::{Env, RunOutcome};

/// One search of a `--find-max` run.
#[derive(Clone)]
struct Planned {
    label: String,
    /// Its engine setup.
    spec: StreamSpec,
    /// Record tracks per playback track (hdr's curve).
    ratio: f64,
    /// A point of the answer (searched to 2%), rather than a comparison beside it (15%).
    main: bool,
}

impl Multitrack {
    /// Every search of the run, its rows, notes and record added to `out`.
    pub(super) fn find_max_run(
        &mut self,
        env: &mut Env<'_>,
        mut out: RunOutcome,
    ) -> Result<RunOutcome> {
        let est = self.estimates(env)?;
        out.findings.extend(est.notes.iter().cloned());
        let mut searches = self.planned()?;
        let mut reports = Vec::new();
        let mut main_answer = 0u32;
        let mut i = 0;
        while i < searches.len() {
            if env.ctl.cancelled() {
                out.interrupted = true;
                break;
            }
            let p = searches[i].clone();
            let (guess, tolerance) = self.start_of(i, &p, &est, main_answer);
            let (cap, why) = self.search(env, &p.spec, p.ratio, guess, tolerance)?;
            let limited_by = cap.hit_limit.then_some(why);
            let counts = self.answer_counts(&cap, p.ratio);
            out.rows.push(self.answer_row(&p, &cap, counts, &est));
            out.findings.push(search_trail(&p.label, &cap, limited_by));
            if i == 0 {
                main_answer = cap.answer;
                out.findings.extend(self.shared_storage(counts));
                self.main_limited_by = limited_by;
                if let Some(parallel) = self.parallel_beside(&p.spec) {
                    searches.insert(1, parallel);
                }
            }
            reports.push(report(p.label, &p.spec, counts, limited_by, cap));
            i += 1;
        }
        let wave_share = wave_bound(&self.spec, 1.0);
        if let Some((slack_s, cycle_s)) = wave_times(&self.spec)
            && wave_share < 0.999
        {
            out.findings.push(Finding::InPhaseWave {
                slack_s,
                cycle_s,
                share_pct: 100.0 * wave_share,
            });
        }
        out.detail = Some(Detail::Search(
            self.search_detail(&est, wave_share, reports),
        ));
        Ok(out)
    }

    /// The searches of the run: the answer's (hdr's curve has a point for each M), and the
    /// default engine's beside a program's profile where asked.
    fn planned(&self) -> Result<Vec<Planned>> {
        let ratios: Vec<f64> = match (self.kind, self.hdr_record) {
            (StreamKind::Hdr, None) => HDR_RATIOS.to_vec(),
            _ => vec![0.0],
        };
        let mut searches: Vec<Planned> = ratios
            .iter()
            .map(|&ratio| Planned {
                label: self.point_label(ratio),
                spec: self.spec.clone(),
                ratio,
                main: true,
            })
            .collect();
        if self.compare_default && self.spec.policy.profile != "trackbench" {
            let mut s = self.spec.clone();
            // trackbench's own period and margin, unless they were asked for: the profile's
            // came from its program.
            if s.policy.period_frames == Some(s.period_frames) {
                s.period_frames = crate::engine::DEFAULT_PERIOD;
            }
            if s.policy.margin == Some(s.margin) {
                s.margin = crate::engine::DEFAULT_MARGIN;
            }
            s.policy = Policy::named("trackbench", &s.format)?;
            // Its own rings: probes as long as they need to be, not as the profile's.
            let planned = planned_duration_s(&s, true, self.device.is_some());
            s.duration_ns = s.duration_ns.max((planned * 1e9) as u64);
            searches.push(Planned {
                label: format!("trackbench · {}", s.butler),
                spec: s,
                ratio: 0.0,
                main: false,
            });
        }
        Ok(searches)
    }

    /// A point of the answer's label: the profile and butler, or hdr's M.
    fn point_label(&self, ratio: f64) -> String {
        if self.kind != StreamKind::Hdr {
            format!("{} · {}", self.spec.policy.profile, self.spec.butler)
        } else if let Some(m) = self.hdr_record {
            format!("M = {m}")
        } else if ratio == 0.0 {
            "M = 0".to_string()
        } else if ratio == 1.0 {
            "M = N".to_string()
        } else {
            format!("M = N/{}", (1.0 / ratio).round())
        }
    }

    /// The parallel butler's search beside a serial answer, where asked.
    fn parallel_beside(&self, spec: &StreamSpec) -> Option<Planned> {
        let qd = self.compare_parallel?;
        if spec.butler != ButlerMode::Serial || self.kind == StreamKind::Hdr {
            return None;
        }
        let mut s = spec.clone();
        s.butler = ButlerMode::Parallel(qd);
        Some(Planned {
            label: format!("{} · {}", s.policy.profile, s.butler),
            spec: s,
            ratio: 0.0,
            main: false,
        })
    }

    /// Where search `i` starts, and the tolerance it is searched to. The answer is searched to
    /// 2%, every point of hdr's curve included; the comparisons, which show a gap, to 15%. A
    /// parallel butler starts above the serial answer: it rarely does worse.
    fn start_of(&self, i: usize, p: &Planned, est: &Estimates, main_answer: u32) -> (f64, f64) {
        let wave = |tracks: f64| wave_bound(&p.spec, tracks) * 0.95;
        match (i, p.spec.butler) {
            _ if p.main && i > 0 => (wave(est.tracks(est.own, self.kind, p.ratio)), 0.02),
            (0, _) => {
                let guess = match self.hdr_record {
                    // What the device has left for playback once M tracks record.
                    Some(m) => {
                        let t = est.track_rate;
                        let left = (1.0 - f64::from(m) * t / est.own.write.max(1.0)).max(0.0);
                        left * est.own.read / t
                    }
                    None => est.tracks(est.own, self.kind, p.ratio),
                };
                (wave(guess), 0.02)
            }
            (_, ButlerMode::Parallel(_)) => (
                wave(est.tracks(est.parallel, self.kind, p.ratio))
                    .max(f64::from(main_answer) * 1.25),
                0.15,
            ),
            _ => (wave(est.tracks(est.own, self.kind, p.ratio)), 0.15),
        }
    }

    /// The playback and record tracks of a search's answer.
    fn answer_counts(&self, cap: &Capacity, ratio: f64) -> (u32, u32) {
        match self.kind {
            StreamKind::Play => (cap.answer, 0),
            StreamKind::Record => (0, cap.answer),
            StreamKind::Hdr => (
                cap.answer,
                self.hdr_record
                    .unwrap_or((f64::from(cap.answer) * ratio).round() as u32),
            ),
        }
    }

    /// A search's row: its answer beside the naive count, the headroom its answer left, its
    /// probes and the rings' memory.
    fn answer_row(
        &self,
        p: &Planned,
        cap: &Capacity,
        (play, rec): (u32, u32),
        est: &Estimates,
    ) -> RunRow {
        let at_answer = cap.probes.iter().rev().find(|pr| pr.count == cap.answer);
        let per = 1.0 + p.ratio;
        let naive = est.tracks(est.seq, self.kind, p.ratio);
        let mut metrics = vec![metric(&m::TRACKS, f64::from(play + rec))];
        if self.kind == StreamKind::Hdr {
            metrics.push(metric(&m::PLAY_TRACKS, f64::from(play)));
            metrics.push(metric(&m::RECORD_TRACKS, f64::from(rec)));
        }
        metrics.extend([
            metric(&m::NAIVE_TRACKS, (naive / per).floor() * per),
            metric(
                &m::WORST_HEADROOM_PCT,
                at_answer.map_or(0.0, |a| a.worst_headroom_pct),
            ),
            metric(&m::PROBES, cap.probes.len() as f64),
            metric(
                &m::RAM_BYTES,
                (p.spec.ring_bytes() * u64::from(play + rec)) as f64,
            ),
        ]);
        RunRow {
            label: p.label.clone(),
            metrics,
        }
    }

    /// A shared storage model's answer for all its workstations at once.
    fn shared_storage(&self, (play, rec): (u32, u32)) -> Option<Finding> {
        let m = self.device.as_ref().filter(|m| m.clients > 1)?;
        Some(Finding::SharedStorage {
            clients: m.clients,
            tracks_each: f64::from(play + rec),
            link_bound: m.link_binds(),
        })
    }

    /// The run's record in the result: the naive count, the first guesses, the rates they came
    /// from, and every search.
    fn search_detail(
        &self,
        est: &Estimates,
        wave_share: f64,
        searches: Vec<CapacityReport>,
    ) -> SearchDetail {
        SearchDetail {
            wave_share,
            naive_tracks: est.tracks(est.seq, self.kind, 0.0),
            first_guess_tracks: est.tracks(est.own, self.kind, 0.0),
            first_guess_parallel_tracks: est.tracks(est.parallel, self.kind, 0.0),
            rates_bytes_per_s: GuessRates {
                round_robin_read: est.own.read,
                round_robin_write: est.own.write,
                sequential_read: est.seq.read,
                sequential_write: est.seq.write,
            },
            searches,
            repetitions: Vec::new(),
        }
    }

    /// The notes of a `--find-max` section: the answer beside the naive count (and the
    /// parallel butler's), the rule its probes were held to, and what it holds for.
    pub(super) fn search_findings(&self, s: &Section) -> Vec<Finding> {
        let mut n = Vec::new();
        if let Some(first) = s.rows.first() {
            let tracks = first.get(&m::TRACKS).map_or(0.0, |f| f.spread.median);
            let naive = first.get(&m::NAIVE_TRACKS).map_or(0.0, |f| f.spread.median);
            if naive > 0.0 && self.kind != StreamKind::Hdr {
                n.push(Finding::RealTimeAnswer {
                    tracks,
                    naive_tracks: naive,
                    way: if self.kind == StreamKind::Record {
                        Way::Write
                    } else {
                        Way::Read
                    },
                    limited_by: self.main_limited_by,
                });
            }
            if let Some(qd) = self.compare_parallel {
                let par = format!("{} · parallel:{qd}", self.spec.policy.profile);
                if let Some(p) = s.row(&par).and_then(|r| r.get(&m::TRACKS)) {
                    n.push(Finding::SerialLeaves {
                        queue_depth: qd,
                        serial_tracks: tracks,
                        parallel_tracks: p.spread.median,
                    });
                }
            }
        }
        n.push(self.probe_rule(s));
        if self.compare_parallel.is_none()
            && self.spec.butler == ButlerMode::Serial
            && self.kind != StreamKind::Hdr
        {
            n.push(Finding::TryCompareParallel);
        }
        n.push(Finding::AnswersHoldFor {
            profile: self.spec.policy.profile.clone(),
            format: self.spec.format.to_string(),
            period_frames: self.spec.period_frames,
            ring_bytes: self.spec.ring_bytes(),
            chunk_bytes: self.spec.policy.chunk_bytes,
            margin_pct: self.spec.margin * 100.0,
            staggered: self.spec.stagger,
        });
        n
    }

    /// How long the probes of section `s` ran and what they had to show, from the spec and
    /// from whether any of them started in the steady state.
    fn probe_rule(&self, s: &Section) -> Finding {
        // What a probe of playback alone skips (the searches of hdr's M = 0 point do too).
        let mut probe = self.spec.clone();
        probe.start_at_first_refill = self.probes_start_at_first_refill(&probe);
        (probe.play_tracks, probe.record_tracks) = (1, 0);
        let head_start_s = match self.kind {
            StreamKind::Play => head_start_ns(&probe) as f64 / 1e9,
            _ => 0.0,
        };
        let probe_s = self.spec.duration_ns as f64 / 1e9 - head_start_s;
        // The searches' own probes say whether any started in the steady state.
        let steady_probes = matches!(&s.detail, Some(Detail::Search(d))
            if d.searches.iter().any(|c| c.capacity.probes.iter().any(|p| p.steady_start)));
        let steady = steady_probes.then(|| {
            probe.duration_ns = self.spec.duration_ns - head_start_ns(&probe);
            let early = StreamSpec {
                steady_start: true,
                ..probe.clone()
            };
            SteadyProbe {
                probe_s: probe_s - steady_start_saves_ns(&probe) as f64 / 1e9,
                warmup_s: crate::engine::shape::steady_warmup_s(&probe),
                end_early_s: Some(crate::verdict::windows::early_end_at_ns(&early) as f64 / 1e9),
            }
        });
        Finding::ProbeRule {
            probe_s,
            ring_s: self.spec.ring_s(),
            simulated: self.device.is_some(),
            head_start_s,
            steady,
        }
    }
}
