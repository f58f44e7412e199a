//! `fix-function`: a module of everyday list and text helpers, some with bugs; fix them until
//! hidden tests pass.
//!
//! Each function comes from a pool of sixteen (median, moving average, variance, run lengths,
//! chunking, de-duplication, …), under a random name and with random variable names, and
//! gets bugs drawn from its own list of mutations of its correct body (an off-by-one range, a
//! wrong operator or index, a missing sort, integer division, a wrong initial value), several
//! combined. Levels change the work: an easy module holds one function with one bug, a
//! medium one two functions with three bugs between them, a hard one three functions with
//! five. The hidden check calls every function of the module on inputs it has never seen,
//! which always include the cases that expose each of its bugs
//! ([`crate::families::functions_check`]).

use serde_json::{Value, json};

use crate::families::functions_check;
use crate::families::{Family, FamilySplit, Gen, Instance, Level};
use crate::tasks::{Grader, TaskKind};

pub(super) const FAMILY: Family = Family {
    name: "fix-function",
    kind: TaskKind::Debugging,
    split: FamilySplit::TrainAndTest,
    levelled: true,
    about: "debugging: fix a module's functions (one to three, with one to five bugs) until their hidden tests pass",
    generate,
};

const MODULES: &[&str] = &[
    "stats.py",
    "helpers.py",
    "numbers_util.py",
    "toolkit.py",
    "listtools.py",
    "series.py",
];

/// Names the list parameter takes (`@L` in a body).
const LIST_NAMES: &[&str] = &["values", "numbers", "items", "xs", "data", "readings"];
/// Names a text parameter takes (`@L` in a body that reads text).
const TEXT_NAMES: &[&str] = &["text", "document", "passage", "content"];
/// Names a loop's element takes (`@e` in a body).
const ELEMENT_NAMES: &[&str] = &["v", "x", "item", "value", "entry"];

/// Hidden calls per function.
const CALLS: usize = 12;

/// One function of the pool: its correct body and the bugs that can replace its lines.
///
/// Bodies and docstrings write `@L` for the list parameter, `@e` for a loop's element and
/// `@f` for the function's name.
struct Spec {
    /// Names the function may take.
    names: [&'static str; 4],
    /// Names its first parameter may take.
    first: &'static [&'static str],
    /// The parameters after the list.
    rest: &'static str,
    /// The docstring (its lines, unindented).
    doc: &'static str,
    /// The correct body, one line per element, indented relative to the body.
    lines: &'static [&'static str],
    /// Bugs: a line's index and the buggy line that replaces it.
    bugs: &'static [(usize, &'static str)],
    /// The hidden calls, each with the result the docstring asks for; the first ones are the
    /// cases that expose each bug.
    calls: fn(&mut Gen) -> Vec<(Value, Value)>,
}

