//! `calc_save_csv`: one value of a sheet changed, the sheet saved as CSV.

use super::super::{Family, FamilySplit, Gen, Instance};
use super::common::{Cell, TYPE_CSV, fods, go_to, loaded, save_as, saved, unrelated_words};
use crate::grading::Check;
use crate::tasks::{App, DemoCondition};

pub(super) const FAMILY: Family = Family {
    name: "calc_save_csv",
    app: App::Calc,
    split: FamilySplit::TrainAndTest,
    about: "LibreOffice Calc: change one value and save the sheet as CSV",
    generate,
};

const COLUMNS: &[&str] = &["Quantity", "Seats", "Pages", "Boxes", "Minutes"];

fn generate(g: &mut Gen) -> Instance {
    let rows = g.int(3, 7) as usize;
    let words = unrelated_words(g, rows + 1);
    let (items, stem) = (&words[..rows], words[rows]);
    let column = *g.pick(COLUMNS);
    let values: Vec<i64> = (0..rows).map(|_| g.int(1, 400)).collect();
    let changed = g.index(rows);
    let new_value = loop {
        let v = g.int(401, 999);
        if v != values[changed] {
            break v;
        }
    };
    let mut sheet = vec![vec![Cell::Text("Item".into()), Cell::Text(column.into())]];
    for (item, value) in items.iter().zip(&values) {
        sheet.push(vec![Cell::Text((*item).into()), Cell::Number(*value)]);
    }
    let source = format!("{stem}.fods");
    let csv = format!("{stem}.csv");
    let instruction = format!(
        "LibreOffice Calc has {source} (in /home/user) open. Change the {column} of {} to \
         {new_value}, then save the sheet as a comma-separated CSV file named {csv} in your \
         home folder.",
        items[changed]
    );
    let cell = |cell: String, value: String| Check::SpreadsheetCell {
        path: csv.clone(),
        sheet: None,
        cell,
        value,
    };
    let other = (changed + 1) % rows;
    let instance = Instance::new(instruction)
        .file(&source, fods("Data", &sheet))
        .launch(["libreoffice", "--calc", source.as_str()])
        .check(cell(format!("B{}", changed + 2), new_value.to_string()))
        .check(cell(format!("A{}", changed + 2), items[changed].into()))
        .check(cell(format!("B{}", other + 2), values[other].to_string()))
        .check(cell("B1".into(), column.into()));
    let instance = loaded(instance, &source);
    let instance = go_to(instance, 1, changed + 1)
        .type_text(new_value.to_string())
        .key("Return")
        .wait(300);
    // The CSV export asks for its options: Return keeps comma, quote and UTF-8.
    let instance = save_as(instance, stem, TYPE_CSV)
        .wait_for(DemoCondition::Focused("Export Text File".into()))
        .key("Return");
    saved(instance, &csv)
}
