//! `writer_replace_sentence`: one sentence of a document replaced by a given one, the
//! document saved in place.

use super::super::{Family, FamilySplit, Gen, Instance};
use super::common::{FIND_AND_REPLACE, fodt, loaded, saved_holding, sentence};
use crate::grading::Check;
use crate::tasks::{App, DemoCondition};

pub(super) const FAMILY: Family = Family {
    name: "writer_replace_sentence",
    app: App::Writer,
    split: FamilySplit::TrainAndTest,
    about: "LibreOffice Writer: replace one sentence with another, saved",
    generate,
};

fn generate(g: &mut Gen) -> Instance {
    let count = g.int(3, 6) as usize;
    let mut sentences: Vec<String> = Vec::new();
    while sentences.len() < count + 1 {
        let s = sentence(g, None);
        if !sentences.contains(&s) {
            sentences.push(s);
        }
    }
    let replacement = sentences.pop().expect("one extra");
    let target = g.index(count);
    let old = sentences[target].clone();
    let keep = sentences[(target + 1) % count].clone();
    let paragraphs: Vec<String> = sentences.chunks(2).map(|c| c.join(" ")).collect();
    let stem = g.word();
    let source = format!("{stem}-notes.fodt");
    let instruction = format!(
        "LibreOffice Writer has {source} (in /home/user) open. Replace the sentence \"{old}\" \
         with \"{replacement}\", leaving the rest of the text as it is, then save the document \
         under the same name and format."
    );
    Instance::new(instruction)
        .file(&source, fodt(&paragraphs))
        .launch(["libreoffice", "--writer", source.as_str()])
        .check(Check::DocumentLacks {
            path: source.clone(),
            text: old.clone(),
        })
        .check(Check::DocumentContains {
            path: source.clone(),
            text: replacement.clone(),
        })
        .check(Check::DocumentContains {
            path: source.clone(),
            text: keep,
        })
        // The rest of the text as it was: nothing else deleted, added or changed.
        .check(Check::DocumentEquals {
            path: source.clone(),
            text: sentences.join(" ").replace(&old, &replacement),
        })
        .then(|i| loaded(i, &source))
        .key("ctrl+h")
        .wait_for(DemoCondition::Focused(FIND_AND_REPLACE.into()))
        .type_text(old)
        .key("Tab")
        .key("Tab")
        .key("Tab")
        .type_text(&replacement)
        .key("alt+l")
        .key("Escape")
        .wait_for(DemoCondition::Gone(FIND_AND_REPLACE.into()))
        .key("ctrl+s")
        .then(|i| saved_holding(i, &source, &replacement))
}
