//! `budget-variance`: a budget workbook (one sheet per department, each cost centre's budget
//! per month, the sheets laid out by different hands), a ledger of actual spending in several
//! currencies, monthly exchange rates in SQLite and a file of renamed cost centres; the agent
//! writes `variance.csv`, one row per department and quarter with the columns and the order
//! the prompt gives. A hidden check compares the whole file with the report computed here:
//! the header, the number of rows, their order, the texts and every number.
//!
//! - `budget.xlsx`: a sheet per department, named after it. Long sheets have a row per cost
//!   centre and month (`Cost Centre, Month, Budget` with `2024-01` months; `cost_center,
//!   period, budget_usd` with Excel dates; `CC, Month, Amount (USD)` with `Jan 2024`); wide
//!   ones (medium and hard) a row per cost centre and a column per month.
//! - `ledger.csv`: `entry_id,date,cost_centre,amount,currency`.
//! - `rates.db`: `fx_rates(currency, month, usd_per_unit)`, `month` as `YYYY-MM`.
//! - `renamed_cost_centres.csv`: `old_code,new_code`; the ledger may use either.
//!
//! Levels: easy has two departments, the first half of 2024, one foreign currency and long
//! sheets; medium has three or four departments, the whole year, wide sheets, refunds and
//! entries of December 2023 (left out); hard has five or six departments, a title row above
//! some sheets' headers, a notes sheet, codes renamed twice, ledger entries listed twice,
//! amounts with thousands separators, currency codes in lower case, and entries on cost
//! centres no sheet budgets (ignored).

use super::draw::{Attempt, draw, save_workbook};
use crate::families::money::thousands;
use crate::families::{Family, FamilySplit, Gen, Instance, Level, csv_bytes, date_of};
use crate::python::hex;
use crate::tasks::{Grader, TaskKind};

pub(super) const FAMILY: Family = Family {
    name: "budget-variance",
    kind: TaskKind::DataAnalysis,
    split: FamilySplit::TrainAndTest,
    levelled: true,
    about: "reconcile departments' budget sheets (Excel), a ledger in several currencies, SQLite \
            exchange rates and renamed cost centres into a variance CSV checked whole",
    generate,
};

const DEPARTMENTS: &[&str] = &[
    "Sales",
    "Marketing",
    "Engineering",
    "Operations",
    "Finance",
    "Support",
    "Legal",
    "Facilities",
];

/// Foreign currencies and their usual value in dollars.
const CURRENCIES: &[(&str, f64)] = &[
    ("EUR", 1.08),
    ("GBP", 1.27),
    ("JPY", 0.0067),
    ("CHF", 1.12),
    ("CAD", 0.74),
    ("SEK", 0.095),
];

const MONTH_ABBREVIATIONS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// The report's column names, in its order: department, quarter, budget, actual, variance
/// and (when asked) the variance as a percentage of the budget.
const COLUMN_SETS: &[[&str; 6]] = &[
    [
        "department",
        "quarter",
        "budget",
        "actual",
        "variance",
        "variance_pct",
    ],
    [
        "department",
        "quarter",
        "budget_usd",
        "actual_usd",
        "variance_usd",
        "variance_pct",
    ],
    [
        "dept",
        "qtr",
        "budgeted",
        "spent",
        "over_budget",
        "over_budget_pct",
    ],
];

/// How the report is sorted.
#[derive(Clone, Copy)]
enum Order {
    DepartmentThenQuarter,
    QuarterThenDepartment,
    LargestVarianceFirst,
}

/// The hidden check: reads variance.csv (bounded) and compares it with the expected rows,
/// whole: the header, every row in order, texts exactly, numbers within their tolerance.
const CHECK: &str = r#"EXPECTED = json.loads(bytes.fromhex(EXPECTED_HEX))


