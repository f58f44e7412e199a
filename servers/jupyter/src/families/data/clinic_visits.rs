//! `clinic-visits`: a patient list, a log of visits and a SQLite database of billing codes
//! whose prices changed on a date; what a clinic billed in a quarter, which takes cleaning the
//! visit log, joining it to the patients and pricing each visit at the price in force on its
//! day.
//!
//! - `patients.csv`: `patient_id,name,birth_date,clinic`.
//! - `visits.jsonl`: one JSON object a line, `{"visit_id", "patient", "date", "code"}`.
//! - `billing.db`: `codes(code, description)` and `prices(code, valid_from, price_cents)`: a
//!   price holds from its `valid_from` day until the code's next price.
//!
//! Levels: easy has two or three clinics, ISO dates and one day on which some prices changed;
//! medium has more of everything, dates also written DD/MM/YYYY (a day-first date a
//! month-first parser gets wrong) and visits recorded twice (count each `visit_id` once);
//! hard has several times the visits, prices that changed on different days (some twice),
//! cancelled visits (not billed), older records that name the patient field `pid`, codes in
//! lower case or padded with spaces, and visits of patients not on the list (ignored).
//!
//! Questions: the total billed for one clinic's patients aged at least some age on the
//! quarter's first day; the percentage change of a clinic's billing from one quarter to the
//! next; (medium on) the increase of the clinic whose billing grew most; (hard) the mean
//! billed per visit of a clinic's older patients. Every instance is drawn so that leaving out
//! any one of its cleaning steps (a [`Skip`]) gives a wrong answer.

use super::draw::{Attempt, Database, Sql, draw};
use crate::families::{Family, FamilySplit, Gen, Instance, Level, date_of};
use crate::tasks::{Grader, TaskKind};
use mcpgym_env::answer::half_unit;
use mcpgym_env::generate::wording;

pub(super) const FAMILY: Family = Family {
    name: "clinic-visits",
    kind: TaskKind::DataAnalysis,
    split: FamilySplit::TrainAndTest,
    levelled: true,
    about: "clean a visit log, join it to patients and a SQLite price list that changed over \
            time; what a clinic billed in a quarter",
    generate,
};

const CLINICS: &[&str] = &[
    "Riverside",
    "Hillcrest",
    "Oakwood",
    "Lakeside",
    "Northgate",
    "Westfield",
    "Maplewood",
    "Harbourview",
];

const SERVICES: &[&str] = &[
    "Consultation",
    "Blood test",
    "X-ray",
    "Vaccination",
    "Physiotherapy",
    "ECG",
    "Ultrasound",
    "Dressing",
    "Follow-up",
    "Allergy test",
    "Eye exam",
    "Hearing test",
];

/// The ages a question's patients are at least, on the quarter's first day.
const AGES: &[i64] = &[18, 30, 40, 50, 60, 65, 70];

/// The quarters visits fall in: Q3 2023 to Q4 2024, as (year, quarter).
const QUARTERS: [(i64, i64); 6] = [
    (2023, 3),
    (2023, 4),
    (2024, 1),
    (2024, 2),
    (2024, 3),
    (2024, 4),
];

/// A cleaning step a careless solution leaves out; the answer must depend on each one an
/// instance's level sets traps for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Skip {
    /// Every step done.
    None,
    /// Each code billed at its latest price, whatever the visit's day.
    Prices,
    /// Only ISO dates read (the DD/MM/YYYY ones dropped).
    Dates,
    /// Visits recorded twice counted twice.
    Duplicates,
    /// Codes not trimmed and upper-cased (those visits match no price).
    Codes,
    /// Cancelled visits billed.
    Cancelled,
    /// Records naming the patient `pid` dropped.
    Pid,
}

/// The steps whose traps a level sets.
fn skips(level: Level) -> &'static [Skip] {
    match level {
        Level::Easy => &[Skip::Prices],
        Level::Medium => &[Skip::Prices, Skip::Dates, Skip::Duplicates],
        Level::Hard => &[
            Skip::Prices,
            Skip::Dates,
            Skip::Duplicates,
            Skip::Codes,
            Skip::Cancelled,
            Skip::Pid,
        ],
    }
}

struct Patient {
    id: String,
    birth: (i64, i64, i64),
    clinic: usize,
}

/// One visit as it happened, and how the log wrote it.
struct Visit {
    /// Index into the patients, `None` for an id not on the list.
    patient: Option<usize>,
    day: i64,
    code: usize,
    cancelled: bool,
    iso: bool,
    pid_key: bool,
    dirty_code: bool,
    twice: bool,
}

