//! `web_form_from_file`: a person's details in a text file in the home folder, to enter
//! into a form on the local site (text fields and a country list) and submit. Held out.

use std::collections::BTreeMap;

use super::common::{capital, escape, form_shown, html, page_shown, person};
use crate::families::{Family, FamilySplit, Gen, Instance};
use crate::grading::{Check, Requests};
use crate::tasks::App;

pub(super) const FAMILY: Family = Family {
    name: "web_form_from_file",
    app: App::Browser,
    split: FamilySplit::TestOnly,
    about: "enter the details found in a home file into a local web form and submit it",
    generate,
};

const COUNTRIES: &[&str] = &[
    "Austria", "Belgium", "Canada", "Denmark", "Estonia", "Finland", "Greece", "Hungary",
    "Ireland", "Japan", "Kenya", "Latvia", "Mexico", "Norway", "Portugal", "Spain",
];

const FILES: &[&str] = &[
    "contact.txt",
    "new-member.txt",
    "applicant.txt",
    "customer.txt",
];

fn generate(g: &mut Gen) -> Instance {
    let name = person(g);
    let email = format!(
        "{}{}@{}.example",
        name.split(' ').next().unwrap_or("x").to_lowercase(),
        g.int(1, 99),
        g.word()
    );
    let city = g.city().to_owned();
    let phone = format!(
        "+{} {} {}",
        g.int(30, 49),
        g.int(100, 999),
        g.int(10_000, 99_999)
    );
    let count = g.int(5, 8) as usize;
    let countries: Vec<&str> = g.sample(COUNTRIES, count);
    let mut listed = countries.clone();
    listed.sort_unstable();
    let country = *g.pick(&countries);
    let file = *g.pick(FILES);
    let club = format!(
        "{} {}",
        capital(g.word()),
        g.pick(&["Rowing Club", "Choir", "Chess Club", "Hiking Society"])
    );
    let action = format!("{}.html", g.pick(&["joined", "welcome", "registered"]));
    let form_page = format!("{}.html", g.pick(&["join", "membership", "apply"]));

    // The file lists the details in its own order and wording.
    let mut lines = vec![
        format!("Name: {name}"),
        format!("E-mail: {email}"),
        format!("Phone: {phone}"),
        format!("Home town: {city}"),
        format!("Country: {country}"),
    ];
    g.shuffle(&mut lines);
    let notes = format!(
        "Details for the {club} membership form\n\n{}\n",
        lines.join("\n")
    );

    let options: String = listed
        .iter()
        .map(|c| format!("<option>{}</option>\n", escape(c)))
        .collect();
    let form = format!(
        "<form method=\"post\" action=\"/{action}\">\n\
         <label>Name <input type=\"text\" name=\"name\" autofocus></label>\n\
         <label>Email <input type=\"text\" name=\"email\"></label>\n\
         <label>Phone <input type=\"text\" name=\"phone\"></label>\n\
         <label>City <input type=\"text\" name=\"city\"></label>\n\
         <label>Country <select name=\"country\">\n<option value=\"\">Choose…</option>\n{options}</select></label>\n\
         <p><button type=\"submit\">Join</button></p>\n</form>"
    );
    let fields: BTreeMap<String, String> = [
        ("name", &name),
        ("email", &email),
        ("phone", &phone),
        ("city", &city),
        ("country", &country.to_owned()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.clone()))
    .collect();
    let instance = Instance::new(format!(
        "The browser shows the local website of the {club}. Fill in its membership form with the details in the file {file} in your home folder (/home/user), and submit it."
    ))
    .file(file, notes)
    .page(
        "index.html",
        html(&club, &format!("<p>New members are welcome: <a href=\"/{form_page}\">join us</a>.</p>")),
    )
    .page(form_page.clone(), html(&format!("Join the {club}"), &form))
    .page(action.clone(), html("Welcome", "<p>Thank you for joining.</p>"))
    .launch(["chromium".to_owned(), form_page.clone()])
    .check(Check::PageRequest {
        method: "POST".into(),
        path: format!("/{action}"),
        fields,
        requests: Requests::Only,
        exact_fields: false,
    })
    .then(|i| form_shown(i, &format!("Join the {club}")));
    instance
        .type_text(name)
        .key("Tab")
        .type_text(email)
        .key("Tab")
        .type_text(phone)
        .key("Tab")
        .type_text(city)
        .key("Tab")
        // A closed list selects the option whose label starts with what is typed (in any
        // case; a shifted first letter can end the list's type-ahead early).
        .type_text(country.to_lowercase())
        .wait(200)
        .key("Tab")
        .key("Return")
        .then(|i| page_shown(i, "Welcome"))
}
