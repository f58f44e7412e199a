//! `payroll-overtime`: a staff list, a year of weekly timesheets and a SQLite database of
//! department multipliers and exchange rates; a department's overtime in a month, which takes
//! joining the three, converting currencies, summing each week's hours and keeping what is
//! above 40.
//!
//! - `employees.csv`: `emp_id,name,department,hourly_rate,currency` (USD or EUR; the
//!   department each employee starts the period in).
//! - `timesheets.jsonl`: one JSON object a line, `{"emp_id", "week_start" (a Monday),
//!   "hours": [Monday … Sunday]}`. A week belongs to the month of its start date.
//! - `rates.db`: `departments(id, name, overtime_multiplier)`, `fx(month, usd_per_eur)` (one
//!   rate a month, `YYYY-MM`), and from medium on `transfers(emp_id, effective_date,
//!   department_id)`.
//!
//! Levels: easy has a few employees paid in dollars over three months; medium pays some in
//! euros (converted at the rate of the week's month), moves employees between departments
//! mid-period (a week counts for the department in force on its start date) and starts in
//! the month before the first one asked about (a December 2023 week for a January start);
//! hard has a year of timesheets for several times the staff, weeks listed twice, employee
//! ids in lower case or padded with spaces, hours written as text (`"7h30"`, `"8h"`) and
//! timesheets of people not on the staff list (the prompt says each is to be cleaned or
//! ignored).
//!
//! Questions: a department's overtime pay in a month, its overtime hours, its overtime pay as
//! a percentage of its whole pay, the difference between two departments' overtime pay, or
//! the largest overtime pay of one employee of the department.

use super::draw::{Attempt, Database, Sql, draw};
use crate::families::{Family, FamilySplit, Gen, Instance, Level, date_of};
use crate::tasks::{Grader, TaskKind};
use mcpgym_env::answer::half_unit;
use mcpgym_env::generate::words::MONTHS;

pub(super) const FAMILY: Family = Family {
    name: "payroll-overtime",
    kind: TaskKind::DataAnalysis,
    split: FamilySplit::TrainAndTest,
    levelled: true,
    about: "join a staff list, weekly timesheets and a SQLite database of multipliers, \
            transfers and exchange rates; a department's overtime in a month",
    generate,
};

const DEPARTMENTS: &[&str] = &[
    "Assembly",
    "Logistics",
    "Maintenance",
    "Packaging",
    "Quality",
    "Warehouse",
    "Support",
    "Security",
];

const MULTIPLIERS: &[f64] = &[1.25, 1.5, 1.5, 1.75, 2.0];

/// Day number (since 2020-01-01) of Monday 1 January 2024.
const JAN_1_2024: i64 = 1461;

/// The regular hours of a week; hours above them are overtime.
const REGULAR: f64 = 40.0;

struct Employee {
    id: String,
    department: usize,
    rate_cents: i64,
    euro: bool,
    /// (day number, department) in date order: from that day on, the employee is there.
    transfers: Vec<(i64, usize)>,
}

impl Employee {
    fn department_on(&self, day: i64) -> usize {
        self.transfers
            .iter()
            .rev()
            .find(|(from, _)| *from <= day)
            .map_or(self.department, |t| t.1)
    }
}

/// One employee's week, as worked.
struct Week {
    employee: usize,
    start: i64,
    hours: [f64; 7],
}

/// (year, month) of a day number.
fn month_of(day: i64) -> (i64, i64) {
    let date = date_of(day);
    (date[..4].parse().unwrap(), date[5..7].parse().unwrap())
}

/// What a department's weeks in a month add up to.
#[derive(Default, Clone, Copy)]
struct Totals {
    overtime_hours: f64,
    overtime_pay: f64,
    pay: f64,
    overtime_weeks: usize,
}

fn generate(g: &mut Gen) -> Instance {
    draw(g, attempt)
}

