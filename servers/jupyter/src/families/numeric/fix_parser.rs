//! `fix-parser`: a module of parsing functions (durations, money amounts, dates, CSV lines,
//! key=value settings, 12-hour clock times), each with a bug; fix them until hidden tests pass.
//!
//! Each parser comes with one of three bugs, under a random name. Levels change the work: an
//! easy module holds one parser, a medium one two, a hard one three, each with its own bug.
//! The hidden tests always include inputs that expose each bug, and run the agent's versions
//! in a child process ([`crate::families::functions_check`]).

use serde_json::{Value, json};

use crate::families::functions_check;
use crate::families::money::thousands;
use crate::families::{Family, FamilySplit, Gen, Instance};
use crate::tasks::{Grader, TaskKind};

pub(super) const FAMILY: Family = Family {
    name: "fix-parser",
    kind: TaskKind::Debugging,
    split: FamilySplit::TrainAndTest,
    levelled: true,
    about: "debugging: fix a module's parsing functions (one to three) until their hidden tests pass",
    generate,
};

const MODULES: &[&str] = &["parsing.py", "parsers.py", "textutil.py", "ingest.py"];

/// A parser: its name, its source (docstring and buggy body), and the hidden calls with
/// their expected results.
struct Parser {
    name: &'static str,
    source: String,
    calls: Vec<Value>,
    expected: Vec<Value>,
}

/// The parsers of the pool, each drawn with the bug it is given (one of three).
const PARSERS: [fn(&mut Gen, usize) -> Parser; 6] =
    [duration, money, date, fields, key_values, clock_minutes];

fn generate(g: &mut Gen) -> Instance {
    let module = *g.pick(MODULES);
    // The level decides how many parsers the module holds, each with its own bug.
    let count = g.level().pick(1, 2, 3);
    let picked = g.sample(&(0..PARSERS.len()).collect::<Vec<_>>(), count);
    let parsers: Vec<Parser> = picked
        .iter()
        .map(|&i| {
            let bug = g.index(3);
            PARSERS[i](g, bug)
        })
        .collect();
    let header = format!(
        "\"\"\"Parsers for the input files of the team's reports.\"\"\"\n\n# revision {}\n\n",
        g.int(100, 99_999)
    );
    let sources: Vec<&str> = parsers.iter().map(|p| p.source.as_str()).collect();
    let calls: Vec<(&str, Value, Value)> = parsers
        .iter()
        .flat_map(|p| {
            p.calls
                .iter()
                .zip(&p.expected)
                .map(|(args, want)| (p.name, args.clone(), want.clone()))
        })
        .collect();
    let names: Vec<&str> = parsers.iter().map(|p| p.name).collect();
    let prompt = super::debug_prompt(g, module, &names, "parser");
    Instance::new(
        prompt,
        Grader::Check {
            code: functions_check(module, &calls, 1e-9),
        },
    )
    .file(
        module,
        format!("{header}{}", sources.join("\n\n")).into_bytes(),
    )
}

const UNITS: [(char, i64); 4] = [('d', 86_400), ('h', 3_600), ('m', 60), ('s', 1)];

fn duration(g: &mut Gen, bug: usize) -> Parser {
    let name = *g.pick(&[
        "parse_duration",
        "duration_seconds",
        "to_seconds",
        "seconds_in",
    ]);
    let mut calls = Vec::new();
    let mut expected = Vec::new();
    for i in 0..12 {
        // The first call uses every unit with two-digit numbers, so every bug shows.
        let mut units = if i == 0 {
            UNITS.to_vec()
        } else {
            g.subset(&UNITS, 1, 4)
        };
        if i > 0 && g.chance(0.5) {
            units.sort_by_key(|u| -u.1);
        }
        let mut parts = Vec::new();
        let mut total = 0;
        for (unit, seconds) in units {
            let amount = if i == 0 { g.int(10, 99) } else { g.int(0, 120) };
            parts.push(format!("{amount}{unit}"));
            total += amount * seconds;
        }
        calls.push(json!([parts.join(" ")]));
        expected.push(json!(total));
    }
    let body = match bug {
        0 => {
            "    total = 0\n    for part in text.split():\n        total += int(part[0]) * UNITS[part[-1]]\n    return total\n"
        }
        1 => {
            "    total = 0\n    for part in text.split():\n        unit = part[-1]\n        total += int(part[:-1]) * (UNITS[unit] if unit != \"h\" else 360)\n    return total\n"
        }
        _ => {
            "    total = 0\n    for part in text.split()[:3]:\n        total += int(part[:-1]) * UNITS[part[-1]]\n    return total\n"
        }
    };
    let (h, m) = (g.int(1, 9), g.int(1, 59));
    let source = format!(
        "UNITS = {{\"d\": 86400, \"h\": 3600, \"m\": 60, \"s\": 1}}\n\n\ndef {name}(text):\n    \"\"\"The total number of seconds in a duration such as \"{h}h {m}m\" or \"2d 4h 5m 30s\".\n\n    The duration is one or more parts separated by spaces; each part is a whole number\n    followed by a unit: d (days), h (hours), m (minutes) or s (seconds). Each unit appears\n    at most once, in any order. Example: {name}(\"{h}h {m}m\") == {}\n    \"\"\"\n{body}",
        h * 3600 + m * 60
    );
    Parser {
        name,
        source,
        calls,
        expected,
    }
}

