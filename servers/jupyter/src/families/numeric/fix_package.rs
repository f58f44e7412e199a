//! `fix-package`: a small package, `ledger/` (parsing, money, summaries in three modules), has
//! bugs seeded across its modules; the agent fixes it until it behaves as its docstrings say.
//! Hidden tests, two per seeded bug, pay the fraction that pass ([`Grader::HiddenTests`]), so
//! fixing some of the bugs earns some of the reward.
//!
//! Each hidden test is one call into the package (`ledger.to_cents("4.35")`, the totals of a
//! parsed file); the check runs the calls on a correct copy of the package, then on the
//! agent's, each in a child process given only the calls, and compares results. The correct
//! copy exists only while the check runs, after the agent's processes are stopped. The visible
//! tests (`tests/test_ledger.py`) pass on the buggy package: they show how it is used, not
//! where it is wrong.
//!
//! Levels: easy seeds two bugs in two modules; medium three, one per module; hard five, one of
//! them in the file parser that only shows once a whole file is read.

use serde_json::{Value, json};

use crate::families::{Family, FamilySplit, Gen, Instance, Level};
use crate::python::hex;
use crate::tasks::{Grader, TaskKind};

pub(super) const FAMILY: Family = Family {
    name: "fix-package",
    kind: TaskKind::Debugging,
    split: FamilySplit::TrainAndTest,
    levelled: true,
    about: "debugging: fix bugs seeded across a three-module package; hidden tests pay the fraction passed",
    generate,
};

/// The bugs a package can carry, each in one module.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Bug {
    /// `parse_line` keeps the spaces around the account.
    AccountSpaces,
    /// `parse_line` keeps the category's case.
    CategoryCase,
    /// `parse_file` reads comment lines as entries.
    Comments,
    /// `to_cents` goes through a float and truncates.
    FloatCents,
    /// `apply_discount` rounds the discount down instead of the price half up.
    DiscountRounding,
    /// `add_tax` floors instead of rounding half up.
    TaxRounding,
    /// `totals_by_account` leaves out refunds (negative amounts).
    SkipsRefunds,
    /// `balance` leaves out the end date.
    ExclusiveEnd,
}

impl Bug {
    fn module(self) -> usize {
        match self {
            Bug::AccountSpaces | Bug::CategoryCase | Bug::Comments => 0,
            Bug::FloatCents | Bug::DiscountRounding | Bug::TaxRounding => 1,
            Bug::SkipsRefunds | Bug::ExclusiveEnd => 2,
        }
    }
}

const BUGS: &[Bug] = &[
    Bug::AccountSpaces,
    Bug::CategoryCase,
    Bug::FloatCents,
    Bug::DiscountRounding,
    Bug::TaxRounding,
    Bug::SkipsRefunds,
    Bug::ExclusiveEnd,
];

const CATEGORIES: &[&str] = &[
    "Groceries",
    "Rent",
    "Travel",
    "Books",
    "Fuel",
    "Dining",
    "Gifts",
];