const SPECS: &[Spec] = &[
    Spec {
        names: ["median", "middle_value", "central_value", "med"],
        first: LIST_NAMES,
        rest: "",
        doc: "The median of a non-empty list of numbers: the middle value once sorted,\nor the mean of the two middle values when the count is even.",
        lines: &[
            "ordered = sorted(@L)",
            "n = len(ordered)",
            "middle = n // 2",
            "if n % 2:",
            "    return ordered[middle]",
            "return (ordered[middle - 1] + ordered[middle]) / 2",
        ],
        bugs: &[
            (0, "ordered = list(@L)"),
            (2, "middle = (n + 1) // 2"),
            (3, "if n % 2 == 0:"),
            (5, "return (ordered[middle - 1] + ordered[middle]) // 2"),
            (5, "return ordered[middle]"),
        ],
        calls: median_calls,
    },
    Spec {
        names: ["moving_average", "rolling_mean", "window_means", "smooth"],
        first: LIST_NAMES,
        rest: ", window",
        doc: "The mean of every run of `window` consecutive values, in order: a list of\nlen(@L) - window + 1 numbers (1 <= window <= len(@L)).",
        lines: &[
            "means = []",
            "for start in range(len(@L) - window + 1):",
            "    chunk = @L[start : start + window]",
            "    means.append(sum(chunk) / window)",
            "return means",
        ],
        bugs: &[
            (1, "for start in range(len(@L) - window):"),
            (2, "    chunk = @L[start : start + window - 1]"),
            (3, "    means.append(sum(chunk) / len(@L))"),
            (3, "    means.append(sum(chunk) // window)"),
        ],
        calls: moving_average_calls,
    },
    Spec {
        names: ["rescale", "min_max_scale", "normalise", "to_unit_range"],
        first: LIST_NAMES,
        rest: "",
        doc: "Rescales a list of numbers (not all equal) linearly so that the smallest\nbecomes 0.0 and the largest 1.0; same length and order as the input.",
        lines: &[
            "low, high = min(@L), max(@L)",
            "span = high - low",
            "return [(@e - low) / span for @e in @L]",
        ],
        bugs: &[
            (0, "low, high = @L[0], max(@L)"),
            (1, "span = high"),
            (1, "span = high - low + 1"),
            (2, "return [(@e - low) / span for @e in @L[1:]]"),
            (2, "return [(@e - low) // span for @e in @L]"),
        ],
        calls: rescale_calls,
    },
    Spec {
        names: ["word_counts", "count_words", "tally_words", "frequencies"],
        first: TEXT_NAMES,
        rest: "",
        doc: "How often each word occurs in `@L`: a dict from the lowercased word to\nits count. Words are separated by any whitespace (spaces, tabs, newlines, several in\na row).",
        lines: &[
            "counts = {}",
            "for word in @L.split():",
            "    word = word.lower()",
            "    counts[word] = counts.get(word, 0) + 1",
            "return counts",
        ],
        bugs: &[
            (1, "for word in @L.split(\" \"):"),
            (2, "    word = word.strip()"),
            (3, "    counts[word] = 1"),
        ],
        calls: word_count_calls,
    },
    Spec {
        names: [
            "running_total",
            "cumulative_sums",
            "prefix_sums",
            "accumulate",
        ],
        first: LIST_NAMES,
        rest: "",
        doc: "The running totals of a list of numbers: item i of the result is the sum of\nthe first i + 1 values (same length as the input).",
        lines: &[
            "totals = []",
            "total = 0",
            "for @e in @L:",
            "    total += @e",
            "    totals.append(total)",
            "return totals",
        ],
        bugs: &[
            (1, "total = @L[0]"),
            (2, "for @e in @L[1:]:"),
            (3, "    total += abs(@e)"),
            (3, "    total = @e"),
        ],
        calls: running_total_calls,
    },
    Spec {
        names: ["clamp_all", "clip_values", "bound_values", "limit_range"],
        first: LIST_NAMES,
        rest: ", low, high",
        doc: "Each value of the list limited to the range [low, high] (low < high): values\nbelow low become low, values above high become high, the others stay; same\nlength and order as the input.",
        lines: &[
            "clamped = []",
            "for @e in @L:",
            "    if @e < low:",
            "        clamped.append(low)",
            "    elif @e > high:",
            "        clamped.append(high)",
            "    else:",
            "        clamped.append(@e)",
            "return clamped",
        ],
        bugs: &[
            (2, "    if @e < high:"),
            (3, "        clamped.append(high)"),
            (4, "    elif @e > low:"),
            (5, "        clamped.append(low)"),
        ],
        calls: clamp_calls,
    },
    Spec {
        names: [
            "second_largest",
            "runner_up",
            "second_highest",
            "next_to_max",
        ],
        first: LIST_NAMES,
        rest: "",
        doc: "The second largest distinct value of a list holding at least two different\nvalues: the largest value that is smaller than the maximum.",
        lines: &["distinct = sorted(set(@L))", "return distinct[-2]"],
        bugs: &[
            (0, "distinct = sorted(@L)"),
            (0, "distinct = sorted(set(@L), reverse=True)"),
            (1, "return distinct[-1]"),
        ],
        calls: second_largest_calls,
    },
    Spec {
        names: ["most_common", "mode", "commonest", "most_frequent"],
        first: LIST_NAMES,
        rest: "",
        doc: "The value that occurs most often in a non-empty list; when several values\noccur equally often, the smallest of them.",
        lines: &[
            "counts = {}",
            "for @e in @L:",
            "    counts[@e] = counts.get(@e, 0) + 1",
            "best = max(counts.values())",
            "return min(@e for @e in counts if counts[@e] == best)",
        ],
        bugs: &[
            (2, "    counts[@e] = 1"),
            (3, "best = min(counts.values())"),
            (4, "return max(@e for @e in counts if counts[@e] == best)"),
            (4, "return min(counts)"),
        ],
        calls: most_common_calls,
    },
    Spec {
        names: ["variance", "population_variance", "spread", "var"],
        first: LIST_NAMES,
        rest: "",
        doc: "The population variance of a list of at least two numbers: the mean of the\nsquared differences from the mean (dividing by the count, not the count - 1).",
        lines: &[
            "n = len(@L)",
            "mean = sum(@L) / n",
            "squares = [(@e - mean) ** 2 for @e in @L]",
            "return sum(squares) / n",
        ],
        bugs: &[
            (0, "n = len(@L) - 1"),
            (1, "mean = sum(@L) // n"),
            (2, "squares = [abs(@e - mean) for @e in @L]"),
            (3, "return sum(squares) / (n - 1)"),
        ],
        calls: variance_calls,
    },
    Spec {
        names: ["chunked", "batches", "split_into_groups", "pieces"],
        first: LIST_NAMES,
        rest: ", size",
        doc: "The list cut into consecutive pieces of `size` items (size >= 1), in order;\nthe last piece holds what is left and may be shorter. An empty list gives [].",
        lines: &[
            "parts = []",
            "for start in range(0, len(@L), size):",
            "    parts.append(@L[start : start + size])",
            "return parts",
        ],
        bugs: &[
            (1, "for start in range(0, len(@L) - size, size):"),
            (1, "for start in range(size, len(@L), size):"),
            (2, "    parts.append(@L[start : start + size - 1])"),
            (2, "    parts.append(@L[start + 1 : start + size])"),
        ],
        calls: chunk_calls,
    },
    Spec {
        names: [
            "unique_in_order",
            "dedupe",
            "distinct_values",
            "first_occurrences",
        ],
        first: LIST_NAMES,
        rest: "",
        doc: "The distinct values of the list, each once, in the order of their first\noccurrence.",
        lines: &[
            "seen = set()",
            "result = []",
            "for @e in @L:",
            "    if @e not in seen:",
            "        seen.add(@e)",
            "        result.append(@e)",
            "return result",
        ],
        bugs: &[
            (3, "    if @e not in result[-1:]:"),
            (4, "        pass"),
            (6, "return sorted(result)"),
        ],
        calls: unique_calls,
    },
    Spec {
        names: [
            "count_above",
            "how_many_over",
            "exceedances",
            "count_greater",
        ],
        first: LIST_NAMES,
        rest: ", threshold",
        doc: "How many values of the list are strictly greater than `threshold`.",
        lines: &[
            "count = 0",
            "for @e in @L:",
            "    if @e > threshold:",
            "        count += 1",
            "return count",
        ],
        bugs: &[
            (0, "count = 1"),
            (2, "    if @e >= threshold:"),
            (2, "    if abs(@e) > threshold:"),
            (3, "        count += @e"),
        ],
        calls: count_above_calls,
    },
    Spec {
        names: ["differences", "steps", "deltas", "changes"],
        first: LIST_NAMES,
        rest: "",
        doc: "The change from each value to the next: item i of the result is item i + 1\nminus item i (one item fewer than the input).",
        lines: &[
            "result = []",
            "for i in range(1, len(@L)):",
            "    result.append(@L[i] - @L[i - 1])",
            "return result",
        ],
        bugs: &[
            (1, "for i in range(1, len(@L) - 1):"),
            (1, "for i in range(len(@L)):"),
            (2, "    result.append(@L[i - 1] - @L[i])"),
            (2, "    result.append(abs(@L[i] - @L[i - 1]))"),
        ],
        calls: difference_calls,
    },
    Spec {
        names: [
            "weighted_mean",
            "weighted_average",
            "mean_by_weight",
            "wmean",
        ],
        first: LIST_NAMES,
        rest: ", weights",
        doc: "The mean of the values weighted by `weights` (positive numbers, one per value):\nthe sum of value × weight over the sum of the weights.",
        lines: &[
            "total = 0",
            "for @e, weight in zip(@L, weights):",
            "    total += @e * weight",
            "return total / sum(weights)",
        ],
        bugs: &[
            (0, "total = 1"),
            (2, "    total += @e"),
            (3, "return total / len(weights)"),
            (3, "return total // sum(weights)"),
        ],
        calls: weighted_mean_calls,
    },
    Spec {
        names: [
            "longest_run",
            "longest_streak",
            "max_run_length",
            "longest_repeat",
        ],
        first: LIST_NAMES,
        rest: "",
        doc: "The length of the longest block of consecutive equal values in a non-empty\nlist (1 when no two neighbours are equal).",
        lines: &[
            "best = 1",
            "current = 1",
            "for i in range(1, len(@L)):",
            "    if @L[i] == @L[i - 1]:",
            "        current += 1",
            "    else:",
            "        current = 1",
            "    best = max(best, current)",
            "return best",
        ],
        bugs: &[
            (2, "for i in range(1, len(@L) - 1):"),
            (6, "        current = 0"),
            (7, "    best = current"),
        ],
        calls: longest_run_calls,
    },
    Spec {
        names: ["top_k", "largest_few", "highest_values", "leaders"],
        first: LIST_NAMES,
        rest: ", k",
        doc: "The k largest values of the list (1 <= k <= len(@L)), largest first; a value\nthat occurs several times counts each time.",
        lines: &["ordered = sorted(@L, reverse=True)", "return ordered[:k]"],
        bugs: &[
            (0, "ordered = sorted(@L)"),
            (0, "ordered = sorted(set(@L), reverse=True)"),
            (1, "return ordered[: k - 1]"),
            (1, "return ordered[1 : k + 1]"),
        ],
        calls: top_k_calls,
    },
];

