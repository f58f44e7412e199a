//! `writer_bold_word`: every occurrence of a word in a document made bold, nothing else,
//! the document saved in place.

use super::super::{Family, FamilySplit, Gen, Instance};
use super::common::{FIND_AND_REPLACE, fodt, loaded, saved_holding, sentence, unrelated_words};
use crate::grading::Check;
use crate::tasks::{App, DemoCondition};

pub(super) const FAMILY: Family = Family {
    name: "writer_bold_word",
    app: App::Writer,
    split: FamilySplit::TrainAndTest,
    about: "LibreOffice Writer: make every occurrence of a word bold, saved",
    generate,
};

fn generate(g: &mut Gen) -> Instance {
    loop {
        if let Some(instance) = attempt(g) {
            return instance;
        }
    }
}

fn attempt(g: &mut Gen) -> Option<Instance> {
    let picked = unrelated_words(g, 2);
    let (word, stem) = (picked[0], picked[1]);
    let count = g.int(3, 6) as usize;
    let hits = g.int(1, 2) as usize;
    let mut with: Vec<bool> = (0..count).map(|i| i < hits).collect();
    g.shuffle(&mut with);
    let sentences: Vec<String> = with
        .iter()
        .map(|&w| sentence(g, w.then_some(word)))
        .collect();
    let text = sentences.join(" ");
    if text.to_lowercase().matches(word).count() != hits {
        return None;
    }
    let plain = sentences[with
        .iter()
        .position(|&w| !w)
        .expect("a sentence without it")]
    .split(' ')
    .next()
    .expect("a name")
    .to_owned();
    let paragraphs: Vec<String> = sentences.chunks(2).map(|c| c.join(" ")).collect();
    let source = format!("{stem}-draft.fodt");
    let instruction = format!(
        "LibreOffice Writer has {source} (in /home/user) open. Make every occurrence of the \
         word \"{word}\" bold (only that word; the rest of the text stays as it is), then save \
         the document under the same name and format."
    );
    Some(
        Instance::new(instruction)
            .file(&source, fodt(&paragraphs))
            .launch(["libreoffice", "--writer", source.as_str()])
            .check(Check::DocumentStyled {
                path: source.clone(),
                text: word.into(),
                bold: Some(true),
                italic: None,
                underline: None,
            })
            .check(Check::DocumentStyled {
                path: source.clone(),
                text: plain,
                bold: Some(false),
                italic: None,
                underline: None,
            })
            .then(|i| loaded(i, &source))
            // Find and Replace's Find All (Alt+A) selects every match; Escape closes the
            // dialog and keeps the selection for Ctrl+B.
            .key("ctrl+h")
            .wait_for(DemoCondition::Focused(FIND_AND_REPLACE.into()))
            .type_text(word)
            .key("alt+a")
            .key("Escape")
            .wait_for(DemoCondition::Gone(FIND_AND_REPLACE.into()))
            .key("ctrl+b")
            .key("ctrl+s")
            .then(|i| saved_holding(i, &source, r#"fo:font-weight="bold""#)),
    )
}
