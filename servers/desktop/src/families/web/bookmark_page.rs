//! `web_bookmark_page`: an article among several on the local site, to bookmark.

use super::common::{capital, escape, html, open_page, page_shown, site, slug};
use crate::apps::chromium::PROFILE;
use crate::families::{Family, FamilySplit, Gen, Instance};
use crate::grading::Check;
use crate::tasks::{App, DemoCondition};

pub(super) const FAMILY: Family = Family {
    name: "web_bookmark_page",
    app: App::Browser,
    split: FamilySplit::TrainAndTest,
    about: "bookmark the named page of a local site in the browser",
    generate,
};

const KINDS: &[&str] = &["guide", "recipe", "story", "review", "tutorial", "notice"];

fn generate(g: &mut Gen) -> Instance {
    let kind = *g.pick(KINDS);
    let blog = format!(
        "The {} {}",
        capital(g.word()),
        g.pick(&["Journal", "Gazette", "Notebook", "Digest"])
    );
    let count = g.int(3, 6) as usize;
    let mut titles = Vec::new();
    while titles.len() < count {
        let title = format!("{} {} {}", capital(g.word()), g.word(), kind);
        if !titles.contains(&title) {
            titles.push(title);
        }
    }
    let folder = *g.pick(&["posts", "articles", "pages", "read"]);
    let mut pages = Vec::new();
    let mut links = String::new();
    for title in &titles {
        let path = format!("{folder}/{}.html", slug(title));
        let text = format!(
            "<p>{} {} {} {}.</p>\n<p><a href=\"/\">All posts</a></p>",
            capital(g.word()),
            g.word(),
            g.word(),
            g.word()
        );
        links.push_str(&format!(
            "<li><a href=\"/{path}\">{}</a></li>\n",
            escape(title)
        ));
        pages.push((path, html(title, &text)));
    }
    let target = g.index(titles.len());
    let path = pages[target].0.clone();
    let mut instance = Instance::new(format!(
        "The browser shows {blog}, a local website. Bookmark its page \"{}\" in the browser (any bookmark folder will do).",
        titles[target]
    ))
    .page("index.html", html(&blog, &format!("<p>Latest posts:</p>\n<ul>\n{links}</ul>")));
    for (path, body) in pages {
        instance = instance.page(path, body);
    }
    instance = instance
        .launch(["chromium"])
        .check(Check::Bookmark {
            url: format!("{}/{path}", site()),
        })
        .then(|i| page_shown(i, &blog));
    // Ctrl+D opens the bookmark bubble with Done focused; Chromium saves its bookmarks
    // file about two and a half seconds after a change.
    let url = format!("{}/{path}", site());
    open_page(instance, &path)
        .then(|i| page_shown(i, &titles[target]))
        .key("ctrl+d")
        .wait(1000)
        .key("Return")
        .wait_for(DemoCondition::FileContains(
            format!(
                "{}/Default/Bookmarks",
                PROFILE.trim_start_matches("/home/user/")
            ),
            url,
        ))
}
