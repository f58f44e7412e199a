//! `terminal_folder_tree`: make a two-level folder and move some of the home folder's files
//! into it, leaving the others where they are.

use super::super::{Family, FamilySplit, Gen, Instance};
use super::common::{distinct_words, sentence, terminal_command};
use crate::grading::Check;
use crate::tasks::App;

pub(super) const FAMILY: Family = Family {
    name: "terminal_folder_tree",
    app: App::Terminal,
    split: FamilySplit::TrainAndTest,
    about: "terminal: create a nested folder and move named files into it",
    generate,
};

const EXTENSIONS: &[&str] = &["txt", "csv", "md", "log"];

fn generate(g: &mut Gen) -> Instance {
    let total = g.int(3, 5) as usize;
    let moved = g.int(1, total as i64 - 1) as usize;
    let w = distinct_words(g, total + 2);
    let tree = format!("{}/{}{}", w[total], w[total + 1], g.int(1, 9));
    let names: Vec<String> = w[..total]
        .iter()
        .map(|word| format!("{word}.{}", g.pick(EXTENSIONS)))
        .collect();
    let texts: Vec<String> = names.iter().map(|_| sentence(g)).collect();
    let listed = names[..moved].join(", ");
    let instruction = format!(
        "Using the terminal, create the folder {tree} inside your home folder (/home/user) \
         (with its parent folder), then move these files from your home folder into it: \
         {listed}. Leave the other files where they are."
    );
    let mut instance = Instance::new(instruction).launch(["xterm"]);
    for (name, text) in names.iter().zip(&texts) {
        instance = instance.file(name, format!("{text}\n"));
    }
    instance = instance.check(Check::DirExists { path: tree.clone() });
    for (i, (name, text)) in names.iter().zip(&texts).enumerate() {
        if i < moved {
            instance = instance
                .check(Check::FileMissing { path: name.clone() })
                .check(Check::FileEquals {
                    path: format!("{tree}/{name}"),
                    text: text.clone(),
                });
        } else {
            instance = instance.check(Check::FileEquals {
                path: name.clone(),
                text: text.clone(),
            });
        }
    }
    let command = format!("mkdir -p {tree} && mv {} {tree}/", names[..moved].join(" "));
    terminal_command(instance, &command, None)
}
