//! `organise-files`: a folder of files to sort into subfolders by extension, to rename by
//! rewriting the dates in their names as ISO dates, or to file into year/month folders; a
//! hidden check compares the final tree with the one computed here, file contents included
//! (against a fresh copy of the starting files).
//!
//! Levels: easy is up to fifteen files; medium up to thirty, with names of several dots (the
//! extension follows the last) and dates between two words; hard up to fifty, with files
//! already in their extension's folder (to stay) and dates that do not exist in the calendar
//! (the 31st of April, the 29th of February 2023: not dates, so left alone).

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use crate::families::{Family, FamilySplit, Gen, Instance, Level, date_of};
use crate::tasks::{Grader, TaskKind};

use super::common::filler;
use crate::python::hex;

pub(super) const FAMILY: Family = Family {
    name: "organise-files",
    kind: TaskKind::Files,
    split: FamilySplit::TrainAndTest,
    levelled: true,
    about: "file work: move and rename files by a stated rule",
    generate,
};

const ROOTS: &[&str] = &["downloads", "inbox", "scans", "desk", "unsorted"];
const EXTENSIONS: &[&str] = &[
    "pdf", "jpg", "png", "txt", "docx", "csv", "zip", "mp3", "xlsx",
];
const BARE: &[&str] = &["README", "LICENSE", "Makefile", "notes", "TODO"];
const MONTHS: &[&str] = &[
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// The check: the tree under the root must be exactly the expected paths, each holding the
/// bytes of its original file in `ORIGINAL`.
const CHECK: &str = r#"EXPECTED = json.loads(bytes.fromhex(EXPECTED_HEX))

found = set()
for here, _, names in os.walk(os.path.join(HOME, ROOT)):
    for name in names:
        found.add(os.path.relpath(os.path.join(here, name), HOME).replace(os.sep, "/"))
    if len(found) > 5000:
        break
missing = [p for p in EXPECTED if p not in found]
extra = [p for p in found if p not in EXPECTED]
if missing:
    print(f"FAIL: {len(missing)} file(s) are not where the rule puts them")
elif extra:
    print(f"FAIL: {len(extra)} file(s) under {ROOT} should not be there")
else:
    wrong = 0
    for final, original in EXPECTED.items():
        here = os.path.join(HOME, final)
        there = os.path.join(ORIGINAL, original)
        if os.path.getsize(here) != os.path.getsize(there) or os.path.getsize(here) > 5_000_000:
            wrong += 1
            continue
        with open(here, "rb") as a, open(there, "rb") as b:
            wrong += a.read() != b.read()
    print(f"FAIL: {wrong} file(s) have changed content" if wrong else "PASS")
"#;

/// A file as set up (`from`) and where the rule puts it (`to`), both relative to the home.
struct Move {
    from: String,
    to: String,
}

fn generate(g: &mut Gen) -> Instance {
    let level = g.level();
    let hard = level == Level::Hard;
    let root = *g.pick(ROOTS);
    let count = level.pick(g.int(8, 15), g.int(15, 30), g.int(30, 50));
    let mut taken = BTreeSet::new();
    let mut moves: Vec<Move> = Vec::new();
    let variant = g.index(3);
    let style = g.index(3);
    let (rule, example) = match variant {
        0 => {
            for _ in 0..count {
                let stem = format!("{}_{}", g.word(), g.word());
                // Medium on: names with more than one dot.
                let stem = if level != Level::Easy && g.chance(0.25) {
                    format!(
                        "{stem}.{}",
                        g.pick(&["final", "v2", "backup", "tar", "old"])
                    )
                } else {
                    stem
                };
                let (name, folder) = if g.chance(0.1) {
                    let bare = (*g.pick(BARE)).to_owned();
                    (bare, "other".to_owned())
                } else {
                    let ext = *g.pick(EXTENSIONS);
                    let written = if g.chance(0.2) {
                        ext.to_uppercase()
                    } else {
                        ext.to_owned()
                    };
                    (format!("{stem}.{written}"), ext.to_owned())
                };
                if taken.insert(name.to_lowercase()) {
                    // Hard: some files are already in their folder, and stay.
                    let from = if hard && g.chance(0.2) {
                        format!("{root}/{folder}/{name}")
                    } else {
                        format!("{root}/{name}")
                    };
                    moves.push(Move {
                        from,
                        to: format!("{root}/{folder}/{name}"),
                    });
                }
            }
            (
                format!(
                    "Move every file in {root} into a subfolder of {root} named after its \
                     extension in lowercase (the part of the name after the last dot, without \
                     the dot), keeping the file's name unchanged; files whose name has no dot go \
                     into a subfolder named other.{}",
                    if hard {
                        " Some files are already in the subfolder for their extension: they \
                         stay where they are."
                    } else {
                        ""
                    }
                ),
                format!("{root}/Photo_trip.JPG becomes {root}/jpg/Photo_trip.JPG"),
            )
        }
        1 => {
            let sub = *g.pick(&["old", "misc", "archive"]);
            let mut renamed = BTreeSet::new();
            for i in 0..count {
                // Hard: some dates do not exist (left as they are).
                let invalid = hard && i > 0 && g.chance(0.15);
                let (date, year, month, day) = if invalid {
                    impossible_date(g)
                } else {
                    date_parts(g)
                };
                let stem = g.word();
                let ext = *g.pick(EXTENSIONS);
                let folder = if g.chance(0.25) {
                    format!("{root}/{sub}")
                } else {
                    root.to_owned()
                };
                let (before, after) = if i == 0 || g.chance(0.75) {
                    let written = match style {
                        0 => format!("{day:02}.{month:02}.{year}"),
                        1 => format!("{month:02}-{day:02}-{year}"),
                        _ => format!("{day:02}-{}-{year}", MONTHS[month - 1]),
                    };
                    if invalid {
                        let name = format!("{stem}_{written}.{ext}");
                        (name.clone(), name)
                    } else if g.chance(0.5) {
                        (
                            format!("{stem}_{written}.{ext}"),
                            format!("{stem}_{date}.{ext}"),
                        )
                    } else {
                        (
                            format!("{written} {stem}.{ext}"),
                            format!("{date} {stem}.{ext}"),
                        )
                    }
                } else {
                    let plain = format!("{stem}_{}.{ext}", g.word());
                    (plain.clone(), plain)
                };
                // Names unique before and after (a dated name never equals an undated one).
                let (from, to) = (format!("{folder}/{before}"), format!("{folder}/{after}"));
                if !taken.contains(&from.to_lowercase()) && renamed.insert(to.to_lowercase()) {
                    taken.insert(from.to_lowercase());
                    moves.push(Move { from, to });
                }
            }
            let (form, sample, iso) = match style {
                0 => (
                    "DD.MM.YYYY (day, month, year)",
                    "invoice_07.03.2024.pdf",
                    "invoice_2024-03-07.pdf",
                ),
                1 => (
                    "MM-DD-YYYY (month, day, year)",
                    "invoice_03-07-2024.pdf",
                    "invoice_2024-03-07.pdf",
                ),
                _ => (
                    "DD-Mon-YYYY with an English month abbreviation (Jan, Feb, ...)",
                    "invoice_07-Mar-2024.pdf",
                    "invoice_2024-03-07.pdf",
                ),
            };
            let place = if moves
                .iter()
                .any(|m| m.from.starts_with(&format!("{root}/{sub}/")))
            {
                format!("in {root} itself and in its subfolder {sub}")
            } else {
                format!("all directly in {root}")
            };
            (
                format!(
                    "Some file names under {root} ({place}) contain a date written as {form}. \
                     Rename each such file in place, replacing the date by the same date written \
                     as YYYY-MM-DD and changing nothing else in the name; leave files without a \
                     date as they are.{}",
                    if hard {
                        " A day that does not exist in the calendar (such as the 31st of April, \
                         or the 29th of February of a year that is not a leap year) is not a \
                         date: leave such names as they are."
                    } else {
                        ""
                    }
                ),
                format!("{sample} becomes {iso}"),
            )
        }
        _ => {
            for i in 0..count {
                let stem = g.word();
                let ext = *g.pick(EXTENSIONS);
                let invalid = hard && i > 0 && g.chance(0.15);
                let (name, to) = if i == 0 || invalid || g.chance(0.85) {
                    let (date, year, month, _) = if invalid {
                        impossible_date(g)
                    } else {
                        date_parts(g)
                    };
                    // Medium on: the date may sit between two words.
                    let name = match g.index(level.pick(2, 3, 3)) {
                        0 => format!("{date}_{stem}.{ext}"),
                        1 => format!("{stem}_{date}.{ext}"),
                        _ => format!("{stem}_{date}_{}.{ext}", g.word()),
                    };
                    let to = if invalid {
                        format!("{root}/{name}")
                    } else {
                        format!("{root}/{year}/{month:02}/{name}")
                    };
                    (name, to)
                } else {
                    let name = format!("{stem}_{}.{ext}", g.word());
                    (name.clone(), format!("{root}/{name}"))
                };
                if taken.insert(name.to_lowercase()) {
                    moves.push(Move {
                        from: format!("{root}/{name}"),
                        to,
                    });
                }
            }
            (
                format!(
                    "Most file names in {root} contain a date written as YYYY-MM-DD. Move each \
                     such file into the folder {root}/YYYY/MM for its date's year and two-digit \
                     month (creating the folders), keeping its name; leave files without a date \
                     in {root}.{}",
                    if hard {
                        " A day that does not exist in the calendar (such as 2023-02-30, or \
                         the 29th of February of a year that is not a leap year) is not a \
                         date: leave such files in place."
                    } else {
                        ""
                    }
                ),
                format!("{root}/2023-04-09_scan.pdf goes to {root}/2023/04/2023-04-09_scan.pdf"),
            )
        }
    };
    let expected: Map<String, Value> = moves
        .iter()
        .map(|m| (m.to.clone(), Value::from(m.from.clone())))
        .collect();
    let code = format!(
        "EXPECTED_HEX = {:?}\nROOT = {root:?}\n{CHECK}",
        hex(&Value::Object(expected).to_string())
    );
    let opening = match g.index(4) {
        0 => format!("The folder {root} in your home directory holds files to organise."),
        1 => format!("In your home directory, the folder {root} holds files to organise."),
        2 => format!("Your home directory has the folder {root}, whose files need organising."),
        _ => format!("The files in the folder {root} of your home directory need organising."),
    };
    const KEEP: &[&str] = &[
        "Do not change any file's content or leave copies behind.",
        "Keep every file's content as it is, and leave no copies behind.",
        "Move files rather than copy them, and do not edit their contents.",
    ];
    const CLOSE: &[&str] = &[
        "Then call final_answer with \"done\".",
        "When you are finished, call final_answer with \"done\".",
        "Finish by calling final_answer with \"done\".",
        "Call final_answer with \"done\" once the files are in place.",
    ];
    let (keep, close) = (*g.pick(KEEP), *g.pick(CLOSE));
    let mut instance = Instance::new(
        format!("{opening} {rule} For example, {example}. {keep} {close}"),
        Grader::Check { code },
    );
    for m in &moves {
        let size = g.int(30, 600) as usize;
        instance = instance.file(m.from.clone(), filler(g, size).into_bytes());
    }
    instance
}

/// A day that does not exist, in 2020–2025: the 30th or 31st of a short month, or the 29th of
/// February of a year that is not a leap year; (`YYYY-MM-DD`, year, month, day).
fn impossible_date(g: &mut Gen) -> (String, i64, usize, usize) {
    let (year, month, day) = match g.index(3) {
        0 => (g.int(2020, 2025), 2, g.int(30, 31) as usize),
        1 => (g.int(2020, 2025), *g.pick(&[4, 6, 9, 11]), 31),
        _ => (*g.pick(&[2021, 2022, 2023, 2025]), 2, 29),
    };
    (format!("{year}-{month:02}-{day:02}"), year, month, day)
}

/// A date in 2020–2025: (`YYYY-MM-DD`, year, month, day).
fn date_parts(g: &mut Gen) -> (String, i64, usize, usize) {
    let date = date_of(g.int(0, 6 * 365));
    let year = date[..4].parse().unwrap_or(2020);
    let month = date[5..7].parse().unwrap_or(1);
    let day = date[8..].parse().unwrap_or(1);
    (date, year, month, day)
}