fn money(g: &mut Gen, bug: usize) -> Parser {
    let name = *g.pick(&[
        "parse_money",
        "to_cents",
        "amount_in_cents",
        "money_to_cents",
    ]);
    let mut calls = Vec::new();
    let mut expected = Vec::new();
    // Amounts whose float value times 100 truncates below the exact cents (like 4.35).
    let truncated = loop {
        let cents = g.int(1, 99_999);
        let text = format!("{}.{:02}", cents / 100, cents % 100);
        let float = text.parse::<f64>().unwrap_or(0.0) * 100.0;
        if (float.trunc() as i64) != cents {
            break cents;
        }
    };
    for i in 0..12 {
        let (cents, negative) = match i {
            0 => (truncated, false),
            1 => (g.int(100_000, 99_999_999), false),
            2 => (g.int(1, 99_999), true),
            _ => (g.int(0, 9_999_999), g.chance(0.3)),
        };
        let dollars = cents / 100;
        let whole_only = i > 2 && cents % 100 == 0 && g.chance(0.5);
        let mut text = String::new();
        if negative {
            text.push('-');
        }
        text.push('$');
        text.push_str(&thousands(dollars as f64, 0));
        if !whole_only {
            text.push_str(&format!(".{:02}", cents % 100));
        }
        calls.push(json!([text]));
        expected.push(json!(if negative { -cents } else { cents }));
    }
    let body = match bug {
        0 => "    return int(float(text.replace(\"$\", \"\").replace(\",\", \"\")) * 100)\n",
        1 => {
            "    digits = text.replace(\"-\", \"\").replace(\"$\", \"\").replace(\",\", \"\")\n    dollars, _, cents = digits.partition(\".\")\n    return int(dollars) * 100 + int(cents or 0)\n"
        }
        _ => {
            "    negative = text.startswith(\"-\")\n    dollars, _, cents = text.lstrip(\"-\").lstrip(\"$\").partition(\".\")\n    value = int(dollars) * 100 + int(cents or 0)\n    return -value if negative else value\n"
        }
    };
    let example = g.int(1000, 999_999);
    let source = format!(
        "def {name}(text):\n    \"\"\"The amount of a money string, in cents, as an int.\n\n    The string is an optional leading '-', a '$', then the dollars with ',' between\n    groups of three digits, then optionally '.' and exactly two digits of cents.\n    Examples: {name}(\"${}.{:02}\") == {example}, {name}(\"-$0.75\") == -75, {name}(\"$12\") == 1200\n    \"\"\"\n{body}",
        thousands((example / 100) as f64, 0),
        example % 100
    );
    Parser {
        name,
        source,
        calls,
        expected,
    }
}

