//! `inventory-report`: the opening stock of a few warehouses (SQLite), receipts (CSV) and
//! shipments (nested JSON) of the days after; the agent writes `report.json`: each
//! warehouse's closing stock per SKU as of a date, one more detail per warehouse (the SKUs
//! that ran out on some day, the SKUs below their reorder level, or the items shipped per
//! SKU), now and then each warehouse's stock value, and the total value. A hidden check
//! compares the whole file with the report computed here: keys, types, values and the order
//! the prompt names.
//!
//! - `stock.db`: `warehouses(id, name)`, `products(sku, description, unit_value_cents,
//!   items_per_box, reorder_level)`, `opening_stock(warehouse_id, sku, qty)` (items, at the end of the
//!   opening date);
//! - `receipts.csv`: `receipt_id,date,warehouse,sku,quantity,unit` (the warehouse by name;
//!   `unit` is `item` or `box`);
//! - `shipments.json`: an array of `{shipment_id, date, warehouse_id, status, lines: [{sku,
//!   items}]}`.
//!
//! Levels: easy has two warehouses, a handful of SKUs, every quantity in items and no
//! movement after the report's date; medium has three warehouses, receipts counted in boxes
//! for the SKUs sold by the box, and movements after the report's date (to leave out); hard
//! has more of everything, receipts listed twice, warehouse names in another case or padded
//! with spaces, SKUs in lower case in the shipments, and cancelled shipments (the prompt
//! says each is to be cleaned or ignored).

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::draw::{Attempt, Database, Sql, draw};
use crate::families::{Family, FamilySplit, Gen, Instance, Level, date_of};
use crate::python::hex;
use crate::tasks::{Grader, TaskKind};

pub(super) const FAMILY: Family = Family {
    name: "inventory-report",
    kind: TaskKind::DataAnalysis,
    split: FamilySplit::TrainAndTest,
    levelled: true,
    about: "reconcile warehouses' opening stock (SQLite), receipts (CSV) and shipments (JSON) \
            into a JSON stock report checked whole",
    generate,
};

const WAREHOUSES: &[&str] = &[
    "North Hub",
    "South Depot",
    "East Yard",
    "West Store",
    "Central",
    "Harbour",
    "Airport",
];

const GOODS: &[&str] = &[
    "bolts",
    "gloves",
    "tape",
    "cable",
    "paint",
    "filters",
    "hinges",
    "labels",
    "batteries",
    "brushes",
    "clamps",
    "fuses",
];

/// The hidden check: reads report.json (bounded) and compares it with the expected report,
/// whole: the same keys, integers where integers are expected, lists in order, and the total
/// value within half a cent.
const CHECK: &str = r#"EXPECTED = json.loads(bytes.fromhex(EXPECTED_HEX))


def same(got, want, where):
    if isinstance(want, str):
        return None if isinstance(got, str) and got == want else f"{where}: wrong text"
    if isinstance(want, bool):
        return None if got is want else f"{where}: wrong value or type"
    if isinstance(want, int):
        ok = isinstance(got, int) and not isinstance(got, bool) and got == want
        return None if ok else f"{where}: expected an integer (or a different one)"
    if isinstance(want, float):
        if isinstance(got, bool) or not isinstance(got, (int, float)):
            return f"{where}: expected a number"
        ok = abs(got - want) <= TOLERANCE + 1e-9 * max(1.0, abs(want))
        return None if ok else f"{where}: wrong number"
    if isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            return f"{where}: expected an array of {len(want)} items"
        for i, (g, w) in enumerate(zip(got, want)):
            if problem := same(g, w, f"{where}[{i}]"):
                return problem
        return None
    if not isinstance(got, dict) or set(got) != set(want):
        return f"{where}: expected an object with other keys"
    for key in want:
        if problem := same(got[key], want[key], f"{where}.{key}"):
            return problem
    return None


path = os.path.join(HOME, "report.json")
if not os.path.isfile(path):
    print("FAIL: report.json does not exist")
elif os.path.getsize(path) > 5_000_000:
    print("FAIL: report.json is too large")
else:
    try:
        with open(path, encoding="utf-8") as f:
            problem = same(json.load(f), EXPECTED, "$")
    except ValueError:
        problem = "report.json is not valid JSON"
    print(f"FAIL: {problem}" if problem else "PASS")
"#;

struct Product {
    sku: String,
    value_cents: i64,
    per_box: i64,
    reorder_level: i64,
}

