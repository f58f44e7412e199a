//! `revenue-chart`: sales records to plot, graded from the chart's data (see
//! [`crate::charts`]): the answer is the chart, not a number.
//!
//! - Easy: `sales.csv` (`order_id,date,region,units,unit_price`); a bar chart of each region's
//!   total revenue.
//! - Medium: the same file with a `status` column (returned orders to leave out) and orders
//!   listed twice; a line chart of two named regions' revenue month by month.
//! - Hard: as medium over a whole year, and the web shop's orders in a second file shaped
//!   otherwise (`web_orders.csv`: `id,day,area,amount_cents`, days as DD/MM/YYYY); an order
//!   can be in both files and counts once.
//!
//! The axis labels asked for vary by instance, so a chart cannot be drawn from a memorised
//! template.

use crate::charts::{ChartGrader, ChartKind, ExpectedSeries};
use crate::families::{Family, FamilySplit, Gen, Instance, Level, csv_bytes, date_of};
use crate::tasks::{Grader, TaskKind};

pub(super) const FAMILY: Family = Family {
    name: "revenue-chart",
    kind: TaskKind::DataAnalysis,
    split: FamilySplit::TrainAndTest,
    levelled: true,
    about: "plot revenue by region or month from sales files to clean and merge; graded from the chart's data",
    generate,
};

/// One order as it happened.
struct Order {
    id: u64,
    /// Days since 2020-01-01 ([`date_of`]).
    day: i64,
    /// Its month, 0 for January.
    month: usize,
    region: usize,
    units: i64,
    price_cents: i64,
    returned: bool,
    /// Whether the web shop's export has it (hard).
    on_web: bool,
    /// Whether the store's export has it (a web-only order is only in `web_orders.csv`).
    in_store: bool,
}

impl Order {
    fn cents(&self) -> i64 {
        self.units * self.price_cents
    }
}

/// The days of each month of `year`, as [`date_of`] numbers them.
fn month_days(year: i64) -> Vec<Vec<i64>> {
    let year_of = |day: i64| date_of(day)[..4].parse::<i64>().unwrap_or_default();
    let mut first = (year - 2020) * 365;
    while year_of(first - 1) == year {
        first -= 1;
    }
    while year_of(first) < year {
        first += 1;
    }
    let mut months = vec![Vec::new(); 12];
    for day in (first..).take_while(|&day| year_of(day) == year) {
        let month: usize = date_of(day)[5..7].parse().unwrap_or(1);
        months[month - 1].push(day);
    }
    months
}

