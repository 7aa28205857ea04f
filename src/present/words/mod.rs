//! Findings in words: the one place that turns a [`Finding`] into the sentence every presenter
//! (terminal, HTML, Markdown) shows.

mod classic;
mod library;
mod measured;
mod rule;
mod sampler;
mod search;
mod tracks;
mod verdict;

use crate::result::findings::Finding;
pub(crate) use verdict::probe_verdict;

/// The sentence a finding stands for.
pub fn words(f: &Finding) -> String {
    match f {
        Finding::MemoryFilesystem { .. }
        | Finding::DirectRefused { .. }
        | Finding::CachedOnPurpose
        | Finding::ThroughPageCache { .. }
        | Finding::PageCacheSearchUnchecked { .. }
        | Finding::PageCacheSearchLocatedBothWays { .. }
        | Finding::PageCacheSearchConfirmedLong { .. }
        | Finding::PagesKept { .. }
        | Finding::FirstRunOutlier { .. }
        | Finding::NotRealTime { .. }
        | Finding::LateTick { .. }
        | Finding::ButlerWaitedForCpu { .. } => measured::words(f),
        Finding::NaiveCount { .. }
        | Finding::BestBlock { .. }
        | Finding::BuffersBeyondMemory { .. }
        | Finding::ZoneFalloff { .. }
        | Finding::FileLayout
        | Finding::NoPlatterWait { .. }
        | Finding::RotationShare { .. }
        | Finding::RelativeToSequential { .. } => classic::words(f),
        Finding::RingRaised { .. }
        | Finding::LongLocate { .. }
        | Finding::DidNotPass { .. }
        | Finding::DrainWithinOneHold { .. }
        | Finding::SpareCapacity { .. }
        | Finding::ReadAmplification { .. }
        | Finding::StoppedEarly { .. } => tracks::words(f),
        Finding::FirstGuess { .. }
        | Finding::ParallelGuess { .. }
        | Finding::CacheAnsweredGuess
        | Finding::SearchTrail { .. }
        | Finding::RealTimeAnswer { .. }
        | Finding::SharedStorage { .. }
        | Finding::SerialLeaves { .. } => search::words(f),
        Finding::InPhaseWave { .. }
        | Finding::ProbeRule { .. }
        | Finding::TryCompareParallel
        | Finding::AnswersHoldFor { .. }
        | Finding::SuiteRule => rule::words(f),
        Finding::InstrumentLoad { .. }
        | Finding::Voices { .. }
        | Finding::VoicesAnswer { .. }
        | Finding::SamplerHoldsFor { .. } => sampler::words(f),
        Finding::ColdMeans { .. }
        | Finding::Bounced { .. }
        | Finding::BounceSpeed { .. }
        | Finding::TemplateLoad { .. } => library::words(f),
        Finding::Of { search, finding } => format!("{search}: {}", words(finding)),
        Finding::Text { text } => text.clone(),
    }
}

/// A finding as a fitted terminal shows it, in a line or two: None where the section's answer
/// (`answered`: its sentence, what it depends on, how sure it is) already says it; long
/// explanations in a line that says where the whole one is (`--wide`, the report).
pub fn fitted(f: &Finding, answered: bool) -> Option<String> {
    match f {
        Finding::RealTimeAnswer { .. }
        | Finding::VoicesAnswer { .. }
        | Finding::AnswersHoldFor { .. }
        | Finding::SamplerHoldsFor { .. }
        | Finding::SearchTrail { .. }
            if answered =>
        {
            None
        }
        Finding::Of { search, finding } => {
            fitted(finding, answered).map(|w| format!("{search}: {w}"))
        }
        Finding::ProbeRule { probe_s, .. } => Some(format!(
            "a count passed only with no xrun, no ring below the margin and the butler keeping up, over probes of up to {probe_s:.0} s; --wide gives the whole rule"
        )),
        Finding::SuiteRule => Some(
            "each answer is the most tracks that passed a --find-max search: no xrun, no ring below 20%, the butler keeping up; --wide gives the whole rule".into(),
        ),
        Finding::InPhaseWave { share_pct, .. } => Some(format!(
            "tracks starting together can use at most {share_pct:.0}% of what the disk streams with these buffers; bigger ones (--buffer) or --stagger show the rest (--wide says why)"
        )),
        Finding::ReadAmplification { ratio, .. } => Some(format!(
            "read amplification {ratio:.2}x: what the device read ÷ what the tracks needed (--wide says more)"
        )),
        _ => Some(words(f)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/result-schema.md lists every figure and every kind of finding the code can write.
    #[test]
    fn the_schema_document_names_every_figure_and_finding() {
        let doc = include_str!("../../../docs/result-schema.md");
        for d in crate::result::metrics::ALL {
            assert!(
                doc.contains(&format!("`{}`", d.name)),
                "{} is not described",
                d.name
            );
        }
        let kinds = [
            Finding::CachedOnPurpose,
            Finding::FileLayout,
            Finding::CacheAnsweredGuess,
            Finding::TryCompareParallel,
            Finding::SuiteRule,
        ];
        for f in kinds {
            let v = serde_json::to_value(&f).unwrap();
            let k = v["kind"].as_str().unwrap();
            assert!(doc.contains(&format!("`{k}`")), "{k} is not described");
        }
        // Every kind the enum has, from its source: the variants are its `///`-documented
        // entries, written in snake_case in the document.
        let src = include_str!("../../result/findings.rs");
        let body = &src[src.find("pub enum Finding {").unwrap()..];
        let body = &body[..body.find("\n}\n").unwrap()];
        let mut found = 0;
        for line in body.lines() {
            let t = line.trim();
            let Some(name) = t
                .strip_suffix(" {")
                .or_else(|| t.strip_suffix(','))
                .filter(|n| n.chars().next().is_some_and(char::is_uppercase))
                .map(|n| n.split([' ', '{']).next().unwrap_or(n))
            else {
                continue;
            };
            let mut snake = String::new();
            for (i, c) in name.chars().enumerate() {
                if c.is_uppercase() && i > 0 {
                    snake.push('_');
                }
                snake.push(c.to_ascii_lowercase());
            }
            assert!(
                doc.contains(&format!("`{snake}`")),
                "{snake} is not described"
            );
            found += 1;
        }
        assert!(
            found >= 33,
            "read {found} kinds of finding from findings.rs"
        );
    }
}
