//! `csv-to-json`: convert a CSV of orders into a JSON file of a stated structure (typed
//! records, ids grouped by a column, or per-customer totals); a hidden check compares the file
//! the agent wrote with the structure computed here.
//!
//! Types matter: integers must be JSON integers, yes/no must become booleans, empty cells null.
//!
//! Levels: easy is a clean CSV of up to twenty orders; medium up to fifty, with spaces around
//! values, prices written with `$` and yes/no in other spellings (`Y`, `No`); hard up to
//! eighty, saved on Windows (a byte order mark, `\r\n`), with orders listed twice that count
//! once.

use serde_json::{Map, Value, json};

use crate::families::{Family, FamilySplit, Gen, Instance, Level, csv_bytes, round};
use crate::tasks::{Grader, TaskKind};

use crate::python::hex;

pub(super) const FAMILY: Family = Family {
    name: "csv-to-json",
    kind: TaskKind::Files,
    split: FamilySplit::TrainAndTest,
    levelled: true,
    about: "file work: convert a CSV into JSON of a stated structure and types",
    generate,
};

const INPUTS: &[&str] = &["orders.csv", "sales.csv", "purchases.csv", "export.csv"];
const COUPONS: &[&str] = &["SPRING", "WELCOME", "VIP", "FLASH", "LOYAL"];

/// The check: reads the agent's JSON (bounded) and compares it with the expected value, types
/// included; numbers within a tolerance.
const CHECK: &str = r#"EXPECTED = json.loads(bytes.fromhex(EXPECTED_HEX))


def same(got, want, where):
    if isinstance(want, bool) or want is None:
        return None if got is want else f"{where}: wrong value or type"
    if isinstance(want, int):
        ok = isinstance(got, int) and not isinstance(got, bool) and got == want
        return None if ok else f"{where}: expected an integer (or a different one)"
    if isinstance(want, float):
        if isinstance(got, bool) or not isinstance(got, (int, float)):
            return f"{where}: expected a number"
        return None if abs(got - want) <= TOLERANCE else f"{where}: wrong number"
    if isinstance(want, str):
        return None if got == want else f"{where}: wrong text"
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


path = os.path.join(HOME, OUTPUT)
if not os.path.isfile(path):
    print(f"FAIL: {OUTPUT} does not exist")
elif os.path.getsize(path) > 5_000_000:
    print(f"FAIL: {OUTPUT} is too large")
else:
    try:
        with open(path, encoding="utf-8") as f:
            problem = same(json.load(f), EXPECTED, "$")
    except ValueError:
        problem = f"{OUTPUT} is not valid JSON"
    print(f"FAIL: {problem}" if problem else "PASS")
"#;

/// One row of the CSV.
struct Order {
    id: i64,
    customer: String,
    city: &'static str,
    quantity: i64,
    price: f64,
    shipped: bool,
    coupon: Option<&'static str>,
}

