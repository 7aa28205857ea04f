//! The real-time answer of `trackbench run`: with the default engine, the most playback tracks,
//! the most record tracks, and the most playback tracks while recording half as many as the
//! record answer — three `--find-max` searches, as one section.

use super::multitrack::{Multitrack, StreamKind, planned_duration_s};
use super::{Env, RunOutcome, Workload};
use crate::audio::Format;
use crate::engine::{Policy, StreamSpec};
use crate::error::Result;
use crate::result::findings::Finding;
use crate::result::search::{RealTimeDetail, RealTimeSearch};
use crate::result::{Detail, RunRow, Section};
use crate::units::fmt_size;

/// Row labels, in order.
pub const PLAY_ROW: &str = "playback";
pub const RECORD_ROW: &str = "record";
pub const HDR_ROW: &str = "playback while recording";

pub struct RealTime {
    pub format: Format,
    /// At most this many tracks in any search (None: what memory and space allow).
    pub max_tracks: Option<u32>,
}

impl RealTime {
    /// The default engine's spec: its rings, one read at a time, tracks starting in phase.
    pub fn spec(&self) -> Result<StreamSpec> {
        let policy = Policy::named("trackbench", &self.format)?;
        let mut spec = StreamSpec::new(self.format, policy, (1, 0));
        spec.duration_ns = (planned_duration_s(&spec, true, false) * 1e9) as u64;
        spec.validate()?;
        Ok(spec)
    }

    fn search(&self, kind: StreamKind, hdr_record: Option<u32>) -> Result<Multitrack> {
        Ok(Multitrack {
            kind,
            spec: self.spec()?,
            device: None,
            find_max: true,
            compare_default: false,
            compare_parallel: None,
            verify: false,
            buffer_asked: false,
            max_tracks: self.max_tracks,
            main_limited_by: None,
            hdr_record,
        })
    }
}

/// One search's answer: the track count of its first row.
fn answer_of(rows: &[RunRow]) -> u32 {
    rows.first()
        .and_then(|r| {
            r.metrics
                .iter()
                .find(|m| m.def.name == crate::result::metrics::TRACKS.name)
        })
        .map_or(0, |m| m.value as u32)
}

impl Workload for RealTime {
    fn name(&self) -> &'static str {
        "realtime"
    }

    fn title(&self) -> String {
        match self.spec() {
            Ok(s) => format!(
                "Tracks in real time: {}, default engine, {} rings ({:.2} s), {} chunks, one read at a time, tracks starting in phase",
                s.format,
                fmt_size(s.ring_bytes()),
                s.ring_s(),
                fmt_size(s.policy.chunk_bytes)
            ),
            Err(_) => "Tracks in real time".into(),
        }
    }

    fn settings(&self) -> serde_json::Value {
        serde_json::json!({
            "spec": self.spec().ok(),
            "max_tracks": self.max_tracks,
            "hdr_record_share_of_record_answer": 0.5,
        })
    }

    fn run_once(&mut self, env: &mut Env<'_>, run: u32) -> Result<RunOutcome> {
        let mut out = RunOutcome::default();
        let mut detail = RealTimeDetail::default();
        let take = |label: &str,
                    w: &mut Multitrack,
                    env: &mut Env<'_>,
                    out: &mut RunOutcome|
         -> Result<RealTimeSearch> {
            let o = w.run_once(env, run)?;
            out.interrupted |= o.interrupted;
            out.cached |= o.cached;
            out.findings
                .extend(o.findings.into_iter().map(|f| Finding::Of {
                    search: label.to_string(),
                    finding: Box::new(f),
                }));
            let answer = answer_of(&o.rows);
            if let Some(r) = o.rows.into_iter().next() {
                out.rows.push(RunRow {
                    label: label.to_string(),
                    metrics: r.metrics,
                });
            }
            Ok(RealTimeSearch {
                answer,
                limited_by: w.main_limited_by,
                search: match o.detail {
                    Some(Detail::Search(s)) => Some(s),
                    _ => None,
                },
            })
        };
        let mut play = self.search(StreamKind::Play, None)?;
        detail.play = Some(take(PLAY_ROW, &mut play, env, &mut out)?);
        if !out.interrupted {
            let mut record = self.search(StreamKind::Record, None)?;
            let rec = take(RECORD_ROW, &mut record, env, &mut out)?;
            let m = rec.answer / 2;
            detail.record = Some(rec);
            if !out.interrupted && m >= 1 {
                let mut hdr = self.search(StreamKind::Hdr, Some(m))?;
                detail.hdr = Some(take(HDR_ROW, &mut hdr, env, &mut out)?);
            }
        }
        out.detail = Some(Detail::RealTime(Box::new(detail)));
        Ok(out)
    }

    fn findings(&self, _s: &Section) -> Vec<Finding> {
        vec![Finding::SuiteRule]
    }
}
