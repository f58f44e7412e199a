//! `sheet_column_total`: under a CSV's quantity column, a label and a formula (sum, average,
//! largest or smallest value of the column), saved in Gnumeric format.

use super::super::{Family, FamilySplit, Gen, Instance};
use super::common::{GNUMERIC_SAVE_AS, save_as_dialog};
use crate::grading::Check;
use crate::tasks::App;

pub(super) const FAMILY: Family = Family {
    name: "sheet_column_total",
    app: App::Spreadsheet,
    split: FamilySplit::TrainAndTest,
    about: "spreadsheet: a label and a SUM/AVERAGE/MAX/MIN formula under a column, saved",
    generate,
};

/// (label typed in column A, function, what the instruction calls it)
const STATS: &[(&str, &str, &str)] = &[
    ("total", "SUM", "sums"),
    ("mean", "AVERAGE", "gives the average of"),
    ("max", "MAX", "gives the largest value in"),
    ("min", "MIN", "gives the smallest value in"),
];

const COLUMNS: &[&str] = &["qty", "count", "units", "stock", "sold"];

fn generate(g: &mut Gen) -> Instance {
    let (label, function, phrase) = *g.pick(STATS);
    let rows = g.int(3, 7) as usize;
    // Items never start with the label: gnumeric would complete the label into the item.
    let pool: Vec<&str> = super::super::words::WORDS
        .iter()
        .copied()
        .filter(|w| !w.starts_with(label))
        .collect();
    let items = g.sample(&pool, rows + 1);
    let stem = items[rows];
    let csv = format!("{stem}.csv");
    let book = format!("{stem}.gnumeric");
    let column = *g.pick(COLUMNS);
    let values: Vec<i64> = (0..rows).map(|_| g.int(1, 500)).collect();
    let mut text = format!("item,{column}\n");
    for (item, value) in items[..rows].iter().zip(&values) {
        text.push_str(&format!("{item},{value}\n"));
    }
    let answer = match function {
        "SUM" => values.iter().sum::<i64>().to_string(),
        "AVERAGE" => format!("{}", values.iter().sum::<i64>() as f64 / rows as f64),
        "MAX" => values.iter().max().expect("rows").to_string(),
        _ => values.iter().min().expect("rows").to_string(),
    };
    let last = rows + 1;
    let target = rows + 2;
    let instruction = format!(
        "The spreadsheet has {csv} (in /home/user) open. In cell A{target} type {label}, and in \
         cell B{target} enter a formula that {phrase} B2:B{last}. Save the workbook in Gnumeric \
         format as {book} in your home folder."
    );
    let answer_text = answer.clone();
    let instance = Instance::new(instruction)
        .file(&csv, text)
        .launch(["gnumeric", csv.as_str()])
        .check(Check::SpreadsheetCell {
            path: book.clone(),
            sheet: None,
            cell: format!("A{target}"),
            value: label.into(),
        })
        .check(Check::SpreadsheetCell {
            path: book.clone(),
            sheet: None,
            cell: format!("B{target}"),
            value: answer.clone(),
        })
        .check(Check::SpreadsheetCell {
            path: book.clone(),
            sheet: None,
            cell: "A2".into(),
            value: items[0].into(),
        })
        // A formula, not its value typed in: the function over the column and nothing else.
        .check(Check::SpreadsheetFormula {
            path: book.clone(),
            sheet: None,
            cell: format!("B{target}"),
            contains: String::new(),
            exactly: Some(format!("{function}(B2:B{last})")),
        });
    // The demo, or a hack typing `cell` instead of the formula.
    let enter = |instance: Instance, cell: String| {
        let mut instance = instance.wait(1000).key("ctrl+Home");
        for _ in 0..target - 1 {
            instance = instance.key("Down");
        }
        instance = instance
            .type_text(label)
            .key("Tab")
            .type_text(cell)
            .key("Return")
            .wait(200)
            // A workbook read from CSV: Ctrl+S asks for a name; `.gnumeric` saves at once.
            .key("ctrl+s");
        save_as_dialog(instance, &book, GNUMERIC_SAVE_AS)
    };
    // The value worked out by hand and typed in: right number, no formula.
    let typed = answer_text.clone();
    let instance = instance.hack("the value typed instead of the formula", |h| {
        enter(h, typed)
    });
    enter(instance, format!("={function}(B2:B{last})"))
}
