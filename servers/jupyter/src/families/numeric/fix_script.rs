//! `fix-script`: a script `report.py` that reads an input file and writes a report has a bug;
//! fix it until it writes the right report for a hidden input.
//!
//! Three reports (totals per customer as CSV, a log summary as JSON, a ranking as text), each
//! with three bugs it can be given, in different lines; levels change the work: an easy
//! script has one of them, a medium one two, a hard one all three. The hidden check writes a new input into an empty temporary folder,
//! runs the agent's script there in a child process, and compares the report it writes with
//! the one computed here; the hidden input always exposes each of the template's bugs.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::families::{Family, FamilySplit, Gen, Instance};
use crate::python::hex;
use crate::tasks::{Grader, TaskKind};

pub(super) const FAMILY: Family = Family {
    name: "fix-script",
    kind: TaskKind::Debugging,
    split: FamilySplit::TrainAndTest,
    levelled: true,
    about: "debugging: fix a report script until it writes the right report for hidden input",
    generate,
};

/// How the check reads the report before comparing it.
#[derive(Clone, Copy)]
enum Form {
    /// CSV rows (blank rows dropped).
    Csv,
    /// A JSON document.
    Json,
    /// Non-blank lines, trailing whitespace dropped.
    Lines,
}

impl Form {
    fn name(self) -> &'static str {
        match self {
            Form::Csv => "csv",
            Form::Json => "json",
            Form::Lines => "lines",
        }
    }
}

/// A report template: the file names, the buggy script, a description of the input, and a
/// generator of inputs with their expected (parsed) reports.
struct Report {
    input: &'static str,
    output: &'static str,
    describe: &'static str,
    script: String,
    form: Form,
    make: fn(&mut Gen) -> (String, Value),
}

fn generate(g: &mut Gen) -> Instance {
    // Which of the script's three bugs it has: the level decides how many.
    let mut bug = [false; 3];
    for i in g.sample(&[0, 1, 2], g.level().pick(1, 2, 3)) {
        bug[i] = true;
    }
    let report = match g.index(3) {
        0 => orders(g, bug),
        1 => log(g, bug),
        _ => ranking(g, bug),
    };
    let (visible, _) = (report.make)(g);
    let (hidden, expected) = (report.make)(g);
    let Report {
        input,
        output,
        describe,
        script,
        form,
        ..
    } = report;
    let bugs = bug.iter().filter(|b| **b).count();
    let prompt = prompt(g, input, describe, output, bugs);
    Instance::new(
        prompt,
        Grader::Check {
            code: check(input, output, &hidden, &expected, form),
        },
    )
    .file("report.py", script.into_bytes())
    .file(input, visible.into_bytes())
}

/// The task's prompt, in one of many wordings (a solver reads the script's docstring).
fn prompt(g: &mut Gen, input: &str, describe: &str, output: &str, bugs: usize) -> String {
    let opening = match g.index(4) {
        0 => format!(
            "The script report.py in your home directory reads {input} ({describe}) and should \
             write {output} as its docstring describes."
        ),
        1 => format!(
            "In your home directory, report.py reads {input} ({describe}); its docstring says \
             how it should write {output}."
        ),
        2 => format!(
            "Your home directory holds report.py, a script that turns {input} ({describe}) into \
             {output} as its docstring describes."
        ),
        _ => format!(
            "There is a script report.py in your home directory: it should read {input} \
             ({describe}) and write {output} as its docstring says."
        ),
    };
    let fault = if bugs == 1 {
        *g.pick(&[
            "It has a bug.",
            "A bug makes its report wrong.",
            "Its docstring is right, but the code has a bug.",
        ])
    } else {
        *g.pick(&[
            "It has several bugs.",
            "Bugs make its report wrong.",
            "Its docstring is right, but the code has bugs.",
        ])
    };
    let fix = *g.pick(&[
        "Fix report.py so that it does what its docstring says.",
        "Repair the script so that it writes the report its docstring describes.",
        "Make report.py agree with its docstring.",
    ]);
    let hidden = g
        .pick(&[
            format!(
                "Hidden tests will run it as `python report.py` in a folder holding only report.py \
             and a different {input}, and compare the {output} it writes with the expected report."
            ),
            format!(
                "Hidden tests run `python report.py` in a folder with only the script and another \
             {input}, and compare its {output} with the right report."
            ),
        ])
        .clone();
    let close = *g.pick(&[
        "Then call final_answer with \"done\".",
        "When you have finished, call final_answer with \"done\".",
        "Finish by calling final_answer with \"done\".",
    ]);
    format!("{opening} {fault} {fix} {hidden} {close}")
}

