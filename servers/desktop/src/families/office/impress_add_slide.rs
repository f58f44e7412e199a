//! `impress_add_slide`: a new last slide with a given title and text, the presentation
//! saved in place.

use super::super::{Family, FamilySplit, Gen, Instance, words};
use super::common::{fodp, loaded, unrelated_words};
use crate::grading::Check;
use crate::tasks::App;

pub(super) const FAMILY: Family = Family {
    name: "impress_add_slide",
    app: App::Impress,
    split: FamilySplit::TrainAndTest,
    about: "LibreOffice Impress: add a last slide with a title and a line of text, saved",
    generate,
};

const TOPICS: &[&str] = &[
    "Plans", "Budget", "Team", "Timeline", "Risks", "Goals", "Review",
];
fn generate(g: &mut Gen) -> Instance {
    let count = g.int(1, 3) as usize;
    let picked = unrelated_words(g, count + 2);
    let stem = picked[count + 1];
    let slides: Vec<(String, String)> = (0..count)
        .map(|i| {
            let topic = *g.pick(TOPICS);
            (
                format!("{topic} for the {}", picked[i]),
                format!("{} leads it from {}", g.first_name(), g.city()),
            )
        })
        .collect();
    let title = format!("{} {}", g.city(), g.pick(TOPICS));
    let text = format!(
        "{} opens the {} office in {}",
        g.pick(words::FIRST_NAMES),
        picked[count],
        g.pick(words::MONTHS)
    );
    let source = format!("{stem}.fodp");
    let instruction = format!(
        "LibreOffice Impress has {source} (in /home/user) open. Add a new slide at the end, \
         after the existing slides, with the title \"{title}\" and the text \"{text}\" in its \
         body, then save the presentation under the same name and format."
    );
    let last = count as u32 + 1;
    let mut instance = Instance::new(instruction)
        .file(&source, fodp(&slides))
        .launch(["libreoffice", "--impress", source.as_str()])
        .check(Check::SlideCount {
            path: source.clone(),
            count: last,
        })
        .check(Check::SlideText {
            path: source.clone(),
            slide: Some(last),
            text: title.clone(),
        })
        .check(Check::SlideText {
            path: source.clone(),
            slide: Some(last),
            text: text.clone(),
        })
        .then(|i| loaded(i, &source));
    // End shows the last slide; a new slide (Ctrl+M) comes after the current one with a
    // title and an outline placeholder: Tab selects each, Return edits it. The new slide
    // becomes current a moment after the key: a Tab before that selects the old slide's
    // title.
    if count > 1 {
        instance = instance.key("End").wait(300);
    }
    instance
        .key("ctrl+m")
        .wait(2200)
        .key("Tab")
        .wait(250)
        .key("Return")
        .wait(350)
        .type_text(title)
        .wait(200)
        .key("Escape")
        .wait(200)
        .key("Tab")
        .wait(250)
        .key("Return")
        .wait(350)
        .type_text(&text)
        .wait(200)
        .key("Escape")
        .wait(200)
        // Impress stores the typed text in pieces (spans, autocorrect), so no one string in
        // the saved file says the save is done: a pause stands in.
        .key("ctrl+s")
        .wait(1000)
}
