//! `group-revenue`: a sales CSV; the total revenue of one group (a region, a product, or a
//! month), to the cent.
//!
//! Levels: easy is one clean `sales.csv` with a region column; medium has more rows, prices
//! written as text such as `$1,234.50`, and region and product names with stray spaces or
//! capitals; hard also names each sale's store instead of its region (a second file,
//! `stores.csv`, maps stores to regions), lists some sales twice (one `sale_id`), marks some
//! as cancelled (they count for nothing), and asks about a product or a month within a region.

use super::draw::{Attempt, draw};
use crate::families::money::dollars;
use crate::families::{Family, FamilySplit, Gen, Instance, Level, csv_bytes, words};
use crate::tasks::{Grader, TaskKind};
use mcpgym_env::answer::half_unit;
use mcpgym_env::generate::wording;

pub(super) const FAMILY: Family = Family {
    name: "group-revenue",
    kind: TaskKind::DataAnalysis,
    split: FamilySplit::TrainAndTest,
    levelled: true,
    about: "group-by over a sales CSV: one group's total revenue",
    generate,
};

const PRODUCTS: &[&str] = &[
    "anvil", "bolt", "cog", "drill", "easel", "flask", "gear", "hinge",
];

/// One sale as it happened, before a file wrote it down.
struct Sale {
    region: &'static str,
    product: &'static str,
    /// `YYYY-MM`.
    month: String,
    units: i64,
    price: f64,
    /// Cancelled sales (hard only) count for nothing.
    cancelled: bool,
}

impl Sale {
    fn revenue(&self) -> f64 {
        if self.cancelled {
            0.0
        } else {
            self.units as f64 * self.price
        }
    }
}

fn generate(g: &mut Gen) -> Instance {
    draw(g, attempt)
}