fn date(g: &mut Gen, bug: usize) -> Parser {
    let name = *g.pick(&["parse_date", "to_iso_date", "normalise_date", "iso_date"]);
    let mut calls = Vec::new();
    let mut expected = Vec::new();
    for i in 0..12 {
        let year = g.int(1950, 2039);
        let (day, month) = match i {
            // One-digit day and month, different: swapped or unpadded output shows.
            0 => (g.int(1, 9), g.int(1, 9)),
            1 => (g.int(13, 28), g.int(10, 12)),
            _ => (g.int(1, 28), g.int(1, 12)),
        };
        let month = if i == 0 && month == day {
            day % 9 + 1
        } else {
            month
        };
        let pad = |v: i64, g: &mut Gen| {
            if v < 10 && g.chance(0.5) {
                format!("{v:02}")
            } else {
                v.to_string()
            }
        };
        let text = if i == 0 {
            format!("{day}/{month}/{year}")
        } else {
            format!("{}/{}/{year}", pad(day, g), pad(month, g))
        };
        calls.push(json!([text]));
        expected.push(json!(format!("{year:04}-{month:02}-{day:02}")));
    }
    let body = match bug {
        0 => {
            "    day, month, year = (int(part) for part in text.strip().split(\"/\"))\n    return f\"{year:04d}-{day:02d}-{month:02d}\"\n"
        }
        1 => {
            "    day, month, year = (int(part) for part in text.strip().split(\"/\"))\n    return f\"{year}-{month}-{day}\"\n"
        }
        _ => {
            "    text = text.strip()\n    day, month, year = int(text[0:2]), int(text[3:5]), int(text[6:10])\n    return f\"{year:04d}-{month:02d}-{day:02d}\"\n"
        }
    };
    let (day, month, year) = (g.int(13, 28), g.int(1, 9), g.int(1990, 2030));
    let source = format!(
        "def {name}(text):\n    \"\"\"Converts a date written day/month/year to ISO form YYYY-MM-DD.\n\n    Day and month have one or two digits, the year four: {name}(\"{day}/{month}/{year}\")\n    == \"{year}-{month:02}-{day}\" (day {day} of month {month}), and \"07/03/2024\" or \"7/3/2024\" give\n    \"2024-03-07\".\n    \"\"\"\n{body}"
    );
    Parser {
        name,
        source,
        calls,
        expected,
    }
}

fn fields(g: &mut Gen, bug: usize) -> Parser {
    let name = *g.pick(&[
        "split_fields",
        "parse_csv_line",
        "csv_fields",
        "split_record",
    ]);
    let mut calls = Vec::new();
    let mut expected = Vec::new();
    for i in 0..12 {
        let count = g.int(1, 6) as usize;
        let mut values: Vec<String> = (0..count)
            .map(|_| match g.index(6) {
                0 => String::new(),
                1 => format!("{}, {}", g.word(), g.word()),
                2 => format!("{} \"{}\"", g.word(), g.word()),
                3 => g.int(-999, 9999).to_string(),
                _ => g.word().to_owned(),
            })
            .collect();
        // The first call holds a quoted comma and a doubled quote, so every bug shows.
        if i == 0 {
            values.push(format!("{}, {}", g.word(), g.word()));
            values.push(format!("say \"{}\"", g.word()));
            values.push(g.word().to_owned());
        }
        let line: Vec<String> = values
            .iter()
            .map(|v| {
                if v.contains([',', '"']) || g.chance(0.15) {
                    format!("\"{}\"", v.replace('"', "\"\""))
                } else {
                    v.clone()
                }
            })
            .collect();
        calls.push(json!([line.join(",")]));
        expected.push(json!(values));
    }
    let body = match bug {
        0 => "    return line.split(\",\")\n".to_owned(),
        1 => body_of_fields(false, true),
        _ => body_of_fields(true, false),
    };
    let source = format!(
        "def {name}(line):\n    \"\"\"Splits one line of CSV into the list of its fields (strings).\n\n    Fields are separated by commas. A field may be enclosed in double quotes; inside\n    them a comma is part of the field and a doubled quote \"\" stands for one \". The\n    enclosing quotes are not part of the field. An empty line is one empty field.\n    \"\"\"\n{body}"
    );
    Parser {
        name,
        source,
        calls,
        expected,
    }
}

/// A CSV field splitter; `doubled` says whether it understands `""`, `last` whether it keeps
/// the last field (the correct one has both).
fn body_of_fields(doubled: bool, last: bool) -> String {
    let quote = if doubled {
        "            if line[i + 1 : i + 2] == '\"':\n                field += '\"'\n                i += 1\n            else:\n                quoted = False\n"
    } else {
        "            quoted = False\n"
    };
    let end = if last {
        "    fields.append(field)\n    return fields\n"
    } else {
        "    return fields\n"
    };
    format!(
        "    fields, field, quoted, i = [], \"\", False, 0\n    while i < len(line):\n        ch = line[i]\n        if quoted and ch == '\"':\n{quote}        elif quoted:\n            field += ch\n        elif ch == '\"':\n            quoted = True\n        elif ch == \",\":\n            fields.append(field)\n            field = \"\"\n        else:\n            field += ch\n        i += 1\n{end}"
    )
}

