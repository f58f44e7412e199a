//! `pivot-excel`: an Excel workbook of sales rows (date, region, category, revenue); a value
//! of the month × category pivot table, or one of its row or column totals.

use super::draw::{Attempt, draw};
use super::stats::{mean, sum};
use crate::families::{Family, FamilySplit, Gen, Instance, csv_bytes, date_of, words};
use crate::tasks::{Grader, TaskKind};
use mcpgym_env::answer::half_unit;

pub(super) const FAMILY: Family = Family {
    name: "pivot-excel",
    kind: TaskKind::DataAnalysis,
    split: FamilySplit::TrainAndTest,
    levelled: false,
    about: "pivot an Excel sheet of sales by month and category; a cell or a total",
    generate,
};

const CATEGORIES: &[&str] = &[
    "books", "garden", "toys", "kitchen", "sports", "music", "office", "outdoor", "beauty", "games",
];

const SHEETS: &[&str] = &["sales", "data", "transactions", "ledger", "raw"];

/// Turns sales.csv into sales.xlsx: the rows on the named sheet (dates as Excel dates), an
/// optional notes sheet first, fixed document dates and zip timestamps so every run writes
/// the same bytes; then removes the CSV.
const SETUP: &str = r#"import datetime
import io
import re
import zipfile

import openpyxl

_wb = openpyxl.Workbook()
_notes = _wb.active
if NOTES:
    _notes.title = "notes"
    _notes.append(["Sales export. The rows are on the sheet " + repr(SHEET) + "."])
    _ws = _wb.create_sheet(SHEET)
else:
    _notes.title = SHEET
    _ws = _notes
with open("sales.csv", newline="") as _f:
    _rows = list(csv.reader(_f))
_ws.append(_rows[0])
for _date, _region, _category, _revenue in _rows[1:]:
    _ws.append([datetime.date.fromisoformat(_date), _region, _category, float(_revenue)])
    _ws.cell(row=_ws.max_row, column=1).number_format = "yyyy-mm-dd"
_fixed = datetime.datetime(2024, 1, 1)
_wb.properties.created = _fixed
_buffer = io.BytesIO()
_wb.save(_buffer)
with zipfile.ZipFile(_buffer) as _src, zipfile.ZipFile("sales.xlsx", "w") as _out:
    for _info in _src.infolist():
        _data = _src.read(_info.filename)
        if _info.filename == "docProps/core.xml":
            _data = re.sub(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", b"2024-01-01T00:00:00Z", _data)
        _out.writestr(zipfile.ZipInfo(_info.filename, (1980, 1, 1, 0, 0, 0)), _data,
                      compress_type=zipfile.ZIP_DEFLATED)
os.remove("sales.csv")
"#;

fn generate(g: &mut Gen) -> Instance {
    draw(g, attempt)
}

fn attempt(g: &mut Gen) -> Attempt {
    let categories = g.subset(CATEGORIES, 3, 6);
    let regions = g.subset(words::CITIES, 2, 4);
    let year = g.int(2020, 2025);
    let first_month = g.int(1, 6);
    let months = g.int(4, 12 - first_month + 1);
    // Day numbers since 2020-01-01 of the first of each month of `year`.
    let year_start = (2020..year)
        .map(|y| if y % 4 == 0 { 366 } else { 365 })
        .sum::<i64>();
    let month_days = |m: i64| match m {
        2 if year % 4 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    let mut rows = Vec::new();
    // (month YYYY-MM, category, revenue)
    let mut facts: Vec<(String, &str, f64)> = Vec::new();
    let count = g.int(80, 260);
    for _ in 0..count {
        let month = first_month + g.int(0, months - 1);
        let day =
            year_start + (1..month).map(month_days).sum::<i64>() + g.int(0, month_days(month) - 1);
        let date = date_of(day);
        let region = *g.pick(&regions);
        let category = *g.pick(&categories);
        let revenue = g.money(10.0, 2000.0, 2);
        rows.push(vec![
            date.clone(),
            region.to_owned(),
            category.to_owned(),
            format!("{revenue:.2}"),
        ]);
        facts.push((date[..7].to_owned(), category, revenue));
    }
    let sheet = *g.pick(SHEETS);
    let notes = g.chance(0.5);
    let (month, category) = {
        let fact = g.pick(&facts);
        (fact.0.clone(), fact.1)
    };
    let pivot = "Build a pivot table of revenue with one row per month (YYYY-MM) and one \
                 column per category";
    let select = |f: &&(String, &str, f64), m: Option<&str>, c: Option<&str>| {
        m.is_none_or(|m| f.0 == m) && c.is_none_or(|c| f.1 == c)
    };
    let values = |m: Option<&str>, c: Option<&str>| -> Vec<f64> {
        facts
            .iter()
            .filter(|f| select(f, m, c))
            .map(|f| f.2)
            .collect()
    };
    let (question, value) = match g.index(4) {
        0 => (
            format!(
                "{pivot}, each cell the sum of revenue. What is the cell for month {month}, \
                 category {category:?}?"
            ),
            sum(&values(Some(&month), Some(category))),
        ),
        1 => (
            format!(
                "{pivot}, each cell the mean revenue per row. What is the cell for month \
                 {month}, category {category:?}?"
            ),
            mean(&values(Some(&month), Some(category))),
        ),
        2 => (
            format!(
                "{pivot}, each cell the sum of revenue. What is the total of the row for month \
                 {month} (all categories)?"
            ),
            sum(&values(Some(&month), None)),
        ),
        _ => (
            format!(
                "{pivot}, each cell the sum of revenue. What is the total of the column for \
                 category {category:?} (all months)?"
            ),
            sum(&values(None, Some(category))),
        ),
    };
    let where_ = if notes {
        format!("on its sheet {sheet:?} (the first sheet holds notes)")
    } else {
        format!("on its only sheet, {sheet:?}")
    };
    Attempt::new(
        Instance::new(
        format!(
            "The Excel workbook sales.xlsx in your home directory has one row per sale {where_}, \
             with the columns date, region, category and revenue. {question} Give the number \
             rounded to 2 decimal places."
        ),
        Grader::Numeric {
            value,
            rel_tol: 0.0,
            abs_tol: half_unit(2),
        },
    )
    .file(
        "sales.csv",
        csv_bytes(&["date", "region", "category", "revenue"], &rows),
    )
    .setup(format!(
        "SHEET = {sheet:?}\nNOTES = {}\n{SETUP}",
        if notes { "True" } else { "False" }
    ))
    .secret(format!("{value:.2}")),
        true,
    )
}