def compare(rows):
    header, expected = EXPECTED["header"], EXPECTED["rows"]
    if not rows or [c.strip() for c in rows[0]] != header:
        return "the header is not " + ",".join(header)
    body = [row for row in rows[1:] if any(cell.strip() for cell in row)]
    if len(body) != len(expected):
        return f"expected {len(expected)} rows, found {len(body)}"
    for i, (got, want) in enumerate(zip(body, expected)):
        if len(got) != len(want):
            return f"row {i + 1} has {len(got)} fields"
        for cell, value, tolerance in zip(got, want, EXPECTED["tolerances"]):
            if tolerance is None:
                if cell.strip() != value:
                    return f"row {i + 1}: expected {value!r}"
                continue
            try:
                number = float(cell)
            except ValueError:
                return f"row {i + 1}: {cell!r} is not a number"
            if not math.isfinite(number) or abs(number - value) > tolerance + 1e-9 * max(1.0, abs(value)):
                return f"row {i + 1}: a wrong number"
    return None


path = os.path.join(HOME, "variance.csv")
if not os.path.isfile(path):
    print("FAIL: variance.csv does not exist")
elif os.path.getsize(path) > 1_000_000:
    print("FAIL: variance.csv is too large")
else:
    try:
        with open(path, newline="", encoding="utf-8") as f:
            problem = compare(list(csv.reader(f)))
    except (ValueError, csv.Error):
        problem = "variance.csv is not a readable CSV file"
    print(f"FAIL: {problem}" if problem else "PASS")
"#;

/// A department's sheet layout.
#[derive(Clone, Copy, PartialEq)]
enum Layout {
    /// `Cost Centre, Month, Budget`, months as `2024-01`.
    IsoMonths,
    /// `cost_center, period, budget_usd`, months as Excel dates (the first of the month).
    DateMonths,
    /// `CC, Month, Amount (USD)`, months as `Jan 2024`.
    NamedMonths,
    /// `Cost Centre, Jan, Feb, …`: one row per cost centre.
    Wide,
}

fn generate(g: &mut Gen) -> Instance {
    draw(g, attempt)
}

