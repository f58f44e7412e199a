//! `editor_write_save`: write given lines in a new document and save it under a given name.

use super::super::{Family, FamilySplit, Gen, Instance};
use super::common::{distinct_words, mousepad_title, sentences};
use crate::grading::Check;
use crate::tasks::{App, DemoCondition};

pub(super) const FAMILY: Family = Family {
    name: "editor_write_save",
    app: App::TextEditor,
    split: FamilySplit::TrainAndTest,
    about: "text editor: write given lines and save them as a named file",
    generate,
};

fn generate(g: &mut Gen) -> Instance {
    let w = distinct_words(g, 2);
    let name = format!("{}-{}.txt", w[0], w[1]);
    let count = g.int(1, 2) as usize;
    let lines = sentences(g, count);
    let instruction = if count == 1 {
        format!(
            "In the text editor, write a document whose only line is: {}. Save it in your home \
             folder (/home/user) as {name}.",
            lines[0]
        )
    } else {
        format!(
            "In the text editor, write a document of exactly two lines: first {}, then {}. Save \
             it in your home folder (/home/user) as {name}.",
            lines[0], lines[1]
        )
    };
    let mut instance = Instance::new(instruction)
        .launch(["mousepad"])
        .check(Check::FileEquals {
            path: name.clone(),
            text: lines.join("\n"),
        })
        .wait_for(DemoCondition::Titled("Untitled 1 - Mousepad".into()));
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            instance = instance.key("Return");
        }
        instance = instance.type_text(line);
    }
    // An untitled document: Ctrl+S opens Save As with an empty name field focused.
    instance
        .key("ctrl+s")
        .wait_for(DemoCondition::Focused("Save As".into()))
        .type_text(&name)
        .wait(400)
        .key("Return")
        .wait_for(DemoCondition::Titled(mousepad_title(&name)))
}