fn generate(g: &mut Gen) -> Instance {
    let level = g.level();
    let hard = level == Level::Hard;
    let dirty = level != Level::Easy;
    let input = *g.pick(INPUTS);
    let customers: Vec<String> = (0..g.int(3, 7))
        .map(|_| format!("{} {}", g.first_name(), g.last_name()))
        .collect();
    let cities = g.subset(crate::families::words::CITIES, 2, 5);
    let mut next_id = g.int(100, 5000);
    let mut rows: Vec<Order> = Vec::new();
    for _ in 0..level.pick(g.int(8, 20), g.int(20, 50), g.int(40, 80)) {
        next_id += g.int(1, 30);
        rows.push(Order {
            id: next_id,
            customer: g.pick(&customers).clone(),
            city: cities[g.index(cities.len())],
            quantity: g.int(1, 12),
            price: g.money(0.5, 300.0, 2),
            shipped: g.chance(0.6),
            coupon: g.chance(0.3).then(|| *g.pick(COUPONS)),
        });
    }
    // Rows in a shuffled order, so ids are not already sorted within a group.
    g.shuffle(&mut rows);
    let mut table: Vec<Vec<String>> = Vec::new();
    for r in &rows {
        // Medium on: spaces around text, prices with a $, yes/no in other spellings.
        let pad = |g: &mut Gen, text: &str| {
            if dirty && g.chance(0.15) {
                format!(
                    "{}{text}{}",
                    " ".repeat(g.int(0, 2) as usize),
                    " ".repeat(g.int(1, 2) as usize)
                )
            } else {
                text.to_owned()
            }
        };
        let price = if dirty && g.chance(0.3) {
            format!("${:.2}", r.price)
        } else {
            format!("{:.2}", r.price)
        };
        let shipped = match (dirty, r.shipped) {
            (false, true) => "yes",
            (false, false) => "no",
            (true, true) => *g.pick(&["yes", "yes", "Yes", "YES", "y", "Y"]),
            (true, false) => *g.pick(&["no", "no", "No", "NO", "n", "N"]),
        };
        let row = vec![
            r.id.to_string(),
            pad(g, &r.customer),
            pad(g, r.city),
            r.quantity.to_string(),
            price,
            shipped.to_owned(),
            r.coupon.unwrap_or_default().to_owned(),
        ];
        table.push(row);
    }
    if hard {
        // Some orders listed twice: a copy of a row further down.
        for _ in 0..g.int(2, 5) {
            let i = g.index(table.len());
            let at = g.int(i as i64 + 1, table.len() as i64) as usize;
            let copy = table[i].clone();
            table.insert(at, copy);
        }
    }
    let stem = input.trim_end_matches(".csv");
    let output = if g.chance(0.5) {
        format!("{stem}.json")
    } else {
        format!("out/{stem}.json")
    };
    let opening = match g.index(4) {
        0 => format!("The file {input} in your home directory has one row per order"),
        1 => format!("In your home directory, the file {input} lists orders, one per row"),
        2 => {
            format!("Your home directory holds the file {input}, an export of orders (one per row)")
        }
        _ => {
            format!("Orders were exported to the file {input} in your home directory, one per row")
        }
    };
    let cleaning = match level {
        Level::Easy => "",
        Level::Medium => {
            " The export is careless: spaces around a value are not part of it, a price may \
             start with $, and shipped may be written yes, y, no or n in any case."
        }
        Level::Hard => {
            " The export is careless: spaces around a value are not part of it, a price may \
             start with $, and shipped may be written yes, y, no or n in any case. Some orders \
             are listed twice (the same row again): each order counts once, at its first row."
        }
    };
    let intro = format!(
        "{opening}, with the columns order_id, customer, city, quantity, price (unit price), \
         shipped (yes or no) and coupon (empty when none).{cleaning} Write the file {output} in \
         your home directory (create any folder it needs), holding"
    );
    let (structure, expected, tolerance) = match g.index(3) {
        0 => {
            let records: Vec<Value> = rows
                .iter()
                .map(|r| {
                    json!({
                        "order_id": r.id,
                        "customer": r.customer,
                        "city": r.city,
                        "quantity": r.quantity,
                        "price": r.price,
                        "shipped": r.shipped,
                        "coupon": r.coupon,
                    })
                })
                .collect();
            (
                " a JSON array with one object per row, in the CSV's row order. Each object has \
                 the CSV's column names as keys, with order_id and quantity as JSON integers, \
                 price as a number, shipped as true or false, and coupon as a string, or null \
                 when the cell is empty."
                    .to_owned(),
                Value::from(records),
                1e-9,
            )
        }
        1 => {
            let by_city = g.chance(0.5);
            let (column, key): (&str, fn(&Order) -> String) = if by_city {
                ("city", |r| r.city.to_owned())
            } else {
                ("customer", |r| r.customer.clone())
            };
            let mut groups = Map::new();
            for r in &rows {
                let ids = groups
                    .entry(key(r))
                    .or_insert_with(|| Value::Array(Vec::new()));
                if let Value::Array(ids) = ids {
                    ids.push(json!(r.id));
                }
            }
            for ids in groups.values_mut() {
                if let Value::Array(ids) = ids {
                    ids.sort_by_key(|v| v.as_i64());
                }
            }
            (
                format!(
                    " a JSON object with one key per distinct {column} value; each key's value \
                     is the array of the order_id values (JSON integers) of that {column}'s \
                     orders, sorted ascending."
                ),
                Value::Object(groups),
                1e-9,
            )
        }
        _ => {
            let mut totals: Vec<(String, i64, f64)> = Vec::new();
            for r in &rows {
                match totals.iter_mut().find(|t| t.0 == r.customer) {
                    Some(t) => {
                        t.1 += 1;
                        t.2 += r.quantity as f64 * r.price;
                    }
                    None => totals.push((r.customer.clone(), 1, r.quantity as f64 * r.price)),
                }
            }
            let summary: Map<String, Value> = totals
                .into_iter()
                .map(|(name, orders, total)| {
                    (name, json!({"orders": orders, "total": round(total, 2)}))
                })
                .collect();
            (
                " a JSON object with one key per distinct customer; each value is an object \
                 {\"orders\": the customer's number of orders (a JSON integer), \"total\": the \
                 sum of quantity × price over their orders, rounded to 2 decimal places}."
                    .to_owned(),
                Value::Object(summary),
                0.011,
            )
        }
    };
    let code = format!(
        "EXPECTED_HEX = {:?}\nOUTPUT = {output:?}\nTOLERANCE = {tolerance:?}\n{CHECK}",
        hex(&expected.to_string())
    );
    const CLOSE: &[&str] = &[
        "Then call final_answer with \"done\".",
        "When the file is written, call final_answer with \"done\".",
        "Finish by calling final_answer with \"done\".",
        "Call final_answer with \"done\" once the file is in place.",
    ];
    let close = *g.pick(CLOSE);
    let mut bytes = csv_bytes(
        &[
            "order_id", "customer", "city", "quantity", "price", "shipped", "coupon",
        ],
        &table,
    );
    if hard {
        // Saved on Windows: a byte order mark and \r\n line ends.
        let text = String::from_utf8_lossy(&bytes).replace('\n', "\r\n");
        bytes = format!("\u{feff}{text}").into_bytes();
    }
    Instance::new(
        format!("{intro}{structure} {close}"),
        Grader::Check { code },
    )
    .file(input, bytes)
}
