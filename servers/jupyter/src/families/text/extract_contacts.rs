//! `extract-contacts`: free text with e-mail addresses and phone numbers written in varied
//! forms; how many distinct addresses (ignoring case), addresses of one domain, or phone
//! numbers (as ten digits) it holds.
//!
//! The same address recurs in other cases and wrappers (`<…>`, `mailto:`, a full stop after
//! it), the same number in other layouts, and dates and order numbers sit among them.
//!
//! Levels: easy is one file about a handful of people; medium more people, their mentions
//! spread over three to five files of a folder; hard more people and files, some in subfolders
//! or with Windows line ends, and addresses written out as `name [at] domain [dot] com`.

use mcpgym_env::generate::wording::{precision, question};

use crate::families::{Family, FamilySplit, Gen, Instance, Level, date_of};
use crate::tasks::{Grader, TaskKind};

use super::common::capital;

pub(super) const FAMILY: Family = Family {
    name: "extract-contacts",
    kind: TaskKind::Text,
    split: FamilySplit::TrainAndTest,
    levelled: true,
    about: "text extraction: distinct e-mail addresses or phone numbers in free text",
    generate,
};

const DOMAINS: &[&str] = &[
    "example.com",
    "mail.example.com",
    "acme.io",
    "northwind.net",
    "contoso.co.uk",
    "globex.com",
    "initech.org",
    "umbrella.dev",
    "hooli.xyz",
    "stark.industries",
];

/// Where a medium or hard instance's files are, their names, and subfolders.
const FOLDERS: &[&str] = &["notes", "mail", "minutes", "inbox"];
const PARTS: &[&str] = &[
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "kickoff",
    "review",
    "planning",
    "followup",
    "retro",
    "standup",
    "handover",
];
const SUBFOLDERS: &[&str] = &["archive", "old", "team", "external"];

const FILES: &[&str] = &[
    "notes.txt",
    "inbox.txt",
    "meeting_minutes.txt",
    "contacts_dump.txt",
];

/// A person: a name and their addresses and ten-digit numbers.
struct Person {
    name: String,
    emails: Vec<String>,
    phones: Vec<String>,
}

