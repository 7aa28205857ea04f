//! The real-time answer of `trackbench run`: with the default engine, the most playback tracks,
//! the most record tracks, and the most playback tracks while recording half as many as the
//! record answer — three `--find-max` searches, as one section.

use super::stream::{SearchLimit, StreamKind, Streaming, planned_duration_s};
use super::{Env, RunOutcome, Workload};
use crate::audio::Format;
use crate::error::Result;
use crate::result::{RunRow, Section};
use crate::stream::{ButlerMode, Policy, StreamSpec};
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
        let mut spec = StreamSpec {
            format: self.format,
            play_tracks: 1,
            record_tracks: 0,
            period_frames: 256,
            duration_ns: 1_000_000_000,
            margin: 0.2,
            policy: Policy::named("trackbench", &self.format)?,
            butler: ButlerMode::Serial,
            stagger: false,
            prealloc: false,
            locate_queue_depth: None,
            stop_early: false,
        };
        spec.duration_ns = (planned_duration_s(&spec, true, false) * 1e9) as u64;
        spec.validate()?;
        Ok(spec)
    }

    fn search(&self, kind: StreamKind, hdr_record: Option<u32>) -> Result<Streaming> {
        Ok(Streaming {
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

/// One search's answer, as the summary needs it.
fn answer_of(out: &RunOutcome) -> u32 {
    out.rows
        .first()
        .and_then(|r| {
            r.metrics
                .iter()
                .find(|m| m.def.name == crate::metrics::TRACKS.name)
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
        let mut extra = serde_json::Map::new();
        let mut take = |label: String,
                        key: &str,
                        w: &mut Streaming,
                        env: &mut Env<'_>,
                        out: &mut RunOutcome|
         -> Result<u32> {
            let o = w.run_once(env, run)?;
            out.interrupted |= o.interrupted;
            out.cached |= o.cached;
            out.notes
                .extend(o.notes.iter().map(|n| format!("{label}: {n}")));
            let answer = answer_of(&o);
            if let Some(r) = o.rows.first() {
                out.rows.push(RunRow {
                    label,
                    metrics: r.metrics.clone(),
                });
            }
            extra.insert(
                key.into(),
                serde_json::json!({
                    "answer": answer,
                    "limited_by": w.main_limited_by,
                    "search": o.extra,
                }),
            );
            Ok(answer)
        };
        let mut play = self.search(StreamKind::Play, None)?;
        take(PLAY_ROW.into(), "play", &mut play, env, &mut out)?;
        if out.interrupted {
            out.extra = Some(extra.into());
            return Ok(out);
        }
        let mut record = self.search(StreamKind::Record, None)?;
        let rec = take(RECORD_ROW.into(), "record", &mut record, env, &mut out)?;
        if !out.interrupted && rec >= 2 {
            let mut hdr = self.search(StreamKind::Hdr, Some(rec / 2))?;
            take(HDR_ROW.into(), "hdr", &mut hdr, env, &mut out)?;
        }
        out.extra = Some(extra.into());
        Ok(out)
    }

    fn notes(&self, _s: &Section) -> Vec<String> {
        vec![format!(
            "each answer is the most tracks that passed a --find-max search: no xrun, no ring below 20%, no drain, {} after a ring and {}; `trackbench play|record|hdr --find-max` searches with other settings",
            crate::stream::spare_words(false),
            crate::stream::steady_words()
        )]
    }
}

/// What limited a search of `run`'s real-time section, from its document (`extra`).
pub fn limited_by(extra: &serde_json::Value, key: &str) -> Option<SearchLimit> {
    serde_json::from_value(extra.get(key)?.get("limited_by")?.clone()).ok()
}
