//! `calc_chart`: a chart of a sheet's table, saved as an OpenDocument spreadsheet.

use super::super::{Family, FamilySplit, Gen, Instance};
use super::common::{Cell, TYPE_ODS, fods, loaded, save_as, unrelated_words};
use crate::grading::Check;
use crate::tasks::{App, DemoCondition};

pub(super) const FAMILY: Family = Family {
    name: "calc_chart",
    app: App::Calc,
    split: FamilySplit::TestOnly,
    about: "LibreOffice Calc: insert a chart of a table, saved as ods",
    generate,
};

const COLUMNS: &[&str] = &["Revenue", "Visitors", "Rainfall", "Sales", "Downloads"];

fn generate(g: &mut Gen) -> Instance {
    let rows = g.int(3, 7) as usize;
    let words = unrelated_words(g, rows + 1);
    let (items, stem) = (&words[..rows], words[rows]);
    let column = *g.pick(COLUMNS);
    let values: Vec<i64> = (0..rows).map(|_| g.int(5, 950)).collect();
    let mut sheet = vec![vec![Cell::Text("Label".into()), Cell::Text(column.into())]];
    for (item, value) in items.iter().zip(&values) {
        sheet.push(vec![Cell::Text((*item).into()), Cell::Number(*value)]);
    }
    let source = format!("{stem}.fods");
    let book = format!("{stem}-chart.ods");
    let instruction = format!(
        "LibreOffice Calc has {source} (in /home/user) open. Insert a chart (any type) of the \
         {column} table on the sheet, and save the workbook in OpenDocument Spreadsheet format \
         as {book} in your home folder."
    );
    let instance = Instance::new(instruction)
        .file(&source, fods("Data", &sheet))
        .launch(["libreoffice", "--calc", source.as_str()])
        .check(Check::SpreadsheetChart { path: book.clone() })
        .check(Check::SpreadsheetCell {
            path: book.clone(),
            sheet: None,
            cell: format!("B{}", rows + 1),
            value: values[rows - 1].to_string(),
        });
    let instance = loaded(instance, &source)
        .key("ctrl+Home")
        // Insert > Chart charts the table around the cursor; Return is the wizard's Finish.
        .key("alt+i")
        .wait(400)
        .key("c")
        .wait_for(DemoCondition::Focused("Chart Wizard".into()))
        .key("Return")
        .wait_for(DemoCondition::Gone("Chart Wizard".into()))
        // Out of the chart's edit mode; Save As works with the chart still selected.
        .key("Escape")
        .wait(300);
    save_as(instance, &format!("{stem}-chart"), TYPE_ODS)
}
