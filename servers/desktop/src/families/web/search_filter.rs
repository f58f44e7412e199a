//! `web_search_filter`: a shop's search form on the local site with a text field, a
//! category list and filter boxes; the page server must receive the search with the query,
//! the category and the one filter asked for.

use std::collections::BTreeMap;

use super::common::{capital, escape, form_shown, html, page_shown, slug};
use crate::families::{Family, FamilySplit, Gen, Instance};
use crate::grading::{Check, Requests};
use crate::tasks::App;

pub(super) const FAMILY: Family = Family {
    name: "web_search_filter",
    app: App::Browser,
    split: FamilySplit::TrainAndTest,
    about: "search a local shop with a query, a category and a filter",
    generate,
};

const CATEGORIES: &[&str] = &[
    "Books",
    "Clothing",
    "Electronics",
    "Furniture",
    "Garden",
    "Kitchen",
    "Music",
    "Sports",
    "Toys",
    "Watches",
];

/// Filter boxes: (label, field name).
const FILTERS: &[(&str, &str)] = &[
    ("In stock only", "in_stock"),
    ("Free delivery", "free_delivery"),
    ("On sale", "on_sale"),
    ("Ships within 24 hours", "fast"),
    ("Recycled packaging", "eco"),
];

const ITEMS: &[&str] = &[
    "kettle", "lamp", "scarf", "chair", "speaker", "notebook", "jacket", "blender", "racket",
    "clock", "guitar", "puzzle", "rug", "vase", "boots",
];

fn generate(g: &mut Gen) -> Instance {
    let shop = format!(
        "{} {}",
        capital(g.word()),
        g.pick(&["Market", "Bazaar", "Store", "Emporium"])
    );
    let count = g.int(4, 7) as usize;
    let mut categories: Vec<&str> = g.sample(CATEGORIES, count);
    categories.sort_unstable();
    let category = *g.pick(&categories);
    let filter_count = g.int(2, 4) as usize;
    let filters: Vec<(&str, &str)> = g.sample(FILTERS, filter_count);
    let chosen = g.index(filters.len());
    let query = format!("{} {}", g.word(), g.pick(ITEMS));
    let query_name = *g.pick(&["q", "query", "search", "terms"]);
    let category_name = *g.pick(&["category", "cat", "department"]);
    let results = format!("{}.html", g.pick(&["results", "search", "find", "list"]));
    let search_page = format!("{}.html", g.pick(&["shop", "catalog", "browse"]));
    let category_value = |c: &str| {
        format!(
            "{}{}",
            slug(c),
            if category_name == "cat" { "-1" } else { "" }
        )
    };

    let options: String = categories
        .iter()
        .map(|c| {
            format!(
                "<option value=\"{}\">{}</option>\n",
                category_value(c),
                escape(c)
            )
        })
        .collect();
    let boxes: String = filters
        .iter()
        .map(|(label, name)| {
            format!(
                "<label><input type=\"checkbox\" name=\"{name}\" value=\"1\"> {}</label>\n",
                escape(label)
            )
        })
        .collect();
    let form = format!(
        "<form method=\"get\" action=\"/{results}\">\n\
         <label>Search <input type=\"text\" name=\"{query_name}\" autofocus></label>\n\
         <label>Category <select name=\"{category_name}\">\n<option value=\"\">All categories</option>\n{options}</select></label>\n\
         {boxes}<p><button type=\"submit\">Search</button></p>\n</form>"
    );
    let (filter_label, filter_name) = filters[chosen];
    let mut fields = BTreeMap::new();
    fields.insert(query_name.to_owned(), query.clone());
    fields.insert(category_name.to_owned(), category_value(category));
    fields.insert(filter_name.to_owned(), "1".to_owned());

    let instruction = format!(
        "The browser shows the website of {shop}, a local shop. Use its product search to search for \"{query}\" in the category {category}, with the filter \"{filter_label}\" ticked (and no other filter)."
    );
    let mut instance = Instance::new(instruction)
        .page(
            "index.html",
            html(
                &shop,
                &format!("<p>Welcome! <a href=\"/{search_page}\">Search our products</a>.</p>"),
            ),
        )
        .page(
            search_page.clone(),
            html(&format!("{shop}: product search"), &form),
        )
        .page(
            results.clone(),
            html("Search results", "<p>No products match your search.</p>"),
        )
        .launch(["chromium".to_owned(), search_page.clone()])
        .check(Check::PageRequest {
            method: "GET".into(),
            path: format!("/{results}"),
            fields,
            // The search as it was left: refining it is fine, but its last state must be the
            // one asked for, with no other filter ticked.
            requests: Requests::Last,
            exact_fields: true,
        })
        .then(|i| form_shown(i, &format!("{shop}: product search")));
    instance = instance
        .type_text(query)
        .key("Tab")
        // A closed list selects the option whose label starts with what is typed (in any
        // case; a shifted first letter can end the list's type-ahead early).
        .type_text(category.to_lowercase())
        .wait(200);
    for _ in 0..=chosen {
        instance = instance.key("Tab");
    }
    instance = instance.key("space");
    for _ in chosen..filters.len() {
        instance = instance.key("Tab");
    }
    instance
        .key("Return")
        .then(|i| page_shown(i, "Search results"))
}