/// One function as the module shows it, with its hidden calls.
struct Drawn {
    name: &'static str,
    source: String,
    calls: Vec<(Value, Value)>,
}

/// Draws the function `spec` with `bugs` of its bugs (on different lines).
fn draw(g: &mut Gen, spec: &Spec, bugs: usize) -> Drawn {
    let name = *g.pick(&spec.names);
    let list = *g.pick(spec.first);
    let element = *g.pick(ELEMENT_NAMES);
    let mut order: Vec<usize> = (0..spec.bugs.len()).collect();
    g.shuffle(&mut order);
    let mut lines: Vec<&str> = spec.lines.to_vec();
    let mut changed = Vec::new();
    for i in order {
        let (line, buggy) = spec.bugs[i];
        if changed.len() < bugs && !changed.contains(&line) {
            changed.push(line);
            lines[line] = buggy;
        }
    }
    let fill = |text: &str| {
        text.replace("@L", list)
            .replace("@e", element)
            .replace("@f", name)
    };
    let doc: Vec<String> = fill(spec.doc)
        .lines()
        .map(|line| format!("    {line}"))
        .collect();
    let body: String = lines
        .iter()
        .map(|line| format!("    {}\n", fill(line)))
        .collect();
    let source = format!(
        "def {name}({list}{}):\n    \"\"\"{}\n    \"\"\"\n{body}",
        spec.rest,
        doc.join("\n").trim_start()
    );
    let mut calls = (spec.calls)(g);
    calls.truncate(CALLS);
    Drawn {
        name,
        source,
        calls,
    }
}

