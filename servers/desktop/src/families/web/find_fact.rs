//! `web_find_fact`: a fact (a staff member's phone extension, a product's price) on one of
//! several pages linked from the local site's start page, to find by following the links
//! and write into a file with the terminal.

use super::common::{START_WAIT, capital, escape, html, person, slug};
use crate::families::{Family, FamilySplit, Gen, Instance};
use crate::grading::Check;
use crate::tasks::{App, DemoCondition};

pub(super) const FAMILY: Family = Family {
    name: "web_find_fact",
    app: App::Browser,
    split: FamilySplit::TrainAndTest,
    about: "follow the links of a local site to a fact and write it into a file",
    generate,
};

const DEPARTMENTS: &[&str] = &[
    "Accounting",
    "Research",
    "Sales",
    "Support",
    "Facilities",
    "Legal",
    "Marketing",
    "Logistics",
    "Design",
    "Training",
];

const SHOPS: &[&str] = &[
    "Garden", "Kitchen", "Office", "Outdoor", "Bathroom", "Lighting", "Toys", "Travel",
];

const FILES: &[&str] = &[
    "answer.txt",
    "found.txt",
    "result.txt",
    "fact.txt",
    "note.txt",
];

/// One linked page: its file name, link text and table rows (key, value).
struct Section {
    page: String,
    name: String,
    rows: Vec<(String, String)>,
}

fn generate(g: &mut Gen) -> Instance {
    let staff = g.chance(0.5);
    let site_name = format!(
        "{} {}",
        capital(g.word()),
        g.pick(&["Industries", "Trading", "Partners", "Supplies"])
    );
    let count = g.int(3, 5) as usize;
    let names: Vec<&str> = g.sample(if staff { DEPARTMENTS } else { SHOPS }, count);
    let mut used_keys = std::collections::BTreeSet::new();
    let mut used_values = std::collections::BTreeSet::new();
    let mut sections = Vec::new();
    for name in &names {
        let mut rows = Vec::new();
        for _ in 0..g.int(3, 6) {
            let key = loop {
                let candidate = if staff {
                    person(g)
                } else {
                    format!("{} {}", capital(g.word()), g.word())
                };
                if used_keys.insert(candidate.clone()) {
                    break candidate;
                }
            };
            let value = loop {
                let candidate = if staff {
                    g.int(2000, 8999).to_string()
                } else {
                    format!("{:.2}", g.money(3.0, 400.0, 2))
                };
                if used_values.insert(candidate.clone()) {
                    break candidate;
                }
            };
            rows.push((key, value));
        }
        sections.push(Section {
            page: format!(
                "{}/{}.html",
                if staff { "team" } else { "shop" },
                slug(name)
            ),
            name: (*name).to_owned(),
            rows,
        });
    }
    let target = g.index(sections.len());
    let row = g.index(sections[target].rows.len());
    let (key, answer) = sections[target].rows[row].clone();
    let file = *g.pick(FILES);

    let (column_key, column_value) = if staff {
        ("Name", "Extension")
    } else {
        ("Product", "Price (EUR)")
    };
    let mut instance = Instance::new(match staff {
        true => format!(
            "The browser shows the local website of {site_name}. Find the phone extension of {key} in its staff pages and write only that number into a new file named {file} in your home folder (/home/user)."
        ),
        false => format!(
            "The browser shows the local website of {site_name}. Find the price of the product \"{key}\" in its shop pages and write only that price, as shown on the site (digits and a decimal point, no currency), into a new file named {file} in your home folder (/home/user)."
        ),
    });
    let mut links = String::new();
    for section in &sections {
        let rows: String = section
            .rows
            .iter()
            .map(|(k, v)| format!("<tr><td>{}</td><td>{}</td></tr>\n", escape(k), escape(v)))
            .collect();
        let title = if staff {
            format!("{} team", section.name)
        } else {
            format!("{} department", section.name)
        };
        instance = instance.page(
            section.page.clone(),
            html(
                &title,
                &format!(
                    "<p><a href=\"/\">Back to the start page</a></p>\n<table>\n<tr><th>{column_key}</th><th>{column_value}</th></tr>\n{rows}</table>"
                ),
            ),
        );
        links.push_str(&format!(
            "<li><a href=\"/{}\">{}</a></li>\n",
            section.page,
            escape(&title)
        ));
    }
    let intro = if staff {
        "Our teams and how to reach them:"
    } else {
        "Browse our departments:"
    };
    instance
        .page(
            "index.html",
            html(&site_name, &format!("<p>{intro}</p>\n<ul>\n{links}</ul>")),
        )
        .launch(["chromium"])
        .launch(["xterm"])
        .check(Check::FileEquals {
            path: file.into(),
            text: answer.clone(),
        })
        // The terminal starts after the browser's window shows.
        .wait(START_WAIT)
        .type_text(format!("echo {answer} > {file}"))
        .key("Return")
        .wait_for(DemoCondition::FileContains(file.into(), answer))
}
