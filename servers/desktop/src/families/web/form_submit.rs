//! `web_form_submit`: a form on the local site (a registration, a support ticket, an order)
//! to fill in with given values and send; the page server must receive the post with every
//! field.

use std::collections::BTreeMap;

use super::common::{escape, form_shown, html, page_shown, person, slug};
use crate::families::{Family, FamilySplit, Gen, Instance};
use crate::grading::{Check, Requests};
use crate::tasks::App;

pub(super) const FAMILY: Family = Family {
    name: "web_form_submit",
    app: App::Browser,
    split: FamilySplit::TrainAndTest,
    about: "fill in a web form on a local site with given values and submit it",
    generate,
};

/// A kind of form: its title and the fields it may ask for.
struct Kind {
    title: &'static str,
    fields: &'static [&'static str],
}

const KINDS: &[Kind] = &[
    Kind {
        title: "Event registration",
        fields: &[
            "Full name",
            "Email",
            "City",
            "Company",
            "Guests",
            "Dietary needs",
        ],
    },
    Kind {
        title: "Support ticket",
        fields: &["Full name", "Email", "Order number", "Product", "Subject"],
    },
    Kind {
        title: "Library card application",
        fields: &["Full name", "Street", "City", "Postcode", "Phone"],
    },
    Kind {
        title: "Delivery details",
        fields: &[
            "Recipient",
            "Street",
            "City",
            "Postcode",
            "Phone",
            "Delivery note",
        ],
    },
    Kind {
        title: "Volunteer sign-up",
        fields: &["Full name", "Email", "Phone", "Team", "Hours per week"],
    },
    Kind {
        title: "Room booking",
        fields: &["Organiser", "Room", "Date", "Attendees", "Purpose"],
    },
];

/// A plausible value for a field by its label.
pub(super) fn value_for(g: &mut Gen, label: &str) -> String {
    let word = |g: &mut Gen| g.word().to_owned();
    match label {
        "Full name" | "Recipient" | "Organiser" => person(g),
        "Email" => format!(
            "{}.{}@{}.example",
            g.first_name().to_lowercase(),
            g.last_name().to_lowercase(),
            word(g)
        ),
        "City" => g.city().to_owned(),
        "Company" => format!(
            "{} {}",
            super::common::capital(g.word()),
            g.pick(&["Ltd", "GmbH", "Labs", "Works", "Group"])
        ),
        "Guests" | "Attendees" | "Hours per week" => g.int(1, 40).to_string(),
        "Dietary needs" => (*g.pick(&[
            "vegetarian",
            "vegan",
            "no nuts",
            "gluten free",
            "halal",
            "none",
        ]))
        .to_owned(),
        "Order number" => format!("{}-{}", g.letters(1).to_uppercase(), g.int(10_000, 99_999)),
        "Product" => format!(
            "{} {}",
            super::common::capital(g.word()),
            g.pick(&["lamp", "chair", "kettle", "speaker", "desk", "backpack"])
        ),
        "Subject" | "Purpose" | "Delivery note" => {
            format!(
                "{} {} {}",
                super::common::capital(g.word()),
                g.word(),
                g.word()
            )
        }
        "Street" => format!(
            "{} {} {}",
            g.int(1, 240),
            super::common::capital(g.word()),
            g.pick(&["Street", "Road", "Lane", "Avenue"])
        ),
        "Postcode" => g.int(10_000, 99_999).to_string(),
        "Phone" => format!("0{} {}", g.int(100, 999), g.int(100_000, 999_999)),
        "Team" => (*g.pick(&["Kitchen", "Reception", "Logistics", "Garden", "Tech"])).to_owned(),
        "Room" => format!("{}{}", g.pick(&["A", "B", "C"]), g.int(100, 420)),
        "Date" => g.date().0,
        _ => word(g),
    }
}

/// A field's name in the form: its label's slug, sometimes with a site's own prefix.
fn field_name(label: &str, prefix: &str) -> String {
    format!("{prefix}{}", slug(label).replace('-', "_"))
}

fn generate(g: &mut Gen) -> Instance {
    let kind = g.pick(KINDS);
    let count = g.int(3, 4.min(kind.fields.len() as i64)) as usize;
    let mut labels: Vec<&str> = g.sample(kind.fields, count);
    // Keep the form's own order.
    labels.sort_by_key(|l| kind.fields.iter().position(|f| f == l));
    let prefix = (*g.pick(&["", "", "f_", "reg_", "x"])).to_owned();
    let organisation = format!(
        "{} {}",
        super::common::capital(g.word()),
        g.pick(&[
            "Society",
            "Centre",
            "Club",
            "Institute",
            "Cooperative",
            "Foundation"
        ])
    );
    let action = format!(
        "{}-{}.html",
        slug(kind.title),
        g.pick(&["sent", "done", "received", "thanks"])
    );
    let form_page = format!("{}.html", slug(kind.title));
    let fields: Vec<(String, String, String)> = labels
        .iter()
        .map(|label| {
            (
                label.to_string(),
                field_name(label, &prefix),
                value_for(g, label),
            )
        })
        .collect();

    let mut inputs = String::new();
    for (i, (label, name, _)) in fields.iter().enumerate() {
        let autofocus = if i == 0 { " autofocus" } else { "" };
        inputs.push_str(&format!(
            "<label>{} <input type=\"text\" name=\"{name}\"{autofocus}></label>\n",
            escape(label)
        ));
    }
    let form = html(
        &format!("{organisation}: {}", kind.title),
        &format!(
            "<form method=\"post\" action=\"/{action}\">\n{inputs}<p><button type=\"submit\">Send</button></p>\n</form>"
        ),
    );
    let index = html(
        &organisation,
        &format!(
            "<p>Welcome to the {org}.</p>\n<ul>\n<li><a href=\"/{form_page}\">{title}</a></li>\n<li><a href=\"/about.html\">About us</a></li>\n</ul>",
            org = escape(&organisation),
            title = escape(kind.title)
        ),
    );
    let about = html(
        "About us",
        &format!(
            "<p>The {} was founded in {}.</p>",
            escape(&organisation),
            g.int(1950, 2015)
        ),
    );
    let thanks = html("Thank you", "<p>Your form was received.</p>");

    let listing: Vec<String> = fields
        .iter()
        .map(|(label, _, value)| format!("{label}: {value}"))
        .collect();
    let instruction = format!(
        "The browser shows the local website of the {organisation}. Fill in its \"{}\" form with these values and submit it:\n{}",
        kind.title,
        listing.join("\n")
    );
    let expected: BTreeMap<String, String> = fields
        .iter()
        .map(|(_, name, value)| (name.clone(), value.clone()))
        .collect();
    let mut instance = Instance::new(instruction)
        .page("index.html", index)
        .page(form_page.clone(), form)
        .page("about.html", about)
        .page(action.clone(), thanks)
        .launch(["chromium".to_owned(), form_page.clone()])
        .check(Check::PageRequest {
            method: "POST".into(),
            path: format!("/{action}"),
            fields: expected,
            // A form is sent once: wrong values first and the right ones after is a wrong
            // submission.
            requests: Requests::Only,
            exact_fields: false,
        })
        .then(|i| form_shown(i, kind.title));

    for (i, (_, _, value)) in fields.iter().enumerate() {
        if i > 0 {
            instance = instance.key("Tab");
        }
        instance = instance.type_text(value.clone());
    }
    instance.key("Return").then(|i| page_shown(i, "Thank you"))
}
