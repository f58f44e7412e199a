//! `web_download_file`: a report among several linked from the local site, to download
//! into the Downloads folder.

use super::common::{capital, escape, html, open_page, page_shown};
use crate::families::{Family, FamilySplit, Gen, Instance, words};
use crate::grading::Check;
use crate::tasks::{App, DemoCondition};

pub(super) const FAMILY: Family = Family {
    name: "web_download_file",
    app: App::Browser,
    split: FamilySplit::TrainAndTest,
    about: "download the named file among several linked from a local site",
    generate,
};

const TOPICS: &[&str] = &[
    "sales",
    "inventory",
    "expenses",
    "visitors",
    "returns",
    "payroll",
    "energy",
    "orders",
];

/// A small CSV of the topic for the month.
fn report(g: &mut Gen, topic: &str) -> String {
    let mut text = format!("item,{topic}\n");
    for _ in 0..g.int(3, 8) {
        text.push_str(&format!("{},{}\n", g.word(), g.int(1, 9999)));
    }
    text
}

fn generate(g: &mut Gen) -> Instance {
    let topic = *g.pick(TOPICS);
    let year = g.int(2019, 2025);
    let months: Vec<usize> = {
        let mut all: Vec<usize> = (0..12).collect();
        g.shuffle(&mut all);
        let mut some = all[..g.int(3, 6) as usize].to_vec();
        some.sort_unstable();
        some
    };
    let extension = *g.pick(&["csv", "txt"]);
    let team = format!(
        "{} {}",
        capital(g.word()),
        g.pick(&["Office", "Depot", "Store", "Branch"])
    );
    let mut links = String::new();
    let mut files = Vec::new();
    for &m in &months {
        let name = format!("{topic}-{year}-{:02}.{extension}", m + 1);
        let body = report(g, topic);
        links.push_str(&format!(
            "<li><a href=\"/files/{name}\">{} {} {year}</a></li>\n",
            escape(&capital(topic)),
            words::MONTHS[m]
        ));
        files.push((name, body, m));
    }
    let (name, body, month) = files[g.index(files.len())].clone();
    let page_title = format!("{team} reports");
    let page = html(
        &page_title,
        &format!("<p>Monthly {topic} reports:</p>\n<ul>\n{links}</ul>"),
    );
    let mut instance = Instance::new(format!(
        "The browser shows the reports page of the {team}. Download the {topic} report for {} {year}, so that it is saved as Downloads/{name} in your home folder (/home/user).",
        words::MONTHS[month]
    ))
    .page("index.html", page);
    for (file, text, _) in &files {
        instance = instance.page(format!("files/{file}"), text.clone());
    }
    instance = instance
        .launch(["chromium"])
        .check(Check::FileEquals {
            path: format!("Downloads/{name}"),
            text: body,
        })
        .then(|i| page_shown(i, &page_title));
    open_page(instance, &format!("files/{name}"))
        .wait_for(DemoCondition::File(format!("Downloads/{name}")))
}
