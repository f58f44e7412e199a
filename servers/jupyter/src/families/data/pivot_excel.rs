//! `pivot-excel`: an Excel workbook of sales rows (date, region, category, revenue); a value
//! of the month × category pivot table, or one of its row or column totals.
//!
//! Levels: easy has the rows on one sheet (a notes sheet may come first); medium has more rows
//! below a title block (the header is not the first row), revenues now and then written as
//! text such as `$1,234.50`, and category names with stray spaces or capitals; hard spreads
//! the rows over one sheet per region, each with its title block and a closing `Total` row
//! that is not a sale.

use super::draw::{Attempt, draw, save_workbook};
use super::stats::{mean, sum};
use crate::families::money::dollars;
use crate::families::{Family, FamilySplit, Gen, Instance, Level, csv_bytes, date_of, words};
use crate::tasks::{Grader, TaskKind};
use mcpgym_env::answer::half_unit;
use mcpgym_env::generate::wording;

pub(super) const FAMILY: Family = Family {
    name: "pivot-excel",
    kind: TaskKind::DataAnalysis,
    split: FamilySplit::TrainAndTest,
    levelled: true,
    about: "pivot an Excel sheet of sales by month and category; a cell or a total",
    generate,
};

const CATEGORIES: &[&str] = &[
    "books", "garden", "toys", "kitchen", "sports", "music", "office", "outdoor", "beauty", "games",
];

const SHEETS: &[&str] = &["sales", "data", "transactions", "ledger", "raw"];

/// Turns the sheets' CSVs into sales.xlsx: `SHEETS` lists each sheet as (name, CSV or None,
/// title lines written above its table); a cell that reads as an ISO date or a number is
/// written as one, any other as text. Fixed document dates and zip timestamps make every run
/// write the same bytes; the CSVs are removed.
const SETUP: &str = r#"import datetime
import io
import re
import zipfile

import openpyxl


