//! `calc_delete_rows`: the rows of a table whose city is a given one deleted, the others
//! kept in order, saved as an Excel workbook.

use super::super::{Family, FamilySplit, Gen, Instance, words};
use super::common::{Cell, TYPE_XLSX, fods, go_to, loaded, save_as};
use crate::grading::Check;
use crate::tasks::App;

pub(super) const FAMILY: Family = Family {
    name: "calc_delete_rows",
    app: App::Calc,
    split: FamilySplit::TrainAndTest,
    about: "LibreOffice Calc: delete the rows matching a condition, saved as xlsx",
    generate,
};

fn generate(g: &mut Gen) -> Instance {
    let rows = g.int(5, 8) as usize;
    let names: Vec<&str> = g.sample(words::FIRST_NAMES, rows);
    let stem = g.word();
    let cities = g.sample(words::CITIES, 3);
    let target = cities[0];
    // Two or three rows of the target city, the rest from the others.
    let hits = g.int(2, 3) as usize;
    let mut row_cities: Vec<&str> = (0..rows)
        .map(|i| {
            if i < hits {
                target
            } else {
                *g.pick(&cities[1..])
            }
        })
        .collect();
    g.shuffle(&mut row_cities);
    let amounts: Vec<i64> = (0..rows).map(|_| g.int(10, 500)).collect();
    let mut sheet = vec![vec![
        Cell::Text("Name".into()),
        Cell::Text("City".into()),
        Cell::Text("Amount".into()),
    ]];
    for i in 0..rows {
        sheet.push(vec![
            Cell::Text(names[i].into()),
            Cell::Text(row_cities[i].into()),
            Cell::Number(amounts[i]),
        ]);
    }
    let kept: Vec<usize> = (0..rows).filter(|&i| row_cities[i] != target).collect();
    let source = format!("{stem}.fods");
    let book = format!("{stem}-{}.xlsx", target.to_lowercase());
    let book_stem = book.trim_end_matches(".xlsx").to_owned();
    let instruction = format!(
        "LibreOffice Calc has {source} (in /home/user) open. Delete every row whose City is \
         {target}, so that the other rows stay in their order right under the header with no \
         gaps. Save the workbook in Excel format as {book} in your home folder."
    );
    let cell = |cell: String, value: String| Check::SpreadsheetCell {
        path: book.clone(),
        sheet: None,
        cell,
        value,
    };
    let mut instance = Instance::new(instruction)
        .file(&source, fods("People", &sheet))
        .launch(["libreoffice", "--calc", source.as_str()]);
    for (i, &k) in kept.iter().enumerate() {
        instance = instance
            .check(cell(format!("A{}", i + 2), names[k].into()))
            .check(cell(format!("C{}", i + 2), amounts[k].to_string()));
    }
    instance = instance.check(cell(format!("A{}", kept.len() + 2), String::new()));
    instance = loaded(instance, &source);
    // Bottom up, so the rows still to delete keep their numbers; Shift+Space selects the
    // row and Ctrl+minus deletes a whole selected row without asking.
    for i in (0..rows).rev().filter(|&i| row_cities[i] == target) {
        instance = go_to(instance, 0, i + 1)
            .key("shift+space")
            .key("ctrl+minus")
            .wait(300);
    }
    save_as(instance, &book_stem, TYPE_XLSX)
}
