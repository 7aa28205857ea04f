//! A section's answer as a musician reads it, before anything else: the count in plain words
//! ("This folder plays 555 mono tracks of 48 kHz/24-bit at once …"), what it depends on (the
//! program's profile, the format, the buffer), how sure it is, and the few figures that decide.
//! A question left unanswered (a search stopped before any count was confirmed) says so, and is
//! never a count of 0. The terminal, the HTML report, the browser face and `history` all word an
//! answer from here.

use crate::audio::{Format, SampleType};
use crate::result::findings::Finding;
use crate::result::metrics::{self as m, Def};
use crate::result::search::{Capacity, CapacityReport, Repeated, SearchLimit};
use crate::result::{Detail, ResultDoc, Section};
use crate::target::TargetKind;
use crate::units::fmt_size;
use crate::verdict::Verdict;
use crate::workloads::realtime::{HDR_ROW, PLAY_ROW, RECORD_ROW};

/// A section's answer.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Answer {
    /// The answer in one sentence, in a musician's words.
    pub sentence: String,
    /// The count as a card shows it: "555", "at least 1000", "no answer".
    pub count: String,
    /// What is counted: "tracks" or "voices".
    pub unit: &'static str,
    /// The verdict in a few words: "confirmed", "held in real time", "stopped before an answer".
    pub verdict: String,
    /// Whether the question was answered (false: stopped before any count was confirmed).
    pub answered: bool,
    /// What the answer depends on: the profile, the format, the buffer.
    pub depends_on: String,
    /// How sure it is: confirmed or not, by how many probes, what stopped the search.
    pub how_sure: String,
    /// A repeated search's range, as a card shows it under its count: "140 to 146 over 3
    /// searches" (None for one search, or a run without one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub range: Option<String>,
    /// The figures that decide, named: the naive count, the safety left, the memory it takes.
    pub figures: Vec<(String, String)>,
}

/// One count a search or a run answered, as far as it got.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Count {
    /// Confirmed (or a fixed run's count, which holds or not by its own verdict).
    Known(f64),
    /// The search stopped at a limit short of a failing count.
    AtLeast(f64, SearchLimit),
    /// Passed, but the run at it did not confirm it (or was stopped before it could).
    Unconfirmed(f64),
    /// Stopped before any count passed.
    Unanswered,
}

impl Count {
    /// The count in words, for sentences and cards.
    pub fn words(self) -> String {
        match self {
            Count::Known(n) => format!("{n:.0}"),
            Count::AtLeast(n, _) => format!("at least {n:.0}"),
            Count::Unconfirmed(n) => format!("{n:.0} (not confirmed)"),
            Count::Unanswered => "no answer".into(),
        }
    }
    pub fn answered(self) -> bool {
        matches!(self, Count::Known(_) | Count::AtLeast(..))
    }

    /// The same kind of count with `n` in place of its own: a repeated search's median.
    fn with(self, n: f64) -> Count {
        match self {
            Count::Known(_) => Count::Known(n),
            Count::AtLeast(_, w) => Count::AtLeast(n, w),
            Count::Unconfirmed(_) => Count::Unconfirmed(n),
            Count::Unanswered => Count::Unanswered,
        }
    }
}

/// The count of a search, as its capacity record and the document say it: a search stopped
/// (interrupted, or a studio that lost a rank) before its confirmation passed has no answer.
fn count_of(c: &Capacity, limited_by: Option<SearchLimit>, stopped: bool) -> Count {
    let n = f64::from(c.answer);
    match limited_by {
        _ if c.answer == 0 && stopped => Count::Unanswered,
        _ if !c.confirmed && stopped => Count::Unconfirmed(n),
        Some(w) => Count::AtLeast(n, w),
        None if c.confirmed || c.answer == 0 => Count::Known(n),
        None => Count::Unconfirmed(n),
    }
}

/// How long a run went on before it stopped, from its document's times.
pub fn ran_s(doc: &ResultDoc) -> Option<f64> {
    let t = |s: &str| humantime::parse_rfc3339_weak(s).ok();
    let d = t(&doc.finished_at)?
        .duration_since(t(&doc.started_at)?)
        .ok()?;
    Some(d.as_secs_f64())
}

