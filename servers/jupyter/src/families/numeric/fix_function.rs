//! `fix-function`: a module whose one function has a bug; fix it until hidden tests pass.
//!
//! The function is one of a few everyday ones (median, moving average, min–max rescaling,
//! word counts), under a random name, with one of two bugs. The hidden check calls the
//! agent's version on inputs it has never seen ([`crate::families::function_check`]).

use serde_json::{Value, json};

use crate::families::function_check;
use crate::families::{Family, FamilySplit, Gen, Instance};
use crate::tasks::{Grader, TaskKind};

pub(super) const FAMILY: Family = Family {
    name: "fix-function",
    kind: TaskKind::Debugging,
    split: FamilySplit::TrainAndTest,
    levelled: false,
    about: "debugging: fix a module's function until its hidden tests pass",
    generate,
};

const MODULES: &[&str] = &["stats.py", "helpers.py", "numbers_util.py", "toolkit.py"];

fn generate(g: &mut Gen) -> Instance {
    let module = *g.pick(MODULES);
    let template = g.index(4);
    let bug = g.index(2);
    let (name, source, calls, expected): (&str, String, Vec<Value>, Vec<Value>) = match template {
        0 => {
            let name = *g.pick(&["median", "middle_value", "med", "central_value"]);
            let body = if bug == 0 {
                "    n = len(values)\n    middle = n // 2\n    if n % 2:\n        return values[middle]\n    return (values[middle - 1] + values[middle]) / 2\n"
            } else {
                "    ordered = sorted(values)\n    return ordered[len(ordered) // 2]\n"
            };
            let example = ints(g, 5);
            let source = format!(
                "def {name}(values):\n    \"\"\"The median of a non-empty list of numbers: the middle value once sorted,\n    or the mean of the two middle values when the count is even.\n\n    Example: {name}({example:?}) == {}\n    \"\"\"\n{body}",
                fmt(median(&example))
            );
            let calls: Vec<Vec<i64>> = (0..12).map(|i| ints(g, 2 + i % 7)).collect();
            let expected = calls.iter().map(|c| json!(median(c))).collect();
            (
                name,
                source,
                calls.into_iter().map(|c| json!([c])).collect(),
                expected,
            )
        }
        1 => {
            let name = *g.pick(&["moving_average", "rolling_mean", "window_means", "smooth"]);
            let body = if bug == 0 {
                "    return [sum(values[i : i + window]) / window for i in range(len(values) - window)]\n"
            } else {
                "    return [sum(values[i : i + window]) / len(values) for i in range(len(values) - window + 1)]\n"
            };
            let source = format!(
                "def {name}(values, window):\n    \"\"\"The mean of every run of `window` consecutive values, in order: a list of\n    len(values) - window + 1 numbers (1 <= window <= len(values)).\n    \"\"\"\n{body}"
            );
            let mut calls = Vec::new();
            let mut expected = Vec::new();
            for i in 0..12 {
                let values = ints(g, 3 + i % 8);
                let window = g.int(1, values.len() as i64) as usize;
                let means: Vec<f64> = values
                    .windows(window)
                    .map(|w| w.iter().sum::<i64>() as f64 / window as f64)
                    .collect();
                calls.push(json!([values, window]));
                expected.push(json!(means));
            }
            (name, source, calls, expected)
        }
        2 => {
            let name = *g.pick(&["rescale", "min_max_scale", "normalise", "to_unit_range"]);
            let body = if bug == 0 {
                "    low, high = min(values), max(values)\n    return [(v - low) / high for v in values]\n"
            } else {
                "    low, high = min(values), max(values)\n    return [(v - low) / (high - low) for v in values[1:]]\n"
            };
            let source = format!(
                "def {name}(values):\n    \"\"\"Rescales a list of numbers (not all equal) linearly so that the smallest\n    becomes 0.0 and the largest 1.0; same length and order as the input.\n    \"\"\"\n{body}"
            );
            let mut calls = Vec::new();
            let mut expected = Vec::new();
            for i in 0..12 {
                let mut values = ints(g, 2 + i % 8);
                if values.iter().all(|v| *v == values[0]) {
                    values[0] += 1;
                }
                let (low, high) = (*values.iter().min().unwrap(), *values.iter().max().unwrap());
                let scaled: Vec<f64> = values
                    .iter()
                    .map(|v| (v - low) as f64 / (high - low) as f64)
                    .collect();
                calls.push(json!([values]));
                expected.push(json!(scaled));
            }
            (name, source, calls, expected)
        }
        _ => {
            let name = *g.pick(&["word_counts", "count_words", "tally_words", "frequencies"]);
            let body = if bug == 0 {
                "    counts = {}\n    for word in text.split():\n        counts[word] = counts.get(word, 0) + 1\n    return counts\n"
            } else {
                "    counts = {}\n    for word in text.lower().split(\" \"):\n        counts[word] = counts.get(word, 0) + 1\n    return counts\n"
            };
            let source = format!(
                "def {name}(text):\n    \"\"\"How often each word occurs in `text`: a dict from the lowercased word to its\n    count. Words are separated by any whitespace (spaces, tabs, newlines, several in a row).\n    \"\"\"\n{body}"
            );
            let mut calls = Vec::new();
            let mut expected = Vec::new();
            for _ in 0..12 {
                let mut text = String::new();
                let mut counts = serde_json::Map::new();
                for i in 0..g.int(3, 12) {
                    let word = g.word();
                    let spelled = if g.chance(0.3) {
                        word.to_uppercase()
                    } else {
                        word.to_owned()
                    };
                    if i > 0 {
                        let gap = *g.pick(&[" ", "  ", "\t", "\n", " \n "]);
                        text.push_str(gap);
                    }
                    text.push_str(&spelled);
                    let count = counts.get(word).and_then(Value::as_i64).unwrap_or(0);
                    counts.insert(word.to_owned(), json!(count + 1));
                }
                calls.push(json!([text]));
                expected.push(Value::Object(counts));
            }
            (name, source, calls, expected)
        }
    };
    let header = format!(
        "\"\"\"Small helpers for the team's scripts.\"\"\"\n\n# build {}\n\n\n",
        g.int(1000, 999_999)
    );
    Instance::new(
        format!(
            "The module {module} in your home directory defines `{name}`, which has a bug: it \
             does not do what its docstring says. Fix the function in {module} (keep its name \
             and parameters) so that it does; hidden tests will call it on other inputs. Then \
             call final_answer with \"done\"."
        ),
        Grader::Check {
            code: function_check(module, name, &calls, &expected, 1e-9),
        },
    )
    .file(module, format!("{header}{source}").into_bytes())
}

fn ints(g: &mut Gen, len: usize) -> Vec<i64> {
    (0..len).map(|_| g.int(-50, 99)).collect()
}

fn median(values: &[i64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2] as f64
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) as f64 / 2.0
    }
}

fn fmt(x: f64) -> String {
    if x.fract() == 0.0 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}
