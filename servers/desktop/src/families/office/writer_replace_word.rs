//! `writer_replace_word`: every occurrence of a word in a document replaced by another, the
//! document saved in place.

use super::super::{Family, FamilySplit, Gen, Instance};
use super::common::{FIND_AND_REPLACE, fodt, loaded, saved_holding, sentence, unrelated_words};
use crate::grading::Check;
use crate::tasks::{App, DemoCondition};

pub(super) const FAMILY: Family = Family {
    name: "writer_replace_word",
    app: App::Writer,
    split: FamilySplit::TrainAndTest,
    about: "LibreOffice Writer: replace every occurrence of a word, saved",
    generate,
};

fn generate(g: &mut Gen) -> Instance {
    loop {
        if let Some(instance) = attempt(g) {
            return instance;
        }
    }
}

/// One draw; `None` when the old word shows up elsewhere in the text by chance.
fn attempt(g: &mut Gen) -> Option<Instance> {
    let pair = unrelated_words(g, 3);
    let (old, new, stem) = (pair[0], pair[1], pair[2]);
    let count = g.int(4, 7) as usize;
    let hits = g.int(2, 3) as usize;
    let mut with: Vec<bool> = (0..count).map(|i| i < hits).collect();
    g.shuffle(&mut with);
    let sentences: Vec<String> = with
        .iter()
        .map(|&w| sentence(g, w.then_some(old)))
        .collect();
    let text = sentences.join(" ");
    // The word must occur only where it was put (LibreOffice's search ignores case).
    if text.to_lowercase().matches(old).count() != hits || text.contains(new) {
        return None;
    }
    let paragraphs: Vec<String> = sentences.chunks(2).map(|c| c.join(" ")).collect();
    let source = format!("{stem}.fodt");
    let first_hit = with.iter().position(|&w| w).expect("hits");
    let replaced = sentences[first_hit].replace(old, new);
    let replaced_line = replaced.clone();
    let instruction = format!(
        "LibreOffice Writer has {source} (in /home/user) open. Replace every occurrence of the \
         word \"{old}\" with \"{new}\" (so \"{old}s\" becomes \"{new}s\"), then save the \
         document under the same name and format."
    );
    Some(
        Instance::new(instruction)
            .file(&source, fodt(&paragraphs))
            .launch(["libreoffice", "--writer", source.as_str()])
            .check(Check::DocumentLacks {
                path: source.clone(),
                text: old.into(),
            })
            .check(Check::DocumentContains {
                path: source.clone(),
                text: replaced,
            })
            // The whole text with every occurrence replaced and nothing else touched: deleting
            // the text but for one replaced sentence is not the edit asked for.
            .check(Check::DocumentEquals {
                path: source.clone(),
                text: text.replace(old, new),
            })
            // Everything deleted but the one replaced sentence a check names: both old
            // checks held, the document is gone.
            .hack("all but one replaced sentence deleted", |h| {
                loaded(h, &source)
                    .key("ctrl+a")
                    .type_text(replaced_line)
                    .key("ctrl+s")
                    .then(|i| saved_holding(i, &source, new))
            })
            .then(|i| loaded(i, &source))
            // Find and Replace: the search field has the focus; Tab thrice reaches the
            // replacement; Alt+L is Replace All.
            .key("ctrl+h")
            .wait_for(DemoCondition::Focused(FIND_AND_REPLACE.into()))
            .type_text(old)
            .key("Tab")
            .key("Tab")
            .key("Tab")
            .type_text(new)
            .key("alt+l")
            .key("Escape")
            .wait_for(DemoCondition::Gone(FIND_AND_REPLACE.into()))
            .key("ctrl+s")
            .then(|i| saved_holding(i, &source, new)),
    )
}