fn generate(g: &mut Gen) -> Instance {
    let level = g.level();
    let hard = level == Level::Hard;
    let domains = g.subset(DOMAINS, 2, 5);
    let people: Vec<Person> = (0..level.pick(g.int(4, 8), g.int(8, 14), g.int(12, 20)))
        .map(|_| {
            let first = g.first_name().to_lowercase();
            let last = g.last_name().to_lowercase();
            let emails = (0..g.int(1, 2))
                .map(|_| {
                    let local = match g.index(5) {
                        0 => format!("{first}.{last}"),
                        1 => format!("{}{last}", &first[..1]),
                        2 => format!("{first}_{}", &last[..1]),
                        3 => format!("{first}.{last}+{}", g.word()),
                        _ => format!("{last}{}", g.int(1, 99)),
                    };
                    format!("{local}@{}", g.pick(&domains))
                })
                .collect();
            let phones = (0..g.int(0, 2))
                .map(|_| {
                    format!(
                        "{}{}{:04}",
                        g.int(201, 989),
                        g.int(200, 999),
                        g.int(0, 9999)
                    )
                })
                .collect();
            Person {
                name: format!("{} {}", capital(&first), capital(&last)),
                emails,
                phones,
            }
        })
        .collect();
    let mut emails: Vec<&str> = Vec::new();
    let mut phones: Vec<&str> = Vec::new();
    // Medium on: the text is spread over several files of a folder (hard: in subfolders too).
    let folder = *g.pick(FOLDERS);
    let paths: Vec<String> = match level {
        Level::Easy => vec![(*g.pick(FILES)).to_owned()],
        _ => {
            let files = level.pick(1, g.int(3, 5), g.int(5, 8)) as usize;
            let names = g.sample(PARTS, files);
            names
                .iter()
                .map(|name| match (hard, g.index(3)) {
                    (true, 0) => format!("{folder}/{}/{name}.txt", g.pick(SUBFOLDERS)),
                    _ => format!("{folder}/{name}.txt"),
                })
                .collect()
        }
    };
    let mut texts: Vec<String> = vec![String::new(); paths.len()];
    // Every address and number at least once, then repeats and distractors.
    let mut mentions: Vec<(usize, bool, usize)> = Vec::new();
    for (p, person) in people.iter().enumerate() {
        mentions.extend((0..person.emails.len()).map(|i| (p, true, i)));
        mentions.extend((0..person.phones.len()).map(|i| (p, false, i)));
    }
    for _ in 0..level.pick(g.int(5, 20), g.int(10, 30), g.int(20, 40)) {
        let p = g.index(people.len());
        let person = &people[p];
        if !person.phones.is_empty() && g.chance(0.4) {
            mentions.push((p, false, g.index(person.phones.len())));
        } else {
            mentions.push((p, true, g.index(person.emails.len())));
        }
    }
    g.shuffle(&mut mentions);
    for (p, is_email, i) in mentions {
        let person = &people[p];
        let name = &person.name;
        let sentence = if is_email {
            let address = &person.emails[i];
            if !emails.contains(&address.as_str()) {
                emails.push(address);
            }
            let written = spell_email(g, address);
            // Hard: some addresses are written out against harvesters.
            let written = if hard && g.chance(0.2) {
                let (local, domain) = written.split_once('@').unwrap_or((&written, ""));
                if g.chance(0.5) {
                    format!("{local} [at] {}", domain.replace('.', " [dot] "))
                } else {
                    format!("{local} (at) {}", domain.replace('.', " (dot) "))
                }
            } else {
                written
            };
            match g.index(6) {
                0 => format!(
                    "Please contact {name} at {written} about the {} plan.",
                    g.word()
                ),
                1 => format!("From: {name} <{written}>"),
                2 => format!(
                    "Send the {} files to mailto:{written} before Friday.",
                    g.word()
                ),
                3 => format!("{name} ({written}) will join the call."),
                4 => format!("CC: {written}, and keep the {} thread short.", g.word()),
                _ => format!("Questions about the {}? Write to {written}.", g.word()),
            }
        } else {
            let number = &person.phones[i];
            if !phones.contains(&number.as_str()) {
                phones.push(number);
            }
            let written = spell_phone(g, number);
            match g.index(4) {
                0 => format!("{name}'s number is {written}."),
                1 => format!("You can reach {name} on {written} after lunch."),
                2 => format!("Call {written} and ask for {name}."),
                _ => format!("Phone: {written} ({name})"),
            }
        };
        let at = g.index(texts.len());
        let text = &mut texts[at];
        text.push_str(&sentence);
        text.push(if g.chance(0.3) { '\n' } else { ' ' });
        if g.chance(0.25) {
            let distractor = match g.index(3) {
                0 => format!("The review moved to {}.", date_of(g.int(0, 6 * 365))),
                1 => format!("Order #{} is still open.", g.int(100_000, 999_999)),
                _ => format!(
                    "Invoice {}-{} was paid.",
                    g.int(1000, 9999),
                    g.int(100, 999)
                ),
            };
            text.push_str(&distractor);
            text.push('\n');
        }
    }
    let (what, count) = match g.index(3) {
        0 => (
            "the number of distinct e-mail addresses in the text".to_owned(),
            emails.len(),
        ),
        1 => {
            let domain = *g.pick(&domains);
            let count = emails
                .iter()
                .filter(|e| e.rsplit('@').next() == Some(domain))
                .count();
            (
                format!(
                    "the number of distinct e-mail addresses in the text whose domain (the part \
                     after @) is exactly {domain}"
                ),
                count,
            )
        }
        _ => (
            "the number of distinct phone numbers in the text".to_owned(),
            phones.len(),
        ),
    };
    let rules = if what.contains("phone") {
        "All phone numbers are North American: ten digits, written in various layouts, \
         sometimes with the country code 1 (+1 or a leading 1-) in front; two numbers are the \
         same when their ten digits are. Dates, order numbers and invoice numbers are not phone \
         numbers."
    } else if hard {
        "Two addresses are the same when they are equal ignoring upper/lower case. Some are \
         written out, like jane.doe [at] example [dot] com or jane.doe (at) example (dot) com: \
         those are addresses too."
    } else {
        "Two addresses are the same when they are equal ignoring upper/lower case."
    };
    let holder = if level == Level::Easy {
        let file = &paths[0];
        match g.index(4) {
            0 => format!(
                "The file {file} in your home directory is free text with people's e-mail \
                 addresses and phone numbers."
            ),
            1 => format!(
                "In your home directory, the file {file} holds notes that mention people's \
                 e-mail addresses and phone numbers."
            ),
            2 => format!(
                "Your home directory holds the file {file}, free text full of e-mail addresses \
                 and phone numbers."
            ),
            _ => format!(
                "Someone pasted notes with e-mail addresses and phone numbers into the file \
                 {file} in your home directory."
            ),
        }
    } else {
        let nested = if hard { ", some in subfolders" } else { "" };
        match g.index(3) {
            0 => format!(
                "The folder {folder} in your home directory holds text files (.txt){nested}, \
                 free text with people's e-mail addresses and phone numbers; the text is all of \
                 them together."
            ),
            1 => format!(
                "In your home directory, the folder {folder} holds notes as .txt files{nested}, \
                 which mention e-mail addresses and phone numbers; the text is all of them \
                 together."
            ),
            _ => format!(
                "Notes with e-mail addresses and phone numbers fill the .txt files of the \
                 folder {folder} in your home directory{nested}; the text is all of them \
                 together."
            ),
        }
    };
    let asked = question(g, &what);
    let mut instance = Instance::new(
        format!("{holder} {asked} {rules} {}", precision(g, 0)),
        Grader::Numeric {
            value: count as f64,
            rel_tol: 0.0,
            abs_tol: 0.0,
        },
    );
    for (path, mut text) in paths.into_iter().zip(texts) {
        text.push('\n');
        // Hard: some files have Windows line ends.
        if hard && g.chance(0.4) {
            text = text.replace('\n', "\r\n");
        }
        instance = instance.file(path, text.into_bytes());
    }
    instance
}

/// The address in lowercase, capitalised words, or upper case.
fn spell_email(g: &mut Gen, address: &str) -> String {
    match g.index(4) {
        0 | 1 => address.to_owned(),
        2 => address
            .split('.')
            .map(capital)
            .collect::<Vec<_>>()
            .join("."),
        _ => address.to_uppercase(),
    }
}

/// Ten digits in one of several layouts.
fn spell_phone(g: &mut Gen, digits: &str) -> String {
    let (a, e, n) = (&digits[..3], &digits[3..6], &digits[6..]);
    match g.index(7) {
        0 => format!("({a}) {e}-{n}"),
        1 => format!("{a}-{e}-{n}"),
        2 => format!("{a}.{e}.{n}"),
        3 => format!("+1 {a} {e} {n}"),
        4 => format!("1-{a}-{e}-{n}"),
        5 => format!("{a}{e}{n}"),
        _ => format!("+1 ({a}) {e}-{n}"),
    }
}
