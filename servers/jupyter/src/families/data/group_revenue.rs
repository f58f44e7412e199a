//! `group-revenue`: a sales CSV; the total revenue of one group (a region, a product, or a
//! month), to the cent.

use crate::families::{Family, FamilySplit, Gen, Instance, csv_bytes};
use crate::tasks::{Grader, TaskKind};
use mcpgym_env::answer::half_unit;

pub(super) const FAMILY: Family = Family {
    name: "group-revenue",
    kind: TaskKind::DataAnalysis,
    split: FamilySplit::TrainAndTest,
    levelled: false,
    about: "group-by over a sales CSV: one group's total revenue",
    generate,
};

const PRODUCTS: &[&str] = &[
    "anvil", "bolt", "cog", "drill", "easel", "flask", "gear", "hinge",
];

fn generate(g: &mut Gen) -> Instance {
    let regions = g.subset(crate::families::words::CITIES, 3, 6);
    let products = g.subset(PRODUCTS, 3, 6);
    let rows = g.int(120, 400) as usize;
    let mut table = Vec::with_capacity(rows);
    // (region, product, month, units × price in cents)
    let mut facts = Vec::with_capacity(rows);
    for _ in 0..rows {
        // One year, so a month has rows enough that its total is never one sale's.
        let date = crate::families::date_of(4 * 365 + 1 + g.int(0, 365));
        let region = *g.pick(&regions);
        let product = *g.pick(&products);
        let units = g.int(1, 40);
        let price = g.money(1.0, 250.0, 2);
        table.push(vec![
            date.clone(),
            region.to_owned(),
            product.to_owned(),
            units.to_string(),
            format!("{price:.2}"),
        ]);
        facts.push((region, product, date[..7].to_owned(), units, price));
    }
    let (question, total) = match g.int(0, 2) {
        0 => {
            let region = *g.pick(&regions);
            let total: f64 = facts
                .iter()
                .filter(|f| f.0 == region)
                .map(|f| f.3 as f64 * f.4)
                .sum();
            (format!("the {region} region"), total)
        }
        1 => {
            let product = *g.pick(&products);
            let total: f64 = facts
                .iter()
                .filter(|f| f.1 == product)
                .map(|f| f.3 as f64 * f.4)
                .sum();
            (format!("the product {product:?}"), total)
        }
        _ => {
            let month = g.pick(&facts).2.clone();
            let total: f64 = facts
                .iter()
                .filter(|f| f.2 == month)
                .map(|f| f.3 as f64 * f.4)
                .sum();
            (
                format!("the month {month} (all regions and products)"),
                total,
            )
        }
    };
    Instance::new(
        format!(
            "The file sales.csv in your home directory has one row per sale: date, region, \
             product, units, unit_price. What is the total revenue (units × unit_price, summed) \
             of {question}? Give the number rounded to 2 decimal places."
        ),
        Grader::Numeric {
            value: total,
            rel_tol: 0.0,
            abs_tol: half_unit(2),
        },
    )
    .file(
        "sales.csv",
        csv_bytes(
            &["date", "region", "product", "units", "unit_price"],
            &table,
        ),
    )
    .secret(format!("{total:.2}"))
}