fn attempt(g: &mut Gen) -> Attempt {
    let level = g.level();
    let easy = level == Level::Easy;
    let hard = level == Level::Hard;
    let months: i64 = if easy { 6 } else { 12 };
    let department_count = level.pick(2, g.int(3, 4), g.int(5, 6)) as usize;
    let departments: Vec<&str> = g.sample(DEPARTMENTS, department_count);
    let currencies: Vec<(&str, f64)> = g.sample(CURRENCIES, level.pick(1, 2, 3));
    // rate[c][m]: dollars per unit of currency c in month m, as rates.db writes it.
    let rates: Vec<Vec<f64>> = currencies
        .iter()
        .map(|&(_, usual)| {
            let decimals = if usual < 0.1 { 6 } else { 4 };
            let mut rate = usual * g.float(0.95, 1.05);
            (0..months)
                .map(|_| {
                    rate *= g.float(0.98, 1.02);
                    mcpgym_env::generate::round(rate, decimals)
                })
                .collect()
        })
        .collect();

    // Cost centres: (department, code), codes distinct.
    let mut codes: Vec<i64> = Vec::new();
    let mut fresh_code = |g: &mut Gen| loop {
        let code = g.int(1000, 9999);
        if !codes.contains(&code) {
            codes.push(code);
            return format!("CC-{code}");
        }
    };
    let mut centres: Vec<(usize, String)> = Vec::new();
    for d in 0..departments.len() {
        for _ in 0..level.pick(2, g.int(2, 3), g.int(2, 4)) {
            centres.push((d, fresh_code(g)));
        }
    }
    // budget[c][m], whole dollars.
    let budget: Vec<Vec<i64>> = centres
        .iter()
        .map(|_| {
            let base = g.int(40, 300) * 100;
            (0..months)
                .map(|_| (base as f64 * g.float(0.85, 1.15) / 10.0).round() as i64 * 10)
                .collect()
        })
        .collect();
    // Old codes per cost centre, the oldest first (hard renames one of them twice).
    let renamed_count = level.pick(1, g.int(2, 3), g.int(3, 5)) as usize;
    let renamed = g.sample(&(0..centres.len()).collect::<Vec<_>>(), renamed_count);
    let mut old_codes: Vec<Vec<String>> = vec![Vec::new(); centres.len()];
    for (i, &c) in renamed.iter().enumerate() {
        let times = if hard && i == 0 { 2 } else { 1 };
        old_codes[c] = (0..times).map(|_| fresh_code(g)).collect();
    }
    let mut rename_rows: Vec<Vec<String>> = Vec::new();
    for (c, olds) in old_codes.iter().enumerate() {
        for (i, old) in olds.iter().enumerate() {
            let new = olds.get(i + 1).unwrap_or(&centres[c].1);
            rename_rows.push(vec![old.clone(), new.clone()]);
        }
    }
    g.shuffle(&mut rename_rows);
    let unbudgeted: Vec<String> = (0..if hard { 2 } else { 0 })
        .map(|_| fresh_code(g))
        .collect();

    // actual[c][m] in dollars, from the ledger's entries as written.
    let mut actual = vec![vec![0.0; months as usize]; centres.len()];
    let mut ledger: Vec<Vec<String>> = Vec::new();
    let mut entry = g.int(100_000, 400_000);
    let days_before = |m: i64| -> i64 {
        const LENGTHS: [i64; 12] = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
        LENGTHS[..m as usize].iter().sum()
    };
    // Writes an entry of `usd` dollars on `day` (of month `month` of 2024, or of 2023 when
    // `None`) in a currency of the ledger's; returns its dollars as the rates convert it.
    let mut write_entry = |g: &mut Gen,
                           ledger: &mut Vec<Vec<String>>,
                           day: i64,
                           month: Option<usize>,
                           code: &str,
                           usd: f64|
     -> f64 {
        entry += g.int(1, 5);
        let (currency, rate, decimals) = if g.chance(0.55) {
            let k = g.index(currencies.len());
            let rate = month.map_or(currencies[k].1, |m| rates[k][m]);
            let decimals = if currencies[k].0 == "JPY" { 0 } else { 2 };
            (currencies[k].0, rate, decimals)
        } else {
            ("USD", 1.0, 2)
        };
        let amount = mcpgym_env::generate::round(usd / rate, decimals);
        let written = if hard && amount.abs() >= 1000.0 && g.chance(0.3) {
            thousands(amount, decimals as usize)
        } else {
            format!("{amount:.*}", decimals as usize)
        };
        let currency = if hard && g.chance(0.15) {
            currency.to_lowercase()
        } else {
            currency.to_owned()
        };
        let row = vec![
            format!("L{entry}"),
            date_of(day),
            code.to_owned(),
            written,
            currency,
        ];
        if hard && g.chance(0.05) {
            ledger.push(row.clone());
        }
        ledger.push(row);
        amount * rate
    };
    for (c, (_, code)) in centres.iter().enumerate() {
        for m in 0..months {
            let spend = budget[c][m as usize] as f64 * g.float(0.75, 1.25);
            let parts = level.pick(g.int(1, 3), g.int(2, 4), g.int(2, 5));
            for _ in 0..parts {
                let day = 1461 + days_before(m) + g.int(0, 27);
                let refund = !easy && g.chance(0.08);
                let usd = spend / parts as f64 * if refund { -0.3 } else { 1.0 };
                let written_code = if !old_codes[c].is_empty() && g.chance(0.5) {
                    g.pick(&old_codes[c]).clone()
                } else {
                    code.clone()
                };
                actual[c][m as usize] +=
                    write_entry(g, &mut ledger, day, Some(m as usize), &written_code, usd);
            }
        }
        if !easy {
            // December 2023: before the budget year, left out.
            let day = 1461 - g.int(1, 20);
            let usd = g.float(500.0, 5000.0);
            write_entry(g, &mut ledger, day, None, code, usd);
        }
    }
    for code in &unbudgeted {
        for _ in 0..g.int(2, 5) {
            let m = g.int(0, months - 1);
            let day = 1461 + days_before(m) + g.int(0, 27);
            let usd = g.float(300.0, 8000.0);
            write_entry(g, &mut ledger, day, Some(m as usize), code, usd);
        }
    }
    ledger.sort_by(|a, b| a[1].cmp(&b[1]).then(a[0].cmp(&b[0])));

    // The report, drawn after the data.
    let columns = *g.pick(COLUMN_SETS);
    let percent = !easy && g.chance(0.5);
    let quarter_names: Vec<String> = if g.chance(0.5) {
        (1..=months / 3).map(|q| format!("Q{q}")).collect()
    } else {
        (1..=months / 3).map(|q| format!("2024-Q{q}")).collect()
    };
    let order = *g.pick(&[
        Order::DepartmentThenQuarter,
        Order::QuarterThenDepartment,
        Order::LargestVarianceFirst,
    ]);
    // (department, quarter, budget, actual, variance, percent)
    let mut rows: Vec<(usize, usize, f64, f64, f64, f64)> = Vec::new();
    for d in 0..departments.len() {
        for q in 0..(months / 3) as usize {
            let (mut b, mut a) = (0.0, 0.0);
            for (c, (dept, _)) in centres.iter().enumerate() {
                if *dept == d {
                    for m in 3 * q..3 * q + 3 {
                        b += budget[c][m] as f64;
                        a += actual[c][m];
                    }
                }
            }
            rows.push((d, q, b, a, a - b, 100.0 * (a - b) / b));
        }
    }
    match order {
        Order::DepartmentThenQuarter => {
            rows.sort_by(|x, y| departments[x.0].cmp(departments[y.0]).then(x.1.cmp(&y.1)))
        }
        Order::QuarterThenDepartment => {
            rows.sort_by(|x, y| x.1.cmp(&y.1).then(departments[x.0].cmp(departments[y.0])))
        }
        Order::LargestVarianceFirst => rows.sort_by(|x, y| y.4.total_cmp(&x.4)),
    }
    // Variances clear of each other, so that the order by variance is not a rounding's.
    let sound = rows.windows(2).all(|w| (w[0].4 - w[1].4).abs() > 0.05);
    let width = if percent { 6 } else { 5 };
    let header: Vec<&str> = columns[..width].to_vec();
    let expected_rows: Vec<serde_json::Value> = rows
        .iter()
        .map(|r| {
            let mut row = vec![
                serde_json::json!(departments[r.0]),
                serde_json::json!(quarter_names[r.1]),
                serde_json::json!(r.2),
                serde_json::json!(r.3),
                serde_json::json!(r.4),
            ];
            if percent {
                row.push(serde_json::json!(r.5));
            }
            serde_json::Value::from(row)
        })
        .collect();
    let mut tolerances = vec![
        serde_json::Value::Null,
        serde_json::Value::Null,
        serde_json::json!(0.005),
        serde_json::json!(0.005),
        serde_json::json!(0.005),
    ];
    if percent {
        tolerances.push(serde_json::json!(0.05));
    }
    let expected = serde_json::json!({
        "header": header,
        "rows": expected_rows,
        "tolerances": tolerances,
    });

    // The workbook: one sheet per department, in an order of its own.
    let mut sheet_order: Vec<usize> = (0..departments.len()).collect();
    g.shuffle(&mut sheet_order);
    let mut sheets =
        String::from("import datetime\n_d = datetime.date.fromisoformat\nSHEETS = [\n");
    if hard {
        sheets.push_str(
            "    (\"Notes\", [[\"Budgets for 2024 in US dollars, one sheet per department.\"]]),\n",
        );
    }
    for &d in &sheet_order {
        let layout = if easy {
            *g.pick(&[Layout::IsoMonths, Layout::DateMonths, Layout::NamedMonths])
        } else {
            *g.pick(&[
                Layout::IsoMonths,
                Layout::DateMonths,
                Layout::NamedMonths,
                Layout::Wide,
            ])
        };
        let mut cells: Vec<String> = Vec::new();
        if hard && g.chance(0.5) {
            cells.push(format!("[\"{} budget 2024 (USD)\"]", departments[d]));
        }
        let mine: Vec<usize> = (0..centres.len()).filter(|&c| centres[c].0 == d).collect();
        match layout {
            Layout::Wide => {
                let months_header: Vec<String> = MONTH_ABBREVIATIONS[..months as usize]
                    .iter()
                    .map(|m| format!("{m:?}"))
                    .collect();
                cells.push(format!("[\"Cost Centre\", {}]", months_header.join(", ")));
                for &c in &mine {
                    let values: Vec<String> = budget[c].iter().map(|b| b.to_string()).collect();
                    cells.push(format!("[{:?}, {}]", centres[c].1, values.join(", ")));
                }
            }
            _ => {
                cells.push(
                    match layout {
                        Layout::IsoMonths => "[\"Cost Centre\", \"Month\", \"Budget\"]",
                        Layout::DateMonths => "[\"cost_center\", \"period\", \"budget_usd\"]",
                        _ => "[\"CC\", \"Month\", \"Amount (USD)\"]",
                    }
                    .to_owned(),
                );
                let mut lines = Vec::new();
                for &c in &mine {
                    for m in 0..months as usize {
                        let month = match layout {
                            Layout::IsoMonths => format!("\"2024-{:02}\"", m + 1),
                            Layout::DateMonths => format!("_d(\"2024-{:02}-01\")", m + 1),
                            _ => format!("\"{} 2024\"", MONTH_ABBREVIATIONS[m]),
                        };
                        lines.push(format!("[{:?}, {month}, {}]", centres[c].1, budget[c][m]));
                    }
                }
                if !easy {
                    g.shuffle(&mut lines);
                }
                cells.extend(lines);
            }
        }
        sheets.push_str(&format!(
            "    ({:?}, [{}]),\n",
            departments[d],
            cells.join(", ")
        ));
    }
    sheets.push_str("]\nRATES = [");
    for ((code, _), monthly) in currencies.iter().zip(&rates) {
        for (m, rate) in monthly.iter().enumerate() {
            sheets.push_str(&format!("({code:?}, \"2024-{:02}\", {rate}), ", m + 1));
        }
    }
    sheets.push_str("]\n");

    let quarters_text = if easy {
        "the first two quarters of 2024 (January to June)"
    } else {
        "the four quarters of 2024"
    };
    let quarter_form = &quarter_names[0];
    let order_text = match order {
        Order::DepartmentThenQuarter => "sorted by department, then by quarter",
        Order::QuarterThenDepartment => "sorted by quarter, then by department",
        Order::LargestVarianceFirst => "sorted by variance, the largest first",
    };
    let percent_text = if percent {
        format!(
            ", and {} is the variance as a percentage of the budget, rounded to 1 decimal place",
            columns[5]
        )
    } else {
        String::new()
    };
    let traps = match level {
        Level::Easy => "",
        Level::Medium => {
            " Some sheets are wide, one column per month. A negative amount is a refund. The \
             ledger also holds entries of December 2023, which are left out."
        }
        Level::Hard => {
            " Some sheets are wide, one column per month, and some have a title row above their \
             header; the sheet Notes is no department. A negative amount is a refund. The ledger \
             also holds entries of December 2023, which are left out. The ledger is careless: an \
             entry may be listed twice (count each entry_id once), an amount may have thousands \
             separators, and a currency code may be in lower case. A code may have been renamed \
             twice (follow the renames to the code the sheets use); entries on cost centres that \
             no sheet budgets are ignored."
        }
    };
    let intro = *g.pick(&[
        "Your home directory holds a company's 2024 budget and what it actually spent.",
        "The files in your home directory are a company's budget for 2024 and its spending.",
        "A finance team left its 2024 budget and its ledger of spending in your home directory.",
        "You are given a company's 2024 budget and the ledger of what it spent, in your home \
         directory.",
    ]);
    let write = *g.pick(&[
        "Write variance.csv in your home directory",
        "Create the file variance.csv in your home directory",
        "Produce variance.csv, in your home directory",
    ]);
    let close = *g.pick(&[
        "Then call final_answer; the text you give it is not graded, only variance.csv.",
        "When the file is written, call final_answer (its text is not graded; the file is).",
        "Only variance.csv is graded: call final_answer with any text once it is written.",
    ]);
    let prompt = format!(
        "{intro} budget.xlsx has one sheet per department, named after it, with each cost \
         centre's budget in US dollars per month; the sheets were laid out by different people, \
         so their columns differ. ledger.csv has entry_id, date, cost_centre, amount and \
         currency. rates.db is a SQLite database: fx_rates(currency, month, usd_per_unit), \
         month as YYYY-MM; an amount in USD needs no rate, any other is converted at its \
         currency's rate for the month of the entry's date. renamed_cost_centres.csv has \
         old_code and new_code: the ledger may name a cost centre by its old code, the sheets \
         always by its new one.{traps} {write}: a CSV report with one row per department and \
         quarter of {quarters_text}, {order_text}. Its header line is exactly `{}`. {} is the \
         department as its sheet is named, {} the quarter written as {quarter_form}, {} the sum \
         of the budgets of the department's cost centres over the quarter's months, {} the sum \
         of the ledger's entries on those cost centres dated in the quarter, in US dollars, \
         and {} is {} minus {}{percent_text}. Write the dollar amounts rounded to 2 decimal \
         places, without currency signs or thousands separators. {close}",
        header.join(","),
        columns[0],
        columns[1],
        columns[2],
        columns[3],
        columns[4],
        columns[3],
        columns[2],
    );

    let code = format!("EXPECTED_HEX = {:?}\n{CHECK}", hex(&expected.to_string()));
    let instance = Instance::new(prompt, Grader::Check { code })
        .file(
            "ledger.csv",
            csv_bytes(
                &["entry_id", "date", "cost_centre", "amount", "currency"],
                &ledger,
            ),
        )
        .file(
            "renamed_cost_centres.csv",
            csv_bytes(&["old_code", "new_code"], &rename_rows),
        )
        .setup(format!(
            "{sheets}{SETUP}{}{SETUP_RATES}",
            save_workbook("budget.xlsx")
        ));
    Attempt::new(instance, sound)
}

/// Builds budget.xlsx from `SHEETS` (fixed document dates and zip timestamps, so every run
/// writes the same bytes) and rates.db from `RATES`.
const SETUP: &str = r#"import io
import re
import sqlite3
import zipfile

import openpyxl

_wb = openpyxl.Workbook()
_wb.remove(_wb.active)
for _title, _rows in SHEETS:
    _ws = _wb.create_sheet(_title)
    for _row in _rows:
        _ws.append(_row)
        for _cell in _ws[_ws.max_row]:
            if isinstance(_cell.value, datetime.date):
                _cell.number_format = "yyyy-mm-dd"
"#;

/// The rates database, written after the workbook.
const SETUP_RATES: &str = r#"db = sqlite3.connect("rates.db")
db.execute("CREATE TABLE fx_rates (currency TEXT NOT NULL, month TEXT NOT NULL, usd_per_unit REAL NOT NULL, PRIMARY KEY (currency, month))")
db.executemany("INSERT INTO fx_rates VALUES (?, ?, ?)", RATES)
db.commit()
db.close()
del db, sqlite3, openpyxl, _wb, _ws
"#;