fn generate(g: &mut Gen) -> Instance {
    let level = g.level();
    let sep = *g.pick(&[";", "|", "\\t"]);
    let tax = g.int(5, 25);
    let bugs = pick_bugs(g, level);
    let has = |bug| bugs.contains(&bug);
    let files = package(sep, tax, &has);
    let reference = package(sep, tax, &|_| false);
    let accounts: Vec<String> = (0..4).map(|_| format!("ACC-{}", g.int(10, 99))).collect();
    let mut tests: Vec<(String, String)> = Vec::new();
    let tab = if sep == "\\t" { "\t" } else { sep };
    let line = |account: &str, cents: i64, category: &str, day: i64| {
        let sign = if cents < 0 { "-" } else { "" };
        let amount = format!("{sign}{}.{:02}", cents.abs() / 100, cents.abs() % 100);
        format!("2024-03-{day:02}{tab}{account}{tab}{amount}{tab}{category}")
    };
    let mut case = |name: &str, call: String| tests.push((name.to_owned(), call));
    for bug in &bugs {
        for round in 0..2 {
            let account = g.pick(&accounts).clone();
            let category = *g.pick(CATEGORIES);
            match bug {
                Bug::AccountSpaces => {
                    let (cents, day) = (g.int(100, 9000), g.int(1, 28));
                    let text = line(&format!("  {account} "), cents, category, day);
                    case(
                        &format!("parse_line_trims_the_account_{round}"),
                        format!("ledger.parse_line({text:?})"),
                    );
                }
                Bug::CategoryCase => {
                    let (cents, day) = (g.int(100, 9000), g.int(1, 28));
                    let text = line(&account, cents, &category.to_uppercase(), day);
                    case(
                        &format!("parse_line_lowercases_the_category_{round}"),
                        format!("ledger.parse_line({text:?})"),
                    );
                }
                Bug::Comments => {
                    let mut text = String::from("# exported ledger\n");
                    for _ in 0..g.int(4, 8) {
                        let a = g.pick(&accounts).clone();
                        let (cents, category, day) =
                            (g.int(-3000, 9000), *g.pick(CATEGORIES), g.int(1, 28));
                        text.push_str(&line(&a, cents, category, day));
                        text.push('\n');
                        if g.chance(0.3) {
                            text.push_str("# checked\n");
                        }
                    }
                    case(
                        &format!("parse_file_skips_comments_{round}"),
                        format!(
                            "__import__('pathlib').Path('ledger_test.txt').write_text({text:?}) and ledger.parse_file('ledger_test.txt')"
                        ),
                    );
                }
                Bug::FloatCents => {
                    let amounts = [
                        "0.29", "0.57", "1.15", "4.35", "-2.30", "8.20", "16.90", "32.70",
                    ];
                    let chosen: Vec<&str> = g.sample(&amounts, 3);
                    case(
                        &format!("to_cents_is_exact_{round}"),
                        format!("[ledger.to_cents(a) for a in {chosen:?}]"),
                    );
                }
                Bug::DiscountRounding => {
                    // A price whose discounted value has a fraction under a half, where rounding
                    // the discount down and the price half up disagree.
                    let (cents, percent) = loop {
                        let (c, p) = (g.int(101, 9999), g.int(5, 40));
                        let rest = (c * (100 - p)) % 100;
                        if (1..50).contains(&rest) {
                            break (c, p);
                        }
                    };
                    case(
                        &format!("apply_discount_rounds_half_up_{round}"),
                        format!("ledger.apply_discount({cents}, {percent})"),
                    );
                }
                Bug::TaxRounding => {
                    let cents = loop {
                        let c = g.int(101, 9999);
                        if (c * (100 + tax)) % 100 >= 50 {
                            break c;
                        }
                    };
                    case(
                        &format!("add_tax_rounds_half_up_{round}"),
                        format!("ledger.add_tax({cents})"),
                    );
                }
                Bug::SkipsRefunds => {
                    let entries: Vec<Value> = (0..g.int(5, 9))
                        .map(|i| {
                            let cents = if i == 0 { -g.int(100, 3000) } else { g.int(-3000, 9000) };
                            json!({"date": format!("2024-03-{:02}", g.int(1, 28)), "account": g.pick(&accounts), "amount_cents": cents, "category": "rent"})
                        })
                        .collect();
                    case(
                        &format!("totals_count_refunds_{round}"),
                        format!(
                            "ledger.totals_by_account({})",
                            py_literal(&Value::from(entries))
                        ),
                    );
                }
                Bug::ExclusiveEnd => {
                    let end = g.int(10, 28);
                    let entries: Vec<Value> = (0..g.int(5, 9))
                        .map(|i| {
                            let day = if i == 0 { end } else { g.int(1, 28) };
                            json!({"date": format!("2024-03-{day:02}"), "account": accounts[0], "amount_cents": g.int(-3000, 9000), "category": "fuel"})
                        })
                        .collect();
                    case(
                        &format!("balance_includes_the_end_date_{round}"),
                        format!(
                            "ledger.balance({}, {:?}, '2024-03-01', '2024-03-{end:02}')",
                            py_literal(&Value::from(entries)),
                            accounts[0]
                        ),
                    );
                }
            }
        }
    }
    let visible = visible_tests(g, sep);
    // The wording, drawn after the files.
    let opening = *g.pick(&[
        "Your home directory holds a small Python package, ledger/ (ledger/parse.py, \
         ledger/money.py and ledger/summary.py), and its visible tests in tests/test_ledger.py \
         (python tests/test_ledger.py runs them).",
        "In your home directory is the package ledger/ (modules ledger/parse.py, ledger/money.py \
         and ledger/summary.py) with visible tests in tests/test_ledger.py, which python \
         tests/test_ledger.py runs.",
        "The Python package ledger/ in your home directory has three modules (ledger/parse.py, \
         ledger/money.py, ledger/summary.py); tests/test_ledger.py holds its visible tests \
         (run them with python tests/test_ledger.py).",
    ]);
    let fault = *g.pick(&[
        "The package has bugs in more than one module: some functions do not do what their \
         docstrings say.",
        "Bugs in more than one of its modules make some functions disagree with their \
         docstrings.",
        "Several of its modules have bugs: some functions do not behave as documented.",
    ]);
    let fix = *g.pick(&[
        "Fix the package so that every function behaves as its docstring states (keep the \
         functions' names and parameters).",
        "Repair it so that each function does what its docstring says, without renaming \
         functions or changing their parameters.",
        "Make every function agree with its docstring; names and parameters stay as they are.",
    ]);
    let hidden = *g.pick(&[
        "Hidden tests will call it on other inputs; the reward is the fraction of them that \
         pass. The visible tests pass already and do not show the bugs.",
        "The reward is the fraction of hidden tests, on other inputs, that pass; the visible \
         tests already pass and do not reveal the bugs.",
    ]);
    let close = *g.pick(&[
        "Then call final_answer with the word done.",
        "When you have finished, call final_answer with the word done.",
        "Finish by calling final_answer with the word done.",
    ]);
    let mut instance = Instance::new(
        format!("{opening} {fault} {fix} {hidden} {close}"),
        Grader::HiddenTests {
            code: tests_check(&reference, &tests),
        },
    );
    for (path, text) in files {
        instance = instance.file(path, text);
    }
    instance.file("tests/test_ledger.py", visible)
}