fn key_values(g: &mut Gen, bug: usize) -> Parser {
    let name = *g.pick(&[
        "parse_settings",
        "key_values",
        "parse_pairs",
        "settings_dict",
    ]);
    let mut calls = Vec::new();
    let mut expected = Vec::new();
    for i in 0..12 {
        let mut pairs = serde_json::Map::new();
        let mut parts = Vec::new();
        for k in 0..g.int(1, 5) {
            let key = format!("{}{k}", g.word());
            // The first call's values hold an '=', its parts spaces, and it ends in ';'.
            let value = if i == 0 && k == 0 {
                format!("{}={}", g.word(), g.int(1, 99))
            } else {
                match g.index(3) {
                    0 => g.int(-99, 9999).to_string(),
                    1 => g.word().to_owned(),
                    _ => format!("{} {}", g.word(), g.word()),
                }
            };
            let spaced = i == 0 || g.chance(0.4);
            parts.push(if spaced {
                format!(" {key} = {value} ")
            } else {
                format!("{key}={value}")
            });
            pairs.insert(key, json!(value));
        }
        let mut text = parts.join(";");
        if i == 0 || g.chance(0.3) {
            text.push(';');
        }
        calls.push(json!([text]));
        expected.push(Value::Object(pairs));
    }
    let body = match bug {
        0 => {
            "    pairs = {}\n    for part in text.split(\";\"):\n        if part.strip():\n            key, value = part.split(\"=\")\n            pairs[key.strip()] = value.strip()\n    return pairs\n"
        }
        1 => {
            "    pairs = {}\n    for part in text.split(\";\"):\n        if part.strip():\n            key, _, value = part.partition(\"=\")\n            pairs[key] = value\n    return pairs\n"
        }
        _ => {
            "    pairs = {}\n    for part in text.split(\";\"):\n        key, _, value = part.partition(\"=\")\n        pairs[key.strip()] = value.strip()\n    return pairs\n"
        }
    };
    let (key, value) = (g.word(), g.int(1, 500));
    let source = format!(
        "def {name}(text):\n    \"\"\"The settings in a line such as \"{key}={value}; mode = fast\", as a dict of strings.\n\n    Settings are separated by ';' (a trailing ';' or an empty setting adds nothing). Each\n    is a key, '=', and a value; the value is everything after the first '=' and may hold\n    '=' itself. Spaces around keys and values are not part of them.\n    Example: {name}(\"{key}={value}; mode = fast\") == {{\"{key}\": \"{value}\", \"mode\": \"fast\"}}\n    \"\"\"\n{body}"
    );
    Parser {
        name,
        source,
        calls,
        expected,
    }
}

fn clock_minutes(g: &mut Gen, bug: usize) -> Parser {
    let name = *g.pick(&[
        "minutes_since_midnight",
        "parse_clock",
        "clock_to_minutes",
        "time_of_day",
    ]);
    let mut calls = Vec::new();
    let mut expected = Vec::new();
    for i in 0..12 {
        // The first calls: 12 am, 12 pm, a one-digit hour, capitals.
        let hour = match i {
            0 | 1 => 12,
            2 => g.int(1, 9),
            _ => g.int(1, 12),
        };
        let pm = match i {
            0 => false,
            1 | 3 => true,
            _ => g.chance(0.5),
        };
        let minute = g.int(0, 59);
        let half = if pm { "pm" } else { "am" };
        let half = if i == 3 || g.chance(0.3) {
            half.to_uppercase()
        } else {
            half.to_owned()
        };
        calls.push(json!([format!("{hour}:{minute:02} {half}")]));
        expected.push(json!((hour % 12 + if pm { 12 } else { 0 }) * 60 + minute));
    }
    let body = match bug {
        0 => {
            "    clock, half = text.strip().lower().split()\n    hours, minutes = (int(part) for part in clock.split(\":\"))\n    if half == \"pm\":\n        hours += 12\n    return hours * 60 + minutes\n"
        }
        1 => {
            "    clock, half = text.strip().split()\n    hours, minutes = (int(part) for part in clock.split(\":\"))\n    hours %= 12\n    if half == \"pm\":\n        hours += 12\n    return hours * 60 + minutes\n"
        }
        _ => {
            "    text = text.strip().lower()\n    hours, minutes, half = int(text[0:2]), int(text[3:5]), text[-2:]\n    hours %= 12\n    if half == \"pm\":\n        hours += 12\n    return hours * 60 + minutes\n"
        }
    };
    let (hour, minute) = (g.int(1, 11), g.int(10, 59));
    let source = format!(
        "def {name}(text):\n    \"\"\"The minutes since midnight of a 12-hour clock time such as \"{hour}:{minute} pm\".\n\n    The hour has one or two digits (1 to 12), the minutes two, then a space and am or pm\n    in either case. 12:xx am is just after midnight, 12:xx pm just after noon.\n    Example: {name}(\"{hour}:{minute} pm\") == {}\n    \"\"\"\n{body}",
        (hour + 12) * 60 + minute
    );
    Parser {
        name,
        source,
        calls,
        expected,
    }
}