def _cell(text):
    try:
        return datetime.date.fromisoformat(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


_wb = openpyxl.Workbook()
for _i, (_name, _csv, _title) in enumerate(SHEETS):
    if _i == 0:
        _ws = _wb.active
        _ws.title = _name
    else:
        _ws = _wb.create_sheet(_name)
    for _line in _title:
        _ws.append([_line])
    if _title and _csv:
        _ws.append([])
    if not _csv:
        continue
    with open(_csv, newline="") as _f:
        _rows = list(csv.reader(_f))
    _ws.append(_rows[0])
    for _row in _rows[1:]:
        _ws.append([_cell(_text) for _text in _row])
        if isinstance(_ws.cell(row=_ws.max_row, column=1).value, datetime.date):
            _ws.cell(row=_ws.max_row, column=1).number_format = "yyyy-mm-dd"
    os.remove(_csv)
"#;

fn generate(g: &mut Gen) -> Instance {
    draw(g, attempt)
}

fn attempt(g: &mut Gen) -> Attempt {
    let level = g.level();
    let (messy, hard) = (level != Level::Easy, level == Level::Hard);
    let categories = g.subset(CATEGORIES, 3, 6);
    let regions = g.subset(words::CITIES, level.pick(2, 2, 3), 4);
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
    // Rows per sheet: one sheet, or (hard) one per region.
    let mut sheet_rows: Vec<Vec<Vec<String>>> =
        vec![Vec::new(); if hard { regions.len() } else { 1 }];
    // (month YYYY-MM, category, revenue)
    let mut facts: Vec<(String, &str, f64)> = Vec::new();
    let count = level.pick(g.int(80, 260), g.int(260, 600), g.int(600, 1200));
    for _ in 0..count {
        let month = first_month + g.int(0, months - 1);
        let day =
            year_start + (1..month).map(month_days).sum::<i64>() + g.int(0, month_days(month) - 1);
        let date = date_of(day);
        let region = g.index(regions.len());
        let category = *g.pick(&categories);
        let revenue = g.money(10.0, 2000.0, 2);
        let category_text = if messy && g.chance(0.12) {
            match g.index(3) {
                0 => format!(" {category}"),
                1 => format!("{category} "),
                _ => category.to_uppercase(),
            }
        } else {
            category.to_owned()
        };
        let revenue_text = if messy && g.chance(0.2) {
            dollars(revenue)
        } else {
            format!("{revenue:.2}")
        };
        let sheet = if hard { region } else { 0 };
        sheet_rows[sheet].push(vec![
            date.clone(),
            regions[region].to_owned(),
            category_text,
            revenue_text,
        ]);
        facts.push((date[..7].to_owned(), category, revenue));
    }
    let sheet = *g.pick(SHEETS);
    let notes = !hard && g.chance(0.5);
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
    let (build, asked, value) = match g.index(4) {
        0 => (
            format!("{pivot}, each cell the sum of revenue."),
            format!("the cell for month {month}, category {category:?}"),
            sum(&values(Some(&month), Some(category))),
        ),
        1 => (
            format!("{pivot}, each cell the mean revenue per row."),
            format!("the cell for month {month}, category {category:?}"),
            mean(&values(Some(&month), Some(category))),
        ),
        2 => (
            format!("{pivot}, each cell the sum of revenue."),
            format!("the total of the row for month {month} (all categories)"),
            sum(&values(Some(&month), None)),
        ),
        _ => (
            format!("{pivot}, each cell the sum of revenue."),
            format!("the total of the column for category {category:?} (all months)"),
            sum(&values(None, Some(category))),
        ),
    };

    // The workbook: its sheets as (name, CSV, title lines), and each sheet's CSV.
    let header = ["date", "region", "category", "revenue"];
    let mut sheets: Vec<(String, Option<String>, Vec<String>)> = Vec::new();
    let mut csvs: Vec<(String, Vec<u8>)> = Vec::new();
    if notes {
        sheets.push((
            "notes".to_owned(),
            None,
            vec![format!(
                "Sales export. The rows are on the sheet {sheet:?}."
            )],
        ));
    }
    for (i, mut rows) in sheet_rows.into_iter().enumerate() {
        let name = if hard {
            regions[i].to_owned()
        } else {
            sheet.to_owned()
        };
        let title = if messy {
            vec![
                format!(
                    "Sales report: {}",
                    if hard { regions[i] } else { "all regions" }
                ),
                format!("Exported {year}-12-31"),
            ]
        } else {
            Vec::new()
        };
        if hard {
            let total: f64 = rows
                .iter()
                .map(|r| r[3].replace(['$', ','], "").parse::<f64>().unwrap_or(0.0))
                .sum();
            rows.push(vec![
                "Total".to_owned(),
                String::new(),
                String::new(),
                format!("{total:.2}"),
            ]);
        }
        let path = format!("sheet_{}.csv", i + 1);
        csvs.push((path.clone(), csv_bytes(&header, &rows)));
        sheets.push((name, Some(path), title));
    }
    let mut sheets_literal = String::from("SHEETS = [");
    for (name, path, title) in &sheets {
        let path = path
            .as_ref()
            .map_or("None".to_owned(), |p| format!("{p:?}"));
        let title: Vec<String> = title.iter().map(|t| format!("{t:?}")).collect();
        sheets_literal.push_str(&format!("({name:?}, {path}, [{}]), ", title.join(", ")));
    }
    sheets_literal.push_str("]\n");

    let where_ = if hard {
        format!(
            "on {} sheets, one per region ({}); each sheet has a title block above its header \
             row and ends with a Total row, which is not a sale",
            regions.len(),
            regions.join(", ")
        )
    } else if notes {
        format!("on its sheet {sheet:?} (the first sheet holds notes)")
    } else {
        format!("on its only sheet, {sheet:?}")
    };
    let intro = match g.index(4) {
        0 => format!(
            "The Excel workbook sales.xlsx in your home directory has one row per sale {where_}, \
             with the columns date, region, category and revenue."
        ),
        1 => format!(
            "Your home directory holds sales.xlsx, an Excel workbook of sales, one a row \
             {where_}, with the columns date, region, category and revenue."
        ),
        2 => format!(
            "In your home directory, the workbook sales.xlsx lists sales {where_}; the columns \
             are date, region, category and revenue."
        ),
        _ => format!(
            "sales.xlsx (Excel, in your home directory) records one sale a row {where_}, with \
             the columns date, region, category and revenue."
        ),
    };
    let dirty = match level {
        Level::Easy => "",
        Level::Medium => {
            " A title block sits above the header row. A revenue may be written as text such \
             as \"$1,234.50\", and a category may carry stray spaces or capitals (\" Books\" is \
             books)."
        }
        Level::Hard => {
            " A revenue may be written as text such as \"$1,234.50\", and a category may carry \
             stray spaces or capitals (\" Books\" is books)."
        }
    };
    let question = wording::question(g, &asked);
    let precision = wording::precision(g, 2);
    let mut instance = Instance::new(
        format!("{intro}{dirty} {build} {question} {precision}"),
        Grader::Numeric {
            value,
            rel_tol: 0.0,
            abs_tol: half_unit(2),
        },
    );
    for (path, bytes) in csvs {
        instance = instance.file(path, bytes);
    }
    let instance = instance
        .setup(format!(
            "{sheets_literal}{SETUP}{}",
            save_workbook("sales.xlsx")
        ))
        .secret(format!("{value:.2}"));
    Attempt::new(instance, true)
}