fn generate(g: &mut Gen) -> Instance {
    let module = *g.pick(MODULES);
    // The bugs of each function in the module: the level decides how many functions and bugs.
    let bugs: &[usize] = match g.level() {
        Level::Easy => &[1],
        Level::Medium => &[2, 1],
        Level::Hard => &[2, 2, 1],
    };
    let specs = g.sample(&(0..SPECS.len()).collect::<Vec<_>>(), bugs.len());
    let mut drawn: Vec<Drawn> = specs
        .iter()
        .zip(bugs)
        .map(|(&spec, &count)| draw(g, &SPECS[spec], count))
        .collect();
    g.shuffle(&mut drawn);
    let header = format!(
        "\"\"\"Small helpers for the team's scripts.\"\"\"\n\n# build {}\n\n\n",
        g.int(1000, 999_999)
    );
    let sources: Vec<&str> = drawn.iter().map(|d| d.source.as_str()).collect();
    let text = format!("{header}{}", sources.join("\n\n"));
    let calls: Vec<(&str, Value, Value)> = drawn
        .iter()
        .flat_map(|d| {
            d.calls
                .iter()
                .map(|(args, want)| (d.name, args.clone(), want.clone()))
        })
        .collect();
    let names: Vec<&str> = drawn.iter().map(|d| d.name).collect();
    let prompt = super::debug_prompt(g, module, &names, "function");
    Instance::new(
        prompt,
        Grader::Check {
            code: functions_check(module, &calls, 1e-9),
        },
    )
    .file(module, text.into_bytes())
}