/// "This folder", "This file", "This device", or the simulated device by name.
pub fn subject(doc: &ResultDoc, s: &Section) -> String {
    if let Some(name) = simulated(doc, s) {
        return format!("The simulated device ({name})");
    }
    match doc.target.kind {
        TargetKind::Directory => "This folder",
        TargetKind::File => "This file",
        TargetKind::BlockDevice => "This device",
    }
    .into()
}

/// The simulated device's name, from the target or (documents before the target said) the
/// section's settings.
pub fn simulated(doc: &ResultDoc, s: &Section) -> Option<String> {
    doc.target.simulated.clone().or_else(|| {
        let d = s.settings.get("device_model")?;
        d.get("name")?.as_str().map(str::to_string)
    })
}

/// "mono tracks of 48 kHz/24-bit", "stereo voices of 44.1 kHz/32-bit float".
pub fn format_words(f: &Format, unit: &str) -> String {
    // 48 kHz, 44.1 kHz: as many decimals as the rate has.
    let rate = format!("{}", f64::from(f.rate_hz) / 1000.0);
    let depth = match f.sample_type {
        SampleType::Int => format!("{}-bit", f.bits),
        SampleType::Float => "32-bit float".into(),
    };
    let ch = match f.channels {
        1 => "mono".to_string(),
        2 => "stereo".to_string(),
        n => format!("{n}-channel"),
    };
    format!("{ch} {unit} of {rate} kHz/{depth}")
}

/// The format the section ran at: its engine's, else the session's.
fn format_of(doc: &ResultDoc, s: &Section) -> Format {
    s.settings
        .get("spec")
        .and_then(|sp| sp.get("format"))
        .or_else(|| s.settings.get("format"))
        .and_then(|f| serde_json::from_value(f.clone()).ok())
        .or_else(|| doc.format())
        .unwrap_or_default()
}

fn figure(s: &Section, row: &str, def: &Def) -> Option<f64> {
    s.row(row)?.get(def).map(|f| f.spread.median)
}

/// The answer a section gives, where it counts tracks or voices (None for the classic
/// workloads, whose tables are their answer).
pub fn of(doc: &ResultDoc, s: &Section) -> Option<Answer> {
    match s.detail.as_ref()? {
        Detail::Search(d) => Some(search(doc, s, d.searches.first()?, d.repeated())),
        Detail::RealTime(r) => suite(doc, s, r),
        Detail::Stream(o) => Some(fixed_run(
            doc,
            s,
            o.verdict,
            (f64::from(o.play_tracks), f64::from(o.record_tracks)),
            "tracks",
        )),
        Detail::Sampler(o) => Some(fixed_run(
            doc,
            s,
            o.verdict,
            (f64::from(o.voices), 0.0),
            "voices",
        )),
        Detail::Transfers(_) => None,
    }
}

/// Why a search stopped short of its answer, in words.
fn stopped_words(doc: &ResultDoc, probes: usize) -> String {
    let after = ran_s(doc).map_or(String::new(), |t| format!(" after {t:.0} s"));
    if probes == 0 {
        format!("stopped{after}, before the first probe ended")
    } else {
        format!("stopped{after}, before a count was confirmed")
    }
}

/// The rows of a section whose search was stopped before its answer, each with its count in
/// words ("no answer", "514 (not confirmed)"): their figures are no answer, and are shown and
/// ranked as none.
pub fn unanswered_rows(doc: &ResultDoc, s: &Section) -> Vec<(String, String)> {
    let stopped = doc.interrupted || s.interrupted;
    let of = |label: &str, c: Count| (!c.answered()).then(|| (label.to_string(), c.words()));
    match &s.detail {
        Some(Detail::Search(d)) => d
            .searches
            .iter()
            .filter_map(|r| of(&r.label, count_of(&r.capacity, r.limited_by, stopped)))
            .collect(),
        Some(Detail::RealTime(r)) => [
            (PLAY_ROW, &r.play),
            (RECORD_ROW, &r.record),
            (HDR_ROW, &r.hdr),
        ]
        .into_iter()
        .filter_map(|(row, x)| {
            let x = x.as_ref()?;
            let c = &x.search.as_ref()?.searches.first()?.capacity;
            of(row, count_of(c, x.limited_by, stopped))
        })
        .collect(),
        _ => Vec::new(),
    }
}