/// The hidden check: run the agent's script on `hidden` in an empty folder, compare its report.
fn check(input: &str, output: &str, hidden: &str, expected: &Value, form: Form) -> String {
    let hidden = hex(hidden);
    let expected = hex(&expected.to_string());
    let form = form.name();
    format!(
        r#"import shutil
import subprocess
import sys
import tempfile

INPUT = bytes.fromhex("{hidden}")
EXPECTED = json.loads(bytes.fromhex("{expected}"))


def parsed(text):
    if "{form}" == "csv":
        return [row for row in csv.reader(text.splitlines()) if row]
    if "{form}" == "json":
        return json.loads(text)
    return [line.rstrip() for line in text.splitlines() if line.strip()]


script = os.path.join(HOME, "report.py")
work = tempfile.mkdtemp(prefix="report-check-")
try:
    if not os.path.isfile(script) or os.path.getsize(script) > 1_000_000:
        print("FAIL: report.py is missing or too large")
    else:
        shutil.copyfile(script, os.path.join(work, "report.py"))
        with open(os.path.join(work, {input:?}), "wb") as f:
            f.write(INPUT)
        try:
            subprocess.run(
                [sys.executable, "-I", "report.py"],
                cwd=work,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=60,
            )
        except subprocess.TimeoutExpired:
            pass
        report = os.path.join(work, {output:?})
        if not os.path.isfile(report) or os.path.getsize(report) > 5_000_000:
            print("FAIL: report.py wrote no {output} for the hidden input")
        else:
            with open(report, encoding="utf-8", errors="replace") as f:
                got = parsed(f.read())
            if got == EXPECTED:
                print("PASS")
            else:
                print("FAIL: the {output} written for the hidden input is not the expected report")
finally:
    shutil.rmtree(work, ignore_errors=True)
"#
    )
}

fn orders(g: &mut Gen, bug: [bool; 3]) -> Report {
    let input = *g.pick(&["orders.csv", "purchases.csv", "invoices.csv"]);
    let output = *g.pick(&["totals.csv", "customer_totals.csv", "by_customer.csv"]);
    let (amount, order) = *g.pick(&[("amount", "order_id"), ("value", "id"), ("price", "number")]);
    let add = if bug[0] {
        format!("float(row[\"{amount}\"])")
    } else {
        format!("totals.get(name, 0.0) + float(row[\"{amount}\"])")
    };
    let skip = if bug[2] {
        "    next(reader)  # skip the header\n"
    } else {
        ""
    };
    let order_by = if bug[1] {
        "sorted(totals, key=totals.get)"
    } else {
        "sorted(totals)"
    };
    let script = format!(
        "\"\"\"Totals per customer.\n\nReads {input} (columns {order},customer,{amount}; one row per order) and writes\n{output}: the header customer,orders,total, then one row per customer, sorted by\ncustomer name, with the customer's number of orders and the sum of their {amount}s\nwritten with exactly 2 decimals.\n\"\"\"\n\nimport csv\n\ntotals = {{}}\ncounts = {{}}\nwith open(\"{input}\", newline=\"\") as f:\n    reader = csv.DictReader(f)\n{skip}    for row in reader:\n        name = row[\"customer\"]\n        totals[name] = {add}\n        counts[name] = counts.get(name, 0) + 1\n\nwith open(\"{output}\", \"w\", newline=\"\") as f:\n    out = csv.writer(f)\n    out.writerow([\"customer\", \"orders\", \"total\"])\n    for name in {order_by}:\n        out.writerow([name, counts[name], f\"{{totals[name]:.2f}}\"])\n"
    );
    // The header names travel with the input: the generator below needs them too.
    let make: fn(&mut Gen) -> (String, Value) = match (amount, order) {
        ("amount", _) => |g| orders_input(g, "order_id", "amount"),
        ("value", _) => |g| orders_input(g, "id", "value"),
        _ => |g| orders_input(g, "number", "price"),
    };
    Report {
        input,
        output,
        describe: "a CSV file of orders",
        script,
        form: Form::Csv,
        make,
    }
}