/// `len` integers in `low..=high`.
fn ints(g: &mut Gen, len: usize, low: i64, high: i64) -> Vec<i64> {
    (0..len).map(|_| g.int(low, high)).collect()
}

/// Draws from `draw` until `keep` accepts (each draw is accepted with a fair chance).
fn until(
    g: &mut Gen,
    draw: impl Fn(&mut Gen) -> Vec<i64>,
    keep: impl Fn(&[i64]) -> bool,
) -> Vec<i64> {
    loop {
        let values = draw(g);
        if keep(&values) {
            return values;
        }
    }
}

fn sorted(values: &[i64]) -> Vec<i64> {
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    sorted
}

fn median(values: &[i64]) -> f64 {
    let sorted = sorted(values);
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2] as f64
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) as f64 / 2.0
    }
}

fn median_calls(g: &mut Gen) -> Vec<(Value, Value)> {
    // An odd unsorted list of distinct values, and an even one whose middle pair has an
    // odd sum (its median is not a whole number).
    let odd = until(
        g,
        |g| ints(g, 5, -50, 99),
        |v| sorted(v) != v && sorted(v).windows(2).all(|w| w[0] < w[1]),
    );
    let even = until(
        g,
        |g| ints(g, 6, -50, 99),
        |v| {
            let s = sorted(v);
            sorted(v) != v && (s[2] + s[3]) % 2 != 0 && s[1] < s[2] && s[3] < s[4]
        },
    );
    let mut lists = vec![odd, even];
    for i in 0..CALLS - 2 {
        lists.push(ints(g, 2 + i % 7, -50, 99));
    }
    lists
        .into_iter()
        .map(|v| (json!([v]), json!(median(&v))))
        .collect()
}

fn moving_average_calls(g: &mut Gen) -> Vec<(Value, Value)> {
    (0..CALLS)
        .map(|i| {
            let values = ints(g, 4 + i % 8, -50, 99);
            // The first calls' windows are strictly inside the list, so every bug shows.
            let window = if i < 3 {
                g.int(2, values.len() as i64 - 1)
            } else {
                g.int(1, values.len() as i64)
            } as usize;
            let means: Vec<f64> = values
                .windows(window)
                .map(|w| w.iter().sum::<i64>() as f64 / window as f64)
                .collect();
            (json!([values, window]), json!(means))
        })
        .collect()
}

fn rescale_calls(g: &mut Gen) -> Vec<(Value, Value)> {
    (0..CALLS)
        .map(|i| {
            let values = if i < 2 {
                // The first value neither the smallest nor the largest, the smallest not 0.
                until(
                    g,
                    |g| ints(g, 6, -50, 99),
                    |v| {
                        let (low, high) = (*v.iter().min().unwrap(), *v.iter().max().unwrap());
                        v[0] != low && v[0] != high && low != 0
                    },
                )
            } else {
                until(
                    g,
                    |g| ints(g, 2 + i % 8, -50, 99),
                    |v| v.iter().any(|x| *x != v[0]),
                )
            };
            let (low, high) = (*values.iter().min().unwrap(), *values.iter().max().unwrap());
            let scaled: Vec<f64> = values
                .iter()
                .map(|v| (v - low) as f64 / (high - low) as f64)
                .collect();
            (json!([values]), json!(scaled))
        })
        .collect()
}

