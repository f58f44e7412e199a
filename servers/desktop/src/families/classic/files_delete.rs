//! `files_delete`: with the file manager, delete one named file and keep the others. Held out.

use super::super::{Family, FamilySplit, Gen, Instance};
use super::common::{distinct_words, select_in_file_manager};
use crate::grading::Check;
use crate::tasks::{App, DemoCondition};

pub(super) const FAMILY: Family = Family {
    name: "files_delete",
    app: App::FileManager,
    split: FamilySplit::TestOnly,
    about: "file manager: delete a named file, keeping the others",
    generate,
};

const EXTENSIONS: &[&str] = &["log", "tmp", "bak", "txt", "old"];

fn generate(g: &mut Gen) -> Instance {
    let count = g.int(2, 5) as usize;
    // Different first words: typing a name selects only that file.
    let w = distinct_words(g, count);
    let names: Vec<String> = w
        .iter()
        .map(|word| format!("{word}_{}.{}", g.int(1, 99), g.pick(EXTENSIONS)))
        .collect();
    let target = g.index(count);
    let instruction = format!(
        "Using the file manager, delete the file {} from your home folder (/home/user); moving \
         it to the trash is fine. Keep every other file.",
        names[target]
    );
    let mut instance = Instance::new(instruction).launch(["pcmanfm", "/home/user"]);
    for (i, name) in names.iter().enumerate() {
        let text = format!("contents of {name}");
        instance = instance.file(name, format!("{text}\n"));
        instance = instance.check(if i == target {
            Check::FileMissing { path: name.clone() }
        } else {
            Check::FileEquals {
                path: name.clone(),
                text,
            }
        });
    }
    // "Move to trash?" opens with Yes focused.
    select_in_file_manager(instance.wait(1000), &names[target])
        .key("Delete")
        .wait_for(DemoCondition::Focused("Confirm".into()))
        .key("Return")
        .wait_for(DemoCondition::Missing(names[target].clone()))
}