/// Orders whose report exposes each bug: a customer with several orders, an order of the
/// customers by total that differs from their order by name.
fn orders_input(g: &mut Gen, order: &str, amount: &str) -> (String, Value) {
    loop {
        let customers = g.subset(crate::families::words::FIRST_NAMES, 3, 7);
        let rows = g.int(8, 30);
        let first = g.int(1000, 90_000);
        let mut text = format!("{order},customer,{amount}\n");
        let mut totals: BTreeMap<&str, (i64, i64)> = BTreeMap::new();
        for i in 0..rows {
            let name = *g.pick(&customers);
            let cents = g.int(100, 50_000);
            text.push_str(&format!(
                "{},{name},{}.{:02}\n",
                first + i,
                cents / 100,
                cents % 100
            ));
            let entry = totals.entry(name).or_default();
            entry.0 += 1;
            entry.1 += cents;
        }
        let by_name: Vec<&str> = totals.keys().copied().collect();
        let mut by_total = by_name.clone();
        by_total.sort_by_key(|name| totals[name].1);
        let repeated = totals.values().any(|t| t.0 > 1);
        let distinct: std::collections::HashSet<i64> = totals.values().map(|t| t.1).collect();
        if !repeated || by_name == by_total || distinct.len() != totals.len() {
            continue;
        }
        let mut report = vec![json!(["customer", "orders", "total"])];
        for (name, (count, cents)) in &totals {
            report.push(json!([
                name,
                count.to_string(),
                format!("{}.{:02}", cents / 100, cents % 100)
            ]));
        }
        return (text, Value::from(report));
    }
}

const LEVELS: &[&str] = &["INFO", "INFO", "INFO", "DEBUG", "WARNING", "ERROR"];

fn log(g: &mut Gen, bug: [bool; 3]) -> Report {
    let input = *g.pick(&["server.log", "app.log", "service.log"]);
    let output = *g.pick(&["summary.json", "log_summary.json", "levels.json"]);
    let count_total = if bug[1] {
        "        total += 1\n        if not line.strip():\n            continue\n"
    } else {
        "        if not line.strip():\n            continue\n        total += 1\n"
    };
    let split = if bug[0] {
        "        parts = line.split()\n        level, message = parts[2], parts[3]\n"
    } else {
        "        _date, _time, level, message = line.split(\" \", 3)\n"
    };
    let error = if bug[2] {
        "level != \"INFO\""
    } else {
        "level == \"ERROR\""
    };
    let script = format!(
        "\"\"\"Log summary.\n\nReads {input}, where each line is `DATE TIME LEVEL MESSAGE` (single spaces between\nthe first three fields; the message is the rest of the line, and may hold spaces), and\nblank lines are ignored. Writes {output}: a JSON object with\n  \"total\": the number of log lines (blank lines not counted),\n  \"by_level\": an object from each level that occurs to its number of lines,\n  \"errors\": the messages of the ERROR lines, in file order.\n\"\"\"\n\nimport json\n\ntotal = 0\ncounts = {{}}\nerrors = []\nwith open(\"{input}\") as f:\n    for line in f:\n        line = line.rstrip(\"\\n\")\n{count_total}{split}        counts[level] = counts.get(level, 0) + 1\n        if {error}:\n            errors.append(message)\n\nwith open(\"{output}\", \"w\") as f:\n    json.dump({{\"total\": total, \"by_level\": counts, \"errors\": errors}}, f, indent=2)\n"
    );
    Report {
        input,
        output,
        describe: "a log file",
        script,
        form: Form::Json,
        make: log_input,
    }
}

