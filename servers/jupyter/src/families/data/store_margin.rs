//! `store-margin`: two stores' sales exports in different schemas and a product catalog in
//! SQLite; the gross margin (revenue less the catalog's unit cost) of one category in one
//! month, which takes reading three sources, reconciling them, joining and aggregating.
//!
//! - `north_sales.csv`: `txn_id,date,sku,qty,price` with ISO dates and prices in dollars.
//! - `south_sales.csv`: semicolon-separated, `Transaction;Sale Date;SKU;Quantity;Unit Price
//!   (cents)`, dates as DD/MM/YYYY (a parser guessing month-first gets early days wrong).
//! - `catalog.db`: `products(sku, name, category_id, unit_cost_cents)` and
//!   `categories(id, name)`, built by the setup with Python's sqlite3.
//!
//! Levels: easy asks the margin of a category in a month over both stores; medium adds the
//! margin as a percentage of revenue and the north-less-south difference, and returns
//! (negative quantities); hard has several times the sales, SKUs in lower case or padded
//! with spaces, transactions listed twice, prices written with a `$`, and sales of products
//! the catalog does not list (the prompt says each is to be cleaned or ignored).

use super::draw::{Attempt, Database, Sql, draw};
use crate::families::{Family, FamilySplit, Gen, Instance, Level};
use crate::tasks::{Grader, TaskKind};
use mcpgym_env::answer::half_unit;
use mcpgym_env::generate::wording;
use mcpgym_env::generate::words::MONTHS;

pub(super) const FAMILY: Family = Family {
    name: "store-margin",
    kind: TaskKind::DataAnalysis,
    split: FamilySplit::TrainAndTest,
    levelled: true,
    about: "reconcile two stores' sales exports with a SQLite catalog; a category's gross margin in a month",
    generate,
};

/// Category names and the two letters their SKUs start with.
const CATEGORIES: &[(&str, &str)] = &[
    ("Garden", "GA"),
    ("Kitchen", "KI"),
    ("Toys", "TO"),
    ("Office", "OF"),
    ("Outdoor", "OU"),
    ("Bath", "BA"),
    ("Lighting", "LI"),
    ("Storage", "ST"),
];

const NOUNS: &[&str] = &[
    "Lamp", "Hose", "Kettle", "Puzzle", "Stapler", "Tent", "Towel", "Shelf", "Basket", "Rake",
    "Mug", "Kite", "Folder", "Lantern", "Mat", "Bin",
];

struct Product {
    sku: String,
    category: usize,
    cost_cents: i64,
}

/// One sale as it happened (before any export wrote it down).
struct Sale {
    north: bool,
    year: i64,
    month: i64,
    product: Option<usize>,
    qty: i64,
    price_cents: i64,
}

fn generate(g: &mut Gen) -> Instance {
    draw(g, attempt)
}

