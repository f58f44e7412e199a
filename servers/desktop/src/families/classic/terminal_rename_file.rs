//! `terminal_rename_file`: rename one file among a few with `mv`; its content must survive.

use super::super::{Family, FamilySplit, Gen, Instance};
use super::common::{distinct_words, sentences, terminal_command};
use crate::grading::Check;
use crate::tasks::{App, DemoCondition};

pub(super) const FAMILY: Family = Family {
    name: "terminal_rename_file",
    app: App::Terminal,
    split: FamilySplit::TrainAndTest,
    about: "terminal: rename a named file, keeping its content",
    generate,
};

const EXTENSIONS: &[&str] = &["txt", "md", "log", "csv", "ini"];

fn generate(g: &mut Gen) -> Instance {
    let w = distinct_words(g, 4);
    let ext = *g.pick(EXTENSIONS);
    let old = format!("{}_{}.{ext}", w[0], g.int(1, 99));
    let new = format!("{}-{}-{}.{ext}", w[1], w[2], g.int(2020, 2030));
    let other = format!("{}.txt", w[3]);
    let count = g.int(1, 3) as usize;
    let lines = sentences(g, count);
    let text = lines.join("\n") + "\n";
    let instruction = format!(
        "In your home folder (/home/user) there is a file named {old}. Using the terminal, \
         rename it to {new} (its content must stay the same)."
    );
    let instance = Instance::new(instruction)
        .file(&old, text.clone())
        .file(&other, "keep this file\n")
        .launch(["xterm"])
        .check(Check::FileMissing { path: old.clone() })
        .check(Check::FileEquals {
            path: new.clone(),
            text,
        })
        .check(Check::FileExists { path: other });
    let done = DemoCondition::Missing(old.clone());
    terminal_command(instance, &format!("mv {old} {new}"), Some(done))
}
