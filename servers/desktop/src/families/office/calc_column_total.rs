//! `calc_column_total`: under a sheet's number column, a label and a formula (sum, average,
//! largest or smallest value), saved as an Excel workbook.

use super::super::{Family, FamilySplit, Gen, Instance};
use super::common::{Cell, TYPE_XLSX, fods, go_to, loaded, save_as, unrelated_words};
use crate::grading::Check;
use crate::tasks::App;

pub(super) const FAMILY: Family = Family {
    name: "calc_column_total",
    app: App::Calc,
    split: FamilySplit::TrainAndTest,
    about: "LibreOffice Calc: a label and a SUM/AVERAGE/MAX/MIN formula under a column, saved as xlsx",
    generate,
};

/// (label typed in column A, function, what the instruction calls it)
const STATS: &[(&str, &str, &str)] = &[
    ("Total", "SUM", "adds up"),
    ("Mean", "AVERAGE", "gives the average of"),
    ("Largest", "MAX", "gives the largest value in"),
    ("Smallest", "MIN", "gives the smallest value in"),
];

const COLUMNS: &[&str] = &["Units", "Stock", "Sold", "Orders", "Visits"];

fn generate(g: &mut Gen) -> Instance {
    let (label, function, phrase) = *g.pick(STATS);
    let rows = g.int(4, 8) as usize;
    let words = unrelated_words(g, rows + 1);
    let (items, stem) = (&words[..rows], words[rows]);
    let column = *g.pick(COLUMNS);
    let values: Vec<i64> = (0..rows).map(|_| g.int(1, 900)).collect();
    let mut sheet = vec![vec![Cell::Text("Item".into()), Cell::Text(column.into())]];
    for (item, value) in items.iter().zip(&values) {
        sheet.push(vec![Cell::Text((*item).into()), Cell::Number(*value)]);
    }
    let answer = match function {
        "SUM" => values.iter().sum::<i64>().to_string(),
        "AVERAGE" => format!("{}", values.iter().sum::<i64>() as f64 / rows as f64),
        "MAX" => values.iter().max().expect("rows").to_string(),
        _ => values.iter().min().expect("rows").to_string(),
    };
    let (last, target) = (rows + 1, rows + 2);
    let source = format!("{stem}.fods");
    let book = format!("{stem}.xlsx");
    let instruction = format!(
        "LibreOffice Calc has {source} (in /home/user) open. In cell A{target} type {label}, and \
         in cell B{target} enter a formula that {phrase} B2:B{last}. Save the workbook in Excel \
         format as {book} in your home folder."
    );
    let cell = |cell: String, value: String| Check::SpreadsheetCell {
        path: book.clone(),
        sheet: None,
        cell,
        value,
    };
    let instance = Instance::new(instruction)
        .file(&source, fods("Data", &sheet))
        .launch(["libreoffice", "--calc", source.as_str()])
        .check(cell(format!("A{target}"), label.into()))
        .check(cell(format!("B{target}"), answer.clone()))
        .check(cell("A2".into(), items[0].into()))
        .check(Check::SpreadsheetFormula {
            path: book.clone(),
            sheet: None,
            cell: format!("B{target}"),
            contains: String::new(),
            // The function over the whole column and nothing else: `=SUM(0)+2995`, the total
            // worked out by hand, is not the formula asked for.
            exactly: Some(format!("{function}(B2:B{last})")),
        });
    // The demo, or a hack with another formula after the function's "(".
    let enter = |instance: Instance, rest: String| {
        let instance = go_to(loaded(instance, &source), 0, target - 1)
            .type_text(label)
            .key("Tab")
            // Calc starts its formula machinery at "=" and on the function's name, and drops
            // keys typed meanwhile on a loaded machine: a pause after each.
            .type_text("=")
            .wait(250)
            .type_text(format!("{function}("))
            .wait(250)
            .type_text(rest)
            .wait(150)
            .key("Return")
            .wait(300);
        save_as(instance, stem, TYPE_XLSX)
    };
    // The value worked out by hand behind a dummy call: the right number, the function's
    // name, and none of the work.
    let hacked = format!("0)+{answer}");
    let instance = instance.hack("the value typed after a dummy call", |h| enter(h, hacked));
    enter(instance, format!("B2:B{last})"))
}
