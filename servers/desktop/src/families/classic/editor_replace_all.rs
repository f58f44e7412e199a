//! `editor_replace_all`: replace every occurrence of a host name in an open configuration
//! file with another, through the editor's Find and Replace, and save.

use super::super::{Family, FamilySplit, Gen, Instance};
use super::common::{distinct_words, mousepad_title};
use crate::grading::Check;
use crate::tasks::{App, DemoCondition};

pub(super) const FAMILY: Family = Family {
    name: "editor_replace_all",
    app: App::TextEditor,
    split: FamilySplit::TrainAndTest,
    about: "text editor: replace every occurrence of a word in an open file and save",
    generate,
};

fn generate(g: &mut Gen) -> Instance {
    let sections = g.int(3, 5) as usize;
    let w = distinct_words(g, sections + 3);
    let file = format!("{}.ini", w[0]);
    // The old name ends in `.example` and no other line holds that suffix, so the search
    // matches only the occurrences meant.
    let old = format!("{}.example", w[1]);
    let new = format!("{}.internal", w[2]);
    let uses = g.int(2, sections as i64) as usize;
    let mut using: Vec<bool> = (0..sections).map(|i| i < uses).collect();
    g.shuffle(&mut using);
    let mut before = Vec::new();
    let mut after = Vec::new();
    for (i, section) in w[3..].iter().enumerate() {
        let port = g.int(1024, 9999);
        let host = if using[i] {
            old.clone()
        } else {
            format!("{}.local", g.word())
        };
        for (lines, host) in [
            (&mut before, &host),
            (&mut after, &host.replace(&old, &new)),
        ] {
            if !lines.is_empty() {
                lines.push(String::new());
            }
            lines.push(format!("[{section}]"));
            lines.push(format!("host = {host}"));
            lines.push(format!("port = {port}"));
        }
    }
    let instruction = format!(
        "The text editor has {file} (in /home/user) open. Replace every occurrence of {old} \
         with {new}, change nothing else, and save the file."
    );
    let mut instance = Instance::new(instruction)
        .file(&file, before.join("\n") + "\n")
        .launch(["mousepad", file.as_str()])
        .check(Check::FileEquals {
            path: file.clone(),
            text: after.join("\n"),
        })
        .wait_for(DemoCondition::Titled(mousepad_title(&file)))
        .key("ctrl+r")
        .wait_for(DemoCondition::Focused("Find and Replace".into()))
        .type_text(&old)
        .key("Tab")
        .type_text(&new);
    // Six Tabs past the replacement reach "Replace all in", whose check turns the Replace
    // button, three Tabs further, into "Replace All".
    for _ in 0..6 {
        instance = instance.key("Tab");
    }
    instance = instance.key("space").wait(200);
    for _ in 0..3 {
        instance = instance.key("Tab");
    }
    instance
        .key("space")
        .key("Escape")
        .wait_for(DemoCondition::Gone("Find and Replace".into()))
        // Replaced (the title's unsaved mark), then saved (the mark gone).
        .wait_for(DemoCondition::Focused(format!(
            "*{}",
            mousepad_title(&file)
        )))
        .key("ctrl+s")
        .wait_for(DemoCondition::Titled(mousepad_title(&file)))
}
