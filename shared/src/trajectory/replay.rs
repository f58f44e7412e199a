//! Comparing a replayed step with its record: what `mcpgym replay` reports.

use super::file::RecordedStep;
use super::{clipped_observation_text, clipped_structured};
use crate::step::StepRecord;

/// Rewards closer than this are the same (they are sums of the same terms).
const REWARD_TOLERANCE: f64 = 1e-9;

/// The first way `replayed` differs from `recorded`, as a sentence; `None` when it matches in
/// observation, structure, reward (and its components) and end flags.
pub fn first_difference(recorded: &RecordedStep, replayed: &StepRecord) -> Option<String> {
    if recorded.is_error != replayed.is_error {
        return Some(format!(
            "the call was {} in the record and {} on replay",
            refused(recorded.is_error),
            refused(replayed.is_error)
        ));
    }
    let (observation, _) = clipped_observation_text(&replayed.content);
    if observation != recorded.observation {
        return Some(format!(
            "the observation differs: {}",
            text_difference(&recorded.observation, &observation)
        ));
    }
    let structured = replayed
        .structured
        .as_ref()
        .map(|value| clipped_structured(value).0);
    if structured != recorded.structured {
        return Some(format!(
            "the structured observation differs: recorded {}, replayed {}",
            show(recorded.structured.as_ref()),
            show(structured.as_ref())
        ));
    }
    if (recorded.reward - replayed.reward).abs() > REWARD_TOLERANCE {
        return Some(format!(
            "the reward differs: recorded {}, replayed {}",
            recorded.reward, replayed.reward
        ));
    }
    let names = recorded
        .reward_components
        .keys()
        .chain(replayed.reward_components.keys());
    for name in names {
        let (a, b) = (
            recorded.reward_components.get(name).copied().unwrap_or(0.0),
            replayed.reward_components.get(name).copied().unwrap_or(0.0),
        );
        if (a - b).abs() > REWARD_TOLERANCE {
            return Some(format!(
                "the reward component {name:?} differs: recorded {a}, replayed {b}"
            ));
        }
    }
    for (flag, a, b) in [
        ("done", recorded.done, replayed.done),
        ("truncated", recorded.truncated, replayed.truncated),
        ("aborted", recorded.aborted, replayed.aborted),
    ] {
        if a != b {
            return Some(format!("{flag} differs: recorded {a}, replayed {b}"));
        }
    }
    None
}

fn refused(is_error: bool) -> &'static str {
    if is_error { "refused" } else { "accepted" }
}

fn show(value: Option<&serde_json::Value>) -> String {
    let text = value.map_or_else(|| "nothing".to_owned(), |v| v.to_string());
    shorten(&text, 200)
}

/// Where two texts part, with a little of each from there.
fn text_difference(recorded: &str, replayed: &str) -> String {
    let at = recorded
        .char_indices()
        .zip(replayed.chars())
        .find(|((_, a), b)| a != b)
        .map_or_else(|| recorded.len().min(replayed.len()), |((i, _), _)| i);
    let from = recorded[..at.min(recorded.len())]
        .char_indices()
        .rev()
        .nth(20)
        .map_or(0, |(i, _)| i);
    format!(
        "from byte {at}, recorded {:?}, replayed {:?}",
        shorten(recorded.get(from..).unwrap_or(""), 80),
        shorten(replayed.get(from..).unwrap_or(""), 80)
    )
}

fn shorten(text: &str, chars: usize) -> String {
    match text.char_indices().nth(chars) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use rmcp::model::ContentBlock;

    use super::*;

    fn recorded() -> RecordedStep {
        RecordedStep {
            turn: 1,
            tool: "guess".into(),
            arguments: Default::default(),
            observation: "CRANE: green yellow gray gray gray".into(),
            is_error: false,
            structured: None,
            reward: 0.2,
            reward_components: BTreeMap::from([("letters".into(), 0.2)]),
            done: false,
            truncated: false,
            aborted: false,
            cut_bytes: BTreeMap::new(),
            images: Vec::new(),
            idempotency_key: None,
        }
    }

    fn replayed(text: &str, reward: f64) -> StepRecord {
        StepRecord {
            episode: "e".into(),
            turn: 1,
            content: vec![ContentBlock::text(text)],
            structured: None,
            is_error: false,
            reward,
            reward_components: BTreeMap::from([("letters".into(), reward)]),
            return_: reward,
            done: false,
            truncated: false,
            aborted: false,
        }
    }

    #[test]
    fn the_same_step_matches() {
        let same = replayed("CRANE: green yellow gray gray gray", 0.2);
        assert_eq!(first_difference(&recorded(), &same), None);
    }

    #[test]
    fn each_difference_is_named() {
        let text = first_difference(
            &recorded(),
            &replayed("CRANE: green green gray gray gray", 0.2),
        );
        let text = text.unwrap();
        assert!(
            text.starts_with("the observation differs: from byte 13"),
            "{text}"
        );
        let reward = first_difference(
            &recorded(),
            &replayed("CRANE: green yellow gray gray gray", 0.3),
        );
        assert_eq!(
            reward.unwrap(),
            "the reward differs: recorded 0.2, replayed 0.3"
        );
        let mut done = replayed("CRANE: green yellow gray gray gray", 0.2);
        done.done = true;
        assert_eq!(
            first_difference(&recorded(), &done).unwrap(),
            "done differs: recorded false, replayed true"
        );
    }
}
