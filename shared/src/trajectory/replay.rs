//! Comparing a replayed step with its record: what `mcpgym replay` reports.
//!
//! Observations are compared with their volatile parts masked ([`mask_volatile`]): the
//! clock, durations, `ls -l`'s sizes and dates, and ids the system hands out. Everything else
//! must come out byte for byte the same.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::{Captures, Regex};
use serde_json::Value;

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
        let (was, now) = (
            mask_volatile(&recorded.observation),
            mask_volatile(&observation),
        );
        if was != now {
            return Some(format!(
                "the observation differs: {}",
                text_difference(&was, &now)
            ));
        }
    }
    let structured = replayed
        .structured
        .as_ref()
        .map(|value| clipped_structured(value).0);
    let masked = |value: &Option<Value>| value.as_ref().map(mask_volatile_json);
    if structured != recorded.structured && masked(&structured) != masked(&recorded.structured) {
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

/// What [`mask_volatile`] puts in place of each kind of volatile part.
const TIME: &str = "<time>";
const DATE: &str = "<date>";
const DURATION: &str = "<duration>";
const SIZE: &str = "<size>";
const ID: &str = "<id>";

const MONTH: &str = "(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)";
const WEEKDAY: &str = "(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)";

/// One kind of volatile part: where it is, and what replaces it.
struct Mask {
    pattern: Regex,
    replace: fn(&Captures) -> String,
}

fn mask(pattern: &str, replace: fn(&Captures) -> String) -> Mask {
    Mask {
        pattern: Regex::new(pattern).expect("a volatile-part pattern"),
        replace,
    }
}

/// The kinds of volatile part, in the order they are masked (the longer forms first, so that
/// a date-time is one `<time>`, not a `<date>` and a `<time>`).
static MASKS: LazyLock<Vec<Mask>> = LazyLock::new(|| {
    vec![
        // `ls -l` entries: the size (or a device's major, minor) and the modification time;
        // mode, links, owner, group and name stay. Also its `total` line (blocks in use).
        mask(
            &format!(
                r"(?m)^([-dlcbpsD][rwxsStTl-]{{9}}[.+@]?\s+\d+\s+\S+\s+\S+\s+)\d+(?:,\s*\d+)?(\s+)(?:{MONTH}\s+\d{{1,2}}\s+(?:\d{{1,2}}:\d{{2}}|\d{{4}})|\d{{4}}-\d{{2}}-\d{{2}}(?:[ T]\d{{2}}:\d{{2}}(?::\d{{2}}(?:\.\d+)?)?(?:\s+[+-]\d{{4}})?)?)(\s)"
            ),
            |c| format!("{}{SIZE}{}{TIME}{}", &c[1], &c[2], &c[3]),
        ),
        mask(r"(?m)^total \d+(?:\.\d+)?[KMGT]?$", |_| {
            format!("total {SIZE}")
        }),
        // uuids.
        mask(
            r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b",
            |_| ID.to_owned(),
        ),
        // Memory addresses (`<object at 0x7f3a2b1c4d30>`); short hex constants stay.
        mask(r"\b0x[0-9a-fA-F]{6,}\b", |_| format!("0x{ID}")),
        // Hex ids of 12 digits or more that mix letters and digits (episode ids, hashes,
        // container ids); a long decimal number has no letter and stays.
        mask(r"\b[0-9a-fA-F]{12,}\b", |c| {
            let hex = &c[0];
            let mixed = hex.bytes().any(|b| b.is_ascii_digit())
                && hex.bytes().any(|b| b.is_ascii_alphabetic());
            if mixed { ID.to_owned() } else { hex.to_owned() }
        }),
        // Process ids where they are named as such (`pid 4242`, `PID: 17`, `pid=9`).
        mask(r"(?i)\b(pids?\b[\s:=#]*)\d+", |c| format!("{}{ID}", &c[1])),
        // `date` and C's ctime: `Thu Dec  3 17:28:33 UTC 2026`.
        mask(
            &format!(
                r"\b{WEEKDAY},?\s+{MONTH}\s+\d{{1,2}},?\s+\d{{1,2}}:\d{{2}}(?::\d{{2}})?(?:\s+[A-Z]{{2,5}})?\s+\d{{4}}\b"
            ),
            |_| TIME.to_owned(),
        ),
        // ISO 8601 / RFC 3339 date-times (`2026-12-03 17:28:33.526081`, `…T17:28:33Z`).
        mask(
            r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2}\b)?",
            |_| TIME.to_owned(),
        ),
        // Dates alone: `2026-12-03`, `Dec 3, 2026`, `3 Dec 2026`.
        mask(r"\b\d{4}-\d{2}-\d{2}\b", |_| DATE.to_owned()),
        mask(
            &format!(r"\b(?:{WEEKDAY},?\s+)?{MONTH}[a-z]*\.?\s+\d{{1,2}}(?:,?\s+\d{{4}})?\b"),
            |_| DATE.to_owned(),
        ),
        mask(
            &format!(r"\b\d{{1,2}}\s+{MONTH}[a-z]*\.?\s+\d{{4}}\b"),
            |_| DATE.to_owned(),
        ),
        // Clock times and elapsed times as H:MM:SS (`17:28:33`, `0:00:00.310000`, `17:28`).
        mask(r"\b\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?\b", |_| {
            TIME.to_owned()
        }),
        // Unix times with a fraction (`time.time()`) or in milliseconds.
        mask(r"\b1[5-9]\d{8}\.\d+\b|\b1[5-9]\d{11}\b", |_| {
            TIME.to_owned()
        }),
        // Durations: a number with a unit of time (`took 0.31 s`, `12ms`, `1.2 µs ± 3 ns`),
        // and how many loops `%timeit` chose.
        mask(
            r"\b\d+(?:\.\d+)?(?:[eE][-+]?\d+)?\s?(?:ns|µs|us|ms|s|sec|secs|seconds?|mins?|minutes?)\b",
            |_| DURATION.to_owned(),
        ),
        mask(r"\b\d[\d,]* loops? each\b", |_| {
            format!("{SIZE} loops each")
        }),
    ]
});

