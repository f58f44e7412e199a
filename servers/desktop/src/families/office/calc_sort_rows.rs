//! `calc_sort_rows`: a sheet's rows sorted by their number column, ascending or descending,
//! saved as an Excel workbook.

use super::super::{Family, FamilySplit, Gen, Instance};
use super::common::{Cell, TYPE_XLSX, fods, go_to, loaded, save_as, unrelated_words};
use crate::grading::Check;
use crate::tasks::App;

pub(super) const FAMILY: Family = Family {
    name: "calc_sort_rows",
    app: App::Calc,
    split: FamilySplit::TrainAndTest,
    about: "LibreOffice Calc: sort a table's rows by a number column, saved as xlsx",
    generate,
};

const COLUMNS: &[&str] = &["Price", "Weight", "Score", "Distance", "Height"];

fn generate(g: &mut Gen) -> Instance {
    let rows = g.int(4, 8) as usize;
    let words = unrelated_words(g, rows + 1);
    let (items, stem) = (&words[..rows], words[rows]);
    let column = *g.pick(COLUMNS);
    // Distinct values: one right order.
    let mut values: Vec<i64> = Vec::new();
    while values.len() < rows {
        let v = g.int(1, 999);
        if !values.contains(&v) {
            values.push(v);
        }
    }
    let descending = g.chance(0.5);
    let mut sheet = vec![vec![Cell::Text("Name".into()), Cell::Text(column.into())]];
    for (item, value) in items.iter().zip(&values) {
        sheet.push(vec![Cell::Text((*item).into()), Cell::Number(*value)]);
    }
    let mut sorted: Vec<(i64, &str)> = values.iter().copied().zip(items.iter().copied()).collect();
    sorted.sort();
    if descending {
        sorted.reverse();
    }
    let order = if descending {
        "from the largest to the smallest"
    } else {
        "from the smallest to the largest"
    };
    let source = format!("{stem}.fods");
    let book = format!("{stem}.xlsx");
    let instruction = format!(
        "LibreOffice Calc has {source} (in /home/user) open. Sort the table's rows by {column}, \
         {order}, keeping each name with its {column} and the header row on top. Save the \
         workbook in Excel format as {book} in your home folder."
    );
    let mut instance = Instance::new(instruction)
        .file(&source, fods("Data", &sheet))
        .launch(["libreoffice", "--calc", source.as_str()]);
    for (i, (value, name)) in sorted.iter().enumerate() {
        for (col, want) in [("A", name.to_string()), ("B", value.to_string())] {
            instance = instance.check(Check::SpreadsheetCell {
                path: book.clone(),
                sheet: None,
                cell: format!("{col}{}", i + 2),
                value: want,
            });
        }
    }
    // Data > Sort Ascending / Sort Descending sorts the current region by the cursor's
    // column, keeping the header row.
    let instance = go_to(loaded(instance, &source), 1, 1)
        .key("alt+d")
        .wait(500)
        .key(if descending { "n" } else { "a" })
        .wait(500);
    save_as(instance, stem, TYPE_XLSX)
}