/// A code's prices: (first day, cents), in order of day.
type Prices = Vec<(i64, i64)>;

fn generate(g: &mut Gen) -> Instance {
    draw(g, attempt)
}

fn attempt(g: &mut Gen) -> Attempt {
    let level = g.level();
    let (medium_on, hard) = (level != Level::Easy, level == Level::Hard);
    let clinic_count = level.pick(g.int(2, 3), g.int(3, 4), g.int(4, 6)) as usize;
    let clinics: Vec<&str> = g.sample(CLINICS, clinic_count);
    let mut patients = Vec::new();
    let mut next_id = g.int(1, 400);
    for _ in 0..level.pick(g.int(40, 60), g.int(120, 180), g.int(300, 450)) {
        next_id += g.int(1, 3);
        let (y, m, d) = ymd(g.int(day_of(1935, 1, 1), day_of(2012, 12, 31)));
        patients.push(Patient {
            id: format!("P{next_id:04}"),
            birth: (y, m, d),
            clinic: g.index(clinics.len()),
        });
    }
    let services: Vec<&str> = g.sample(SERVICES, level.pick(6, 9, 12));
    let codes: Vec<String> = {
        let mut code = g.int(100, 600);
        services
            .iter()
            .map(|_| {
                code += g.int(1, 40);
                format!("C{code}")
            })
            .collect()
    };
    // Prices from 2023-01-01; some change on one day (easy, medium) or on days of their own,
    // some twice (hard), between Q4 2023 and Q3 2024.
    let start = day_of(2023, 1, 1);
    let change_window = (day_of(2023, 10, 1), day_of(2024, 9, 30));
    let common_change = g.int(change_window.0, change_window.1);
    let prices: Vec<Prices> = codes
        .iter()
        .map(|_| {
            let mut cents = g.int(20, 250) * 100 + g.pick(&[0, 50, 25, 75, 90]);
            let mut list = vec![(start, cents)];
            if g.chance(0.6) {
                let changes = if hard { g.int(1, 2) } else { 1 };
                let mut days: Vec<i64> = (0..changes)
                    .map(|_| {
                        if hard {
                            g.int(change_window.0, change_window.1)
                        } else {
                            common_change
                        }
                    })
                    .collect();
                days.sort_unstable();
                days.dedup();
                for day in days {
                    cents = (cents as f64 * g.float(1.03, 1.2)).round() as i64;
                    list.push((day, cents));
                }
            }
            list
        })
        .collect();

    let visit_count = level.pick(g.int(220, 320), g.int(700, 950), g.int(1600, 2200));
    let first_day = day_of(2023, 7, 1);
    let last_day = day_of(2024, 12, 31);
    let visits: Vec<Visit> = (0..visit_count)
        .map(|_| Visit {
            patient: if hard && g.chance(0.03) {
                None
            } else {
                Some(g.index(patients.len()))
            },
            day: g.int(first_day, last_day),
            code: g.index(codes.len()),
            cancelled: hard && g.chance(0.07),
            iso: !medium_on || g.chance(0.6),
            pid_key: hard && g.chance(0.3),
            dirty_code: hard && g.chance(0.15),
            twice: medium_on && g.chance(0.06),
        })
        .collect();

    let mut lines = Vec::new();
    let mut visit_id = g.int(10_000, 50_000);
    for visit in &visits {
        visit_id += g.int(1, 5);
        let patient = match visit.patient {
            Some(p) => patients[p].id.clone(),
            None => {
                next_id += g.int(1, 3);
                format!("P{next_id:04}")
            }
        };
        let (y, m, d) = ymd(visit.day);
        let date = if visit.iso {
            date_of(visit.day)
        } else {
            format!("{d:02}/{m:02}/{y}")
        };
        let code = &codes[visit.code];
        let code = if visit.dirty_code {
            match g.index(3) {
                0 => code.to_lowercase(),
                1 => format!(" {code}"),
                _ => format!("{code} "),
            }
        } else {
            code.clone()
        };
        let key = if visit.pid_key { "pid" } else { "patient" };
        let status = if hard {
            let status = if visit.cancelled {
                "cancelled"
            } else {
                "completed"
            };
            format!(", \"status\": \"{status}\"")
        } else {
            String::new()
        };
        let line = format!(
            "{{\"visit_id\": \"V{visit_id}\", \"{key}\": \"{patient}\", \"date\": \"{date}\", \
             \"code\": \"{code}\"{status}}}"
        );
        if visit.twice {
            lines.push(line.clone());
        }
        lines.push(line);
    }
    // A repeated record is not always next to its first: shuffle a little.
    for i in 1..lines.len() {
        if g.chance(0.1) {
            lines.swap(i - 1, i);
        }
    }

    // The billed cents of each visit under a skipped step (None: not billed).
    let billed = |visit: &Visit, skip: Skip| -> Option<i64> {
        visit.patient?;
        if (visit.cancelled && skip != Skip::Cancelled)
            || (!visit.iso && skip == Skip::Dates)
            || (visit.dirty_code && skip == Skip::Codes)
            || (visit.pid_key && skip == Skip::Pid)
        {
            return None;
        }
        let list = &prices[visit.code];
        let cents = if skip == Skip::Prices {
            list.last().unwrap().1
        } else {
            list.iter()
                .rev()
                .find(|(from, _)| *from <= visit.day)
                .unwrap()
                .1
        };
        Some(if visit.twice && skip == Skip::Duplicates {
            2 * cents
        } else {
            cents
        })
    };
    let visit_counts = |visit: &Visit, skip: Skip| -> i64 {
        if billed(visit, skip).is_none() {
            0
        } else if visit.twice && skip == Skip::Duplicates {
            2
        } else {
            1
        }
    };
    let shapes = level.pick(2, 3, 4);
    let shape = g.index(shapes);
    let clinic = g.index(clinics.len());
    let quarter = g.index(if shape == 0 || shape == 3 { 6 } else { 5 });
    let age = *g.pick(AGES);
    let (year, q) = QUARTERS[quarter];
    let quarter_start = (year, 3 * q - 2, 1);
    let in_quarter = |day: i64, quarter: usize| {
        let (y, m, _) = ymd(day);
        (y, (m + 2) / 3) == QUARTERS[quarter]
    };
    let old_enough = |p: &Patient| {
        let (y, m, d) = quarter_start;
        let years = y - p.birth.0 - i64::from((m, d) < (p.birth.1, p.birth.2));
        years >= age
    };
    // (billed cents, visits) of a clinic in a quarter, of its patients old enough or of all.
    let total = |skip: Skip, clinic: usize, quarter: usize, aged: bool| -> (i64, i64) {
        let mut sum = (0, 0);
        for visit in &visits {
            let Some(p) = visit.patient else { continue };
            let patient = &patients[p];
            if patient.clinic != clinic || !in_quarter(visit.day, quarter) {
                continue;
            }
            if aged && !old_enough(patient) {
                continue;
            }
            sum.0 += billed(visit, skip).unwrap_or(0);
            sum.1 += visit_counts(visit, skip);
        }
        sum
    };
    // The answer under a skipped step, and whether it is sound (defined and clear of a
    // rounding edge).
    let answer = |skip: Skip| -> (f64, bool) {
        match shape {
            0 => (total(skip, clinic, quarter, true).0 as f64 / 100.0, true),
            1 => {
                let before = total(skip, clinic, quarter, false).0;
                let after = total(skip, clinic, quarter + 1, false).0;
                let percent = 100.0 * (after - before) as f64 / before.max(1) as f64;
                (percent, before > 0 && clear_of_edge(percent))
            }
            2 => {
                let growth: Vec<i64> = (0..clinics.len())
                    .map(|c| {
                        total(skip, c, quarter + 1, false).0 - total(skip, c, quarter, false).0
                    })
                    .collect();
                let mut sorted = growth.clone();
                sorted.sort_unstable();
                let top = sorted[sorted.len() - 1];
                // The clinic that grew most is clear of the next (by a dollar or more).
                (top as f64 / 100.0, top - sorted[sorted.len() - 2] >= 100)
            }
            _ => {
                let (cents, count) = total(skip, clinic, quarter, true);
                let mean = cents as f64 / 100.0 / count.max(1) as f64;
                (mean, count > 0 && clear_of_edge(mean))
            }
        }
    };
    let (value, mut sound) = answer(Skip::None);
    sound &= total(Skip::None, clinic, quarter, shape != 2 && shape != 1).1 >= level.pick(4, 8, 12);
    for &skip in skips(level) {
        // A careless solution's answer is off by more than the tolerance.
        sound &= (answer(skip).0 - value).abs() > 0.02;
    }

    let clinic_name = clinics[clinic];
    let quarter_name = |i: usize| format!("Q{} {}", QUARTERS[i].1, QUARTERS[i].0);
    let scope = format!(
        "the patients of the {clinic_name} clinic aged {age} or over on the first day of the \
         quarter, in {}",
        quarter_name(quarter)
    );
    let from_to = || {
        format!(
            "from {} to {}",
            quarter_name(quarter),
            quarter_name(quarter + 1)
        )
    };
    let (what, decimals) = match shape {
        0 => (format!("the total billed, in dollars, for {scope}"), 2),
        1 => (
            format!(
                "the percentage change of the {clinic_name} clinic's billing {} \
                 (negative for a fall)",
                from_to()
            ),
            2,
        ),
        2 => (
            format!(
                "the increase, in dollars, of the billing of the clinic whose billing grew the \
                 most {}",
                from_to()
            ),
            2,
        ),
        _ => (
            format!("the mean amount billed per visit, in dollars, for {scope}"),
            2,
        ),
    };
    let intro = *g.pick(&[
        "Your home directory holds a group of clinics' records.",
        "The files in your home directory are the records of a group of clinics.",
        "A clinic group has exported its records to your home directory.",
        "In your home directory are the patient, visit and billing records of a few clinics.",
    ]);
    let files = "patients.csv has patient_id, name, birth_date (YYYY-MM-DD) and clinic. \
                 visits.jsonl has one JSON object a line: visit_id, patient (a patient_id), \
                 date and code (a billing code). billing.db is a SQLite database: codes(code, \
                 description) and prices(code, valid_from, price_cents).";
    let pricing = *g.pick(&[
        "A visit is billed at the price of its code in force on the visit's date: a price \
         holds from its valid_from date until the code's next price.",
        "Each visit costs the price its code had on the day of the visit; a price row applies \
         from valid_from until the next price row of the same code.",
    ]);
    let mut rules = String::new();
    if medium_on {
        rules.push_str(
            " A date is written YYYY-MM-DD or DD/MM/YYYY, and a visit may be recorded more \
             than once: count each visit_id once.",
        );
    }
    if hard {
        rules.push_str(
            " The log is careless: older records name the patient field pid instead of \
             patient, a code may be in lower case or padded with spaces (it is the code it \
             names once trimmed and upper-cased), and visits with status \"cancelled\" are \
             not billed. Visits of patient ids not in patients.csv are ignored.",
        );
    }
    let question = wording::question(g, &what);
    let precision = wording::precision(g, decimals);
    let prompt = format!(
        "{intro} {files} {pricing}{rules} A quarter is three calendar months (Q1 is January to March). {question} {precision}"
    );

    let mut patients_csv = String::from("patient_id,name,birth_date,clinic\n");
    for p in &patients {
        patients_csv.push_str(&format!(
            "{},{} {},{:04}-{:02}-{:02},{}\n",
            p.id,
            g.first_name(),
            g.last_name(),
            p.birth.0,
            p.birth.1,
            p.birth.2,
            clinics[p.clinic]
        ));
    }
    let mut visits_jsonl = lines.join("\n");
    visits_jsonl.push('\n');
    let db = Database::new("billing.db")
        .table(
            "codes",
            "code TEXT PRIMARY KEY, description TEXT NOT NULL",
            codes
                .iter()
                .zip(&services)
                .map(|(code, service)| vec![Sql::from(code.as_str()), Sql::from(*service)]),
        )
        .table(
            "prices",
            "code TEXT NOT NULL REFERENCES codes(code), valid_from TEXT NOT NULL, price_cents \
             INTEGER NOT NULL",
            codes.iter().zip(&prices).flat_map(|(code, list)| {
                list.iter().map(move |&(from, cents)| {
                    vec![Sql::from(code.as_str()), date_of(from).into(), cents.into()]
                })
            }),
        );
    let instance = Instance::new(
        prompt,
        Grader::Numeric {
            value,
            rel_tol: 0.0,
            abs_tol: half_unit(decimals),
        },
    )
    .file("patients.csv", patients_csv)
    .file("visits.jsonl", visits_jsonl)
    .setup(db.setup())
    .secret(format!("{value:.2}"));
    Attempt::new(instance, sound)
}

/// Whether `value` is clear of a rounding edge at 2 decimals.
fn clear_of_edge(value: f64) -> bool {
    ((value * 100.0).abs().fract() - 0.5).abs() > 0.02
}

/// The day number (since 2020-01-01, as [`date_of`] counts) of a civil date.
fn day_of(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468 - 18_262
}

/// The (year, month, day) of a day number.
fn ymd(day: i64) -> (i64, i64, i64) {
    let date = date_of(day);
    let part = |range: std::ops::Range<usize>| date[range].parse::<i64>().unwrap();
    (part(0..4), part(5..7), part(8..10))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn day_numbers_invert_dates() {
        for day in [0, 59, 365, 1277, 1826, -20_000] {
            let (y, m, d) = ymd(day);
            assert_eq!(day_of(y, m, d), day);
        }
    }
}