fn word_count_calls(g: &mut Gen) -> Vec<(Value, Value)> {
    (0..CALLS)
        .map(|i| {
            let mut text = String::new();
            let mut counts = serde_json::Map::new();
            let mut words: Vec<&str> = (0..g.int(3, 12)).map(|_| g.word()).collect();
            if i == 0 {
                // A repeated word, capitals, and runs of mixed whitespace.
                let again = words[0];
                words.push(again);
            }
            for (k, word) in words.iter().enumerate() {
                let capitals = if i == 0 { k == 0 } else { g.chance(0.3) };
                let spelled = if capitals {
                    word.to_uppercase()
                } else {
                    (*word).to_owned()
                };
                if k > 0 {
                    let gap = if i == 0 && k <= 3 {
                        ["  ", "\t", "\n"][k - 1]
                    } else {
                        *g.pick(&[" ", "  ", "\t", "\n", " \n "])
                    };
                    text.push_str(gap);
                }
                text.push_str(&spelled);
                let count = counts.get(*word).and_then(Value::as_i64).unwrap_or(0);
                counts.insert((*word).to_owned(), json!(count + 1));
            }
            (json!([text]), Value::Object(counts))
        })
        .collect()
}

fn running_total_calls(g: &mut Gen) -> Vec<(Value, Value)> {
    (0..CALLS)
        .map(|i| {
            let values = if i == 0 {
                until(
                    g,
                    |g| ints(g, 6, -50, 99),
                    |v| v[0] != 0 && v.iter().filter(|x| **x < 0).count() >= 2,
                )
            } else {
                ints(g, 1 + i % 9, -50, 99)
            };
            let totals: Vec<i64> = values
                .iter()
                .scan(0, |total, v| {
                    *total += v;
                    Some(*total)
                })
                .collect();
            (json!([values]), json!(totals))
        })
        .collect()
}

fn clamp_calls(g: &mut Gen) -> Vec<(Value, Value)> {
    (0..CALLS)
        .map(|i| {
            let low = g.int(-30, 30);
            let high = low + g.int(5, 60);
            let draw = |g: &mut Gen| ints(g, 4 + i % 7, low - 40, high + 40);
            let values = if i < 2 {
                until(g, draw, |v| {
                    v.iter().any(|x| *x < low)
                        && v.iter().any(|x| *x > high)
                        && v.iter().any(|x| *x > low && *x < high)
                })
            } else {
                draw(g)
            };
            let clamped: Vec<i64> = values.iter().map(|v| (*v).clamp(low, high)).collect();
            (json!([values, low, high]), json!(clamped))
        })
        .collect()
}

fn second_largest_calls(g: &mut Gen) -> Vec<(Value, Value)> {
    (0..CALLS)
        .map(|i| {
            let values = if i < 2 {
                // The maximum twice, and at least four distinct values.
                let mut v = until(
                    g,
                    |g| ints(g, 6, -20, 30),
                    |v| {
                        let mut d = sorted(v);
                        d.dedup();
                        d.len() >= 4
                    },
                );
                let top = *v.iter().max().unwrap();
                v.push(top);
                g.shuffle(&mut v);
                v
            } else {
                until(
                    g,
                    |g| ints(g, 2 + i % 8, -20, 30),
                    |v| v.iter().any(|x| *x != v[0]),
                )
            };
            let mut distinct = sorted(&values);
            distinct.dedup();
            (json!([values]), json!(distinct[distinct.len() - 2]))
        })
        .collect()
}

fn most_common(values: &[i64]) -> i64 {
    let count = |x: i64| values.iter().filter(|v| **v == x).count();
    let best = values.iter().map(|v| count(*v)).max().unwrap();
    *values.iter().filter(|v| count(**v) == best).min().unwrap()
}