/// `text` with its volatile parts masked, so that two runs of the same calls compare equal
/// although the clock moved and the system handed out other ids:
///
/// - times and dates (ISO 8601 and RFC 3339 date-times, `date`'s `Thu Dec  3 17:28:33 UTC
///   2026`, `Dec 3, 2026`, clock times such as `17:28:33`, Unix times with a fraction or in
///   milliseconds) become `<time>` or `<date>`;
/// - durations (a number with a unit of time: `took 0.31 s`, `12ms`, `0:00:00.31`; `%timeit`'s
///   loop count) become `<duration>`;
/// - in `ls -l` output, each entry's size and modification time, and the `total` line
///   (`-rw-r--r-- 1 user user <size> <time> sales.csv`);
/// - ids: uuids, hex ids of 12 digits or more mixing letters and digits, memory addresses
///   (`0x7f3a2b1c4d30`), process ids named as such (`pid 4242`) become `<id>`.
///
/// Everything else is kept as it is: a computed answer that differs (`21` against `22`, a
/// different word, a different row) still differs.
pub fn mask_volatile(text: &str) -> Cow<'_, str> {
    let mut masked = Cow::Borrowed(text);
    for Mask { pattern, replace } in MASKS.iter() {
        if let Cow::Owned(changed) = pattern.replace_all(&masked, |c: &Captures| replace(c)) {
            masked = Cow::Owned(changed);
        }
    }
    masked
}

