//! `terminal_append_line`: add a given last line to a file, keeping the lines it has.

use super::super::{Family, FamilySplit, Gen, Instance};
use super::common::{distinct_words, sentences, terminal_command};
use crate::grading::Check;
use crate::tasks::{App, DemoCondition};

pub(super) const FAMILY: Family = Family {
    name: "terminal_append_line",
    app: App::Terminal,
    split: FamilySplit::TrainAndTest,
    about: "terminal: append a given line to the end of a file",
    generate,
};

const SUFFIXES: &[&str] = &["notes", "log", "journal", "list", "todo"];

fn generate(g: &mut Gen) -> Instance {
    let w = distinct_words(g, 1);
    let name = format!("{}-{}.txt", w[0], g.pick(SUFFIXES));
    let count = g.int(2, 5) as usize;
    let mut lines = sentences(g, count + 1);
    let new_line = lines.pop().expect("one more sentence than lines");
    let before = lines.join("\n") + "\n";
    let after = format!("{before}{new_line}");
    let instruction = format!(
        "Append a new last line to the file {name} in your home folder (/home/user), keeping \
         the existing lines. The new line must be exactly: {new_line}"
    );
    let instance = Instance::new(instruction)
        .file(&name, before)
        .launch(["xterm"])
        .check(Check::FileEquals {
            path: name.clone(),
            text: after,
        });
    let done = DemoCondition::FileContains(name.clone(), new_line.to_string());
    terminal_command(
        instance,
        &format!("echo '{new_line}' >> {name}"),
        Some(done),
    )
}