/// A `--find-max` search's answer (its first search: the one its table's first row shows); a
/// search repeated answers the median of its repetitions, with their range.
fn search(doc: &ResultDoc, s: &Section, r: &CapacityReport, repeated: Option<Repeated>) -> Answer {
    let voices = s.workload == "sampler";
    let unit = if voices { "voices" } else { "tracks" };
    let stopped = doc.interrupted || s.interrupted;
    let mut count = count_of(&r.capacity, r.limited_by, stopped);
    if let Some(rep) = &repeated {
        count = count.with(f64::from(rep.median));
    }
    let what = format_words(&format_of(doc, s), unit);
    let row = &r.label;
    let naive_def = if voices {
        &m::NAIVE_VOICES
    } else {
        &m::NAIVE_TRACKS
    };
    let naive = figure(s, row, naive_def);
    let headroom = figure(s, row, &m::WORST_HEADROOM_PCT);
    let subject = subject(doc, s);
    let sentence = match count {
        Count::Unanswered => format!(
            "No answer: the search was {}.",
            stopped_words(doc, r.capacity.probes.len())
        ),
        Count::Unconfirmed(n) if stopped => format!(
            "No confirmed answer: the search was {}; {n:.0} {unit} passed so far.",
            stopped_words(doc, r.capacity.probes.len())
        ),
        _ => {
            let verb = match (voices, s.workload.as_str()) {
                (true, _) => "streams",
                (false, "record") => "records",
                _ => "plays",
            };
            let while_rec = hdr_words(doc, s).unwrap_or_default();
            let notes = voices
                .then(|| s.settings.get("notes_per_s")?.as_f64())
                .flatten()
                .map_or(String::new(), |n| format!(" at {n} notes/s"));
            let median_of = repeated.as_ref().map_or(String::new(), median_of_words);
            format!(
                "{subject} {verb} {} {what} at once{while_rec}{notes}{median_of}{}{}.",
                count.words(),
                spare_words(headroom),
                naive.map_or(String::new(), |n| format!(
                    " (a disk benchmark's MB/s would promise {n:.0})"
                ))
            )
        }
    };
    Answer {
        sentence,
        count: count.words(),
        unit,
        verdict: verdict_words(count),
        answered: count.answered(),
        depends_on: depends_on(s),
        how_sure: repeated_how_sure(doc, repeated.as_ref(), how_sure(doc, &r.capacity, count)),
        range: repeated.as_ref().map(Repeated::words),
        figures: key_figures(s, row, voices, naive),
    }
}

/// ", the median of 3 searches that answered 140 to 146" (or ", each of 3 searches answering
/// the same").
fn median_of_words(rep: &Repeated) -> String {
    let n = rep.answers.len();
    if rep.low == rep.high {
        format!(", each of {n} searches answering the same")
    } else {
        format!(
            ", the median of {n} searches that answered {} to {}",
            rep.low, rep.high
        )
    }
}

/// How sure a search's answer is, with what repeating it measured: each repetition's answer
/// and their spread; a single search on a real device says how to measure it.
fn repeated_how_sure(doc: &ResultDoc, repeated: Option<&Repeated>, one: String) -> String {
    let Some(rep) = repeated else {
        return if doc.target.simulated.is_some() {
            one
        } else {
            format!("{one}; one search (`--runs 3` repeats it and gives the spread)")
        };
    };
    let each: Vec<String> = rep.answers.iter().map(u32::to_string).collect();
    let n = rep.answers.len();
    format!(
        "{n} searches answered {} (a spread of {:.1}% of the median), {} of {n} confirmed by a run of their own; the median's: {one}",
        each.join(", "),
        100.0 * rep.spread(),
        rep.confirmed
    )
}