/// A log whose summary exposes each bug: blank lines, several-word error messages, and lines
/// of levels other than INFO and ERROR.
fn log_input(g: &mut Gen) -> (String, Value) {
    loop {
        let lines = g.int(10, 40);
        let mut second = g.int(0, 80_000);
        let day = crate::families::date_of(g.int(0, 2000));
        let mut text = String::new();
        let mut total = 0;
        let mut counts: BTreeMap<&str, i64> = BTreeMap::new();
        let mut errors = Vec::new();
        let mut blanks = 0;
        for _ in 0..lines {
            if g.chance(0.1) {
                text.push('\n');
                blanks += 1;
            }
            second += g.int(1, 120);
            let level = *g.pick(LEVELS);
            let words: Vec<&str> = (0..g.int(2, 6)).map(|_| g.word()).collect();
            let message = words.join(" ");
            text.push_str(&format!(
                "{day} {:02}:{:02}:{:02} {level} {message}\n",
                (second / 3600) % 24,
                (second / 60) % 60,
                second % 60
            ));
            total += 1;
            *counts.entry(level).or_default() += 1;
            if level == "ERROR" {
                errors.push(message);
            }
        }
        let others = counts.contains_key("DEBUG") || counts.contains_key("WARNING");
        if blanks == 0 || errors.is_empty() || !others {
            continue;
        }
        return (
            text,
            json!({"total": total, "by_level": counts, "errors": errors}),
        );
    }
}

fn ranking(g: &mut Gen, bug: [bool; 3]) -> Report {
    let input = *g.pick(&["scores.txt", "results.txt", "points.txt"]);
    let output = *g.pick(&["ranking.txt", "leaderboard.txt", "standings.txt"]);
    // The bugs: ties in reverse alphabetical order, ranks from 0, scores compared as text.
    let key = if bug[0] {
        "key=lambda r: (r[1], r[0]), reverse=True"
    } else {
        "key=lambda r: (-r[1], r[0])"
    };
    let start = if bug[1] { "0" } else { "1" };
    let score = if bug[2] { "score" } else { "int(score)" };
    let script = format!(
        "\"\"\"Ranking.\n\nReads {input}, where each non-blank line is a player's name and their score (a whole\nnumber), separated by a space. Writes {output}: one line per player, `RANK. NAME SCORE`,\nhighest score first; players with equal scores are listed in alphabetical order of their\nnames. Ranks are 1, 2, 3, ... down the list (equal scores still get different ranks).\n\"\"\"\n\nrows = []\nwith open(\"{input}\") as f:\n    for line in f:\n        if line.strip():\n            name, score = line.split()\n            rows.append((name, {score}))\n\nrows.sort({key})\nwith open(\"{output}\", \"w\") as f:\n    for rank, (name, score) in enumerate(rows, {start}):\n        f.write(f\"{{rank}}. {{name}} {{score}}\\n\")\n"
    );
    Report {
        input,
        output,
        describe: "a text file of scores",
        script,
        form: Form::Lines,
        make: ranking_input,
    }
}

/// Scores whose ranking exposes each bug: a tie, more than one player, and a one-digit score
/// beside scores of more digits (text comparison puts "9" above "45").
fn ranking_input(g: &mut Gen) -> (String, Value) {
    let players = g.subset(crate::families::words::FIRST_NAMES, 5, 14);
    let mut rows: Vec<(&str, i64)> = players.iter().map(|p| (*p, g.int(0, 150))).collect();
    // A tie, so the order of equal scores matters.
    let (a, b) = (g.index(rows.len()), g.index(rows.len()));
    let b = if a == b { (b + 1) % rows.len() } else { b };
    rows[b].1 = rows[a].1;
    let c = (0..rows.len()).find(|&c| c != a && c != b).unwrap_or(a);
    rows[c].1 = g.int(0, 9);
    if rows.iter().all(|r| r.1 < 10) {
        // The tied pair moves up together, and stays tied.
        rows[a].1 += 10;
        rows[b].1 += 10;
    }
    let text: String = rows.iter().map(|(n, s)| format!("{n} {s}\n")).collect();
    rows.sort_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(y.0)));
    let lines: Vec<String> = rows
        .iter()
        .enumerate()
        .map(|(i, (n, s))| format!("{}. {n} {s}", i + 1))
        .collect();
    (text, json!(lines))
}