fn attempt(g: &mut Gen) -> Attempt {
    let level = g.level();
    let hard = level == Level::Hard;
    let category_count = level.pick(3, 5, 8);
    let categories: Vec<usize> =
        g.sample(&(0..CATEGORIES.len()).collect::<Vec<_>>(), category_count);
    let mut products = Vec::new();
    let mut next_sku = g.int(1000, 5000);
    for _ in 0..level.pick(g.int(8, 14), g.int(15, 30), g.int(40, 70)) {
        next_sku += g.int(1, 9);
        let category = *g.pick(&categories);
        products.push(Product {
            sku: format!("{}-{next_sku}", CATEGORIES[category].1),
            category,
            cost_cents: g.int(150, 6000),
        });
    }
    // SKUs sold but missing from the catalog (hard only): their sales are ignored.
    let unlisted: Vec<String> = (0..if hard { g.int(2, 5) } else { 0 })
        .map(|_| {
            next_sku += g.int(1, 9);
            format!("{}-{next_sku}", CATEGORIES[*g.pick(&categories)].1)
        })
        .collect();
    let returns = level != Level::Easy;
    let sale_count = level.pick(g.int(80, 160), g.int(200, 500), g.int(900, 1600));
    let mut sales = Vec::new();
    let mut north_rows: Vec<String> = Vec::new();
    let mut south_rows: Vec<String> = Vec::new();
    let mut txn = g.int(10_000, 80_000);
    for _ in 0..sale_count {
        txn += g.int(1, 4);
        let north = g.chance(0.5);
        // Mostly 2024, with late 2023 so that a month filter must check the year.
        let (year, month) = if g.chance(0.15) {
            (2023, g.int(9, 12))
        } else {
            (2024, g.int(1, 12))
        };
        let day = g.int(1, 28);
        let (product, sku) = if !unlisted.is_empty() && g.chance(0.04) {
            (None, g.pick(&unlisted).clone())
        } else {
            let p = g.index(products.len());
            (Some(p), products[p].sku.clone())
        };
        let cost = product.map_or(g.int(150, 6000), |p| products[p].cost_cents);
        // Sold above cost mostly, at a loss now and then (clearance).
        let price_cents = (cost as f64 * g.float(0.85, 1.9)).round() as i64;
        let qty = if returns && g.chance(0.06) {
            -g.int(1, 3)
        } else {
            g.int(1, 6)
        };
        let written_sku = if hard && g.chance(0.15) {
            match g.index(3) {
                0 => sku.to_lowercase(),
                1 => format!(" {sku}"),
                _ => format!("{sku}  "),
            }
        } else {
            sku
        };
        let row = if north {
            let price = format!("{}.{:02}", price_cents / 100, price_cents % 100);
            let price = if hard && g.chance(0.2) {
                format!("${price}")
            } else {
                price
            };
            format!("N{txn},{year}-{month:02}-{day:02},{written_sku},{qty},{price}")
        } else {
            format!("S{txn};{day:02}/{month:02}/{year};{written_sku};{qty};{price_cents}")
        };
        let rows = if north {
            &mut north_rows
        } else {
            &mut south_rows
        };
        if hard && g.chance(0.05) {
            rows.push(row.clone());
        }
        rows.push(row);
        sales.push(Sale {
            north,
            year,
            month,
            product,
            qty,
            price_cents,
        });
    }

    let category = *g.pick(&categories);
    let category_name = CATEGORIES[category].0;
    let month = g.int(1, 12);
    let month_name = MONTHS[(month - 1) as usize];
    // (revenue, margin) in cents of the category's 2024 sales in the month, per store.
    let mut north = (0i64, 0i64);
    let mut south = (0i64, 0i64);
    let mut counted = 0;
    for sale in &sales {
        let Some(p) = sale.product else { continue };
        if products[p].category != category || sale.year != 2024 || sale.month != month {
            continue;
        }
        let store = if sale.north { &mut north } else { &mut south };
        store.0 += sale.qty * sale.price_cents;
        store.1 += sale.qty * (sale.price_cents - products[p].cost_cents);
        counted += 1;
    }
    let scope = format!("the {category_name} category in {month_name} 2024");
    let questions = level.pick(1, 3, 3);
    let (question, value, sound) = match g.index(questions) {
        0 => (
            format!("the gross margin, in dollars, of {scope}, both stores together"),
            (north.1 + south.1) as f64 / 100.0,
            true,
        ),
        1 => {
            let revenue = north.0 + south.0;
            let percent = 100.0 * (north.1 + south.1) as f64 / revenue.max(1) as f64;
            // Clear of a rounding edge at 2 decimals.
            let edge = ((percent * 100.0).abs().fract() - 0.5).abs() > 0.02;
            (
                format!(
                    "the gross margin of {scope}, both stores together, as a percentage of \
                     that revenue"
                ),
                percent,
                revenue > 0 && edge,
            )
        }
        _ => (
            format!(
                "the amount, in dollars, by which the north store's gross margin on {scope} \
                 exceeded the south store's (negative if it fell short)"
            ),
            (north.1 - south.1) as f64 / 100.0,
            true,
        ),
    };
    let returns_text = if returns {
        " A negative quantity is a return: it takes its revenue and its margin back."
    } else {
        ""
    };
    let dirty = if hard {
        " The exports are careless: a SKU may be in lower case or padded with spaces (it names \
         the product whose SKU it is once trimmed and upper-cased), a north price may carry a \
         leading $, and a transaction may be listed twice (count each transaction id once). \
         Sales of SKUs the catalog does not list are ignored."
    } else {
        ""
    };
    let intro = match g.index(4) {
        0 => "Your home directory holds the sales exports of two stores and their product catalog.",
        1 => "Two stores' sales exports and their product catalog are in your home directory.",
        2 => {
            "In your home directory are the sales exports of two stores, north and south, and \
              the catalog of the products they sell."
        }
        _ => {
            "A retailer has left you its two stores' sales exports and its product catalog, \
              in your home directory."
        }
    };
    let question = wording::question(g, &question);
    let precision = wording::precision(g, 2);
    let prompt = format!(
        "{intro} north_sales.csv has txn_id, date (YYYY-MM-DD), sku, qty and price (the unit price in \
         dollars). south_sales.csv is separated by semicolons, with Transaction, Sale Date \
         (DD/MM/YYYY), SKU, Quantity and Unit Price (cents). catalog.db is a SQLite database: \
         products(sku, name, category_id, unit_cost_cents) and categories(id, name). A sale's \
         revenue is quantity × unit price; its gross margin is quantity × (unit price − the \
         product's unit cost).{returns_text}{dirty} {question} {precision}"
    );
    let catalog = Database::new("catalog.db")
        .table(
            "categories",
            "id INTEGER PRIMARY KEY, name TEXT NOT NULL",
            categories
                .iter()
                .map(|&c| vec![Sql::from(c as i64 + 1), CATEGORIES[c].0.into()]),
        )
        .table(
            "products",
            "sku TEXT PRIMARY KEY, name TEXT NOT NULL, category_id INTEGER NOT NULL REFERENCES \
             categories(id), unit_cost_cents INTEGER NOT NULL",
            products.iter().enumerate().map(|(i, p)| {
                let name = format!("{} {}", CATEGORIES[p.category].0, NOUNS[i % NOUNS.len()]);
                vec![
                    p.sku.as_str().into(),
                    name.into(),
                    Sql::from(p.category as i64 + 1),
                    p.cost_cents.into(),
                ]
            }),
        );
    let mut north_csv = String::from("txn_id,date,sku,qty,price\n");
    for row in &north_rows {
        north_csv.push_str(row);
        north_csv.push('\n');
    }
    let mut south_csv = String::from("Transaction;Sale Date;SKU;Quantity;Unit Price (cents)\n");
    for row in &south_rows {
        south_csv.push_str(row);
        south_csv.push('\n');
    }
    let instance = Instance::new(
        prompt,
        Grader::Numeric {
            value,
            rel_tol: 0.0,
            abs_tol: half_unit(2),
        },
    )
    .file("north_sales.csv", north_csv)
    .file("south_sales.csv", south_csv)
    .setup(catalog.setup())
    .secret(format!("{value:.2}"));
    Attempt::new(instance, sound && counted >= level.pick(3, 6, 10))
}