fn most_common_calls(g: &mut Gen) -> Vec<(Value, Value)> {
    (0..CALLS)
        .map(|i| {
            let values = if i < 2 {
                // Two values tie for the most occurrences; a smaller and a larger value
                // occur once.
                let picked = g.sample(&(0..20).collect::<Vec<i64>>(), 4);
                let mut four = picked.clone();
                four.sort_unstable();
                let (least, a, b, most) = (four[0], four[1], four[2], four[3]);
                let times = g.int(2, 4) as usize;
                let mut v = vec![least, most];
                v.extend(std::iter::repeat_n(a, times));
                v.extend(std::iter::repeat_n(b, times));
                g.shuffle(&mut v);
                v
            } else {
                ints(g, 5 + i % 8, 0, 6)
            };
            (json!([values]), json!(most_common(&values)))
        })
        .collect()
}

fn variance_calls(g: &mut Gen) -> Vec<(Value, Value)> {
    (0..CALLS)
        .map(|i| {
            let values = if i == 0 {
                until(
                    g,
                    |g| ints(g, 5, -50, 99),
                    |v| v.iter().sum::<i64>() % 5 != 0,
                )
            } else {
                ints(g, 2 + i % 9, -50, 99)
            };
            let n = values.len() as f64;
            let mean = values.iter().sum::<i64>() as f64 / n;
            let var = values
                .iter()
                .map(|v| (*v as f64 - mean).powi(2))
                .sum::<f64>()
                / n;
            (json!([values]), json!(var))
        })
        .collect()
}

fn chunk_calls(g: &mut Gen) -> Vec<(Value, Value)> {
    (0..CALLS)
        .map(|i| {
            let size = g.int(2, 4) as usize;
            let len = if i < 2 {
                // Longer than two pieces, with a short last piece.
                loop {
                    let len = g.int(2 * size as i64 + 1, 12) as usize;
                    if !len.is_multiple_of(size) {
                        break len;
                    }
                }
            } else {
                g.int(0, 12) as usize
            };
            let values = ints(g, len, -50, 99);
            let pieces: Vec<Vec<i64>> = values.chunks(size).map(<[i64]>::to_vec).collect();
            (json!([values, size]), json!(pieces))
        })
        .collect()
}

fn unique(values: &[i64]) -> Vec<i64> {
    let mut seen = Vec::new();
    for v in values {
        if !seen.contains(v) {
            seen.push(*v);
        }
    }
    seen
}

fn unique_calls(g: &mut Gen) -> Vec<(Value, Value)> {
    (0..CALLS)
        .map(|i| {
            let values = if i < 2 {
                // A value repeated apart from its first occurrence; first occurrences unsorted.
                until(
                    g,
                    |g| ints(g, 8, 0, 9),
                    |v| {
                        let u = unique(v);
                        sorted(&u) != u
                            && (2..v.len()).any(|k| v[..k - 1].contains(&v[k]) && v[k - 1] != v[k])
                    },
                )
            } else {
                ints(g, 3 + i % 9, 0, 9)
            };
            (json!([values]), json!(unique(&values)))
        })
        .collect()
}

fn count_above_calls(g: &mut Gen) -> Vec<(Value, Value)> {
    (0..CALLS)
        .map(|i| {
            let threshold = g.int(1, 20);
            let values = if i < 2 {
                // The threshold itself, and a negative value beyond minus the threshold.
                let mut v = ints(g, 6, -50, 99);
                v.push(threshold);
                v.push(-threshold - g.int(1, 30));
                g.shuffle(&mut v);
                v
            } else {
                ints(g, 3 + i % 9, -50, 99)
            };
            let count = values.iter().filter(|v| **v > threshold).count();
            (json!([values, threshold]), json!(count))
        })
        .collect()
}