fn generate(g: &mut Gen) -> Instance {
    let level = g.level();
    let regions = g.subset(crate::families::words::CITIES, 3, 5);
    let year = g.int(2020, 2025);
    let calendar = month_days(year);
    let months = level.pick(6, 6, 12);
    let per_month = level.pick(g.int(12, 20), g.int(20, 30), g.int(30, 45)) as usize;
    let mut orders = Vec::new();
    let mut next_id = g.int(10_000, 50_000) as u64;
    for (month, days) in calendar.iter().enumerate().take(months) {
        for k in 0..per_month {
            // Every region sells every month, so no point of a line is missing.
            let region = if k < regions.len() {
                k
            } else {
                g.index(regions.len())
            };
            next_id += g.int(1, 9) as u64;
            let returned = level != Level::Easy && g.chance(0.1);
            // A returned order is never on the web export, so "leave out returned orders"
            // has one reading.
            let on_web = level == Level::Hard && !returned && g.chance(0.3);
            orders.push(Order {
                id: next_id,
                day: *g.pick(days),
                month,
                region,
                units: g.int(1, 12),
                price_cents: g.int(150, 40_000),
                returned,
                on_web,
                in_store: !on_web || g.chance(0.5),
            });
        }
    }
    let mut store_rows = Vec::new();
    let mut web_rows = Vec::new();
    for order in &orders {
        let date = date_of(order.day);
        if order.in_store {
            let mut row = vec![
                order.id.to_string(),
                date.clone(),
                regions[order.region].to_owned(),
                order.units.to_string(),
                format!("{}.{:02}", order.price_cents / 100, order.price_cents % 100),
            ];
            if level != Level::Easy {
                row.push(
                    if order.returned {
                        "returned"
                    } else {
                        "shipped"
                    }
                    .to_owned(),
                );
                if g.chance(0.08) {
                    store_rows.push(row.clone());
                }
            }
            store_rows.push(row);
        }
        if order.on_web {
            web_rows.push(vec![
                order.id.to_string(),
                format!("{}/{}/{}", &date[8..10], &date[5..7], &date[..4]),
                regions[order.region].to_owned(),
                order.cents().to_string(),
            ]);
        }
    }
    g.shuffle(&mut store_rows);
    g.shuffle(&mut web_rows);
    let counted: Vec<&Order> = orders.iter().filter(|o| !o.returned).collect();
    let y_label = *g.pick(&["Revenue", "Total revenue", "Sales"]);
    let (grader, asked) = if level == Level::Easy {
        let x_label = *g.pick(&["Region", "Store region", "Area"]);
        let points = regions
            .iter()
            .enumerate()
            .map(|(region, name)| {
                let cents: i64 = counted
                    .iter()
                    .filter(|o| o.region == region)
                    .map(|o| o.cents())
                    .sum();
                ((*name).to_owned(), cents as f64 / 100.0)
            })
            .collect();
        let asked = format!(
            "a bar chart of the total revenue (units × unit_price) of each region: one bar per \
             region, labelled with the region's name, the x axis labelled \"{x_label}\" and the \
             y axis labelled \"{y_label}\""
        );
        let series = vec![ExpectedSeries {
            label: String::new(),
            points,
        }];
        (chart(ChartKind::Bar, x_label, y_label, series), asked)
    } else {
        let x_label = *g.pick(&["Month", "Month of sale", "Period"]);
        let chosen = g.sample(&(0..regions.len()).collect::<Vec<_>>(), 2);
        let series = chosen
            .iter()
            .map(|&region| ExpectedSeries {
                label: regions[region].to_owned(),
                points: (0..months)
                    .map(|month| {
                        let cents: i64 = counted
                            .iter()
                            .filter(|o| o.region == region && o.month == month)
                            .map(|o| o.cents())
                            .sum();
                        (format!("{year}-{:02}", month + 1), cents as f64 / 100.0)
                    })
                    .collect(),
            })
            .collect();
        let asked = format!(
            "a line chart of the monthly revenue (units × unit_price) of the regions \"{}\" and \
             \"{}\": one line per region, labelled with the region's name in a legend, one point \
             per month from {year}-01 to {year}-{months:02} in order, with the month written as \
             text YYYY-MM for x, the x axis labelled \"{x_label}\" and the y axis labelled \
             \"{y_label}\"",
            regions[chosen[0]], regions[chosen[1]]
        );
        (chart(ChartKind::Line, x_label, y_label, series), asked)
    };
    let mut notes = Vec::new();
    if level != Level::Easy {
        notes.push(
            "Some orders were returned (status \"returned\"): leave them out. The export lists \
             some orders twice; count each order once.",
        );
    }
    if level == Level::Hard {
        notes.push(
            "The web shop's orders are in web_orders.csv (id, day as DD/MM/YYYY, area is the \
             region, amount_cents the order's revenue in cents); an order can be in both files \
             and counts once.",
        );
    }
    let intro = *g.pick(&[
        "The file sales.csv in your home directory lists orders: order_id, date, region, units, unit_price.",
        "Your home folder holds sales.csv, one row per order (order_id, date, region, units, unit_price).",
        "sales.csv, in your home directory, is an export of orders with the columns order_id, date, region, units and unit_price.",
    ]);
    let request = *g.pick(&["Draw", "Plot", "Make", "Produce"]);
    let show = *g.pick(&[
        "Show the chart with plt.show() (the last chart shown is the one graded), then call final_answer with \"done\".",
        "Display it with matplotlib's plt.show(); the last chart you show is graded. Then answer \"done\".",
        "The chart is graded from the last figure shown in the notebook (plt.show()); once it is shown, give final_answer \"done\".",
    ]);
    let mut prompt = intro.to_owned();
    for note in notes {
        prompt.push(' ');
        prompt.push_str(note);
    }
    prompt.push_str(&format!(" {request} {asked}. {show}"));
    let mut instance = Instance::new(prompt, Grader::Chart(Box::new(grader)));
    let header: &[&str] = if level == Level::Easy {
        &["order_id", "date", "region", "units", "unit_price"]
    } else {
        &[
            "order_id",
            "date",
            "region",
            "units",
            "unit_price",
            "status",
        ]
    };
    instance = instance.file("sales.csv", csv_bytes(header, &store_rows));
    if level == Level::Hard {
        instance = instance.file(
            "web_orders.csv",
            csv_bytes(&["id", "day", "area", "amount_cents"], &web_rows),
        );
    }
    instance
}

/// The grader of a chart of `kind` with these labels and series; values are sums of cents,
/// so half a cent is the tolerance.
fn chart(
    kind: ChartKind,
    x_label: &str,
    y_label: &str,
    series: Vec<ExpectedSeries>,
) -> ChartGrader {
    ChartGrader {
        kind,
        x_label: x_label.to_owned(),
        y_label: y_label.to_owned(),
        series,
        tolerance: 0.005,
    }
}