/// The bugs of one instance: distinct, spread over modules as its level says.
fn pick_bugs(g: &mut Gen, level: Level) -> Vec<Bug> {
    loop {
        let mut bugs = g.sample(BUGS, level.pick(2, 3, 4));
        if level == Level::Hard {
            bugs.push(Bug::Comments);
        }
        let mut modules: Vec<usize> = bugs.iter().map(|b| b.module()).collect();
        modules.sort_unstable();
        modules.dedup();
        let wanted = level.pick(2, 3, 3);
        if modules.len() >= wanted && (level != Level::Medium || modules.len() == bugs.len()) {
            return bugs;
        }
    }
}

/// A JSON value as a Python literal.
fn py_literal(value: &Value) -> String {
    match value {
        Value::Null => "None".into(),
        Value::Bool(b) => if *b { "True" } else { "False" }.into(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => format!("{s:?}"),
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(py_literal).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(map) => format!(
            "{{{}}}",
            map.iter()
                .map(|(k, v)| format!("{k:?}: {}", py_literal(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The package's files, with the bugs `has` names.
fn package(sep: &str, tax: i64, has: &dyn Fn(Bug) -> bool) -> Vec<(&'static str, String)> {
    let pick = |bug, buggy: &str, right: &str| {
        if has(bug) {
            buggy.to_owned()
        } else {
            right.to_owned()
        }
    };
    let init = "\"\"\"A small ledger: parse entries, handle money in cents, summarise accounts.\"\"\"\n\nfrom .money import add_tax, apply_discount, to_cents\nfrom .parse import parse_file, parse_line\nfrom .summary import balance, totals_by_account\n\n__all__ = [\n    \"add_tax\",\n    \"apply_discount\",\n    \"balance\",\n    \"parse_file\",\n    \"parse_line\",\n    \"to_cents\",\n    \"totals_by_account\",\n]\n".to_owned();
    let parse = format!(
        r#""""Reading ledger lines: DATE{sep_doc}ACCOUNT{sep_doc}AMOUNT{sep_doc}CATEGORY."""

from .money import to_cents

SEP = "{sep}"


def parse_line(line):
    """One line as a dict: date (as written), account (without surrounding spaces), amount_cents
    (an int, from the amount in dollars), category (lower case, without surrounding spaces)."""
    date, account, amount, category = line.split(SEP)
    return {{
        "date": date.strip(),
        "account": {account},
        "amount_cents": to_cents(amount.strip()),
        "category": {category},
    }}


def parse_file(path):
    """Every entry of a ledger file, in order; blank lines and lines starting with # are
    skipped."""
    entries = []
    with open(path) as f:
        for line in f:
            if {keep}:
                entries.append(parse_line(line.rstrip("\n")))
    return entries
"#,
        sep_doc = if sep == "\\t" { "<TAB>" } else { sep },
        account = pick(Bug::AccountSpaces, "account", "account.strip()"),
        category = pick(
            Bug::CategoryCase,
            "category.strip()",
            "category.strip().lower()"
        ),
        keep = pick(
            Bug::Comments,
            "line.strip()",
            "line.strip() and not line.startswith(\"#\")"
        ),
    );
    let money = format!(
        r#""""Money as integer cents, rounded half up (half a cent goes away from zero)."""

from decimal import ROUND_HALF_UP, Decimal

TAX_PERCENT = {tax}


def _round(value):
    return int(value.quantize(Decimal(1), rounding=ROUND_HALF_UP))


def to_cents(text):
    """The amount written in dollars ("12.5", "-3.10") as exact integer cents."""
    {to_cents}


def apply_discount(cents, percent):
    """The price in cents after a discount of `percent` percent, rounded half up to a cent."""
    {discount}


def add_tax(cents):
    """The price in cents with TAX_PERCENT percent tax added, rounded half up to a cent."""
    {add_tax}
"#,
        to_cents = pick(
            Bug::FloatCents,
            "return int(float(text) * 100)",
            "return _round(Decimal(text) * 100)"
        ),
        discount = pick(
            Bug::DiscountRounding,
            "return cents - cents * percent // 100",
            "return _round(Decimal(cents) * (100 - Decimal(percent)) / 100)"
        ),
        add_tax = pick(
            Bug::TaxRounding,
            "return cents * (100 + TAX_PERCENT) // 100",
            "return _round(Decimal(cents) * (100 + TAX_PERCENT) / 100)"
        ),
    );
    let summary = format!(
        r#""""Summaries of parsed entries (dicts as ledger.parse_line returns them)."""


def totals_by_account(entries):
    """The sum of amount_cents per account, refunds (negative amounts) included, as a dict
    sorted by account."""
    totals = {{}}
    for entry in entries:
        {skip}totals[entry["account"]] = totals.get(entry["account"], 0) + entry["amount_cents"]
    return dict(sorted(totals.items()))


def balance(entries, account, start, end):
    """The sum of amount_cents of `account` from date `start` to date `end`, both included
    (dates as YYYY-MM-DD strings)."""
    return sum(
        entry["amount_cents"]
        for entry in entries
        if entry["account"] == account and {range}
    )
"#,
        skip = pick(
            Bug::SkipsRefunds,
            "if entry[\"amount_cents\"] > 0:\n            ",
            ""
        ),
        range = pick(
            Bug::ExclusiveEnd,
            "start <= entry[\"date\"] < end",
            "start <= entry[\"date\"] <= end"
        ),
    );
    vec![
        ("ledger/__init__.py", init),
        ("ledger/parse.py", parse),
        ("ledger/money.py", money),
        ("ledger/summary.py", summary),
    ]
}

/// Visible tests that pass with or without the bugs (whole dollars and half dollars, round
/// discounts, no spaces, lower case, no refunds, nothing on the end date).
fn visible_tests(g: &mut Gen, sep: &str) -> String {
    let (dollars, account, category) = (g.int(1, 900), g.int(1, 99), *g.pick(CATEGORIES));
    let category = category.to_lowercase();
    let (price, percent) = (100 * g.int(1, 90), *g.pick(&[10, 20, 25, 50]));
    let discounted = price * (100 - percent) / 100;
    let (a, b) = (g.int(1, 9000), g.int(1, 9000));
    let day = g.int(1, 27);
    format!(
        r#"import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import ledger  # noqa: E402


def test_parse_line():
    entry = ledger.parse_line("2024-03-05{sep}ACC-{account}{sep}{dollars}.50{sep}{category}")
    assert entry == {{
        "date": "2024-03-05",
        "account": "ACC-{account}",
        "amount_cents": {dollars}50,
        "category": "{category}",
    }}


def test_money():
    assert ledger.to_cents("{dollars}") == {dollars}00
    assert ledger.add_tax(0) == 0
    assert ledger.apply_discount({price}, {percent}) == {discounted}


def test_totals():
    entries = [
        {{"date": "2024-03-{day:02}", "account": "A", "amount_cents": {a}, "category": "x"}},
        {{"date": "2024-03-01", "account": "B", "amount_cents": {b}, "category": "y"}},
    ]
    assert ledger.totals_by_account(entries) == {{"A": {a}, "B": {b}}}
    assert ledger.balance(entries, "A", "2024-03-01", "2024-03-31") == {a}


if __name__ == "__main__":
    for name, test in list(globals().items()):
        if name.startswith("test_"):
            test()
    print("visible tests pass")
"#
    )
}

/// The hidden tests: each call run on the correct package (written to a temporary folder for
/// the check's duration) and on the agent's, each in its own child process given only the
/// calls; one `PASS name` or `FAIL name` line per test.
fn tests_check(reference: &[(&str, String)], tests: &[(String, String)]) -> String {
    let files: Value = reference.iter().map(|(p, t)| json!([p, t])).collect();
    let names: Value = tests.iter().map(|(n, _)| Value::from(n.as_str())).collect();
    let calls: Value = tests.iter().map(|(_, c)| Value::from(c.as_str())).collect();
    format!(
        r#"import secrets, shutil, subprocess, sys, tempfile

REFERENCE = json.loads(bytes.fromhex("{files}"))
NAMES = json.loads(bytes.fromhex("{names}"))
CALLS = json.loads(bytes.fromhex("{calls}"))
MARKER = secrets.token_hex(16)
RUNNER = """
import json, os, sys
calls = json.loads(sys.stdin.readline())
marker = sys.stdin.readline().strip()
sys.path.insert(0, os.getcwd())
results = []
for call in calls:
    try:
        import ledger
        results.append(["ok", eval(call)])
    except BaseException as error:
        results.append(["raised", type(error).__name__])
print(marker + json.dumps(results, default=str))
"""


def run(folder):
    try:
        done = subprocess.run(
            [sys.executable, "-I", "-c", RUNNER],
            input=json.dumps(CALLS) + "\n" + MARKER + "\n",
            capture_output=True, text=True, timeout=60, cwd=folder,
        )
    except subprocess.TimeoutExpired:
        return None
    lines = [l for l in done.stdout.splitlines() if l.startswith(MARKER)]
    try:
        results = json.loads(lines[-1][len(MARKER):]) if lines else None
    except ValueError:
        return None
    return results if isinstance(results, list) and len(results) == len(CALLS) else None


folder = tempfile.mkdtemp()
try:
    for path, text in REFERENCE:
        os.makedirs(os.path.dirname(os.path.join(folder, path)), exist_ok=True)
        with open(os.path.join(folder, path), "w") as f:
            f.write(text)
    expected = run(folder)
finally:
    shutil.rmtree(folder)
got = run(HOME)
for i, name in enumerate(NAMES):
    ok = got is not None and expected is not None and got[i] == expected[i] and expected[i][0] == "ok"
    print(("PASS " if ok else "FAIL ") + name)
"#,
        files = hex(&files.to_string()),
        names = hex(&names.to_string()),
        calls = hex(&calls.to_string()),
    )
}