/// An hdr search's other answers: "; while recording 111 it plays 444, while recording 185 it
/// plays 369" (its first search records nothing).
fn hdr_words(doc: &ResultDoc, s: &Section) -> Option<String> {
    let Some(Detail::Search(d)) = &s.detail else {
        return None;
    };
    if s.workload != "hdr" {
        return None;
    }
    let stopped = doc.interrupted || s.interrupted;
    let each: Vec<String> = d
        .searches
        .iter()
        .filter(|r| r.record_tracks > 0)
        .filter(|r| count_of(&r.capacity, r.limited_by, stopped).answered())
        .map(|r| format!("{} while recording {}", r.play_tracks, r.record_tracks))
        .collect();
    (!each.is_empty()).then(|| format!(" ({})", each.join(", ")))
}

/// ", with its buffers never below 50% full".
fn spare_words(headroom: Option<f64>) -> String {
    headroom.filter(|h| *h > 0.0).map_or(String::new(), |h| {
        format!(", its buffers never below {h:.0}% full")
    })
}

fn verdict_words(c: Count) -> String {
    match c {
        Count::Known(_) => "confirmed".into(),
        Count::AtLeast(_, _) => "confirmed, the search stopped at a limit".into(),
        Count::Unconfirmed(_) => "not confirmed".into(),
        Count::Unanswered => "stopped before an answer".into(),
    }
}

/// What an answer depends on, from the section's "answers hold for" finding (or the sampler's).
fn depends_on(s: &Section) -> String {
    s.findings
        .iter()
        .find_map(|f| match f {
            Finding::AnswersHoldFor {
                profile,
                format,
                period_frames,
                ring_bytes,
                chunk_bytes,
                margin_pct,
                staggered,
            } => Some(format!(
                "the {profile} profile, {format}, {} buffers per track read in {} chunks, period {period_frames}, margin {margin_pct:.0}%, {}",
                fmt_size(*ring_bytes),
                fmt_size(*chunk_bytes),
                if *staggered {
                    "staggered starts"
                } else {
                    "tracks starting together"
                }
            )),
            Finding::SamplerHoldsFor {
                profile,
                format,
                preload_bytes,
                read_bytes,
                samples,
                notes_per_s,
                ..
            } => Some(format!(
                "the {profile} profile, {format}, {} preload and {} reads per voice, {samples} samples, {notes_per_s} notes/s",
                fmt_size(*preload_bytes),
                fmt_size(*read_bytes)
            )),
            _ => None,
        })
        .unwrap_or_else(|| s.title.split_once(": ").map_or(s.title.clone(), |t| t.1.to_string()))
}

/// How sure an answer is: confirmed or not, the probes it took, what stopped it.
fn how_sure(doc: &ResultDoc, c: &Capacity, count: Count) -> String {
    let probes = c.probes.len();
    let time: f64 = c.probes.iter().map(|p| p.elapsed_s.max(0.0)).sum();
    let simulated = doc.target.simulated.is_some();
    let took = format!(
        "{probes} probe{}{}",
        if probes == 1 { "" } else { "s" },
        if simulated {
            " in virtual time".to_string()
        } else {
            format!(" in {time:.0} s")
        }
    );
    let above = c
        .first_failing
        .filter(|f| *f > c.answer)
        .map_or(String::new(), |f| {
            format!("; {f}, the next count tried, did not pass")
        });
    match count {
        Count::Known(n) => format!("confirmed by a run of its own at {n:.0}{above}; {took}"),
        Count::AtLeast(n, w) => format!(
            "{n:.0} confirmed; the search stopped at {}, so the disk may carry more; {took}",
            w.words()
        ),
        Count::Unconfirmed(_) if doc.interrupted => {
            format!("stopped before the confirmation; {took}")
        }
        Count::Unconfirmed(n) => {
            format!("not confirmed: the run at {n:.0} did not pass again; {took}")
        }
        Count::Unanswered if probes == 0 => "no probe ended before the run was stopped".into(),
        Count::Unanswered => format!("no count passed before the run was stopped; {took}"),
    }
}

