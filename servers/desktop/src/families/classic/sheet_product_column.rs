//! `sheet_product_column`: a new column of per-row products (quantity times price) next to
//! a CSV's data, saved in Gnumeric format. Held out.

use super::super::{Family, FamilySplit, Gen, Instance};
use super::common::{GNUMERIC_SAVE_AS, distinct_words, save_as_dialog};
use crate::grading::Check;
use crate::tasks::App;

pub(super) const FAMILY: Family = Family {
    name: "sheet_product_column",
    app: App::Spreadsheet,
    split: FamilySplit::TestOnly,
    about: "spreadsheet: a new column multiplying two columns row by row, saved",
    generate,
};

const LABELS: &[&str] = &["value", "cost", "amount", "subtotal"];

fn generate(g: &mut Gen) -> Instance {
    let rows = g.int(2, 5) as usize;
    let w = distinct_words(g, rows + 1);
    let stem = w[rows];
    let csv = format!("{stem}.csv");
    let book = format!("{stem}.gnumeric");
    let label = *g.pick(LABELS);
    let mut text = String::from("item,qty,unit_price\n");
    let mut products = Vec::new();
    for item in &w[..rows] {
        let qty = g.int(1, 40);
        let cents = g.int(10, 9999);
        let price = format!("{}.{:02}", cents / 100, cents % 100);
        text.push_str(&format!("{item},{qty},{price}\n"));
        // Exact in cents, then written as gnumeric shows it.
        let total = qty * cents;
        products.push(format!("{}", total as f64 / 100.0));
    }
    let last = rows + 1;
    let cells: Vec<String> = (2..=last).map(|r| format!("D{r}")).collect();
    let instruction = format!(
        "The spreadsheet has {csv} (in /home/user) open: item, qty, unit_price. In D1 type \
         {label}, and in each of D2 to D{last} enter a formula multiplying that row's qty by \
         its unit_price. Save the workbook in Gnumeric format as {book} in your home folder."
    );
    let mut instance = Instance::new(instruction)
        .file(&csv, text)
        .launch(["gnumeric", csv.as_str()])
        .check(Check::SpreadsheetCell {
            path: book.clone(),
            sheet: None,
            cell: "D1".into(),
            value: label.into(),
        });
    for (cell, product) in cells.iter().zip(&products) {
        instance = instance.check(Check::SpreadsheetCell {
            path: book.clone(),
            sheet: None,
            cell: cell.clone(),
            value: product.clone(),
        });
    }
    instance = instance
        .wait(1000)
        .key("ctrl+Home")
        .key("Right")
        .key("Right")
        .key("Right")
        .type_text(label)
        .key("Return");
    for r in 2..=last {
        instance = instance.type_text(format!("=B{r}*C{r}")).key("Return");
    }
    let instance = instance.wait(200).key("ctrl+s");
    save_as_dialog(instance, &book, GNUMERIC_SAVE_AS)
}
