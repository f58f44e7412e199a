//! `editor_delete_line`: delete one given line of an open list (the whole line, leaving no
//! empty line) and save.

use super::super::{Family, FamilySplit, Gen, Instance};
use super::common::{distinct_words, mousepad_title, sentences};
use crate::grading::Check;
use crate::tasks::{App, DemoCondition};

pub(super) const FAMILY: Family = Family {
    name: "editor_delete_line",
    app: App::TextEditor,
    split: FamilySplit::TrainAndTest,
    about: "text editor: delete a given line of an open file and save",
    generate,
};

const KINDS: &[&str] = &["todo", "tasks", "errands", "plan", "notes"];

fn generate(g: &mut Gen) -> Instance {
    let w = distinct_words(g, 1);
    let file = format!("{}-{}.txt", w[0], g.pick(KINDS));
    let count = g.int(3, 7) as usize;
    let lines = sentences(g, count);
    // Never the last line: its deletion would leave the line break before it to decide.
    let gone = g.index(count - 1);
    let kept: Vec<&str> = lines
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != gone)
        .map(|(_, l)| l.as_str())
        .collect();
    let instruction = format!(
        "The text editor has {file} (in /home/user) open. Delete the line that says {} (the \
         whole line, so no empty line is left in its place), keep the other lines, and save \
         the file.",
        lines[gone]
    );
    let mut instance = Instance::new(instruction)
        .file(&file, lines.join("\n") + "\n")
        .launch(["mousepad", file.as_str()])
        .check(Check::FileEquals {
            path: file.clone(),
            text: kept.join("\n"),
        })
        .wait_for(DemoCondition::Titled(mousepad_title(&file)))
        .key("ctrl+Home");
    for _ in 0..gone {
        instance = instance.key("Down");
    }
    instance
        .key("Home")
        .key("shift+Down")
        .key("Delete")
        // Changed (the title's mark), then saved (the mark gone).
        .wait_for(DemoCondition::Focused(format!(
            "*{}",
            mousepad_title(&file)
        )))
        .key("ctrl+s")
        .wait_for(DemoCondition::Titled(mousepad_title(&file)))
}