/// The per-warehouse list or table the report asks for beside the closing stock.
#[derive(Clone, Copy, PartialEq)]
enum Detail {
    /// The SKUs that ended some day at zero.
    Stockouts,
    /// The SKUs whose closing stock is below their reorder level.
    BelowReorder,
    /// The items shipped per SKU.
    Shipped,
}

fn generate(g: &mut Gen) -> Instance {
    draw(g, attempt)
}

fn attempt(g: &mut Gen) -> Attempt {
    let level = g.level();
    let easy = level == Level::Easy;
    let hard = level == Level::Hard;
    let warehouses: Vec<&str> = g.sample(WAREHOUSES, level.pick(2, 3, 4));
    // Ids in another order than the names, so that a report sorted by id is wrong.
    let ids: Vec<i64> = {
        let mut ids: Vec<i64> = (1..=warehouses.len() as i64).collect();
        g.shuffle(&mut ids);
        ids
    };
    let good_count = level.pick(g.int(4, 5), g.int(5, 7), g.int(7, 10)) as usize;
    let goods = g.sample(GOODS, good_count);
    let mut products: Vec<Product> = goods
        .iter()
        .map(|_| {
            let per_box = if !easy && g.chance(0.4) {
                *g.pick(&[6, 10, 12, 24])
            } else {
                1
            };
            Product {
                sku: format!("{}{}-{}", g.letters(1), g.letters(1), g.int(100, 999)).to_uppercase(),
                value_cents: g.int(40, 9000),
                per_box,
                reorder_level: g.int(5, 40),
            }
        })
        .collect();
    products.sort_by(|a, b| a.sku.cmp(&b.sku));
    products.dedup_by(|a, b| a.sku == b.sku);
    let opening_day = 1461 + g.int(0, 300);
    let as_of_days = level.pick(g.int(5, 8), g.int(8, 14), g.int(14, 25));
    let later_days = if easy { 0 } else { g.int(2, 5) };
    let as_of = opening_day + as_of_days;

    // stock[w][p] in items, day by day; `ran_out[w][p]`: ended a day at zero by `as_of`.
    let mut stock: Vec<Vec<i64>> = warehouses
        .iter()
        .map(|_| products.iter().map(|_| g.int(0, 60)).collect())
        .collect();
    let opening = stock.clone();
    let mut ran_out = vec![vec![false; products.len()]; warehouses.len()];
    // Items shipped (not cancelled) by `as_of`.
    let mut shipped = vec![vec![0; products.len()]; warehouses.len()];
    let mut closing = stock.clone();
    let mut receipts: Vec<String> = Vec::new();
    let mut shipments: Vec<Value> = Vec::new();
    let mut receipt_id = g.int(1000, 5000);
    let mut shipment_id = g.int(20_000, 60_000);
    for day in opening_day + 1..=as_of + later_days {
        let date = date_of(day);
        for (w, &name) in warehouses.iter().enumerate() {
            for _ in 0..g.int(0, level.pick(1, 2, 3)) {
                let p = g.index(products.len());
                let boxed = products[p].per_box > 1 && g.chance(0.7);
                let quantity = if boxed { g.int(1, 5) } else { g.int(5, 60) };
                stock[w][p] += quantity * if boxed { products[p].per_box } else { 1 };
                receipt_id += g.int(1, 3);
                let written = if hard && g.chance(0.2) {
                    match g.index(3) {
                        0 => name.to_lowercase(),
                        1 => format!(" {name}"),
                        _ => name.to_uppercase(),
                    }
                } else {
                    name.to_owned()
                };
                let row = format!(
                    "R{receipt_id},{date},{written},{},{quantity},{}",
                    products[p].sku,
                    if boxed { "box" } else { "item" }
                );
                if hard && g.chance(0.06) {
                    receipts.push(row.clone());
                }
                receipts.push(row);
            }
            for _ in 0..g.int(0, level.pick(2, 3, 4)) {
                let cancelled = hard && g.chance(0.1);
                let mut lines = Vec::new();
                let mut used = Vec::new();
                for _ in 0..g.int(1, 3) {
                    let p = g.index(products.len());
                    if used.contains(&p) || stock[w][p] == 0 {
                        continue;
                    }
                    used.push(p);
                    let items = if g.chance(0.06) {
                        stock[w][p]
                    } else {
                        g.int(1, stock[w][p].clamp(1, 25))
                    };
                    if !cancelled {
                        stock[w][p] -= items;
                        if day <= as_of {
                            shipped[w][p] += items;
                        }
                    }
                    let sku = if hard && g.chance(0.2) {
                        products[p].sku.to_lowercase()
                    } else {
                        products[p].sku.clone()
                    };
                    lines.push(json!({"sku": sku, "items": items}));
                }
                if lines.is_empty() {
                    continue;
                }
                shipment_id += g.int(1, 9);
                shipments.push(json!({
                    "shipment_id": format!("S{shipment_id}"),
                    "date": date,
                    "warehouse_id": ids[w],
                    "status": if cancelled { "cancelled" } else { "shipped" },
                    "lines": lines,
                }));
            }
            if day <= as_of {
                for (p, &items) in stock[w].iter().enumerate() {
                    ran_out[w][p] |= items == 0;
                }
            }
        }
        if day == as_of {
            closing = stock.clone();
        }
    }

    // The expected report, warehouses by name.
    let mut order: Vec<usize> = (0..warehouses.len()).collect();
    order.sort_by_key(|&w| warehouses[w]);
    let detail = *g.pick(&[Detail::Stockouts, Detail::BelowReorder, Detail::Shipped]);
    let values = g.chance(0.5);
    let mut total_cents = 0;
    // Listed SKUs (or shipped items) over all the warehouses: the detail must say something.
    let mut listed = 0;
    let report_warehouses: Vec<Value> = order
        .iter()
        .map(|&w| {
            let mut closing_stock = Map::new();
            let mut skus = Vec::new();
            let mut items = Map::new();
            let mut cents = 0;
            for (p, product) in products.iter().enumerate() {
                closing_stock.insert(product.sku.clone(), json!(closing[w][p]));
                cents += closing[w][p] * product.value_cents;
                let flagged = match detail {
                    Detail::Stockouts => ran_out[w][p],
                    Detail::BelowReorder => closing[w][p] < product.reorder_level,
                    Detail::Shipped => false,
                };
                if flagged {
                    skus.push(json!(product.sku));
                }
                items.insert(product.sku.clone(), json!(shipped[w][p]));
                listed += usize::from(match detail {
                    Detail::Shipped => shipped[w][p] > 0,
                    _ => flagged,
                });
            }
            total_cents += cents;
            let mut warehouse = Map::new();
            warehouse.insert("name".to_owned(), json!(warehouses[w]));
            warehouse.insert("closing_stock".to_owned(), Value::Object(closing_stock));
            match detail {
                Detail::Stockouts => warehouse.insert("stockouts".to_owned(), json!(skus)),
                Detail::BelowReorder => warehouse.insert("below_reorder".to_owned(), json!(skus)),
                Detail::Shipped => warehouse.insert("shipped".to_owned(), Value::Object(items)),
            };
            if values {
                warehouse.insert("value".to_owned(), json!(cents as f64 / 100.0));
            }
            Value::Object(warehouse)
        })
        .collect();
    let expected = json!({
        "as_of": date_of(as_of),
        "warehouses": report_warehouses,
        "total_value": total_cents as f64 / 100.0,
    });
    let (detail_key, detail_text) = match detail {
        Detail::Stockouts => (
            "stockouts",
            format!(
                "the SKUs, sorted, whose stock in that warehouse was 0 at the end of at least \
                 one day after {} up to and including {}",
                date_of(opening_day),
                date_of(as_of)
            ),
        ),
        Detail::BelowReorder => (
            "below_reorder",
            "the SKUs, sorted, whose closing stock in that warehouse is below the product's \
             reorder_level"
                .to_owned(),
        ),
        Detail::Shipped => (
            "shipped",
            format!(
                "an object with every SKU of the products table as a key and the items shipped \
                 from that warehouse after {} up to and including {} as a JSON integer, 0 \
                 included",
                date_of(opening_day),
                date_of(as_of)
            ),
        ),
    };
    let value_text = if values {
        " and \"value\" (the value of that warehouse's closing stock, each item at its \
         product's unit value, in dollars rounded to 2 decimal places)"
    } else {
        ""
    };

    let boxes = if easy {
        ""
    } else {
        " A receipt's quantity is in items when its unit is item, and in boxes when it is box \
         (a box holds the product's items_per_box items)."
    };
    let dirty = if hard {
        " The files are careless: a receipt may be listed twice (count each receipt_id once), \
         a warehouse name in receipts.csv may be in another case or padded with spaces (it \
         names the warehouse whose name it is once trimmed, ignoring case), a SKU in \
         shipments.json may be in lower case, and a shipment whose status is cancelled never \
         left (ignore it)."
    } else {
        ""
    };
    let count = warehouses.len();
    let intro = match g.index(4) {
        0 => format!("Your home directory holds the stock records of {count} warehouses."),
        1 => format!("The stock records of {count} warehouses are in your home directory."),
        2 => {
            format!("In your home directory are a company's stock records for {count} warehouses.")
        }
        _ => format!("You have the stock records of {count} warehouses, in your home directory."),
    };
    let write = match g.index(4) {
        0 => "Write report.json in your home directory",
        1 => "Create the file report.json in your home directory",
        2 => "Produce report.json, in your home directory",
        _ => "Save a report as report.json in your home directory",
    };
    let close = match g.index(3) {
        0 => "Then call final_answer; the text you give it is not graded, only report.json.",
        1 => "When it is written, call final_answer: only report.json is graded, not the text.",
        _ => "Finish by calling final_answer (its text is not graded; report.json is).",
    };
    let prompt = format!(
        "{intro} stock.db is a SQLite \
         database: warehouses(id, name), products(sku, description, unit_value_cents, \
         items_per_box, reorder_level) and opening_stock(warehouse_id, sku, qty), the stock in items at the \
         end of {}. receipts.csv has receipt_id, date, warehouse (its name), sku, quantity and \
         unit; shipments.json is an array of shipments, each with shipment_id, date, \
         warehouse_id, status and lines (each line a sku and a number of items shipped).{boxes}\
         {dirty} {write}: a JSON object with exactly the keys \
         \"as_of\" (the string \"{}\"), \"warehouses\" and \"total_value\". \"warehouses\" is \
         an array with one object per warehouse, sorted by name, each with exactly the keys \
         \"name\", \"closing_stock\" (an object with every SKU of the products table as a key \
         and its stock in items at the end of {} as a JSON integer, 0 included), \
         \"{detail_key}\" ({detail_text}){value_text}. \"total_value\" is the value of all \
         the warehouses' closing stock, each item at its product's unit value, in dollars \
         rounded to 2 decimal places. Movements dated after {} are left out. {close}",
        date_of(opening_day),
        date_of(as_of),
        date_of(as_of),
        date_of(as_of),
    );

    let mut by_id: BTreeMap<i64, usize> = BTreeMap::new();
    for (w, &id) in ids.iter().enumerate() {
        by_id.insert(id, w);
    }
    let (opening, products) = (&opening, &products);
    let db = Database::new("stock.db")
        .table(
            "warehouses",
            "id INTEGER PRIMARY KEY, name TEXT NOT NULL",
            warehouses
                .iter()
                .enumerate()
                .map(|(w, name)| vec![Sql::from(ids[w]), Sql::from(*name)]),
        )
        .table(
            "products",
            "sku TEXT PRIMARY KEY, description TEXT NOT NULL, unit_value_cents INTEGER NOT \
             NULL, items_per_box INTEGER NOT NULL, reorder_level INTEGER NOT NULL",
            products.iter().enumerate().map(|(p, product)| {
                let packing = if product.per_box > 1 {
                    "boxed"
                } else {
                    "loose"
                };
                vec![
                    product.sku.as_str().into(),
                    format!("{} ({packing})", goods[p % goods.len()]).into(),
                    product.value_cents.into(),
                    product.per_box.into(),
                    product.reorder_level.into(),
                ]
            }),
        )
        .table(
            "opening_stock",
            "warehouse_id INTEGER NOT NULL REFERENCES warehouses(id), sku TEXT NOT NULL \
             REFERENCES products(sku), qty INTEGER NOT NULL",
            by_id.iter().flat_map(|(&id, &w)| {
                products.iter().enumerate().map(move |(p, product)| {
                    vec![
                        Sql::from(id),
                        product.sku.as_str().into(),
                        opening[w][p].into(),
                    ]
                })
            }),
        );
    let mut receipts_csv = String::from("receipt_id,date,warehouse,sku,quantity,unit\n");
    for row in &receipts {
        receipts_csv.push_str(row);
        receipts_csv.push('\n');
    }
    let code = format!(
        "EXPECTED_HEX = {:?}\nTOLERANCE = 0.005\n{CHECK}",
        hex(&expected.to_string())
    );
    let instance = Instance::new(prompt, Grader::Check { code })
        .file("receipts.csv", receipts_csv)
        .file(
            "shipments.json",
            serde_json::to_string_pretty(&Value::from(shipments)).unwrap() + "\n",
        )
        .setup(db.setup());
    // Enough happening to report: some stock left, and some SKU run out somewhere.
    Attempt::new(instance, total_cents > 0 && listed >= 1)
}