fn difference_calls(g: &mut Gen) -> Vec<(Value, Value)> {
    (0..CALLS)
        .map(|i| {
            let values = if i == 0 {
                until(
                    g,
                    |g| ints(g, 6, -50, 99),
                    |v| v.windows(2).any(|w| w[1] < w[0]) && v.windows(2).any(|w| w[1] > w[0]),
                )
            } else {
                ints(g, 2 + i % 9, -50, 99)
            };
            let steps: Vec<i64> = values.windows(2).map(|w| w[1] - w[0]).collect();
            (json!([values]), json!(steps))
        })
        .collect()
}

fn weighted_mean_calls(g: &mut Gen) -> Vec<(Value, Value)> {
    (0..CALLS)
        .map(|i| {
            let len = 2 + i % 7;
            let values = ints(g, len, -50, 99);
            let weights = if i == 0 {
                until(g, |g| ints(g, len, 1, 9), |w| w.iter().any(|x| *x != w[0]))
            } else {
                ints(g, len, 1, 9)
            };
            let total: i64 = values.iter().zip(&weights).map(|(v, w)| v * w).sum();
            let mean = total as f64 / weights.iter().sum::<i64>() as f64;
            (json!([values, weights]), json!(mean))
        })
        .collect()
}

fn longest_run(values: &[i64]) -> i64 {
    let (mut best, mut current) = (1, 1);
    for w in values.windows(2) {
        current = if w[1] == w[0] { current + 1 } else { 1 };
        best = best.max(current);
    }
    best
}

fn longest_run_calls(g: &mut Gen) -> Vec<(Value, Value)> {
    // Runs of at most two, as filler around the long run.
    let short = |g: &mut Gen, len: usize| until(g, |g| ints(g, len, 0, 3), |v| longest_run(v) <= 2);
    (0..CALLS)
        .map(|i| {
            let values = match i {
                // The longest run last, then the longest run first.
                0 => {
                    let mut v = short(g, 5);
                    let last = *v.last().unwrap();
                    v.extend([(last + 1) % 4; 4]);
                    v
                }
                1 => {
                    let mut v = short(g, 5);
                    let first = v[0];
                    let mut run = vec![(first + 1) % 4; 4];
                    run.append(&mut v);
                    run
                }
                _ => ints(g, 6 + i % 9, 0, 2),
            };
            (json!([values]), json!(longest_run(&values)))
        })
        .collect()
}

fn top_k_calls(g: &mut Gen) -> Vec<(Value, Value)> {
    (0..CALLS)
        .map(|i| {
            let mut values = ints(g, 5 + i % 6, -50, 99);
            if i < 2 {
                // The maximum twice.
                let top = *values.iter().max().unwrap();
                values.push(top);
                g.shuffle(&mut values);
            }
            let k = g.int(2, 4) as usize;
            let mut ordered = sorted(&values);
            ordered.reverse();
            ordered.truncate(k);
            (json!([values, k]), json!(ordered))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bug_replaces_a_line_of_its_body_with_another() {
        for spec in SPECS {
            for (line, buggy) in spec.bugs {
                assert!(*line < spec.lines.len(), "{}", spec.names[0]);
                assert_ne!(spec.lines[*line], *buggy, "{}", spec.names[0]);
            }
            let mut g = Gen::new("fix-function", 7);
            assert_eq!((spec.calls)(&mut g).len(), CALLS, "{}", spec.names[0]);
        }
    }

    #[test]
    fn drawn_functions_carry_the_bugs_asked_for() {
        let mut g = Gen::new("fix-function", 3);
        for spec in SPECS {
            let correct = draw(&mut g, spec, 0);
            let buggy = draw(&mut g, spec, 2);
            assert!(correct.source.starts_with("def "), "{}", correct.source);
            assert!(!buggy.source.contains('@'), "{}", buggy.source);
        }
    }

    #[test]
    fn reference_results_follow_the_docstrings() {
        assert_eq!(median(&[3, 1, 2]), 2.0);
        assert_eq!(median(&[4, 1, 3, 2]), 2.5);
        assert_eq!(most_common(&[5, 1, 5, 2, 2, 9]), 2);
        assert_eq!(longest_run(&[1, 1, 2, 2, 2, 1]), 3);
        assert_eq!(unique(&[3, 1, 3, 2, 1]), [3, 1, 2]);
    }
}