/// The figures a card shows beside the count.
fn key_figures(s: &Section, row: &str, voices: bool, naive: Option<f64>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if let Some(n) = naive {
        out.push((
            "a disk benchmark's MB/s would promise".into(),
            format!("{n:.0}"),
        ));
    }
    let defs: &[(&Def, &str)] = if voices {
        &[
            (&m::DROPOUTS, "dropouts"),
            (&m::WORST_HEADROOM_PCT, "buffers never below (%)"),
            (&m::RAM_BYTES, "memory"),
        ]
    } else {
        &[
            (&m::XRUNS, "xruns"),
            (&m::WORST_HEADROOM_PCT, "buffers never below (%)"),
            (&m::RAM_BYTES, "memory"),
        ]
    };
    for (def, name) in defs {
        if let Some(v) = figure(s, row, def) {
            out.push(((*name).into(), super::shown(def, v)));
        }
    }
    out
}

/// The standard suite's real-time answer: plays, records, and plays while recording.
fn suite(
    doc: &ResultDoc,
    s: &Section,
    r: &crate::result::search::RealTimeDetail,
) -> Option<Answer> {
    let stopped = doc.interrupted || s.interrupted;
    let of = |x: Option<&crate::result::search::RealTimeSearch>| {
        let x = x?;
        let search = x.search.as_ref()?;
        let c = &search.searches.first()?.capacity;
        let count = count_of(c, x.limited_by, stopped);
        Some(match search.repeated() {
            Some(rep) => count.with(f64::from(rep.median)),
            None => count,
        })
    };
    let repeated = r.play.as_ref().and_then(|p| p.search.as_ref()?.repeated());
    let (play, record, hdr) = (
        of(r.play.as_ref()),
        of(r.record.as_ref()),
        of(r.hdr.as_ref()),
    );
    let play = play?;
    let what = format_words(&format_of(doc, s), "tracks");
    let subject = subject(doc, s);
    let mut sentence = if play.answered() {
        format!("{subject} plays {} {what} at once", play.words())
    } else {
        format!(
            "No playback answer: the search was {}",
            stopped_words(doc, 0)
        )
    };
    if let Some(rc) = record.filter(|c| c.answered()) {
        sentence.push_str(&format!(" and records {}", rc.words()));
    }
    if let (Some(h), Some(rec)) = (
        hdr.filter(|c| c.answered()),
        figure(s, HDR_ROW, &m::RECORD_TRACKS),
    ) {
        sentence.push_str(&format!(
            "; while recording {rec:.0} it plays {}",
            h.words()
        ));
    }
    let naive = figure(s, PLAY_ROW, &m::NAIVE_TRACKS);
    if let Some(n) = naive {
        sentence.push_str(&format!(" (a disk benchmark's MB/s would promise {n:.0})"));
    }
    if let Some(rep) = &repeated {
        sentence.push_str("; playback");
        sentence.push_str(&median_of_words(rep));
    }
    sentence.push('.');
    let how_sure = suite_how_sure(doc, play, record);
    Some(Answer {
        sentence,
        count: play.words(),
        unit: "tracks",
        verdict: verdict_words(play),
        answered: play.answered(),
        depends_on: depends_on(s),
        how_sure: repeated_how_sure(doc, repeated.as_ref(), how_sure),
        range: repeated.as_ref().map(Repeated::words),
        figures: key_figures(s, PLAY_ROW, false, naive),
    })
}

/// How sure the suite's answers are: each confirmed, and the limit a search stopped at.
fn suite_how_sure(doc: &ResultDoc, play: Count, record: Option<Count>) -> String {
    let limit = [Some(play), record]
        .into_iter()
        .flatten()
        .find_map(|c| match c {
            Count::AtLeast(_, w) => Some(w.words()),
            _ => None,
        });
    match limit {
        Some(w) => format!(
            "each count confirmed by a run of its own; the searches stopped at {w}, so the disk may carry more"
        ),
        None if play.answered() => "each count confirmed by a run of its own".into(),
        None => stopped_words(doc, 0),
    }
}