/// A JSON value with [`mask_volatile`] applied to every string in it (a structured
/// observation's `stdout`, say).
pub fn mask_volatile_json(value: &Value) -> Value {
    match value {
        Value::String(text) => Value::String(mask_volatile(text).into_owned()),
        Value::Array(items) => Value::Array(items.iter().map(mask_volatile_json).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, value)| (key.clone(), mask_volatile_json(value)))
                .collect(),
        ),
        other => other.clone(),
    }
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

    /// Two runs of the same cell, as a Jupyter sandbox printed them (`datetime.now()`,
    /// `ls -l`, a timing, an object's repr, a uuid, a pid).
    const RUN_A: &str = "2026-12-03 17:28:33.526081\ntotal 8\n-rw-r--r-- 1 user user 7772 Dec  3 17:28 sales.csv\ndrwxr-xr-x 2 user user 4096 Dec  3 17:28 out\n\nsum: 21\ntook 0.31 s\n<function f at 0x7f3a2b1c4d30>\nrun 1b4e28ba-2fa1-11d2-883f-0016d3cca427 pid 4242\nThu Dec  3 17:28:33 UTC 2026\nCPU times: user 1.2 ms, sys: 310 µs, total: 1.51 ms\nWall time: 1.6 ms\n52.3 ns ± 1.2 ns per loop (mean ± std. dev. of 7 runs, 10,000,000 loops each)\nepisode 78f7073e841749f8bfb04cf3ce858ce4 at 1764782913.526081";
    const RUN_B: &str = "2026-12-04 09:01:02.000017\ntotal 12\n-rw-r--r-- 1 user user 7790 Dec  4 09:01 sales.csv\ndrwxr-xr-x 2 user user 4096 Dec  4 09:01 out\n\nsum: 21\ntook 12.5 s\n<function f at 0x7f0011223344>\nrun 6fa459ea-ee8a-3ca4-894e-db77e160355e pid 17\nFri Dec  4 09:01:02 UTC 2026\nCPU times: user 980 µs, sys: 0 ns, total: 980 µs\nWall time: 2.01 ms\n61 ns ± 0.5 ns per loop (mean ± std. dev. of 7 runs, 1,000,000 loops each)\nepisode 03a9329669f746cdbae427434602aec0 at 1764838862.000017";

    #[test]
    fn volatile_parts_are_masked() {
        assert_eq!(mask_volatile(RUN_A), mask_volatile(RUN_B));
        assert_eq!(
            mask_volatile(RUN_A),
            "<time>\ntotal <size>\n-rw-r--r-- 1 user user <size> <time> sales.csv\ndrwxr-xr-x 2 user user <size> <time> out\n\nsum: 21\ntook <duration>\n<function f at 0x<id>>\nrun <id> pid <id>\n<time>\nCPU times: user <duration>, sys: <duration>, total: <duration>\nWall time: <duration>\n<duration> ± <duration> per loop (mean ± std. dev. of 7 runs, <size> loops each)\nepisode <id> at <time>"
        );
        for (text, masked) in [
            ("2026-12-03T17:28:33.480Z", "<time>"),
            ("started 2026-12-03T17:28:33+01:00.", "started <time>."),
            ("today is 2026-12-03", "today is <date>"),
            ("Dec 3, 2026 and 3 December 2026", "<date> and <date>"),
            ("elapsed 0:00:00.310000", "elapsed <time>"),
            (
                "-rw-r--r-- 1 1000 1000 12 2026-12-03 17:28 a.txt",
                "-rw-r--r-- 1 1000 1000 <size> <time> a.txt",
            ),
            (
                "crw-rw-rw- 1 root root 1, 3 Dec  3  2025 null",
                "crw-rw-rw- 1 root root <size> <time> null",
            ),
        ] {
            assert_eq!(mask_volatile(text), masked, "{text}");
        }
    }

    #[test]
    fn everything_else_is_kept() {
        for text in [
            "sum: 21",
            "CRANE ⬛⬛🟩🟨⬛\n5 guesses left.",
            "higher: the number is in 51..=4096, 12 guesses left.",
            "mean 3.14159, total 1234567890123, 0xff",
            "   region  total\n0    north  120.5\n1    south   98.0",
            "deadbeefcafebabe",
            "the answer is 42",
        ] {
            assert_eq!(mask_volatile(text), text);
        }
        // A different computed answer still differs, next to masked parts.
        let changed = RUN_B.replace("sum: 21", "sum: 22");
        assert_ne!(mask_volatile(RUN_A), mask_volatile(&changed));
        let text = first_difference(
            &RecordedStep {
                observation: RUN_A.into(),
                ..recorded()
            },
            &replayed(&changed, 0.2),
        )
        .unwrap();
        assert!(
            text.contains("recorded") && text.contains("sum: 21"),
            "{text}"
        );
        assert_eq!(
            first_difference(
                &RecordedStep {
                    observation: RUN_A.into(),
                    ..recorded()
                },
                &replayed(RUN_B, 0.2)
            ),
            None
        );
    }

    #[test]
    fn structured_observations_are_masked_too() {
        let mut step = replayed(RUN_B, 0.2);
        step.structured = Some(serde_json::json!({"stdout": RUN_B, "execution_count": 1}));
        let mut record = RecordedStep {
            observation: RUN_A.into(),
            structured: Some(serde_json::json!({"stdout": RUN_A, "execution_count": 1})),
            ..recorded()
        };
        assert_eq!(first_difference(&record, &step), None);
        record.structured = Some(serde_json::json!({"stdout": RUN_A, "execution_count": 2}));
        let text = first_difference(&record, &step).unwrap();
        assert!(
            text.starts_with("the structured observation differs"),
            "{text}"
        );
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