fn attempt(g: &mut Gen) -> Attempt {
    let level = g.level();
    let (messy, hard) = (level != Level::Easy, level == Level::Hard);
    let regions = g.subset(words::CITIES, 3, 6);
    let products = g.subset(PRODUCTS, 3, 6);
    // Hard: two to four stores per region, named by code; stores.csv says where each is.
    let stores: Vec<(String, &str)> = if hard {
        let mut code = g.int(10, 60);
        regions
            .iter()
            .flat_map(|&region| {
                let count = g.int(2, 4);
                (0..count)
                    .map(|_| {
                        code += g.int(1, 7);
                        (format!("ST{code:03}"), region)
                    })
                    .collect::<Vec<_>>()
            })
            .collect()
    } else {
        Vec::new()
    };
    let rows = level.pick(g.int(120, 400), g.int(400, 900), g.int(900, 1800)) as usize;
    let max_price = if messy { 1800.0 } else { 250.0 };
    let mut table = Vec::with_capacity(rows);
    let mut sales = Vec::with_capacity(rows);
    let mut sale_id = g.int(10_000, 90_000);
    for _ in 0..rows {
        // One year, so a month has rows enough that its total is never one sale's.
        let date = crate::families::date_of(4 * 365 + 1 + g.int(0, 365));
        let (place, region) = if hard {
            let (store, region) = g.pick(&stores);
            (store.clone(), *region)
        } else {
            let region = *g.pick(&regions);
            (scuffed(g, region, messy), region)
        };
        let product = *g.pick(&products);
        let units = g.int(1, 40);
        let price = g.money(1.0, max_price, 2);
        let cancelled = hard && g.chance(0.08);
        let price_text = if messy && g.chance(0.3) {
            dollars(price)
        } else {
            format!("{price:.2}")
        };
        let mut row = vec![
            date.clone(),
            place,
            scuffed(g, product, messy),
            units.to_string(),
            price_text,
        ];
        if hard {
            sale_id += g.int(1, 5);
            row.insert(0, format!("T{sale_id}"));
            row.push(if cancelled { "cancelled" } else { "completed" }.to_owned());
            // A sale exported twice: the same line again, to be counted once.
            if g.chance(0.05) {
                table.push(row.clone());
            }
        }
        table.push(row);
        sales.push(Sale {
            region,
            product,
            month: date[..7].to_owned(),
            units,
            price,
            cancelled,
        });
    }
    let total = |keep: &dyn Fn(&Sale) -> bool| -> f64 {
        sales.iter().filter(|s| keep(s)).map(Sale::revenue).sum()
    };
    // Hard asks within a region: the join to stores.csv is always part of the work.
    let within = if hard { Some(*g.pick(&regions)) } else { None };
    let in_region = |s: &Sale| within.is_none_or(|r| s.region == r);
    let region_text = within.map_or(String::new(), |r| format!(" in the {r} region"));
    let (scope, value, count) = match g.int(0, 2) {
        0 => {
            let region = within.unwrap_or_else(|| *g.pick(&regions));
            let keep = |s: &Sale| s.region == region;
            (
                format!("the {region} region"),
                total(&keep),
                sales.iter().filter(|s| keep(s)).count(),
            )
        }
        1 => {
            let product = *g.pick(&products);
            let keep = |s: &Sale| s.product == product && in_region(s);
            (
                format!("the product {product:?}{region_text}"),
                total(&keep),
                sales.iter().filter(|s| keep(s)).count(),
            )
        }
        _ => {
            let month = g.pick(&sales).month.clone();
            let keep = |s: &Sale| s.month == month && in_region(s);
            let everything = if hard {
                region_text.clone()
            } else {
                " (all regions and products)".to_owned()
            };
            (
                format!("the month {month}{everything}"),
                total(&keep),
                sales.iter().filter(|s| keep(s)).count(),
            )
        }
    };

    let mut columns = vec!["date", if hard { "store" } else { "region" }, "product"];
    columns.extend(["units", "unit_price"]);
    if hard {
        columns.insert(0, "sale_id");
        columns.push("status");
    }
    let listed = columns.join(", ");
    let intro = match g.index(5) {
        0 => format!("The file sales.csv in your home directory has one row per sale: {listed}."),
        1 => format!(
            "Your home directory holds sales.csv, one sale a row, with the columns {listed}."
        ),
        2 => format!("In your home directory, sales.csv records every sale of a year ({listed})."),
        3 => format!(
            "A year of sales is in sales.csv in your home directory; its columns are {listed}."
        ),
        _ => {
            format!("sales.csv, in your home directory, is a sales log with the columns {listed}.")
        }
    };
    let stores_text = if hard {
        " stores.csv (store, region) says which region each store is in."
    } else {
        ""
    };
    let dirty = if messy {
        " The export is untidy: a unit_price may be written as text with a dollar sign and \
         thousands separators (such as \"$1,234.50\"), and a name may carry stray spaces or \
         capitals (\" Gear\" is gear)."
    } else {
        ""
    };
    let traps = if hard {
        " A sale may be listed more than once (count each sale_id once), and a sale whose \
         status is cancelled counts for nothing."
    } else {
        ""
    };
    let revenue = match g.index(3) {
        0 => "A sale's revenue is units × unit_price.",
        1 => "Revenue is units × unit_price, summed over the sales.",
        _ => "Each sale brings in units × unit_price.",
    };
    let question = wording::question(g, &format!("the total revenue of {scope}"));
    let precision = wording::precision(g, 2);
    let prompt = format!("{intro}{stores_text}{dirty}{traps} {revenue} {question} {precision}");
    let mut instance = Instance::new(
        prompt,
        Grader::Numeric {
            value,
            rel_tol: 0.0,
            abs_tol: half_unit(2),
        },
    )
    .file("sales.csv", csv_bytes(&columns, &table));
    if hard {
        let rows: Vec<Vec<String>> = stores
            .iter()
            .map(|(store, region)| vec![store.clone(), (*region).to_owned()])
            .collect();
        instance = instance.file("stores.csv", csv_bytes(&["store", "region"], &rows));
    }
    let instance = instance.secret(format!("{value:.2}"));
    Attempt::new(instance, count >= 3)
}

/// `name` as an untidy export may write it (when `messy`): now and then padded with a space
/// or in other capitals.
fn scuffed(g: &mut Gen, name: &str, messy: bool) -> String {
    if !messy || !g.chance(0.15) {
        return name.to_owned();
    }
    match g.index(3) {
        0 => format!(" {name}"),
        1 => format!("{name} "),
        _ if name.starts_with(|c: char| c.is_uppercase()) => name.to_uppercase(),
        _ => {
            let mut chars = name.chars();
            chars.next().map_or(String::new(), |first| {
                first.to_uppercase().chain(chars).collect()
            })
        }
    }
}