/// A run of a fixed count (no search): whether it held.
fn fixed_run(
    doc: &ResultDoc,
    s: &Section,
    verdict: Verdict,
    (n, record): (f64, f64),
    unit: &'static str,
) -> Answer {
    let voices = unit == "voices";
    let row = s.rows.first().map(|r| r.label.clone()).unwrap_or_default();
    let what = format_words(&format_of(doc, s), unit);
    let subject = subject(doc, s);
    let headroom = figure(s, &row, &m::WORST_HEADROOM_PCT);
    let verb = match (voices, s.workload.as_str()) {
        (true, _) => "streamed",
        (false, "record") => "recorded",
        _ => "played",
    };
    let rec = if record > 0.0 && s.workload == "hdr" {
        format!(" while recording {record:.0}")
    } else {
        String::new()
    };
    let held = match verdict {
        Verdict::Pass => format!("in real time{}", spare_words(headroom)),
        Verdict::Marginal => "only just: it did not pass (see below)".into(),
        Verdict::Fail => "and did not keep up".into(),
        Verdict::TooShort => "for too short a time to tell".into(),
    };
    let stopped = if doc.interrupted {
        " (stopped early)"
    } else {
        ""
    };
    Answer {
        sentence: format!("{subject} {verb} {n:.0} {what}{rec} {held}{stopped}."),
        count: format!("{n:.0}"),
        unit,
        verdict: verdict.word().to_string(),
        answered: !doc.interrupted && verdict != Verdict::TooShort,
        depends_on: depends_on(s),
        how_sure: format!(
            "one run of a fixed count; `--find-max` searches for the most {unit} that hold"
        ),
        range: None,
        figures: key_figures(s, &row, voices, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_format_reads_as_a_musician_says_it() {
        let f = Format::parse("48k/24/mono").unwrap();
        assert_eq!(format_words(&f, "tracks"), "mono tracks of 48 kHz/24-bit");
        let f = Format::parse("44.1k/32f/stereo").unwrap();
        assert_eq!(
            format_words(&f, "voices"),
            "stereo voices of 44.1 kHz/32-bit float"
        );
        let f = Format::parse("96k/16/8").unwrap();
        assert_eq!(
            format_words(&f, "tracks"),
            "8-channel tracks of 96 kHz/16-bit"
        );
    }

    fn cap(answer: u32, confirmed: bool, probes: usize) -> Capacity {
        Capacity {
            answer,
            first_failing: None,
            first_guess: 100,
            confirmed,
            hit_limit: false,
            probes: (0..probes)
                .map(|_| {
                    serde_json::from_value(serde_json::json!({
                        "count": 1, "elapsed_s": 1.0, "verdict": "pass", "worst_headroom_pct": 50.0,
                        "xruns": 0, "confirmation": false
                    }))
                    .unwrap()
                })
                .collect(),
        }
    }

    #[test]
    fn a_search_stopped_before_a_confirmation_has_no_answer() {
        assert_eq!(count_of(&cap(0, false, 0), None, true), Count::Unanswered);
        assert_eq!(
            count_of(&cap(514, false, 4), None, true),
            Count::Unconfirmed(514.0)
        );
        assert_eq!(
            count_of(&cap(555, true, 8), None, true),
            Count::Known(555.0)
        );
        assert_eq!(
            count_of(&cap(555, true, 8), None, false),
            Count::Known(555.0)
        );
        // Even one failing is an answer, when the search was not stopped.
        assert_eq!(count_of(&cap(0, false, 3), None, false), Count::Known(0.0));
        assert_eq!(
            count_of(&cap(1000, true, 1), Some(SearchLimit::MaxTracks), false),
            Count::AtLeast(1000.0, SearchLimit::MaxTracks)
        );
        assert!(!Count::Unanswered.answered() && !Count::Unconfirmed(3.0).answered());
        assert_eq!(Count::Unanswered.words(), "no answer");
    }
}