/// Writes an hour count as the timesheets do: a JSON number, or on the hard level now and
/// then text such as `"7h30"`.
fn hours_text(g: &mut Gen, hours: f64, hard: bool) -> String {
    let whole = hours.trunc() as i64;
    let minutes = ((hours - hours.trunc()) * 60.0).round() as i64;
    if hard && g.chance(0.25) {
        if minutes == 0 {
            format!("\"{whole}h\"")
        } else {
            format!("\"{whole}h{minutes:02}\"")
        }
    } else if minutes == 0 {
        format!("{whole}")
    } else {
        format!("{hours}")
    }
}

fn attempt(g: &mut Gen) -> Attempt {
    let level = g.level();
    let hard = level == Level::Hard;
    let easy = level == Level::Easy;
    let department_count = level.pick(g.int(2, 3), g.int(3, 4), g.int(4, 6)) as usize;
    let departments: Vec<usize> = g.sample(
        &(0..DEPARTMENTS.len()).collect::<Vec<_>>(),
        department_count,
    );
    let multipliers: Vec<f64> = departments.iter().map(|_| *g.pick(MULTIPLIERS)).collect();
    // The months asked about (of 2024), and the weeks written: those starting in them, and
    // from medium on the four weeks before.
    let month_count = level.pick(3, 6, 12);
    let first_month = g.int(1, 13 - month_count);
    let mut first_day = JAN_1_2024;
    while month_of(first_day) != (2024, first_month) {
        first_day += 7;
    }
    if !easy {
        first_day -= 28;
    }
    let mut weeks_start = Vec::new();
    let mut day = first_day;
    while month_of(day) <= (2024, first_month + month_count - 1) {
        weeks_start.push(day);
        day += 7;
    }
    let last_day = *weeks_start.last().unwrap();
    // Exchange rates of every month the weeks touch, in ten-thousandths of a dollar.
    let mut fx: Vec<((i64, i64), i64)> = Vec::new();
    for &start in &weeks_start {
        let month = month_of(start);
        if fx.last().is_none_or(|f| f.0 != month) {
            fx.push((month, g.int(10_400, 11_600)));
        }
    }
    let fx_of = |day: i64| fx.iter().find(|f| f.0 == month_of(day)).unwrap().1;

    let mut employees = Vec::new();
    let mut next_id = g.int(1000, 7000);
    for _ in 0..level.pick(g.int(6, 10), g.int(14, 24), g.int(35, 55)) {
        next_id += g.int(1, 17);
        let department = g.index(departments.len());
        let euro = !easy && g.chance(0.35);
        let mut transfers = Vec::new();
        if !easy && g.chance(level.pick(0.0, 0.25, 0.3)) {
            let mut from = g.int(first_day + 10, last_day);
            let mut at = department;
            for _ in 0..if hard { g.int(1, 2) } else { 1 } {
                let to = (at + g.int(1, departments.len() as i64 - 1) as usize) % departments.len();
                transfers.push((from, to));
                at = to;
                from += g.int(20, 90);
                if from > last_day {
                    break;
                }
            }
        }
        employees.push(Employee {
            id: format!("E{next_id}"),
            department,
            rate_cents: g.int(1600, 4800),
            euro,
            transfers,
        });
    }
    let mut weeks = Vec::new();
    for (e, _) in employees.iter().enumerate() {
        // Some people work long weeks, others rarely.
        let keen = g.float(-0.6, 1.2);
        for &start in &weeks_start {
            if !g.chance(0.85) {
                continue;
            }
            let mut hours = [0.0; 7];
            for (d, h) in hours.iter_mut().enumerate() {
                *h = match d {
                    0..5 => {
                        (4.0 * (8.0 + g.normal(keen, 0.9)))
                            .round()
                            .clamp(16.0, 48.0)
                            / 4.0
                    }
                    5 if g.chance(0.15) => g.int(8, 24) as f64 / 4.0,
                    _ => 0.0,
                };
            }
            weeks.push(Week {
                employee: e,
                start,
                hours,
            });
        }
    }

    // Totals per (department, month of 2024), and per employee for the largest earner.
    let totals = |department: usize, month: i64| -> (Totals, Vec<f64>) {
        let mut t = Totals::default();
        let mut by_employee = vec![0.0; employees.len()];
        for w in &weeks {
            let e = &employees[w.employee];
            if month_of(w.start) != (2024, month) || e.department_on(w.start) != department {
                continue;
            }
            let rate = if e.euro {
                e.rate_cents as f64 / 100.0 * fx_of(w.start) as f64 / 10_000.0
            } else {
                e.rate_cents as f64 / 100.0
            };
            let total: f64 = w.hours.iter().sum();
            let overtime = (total - REGULAR).max(0.0);
            let overtime_pay = overtime * rate * multipliers[department];
            t.overtime_hours += overtime;
            t.overtime_pay += overtime_pay;
            t.pay += total.min(REGULAR) * rate + overtime_pay;
            if overtime > 0.0 {
                t.overtime_weeks += 1;
            }
            by_employee[w.employee] += overtime_pay;
        }
        (t, by_employee)
    };
    let month = g.int(first_month, first_month + month_count - 1);
    let month_name = MONTHS[(month - 1) as usize];
    let department = g.index(departments.len());
    let name = DEPARTMENTS[departments[department]];
    let (t, by_employee) = totals(department, month);
    let scope = format!("the {name} department in {month_name} 2024");
    let enough = t.overtime_weeks >= level.pick(2, 3, 5);
    let (question, value, sound) = match g.index(5) {
        0 => (
            format!("What was the overtime pay, in dollars, of {scope}?"),
            t.overtime_pay,
            enough,
        ),
        1 => (
            format!("How many overtime hours did {scope} work?"),
            t.overtime_hours,
            enough,
        ),
        2 => {
            let percent = 100.0 * t.overtime_pay / t.pay.max(1.0);
            // Clear of a rounding edge at 2 decimals.
            let edge = ((percent * 100.0).fract() - 0.5).abs() > 0.02;
            (
                format!(
                    "What percentage of the whole pay (regular and overtime) of {scope} was \
                     overtime pay?"
                ),
                percent,
                enough && edge && t.pay > 0.0,
            )
        }
        3 => {
            let other =
                (department + g.int(1, departments.len() as i64 - 1) as usize) % departments.len();
            let (u, _) = totals(other, month);
            (
                format!(
                    "By how many dollars did the overtime pay of {scope} exceed that of the {} \
                     department in the same month (negative if it fell short)?",
                    DEPARTMENTS[departments[other]]
                ),
                t.overtime_pay - u.overtime_pay,
                enough && u.overtime_weeks >= 1,
            )
        }
        _ => {
            let mut sorted = by_employee.clone();
            sorted.sort_by(|a, b| b.total_cmp(a));
            (
                format!(
                    "What was the largest overtime pay, in dollars, that one employee earned in \
                     {scope} (their weeks of that month in that department added up)?"
                ),
                sorted[0],
                enough && sorted[1] > 0.0,
            )
        }
    };

    // The files. Hard: a few timesheets of people not on the staff list.
    let mut lines = Vec::new();
    for w in &weeks {
        let e = &employees[w.employee];
        let id = if hard && g.chance(0.15) {
            match g.index(3) {
                0 => e.id.to_lowercase(),
                1 => format!(" {}", e.id),
                _ => format!("{}  ", e.id),
            }
        } else {
            e.id.clone()
        };
        let hours: Vec<String> = w.hours.iter().map(|&h| hours_text(g, h, hard)).collect();
        let line = format!(
            "{{\"emp_id\": \"{id}\", \"week_start\": \"{}\", \"hours\": [{}]}}",
            date_of(w.start),
            hours.join(", ")
        );
        if hard && g.chance(0.05) {
            lines.push(line.clone());
        }
        lines.push(line);
    }
    if hard {
        for _ in 0..g.int(3, 8) {
            next_id += g.int(1, 17);
            let hours: Vec<String> = (0..7)
                .map(|d| {
                    if d < 5 {
                        "10".to_owned()
                    } else {
                        "0".to_owned()
                    }
                })
                .collect();
            let at = g.index(lines.len() + 1);
            lines.insert(
                at,
                format!(
                    "{{\"emp_id\": \"C{next_id}\", \"week_start\": \"{}\", \"hours\": [{}]}}",
                    date_of(*g.pick(&weeks_start)),
                    hours.join(", ")
                ),
            );
        }
    }
    let mut timesheets = lines.join("\n");
    timesheets.push('\n');
    let mut staff = String::from("emp_id,name,department,hourly_rate,currency\n");
    for e in &employees {
        staff.push_str(&format!(
            "{},{} {},{},{}.{:02},{}\n",
            e.id,
            g.first_name(),
            g.last_name(),
            DEPARTMENTS[departments[e.department]],
            e.rate_cents / 100,
            e.rate_cents % 100,
            if e.euro { "EUR" } else { "USD" }
        ));
    }
    let mut db = Database::new("rates.db")
        .table(
            "departments",
            "id INTEGER PRIMARY KEY, name TEXT NOT NULL, overtime_multiplier REAL NOT NULL",
            departments.iter().enumerate().map(|(i, &d)| {
                vec![
                    Sql::from(i as i64 + 1),
                    DEPARTMENTS[d].into(),
                    multipliers[i].into(),
                ]
            }),
        )
        .table(
            "fx",
            "month TEXT PRIMARY KEY, usd_per_eur REAL NOT NULL",
            fx.iter().map(|((year, month), rate)| {
                vec![
                    format!("{year}-{month:02}").into(),
                    Sql::from(*rate as f64 / 10_000.0),
                ]
            }),
        );
    if !easy {
        let mut transfers: Vec<(i64, String, usize)> = employees
            .iter()
            .flat_map(|e| e.transfers.iter().map(|t| (t.0, e.id.clone(), t.1)))
            .collect();
        transfers.sort();
        // Created once the other tables are filled, as it always was: the order of the
        // statements fixes the file's bytes.
        db = db.then().table(
            "transfers",
            "emp_id TEXT NOT NULL, effective_date TEXT NOT NULL, department_id INTEGER NOT NULL \
             REFERENCES departments(id)",
            transfers.into_iter().map(|(day, id, to)| {
                vec![id.into(), date_of(day).into(), Sql::from(to as i64 + 1)]
            }),
        );
    }

    let transfers_text = if easy {
        " employees.csv gives each employee's department."
    } else {
        " employees.csv gives the department each employee was in when the timesheets start; \
         rates.db also has transfers(emp_id, effective_date, department_id): from its \
         effective date on, the employee belongs to that department. A week counts for the \
         department the employee belonged to on the week's start date."
    };
    let dirty = if hard {
        " The timesheets are careless: an employee's week may be listed twice (count each \
         employee and week once), an emp_id may be in lower case or padded with spaces (it is \
         the employee whose id it is once trimmed and upper-cased), and an hour count may be \
         text such as \"7h30\" (7 hours 30 minutes) or \"8h\". Timesheets of ids that are not \
         on the staff list are ignored."
    } else {
        ""
    };
    let prompt = format!(
        "Your home directory holds a company's payroll data. employees.csv has emp_id, name, \
         department, hourly_rate and currency (USD or EUR). timesheets.jsonl has one JSON \
         object a line: emp_id, week_start (a Monday, YYYY-MM-DD) and hours (the hours worked \
         on each day, Monday to Sunday). rates.db is a SQLite database: \
         departments(id, name, overtime_multiplier) and fx(month, usd_per_eur), one exchange \
         rate per month (YYYY-MM).{transfers_text} A week belongs to the month its week_start \
         falls in. An employee's hours above 40 in a week are overtime; regular pay is the \
         week's hours up to 40 × the hourly rate, overtime pay is the overtime hours × the \
         hourly rate × the overtime multiplier of the employee's department. A rate in EUR is \
         converted to dollars at the fx rate of the week's month.{dirty} {question} Round \
         only the final result, to 2 decimal places."
    );
    let instance = Instance::new(
        prompt,
        Grader::Numeric {
            value,
            rel_tol: 0.0,
            abs_tol: half_unit(2),
        },
    )
    .file("employees.csv", staff)
    .file("timesheets.jsonl", timesheets)
    .setup(db.setup())
    .secret(format!("{value:.2}"));
    Attempt::new(instance, sound)
}
