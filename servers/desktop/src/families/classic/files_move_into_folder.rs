//! `files_move_into_folder`: with the file manager, move a named file into a named folder.

use super::super::{Family, FamilySplit, Gen, Instance};
use super::common::{distinct_words, select_in_file_manager, sentence};
use crate::grading::Check;
use crate::tasks::{App, DemoCondition};

pub(super) const FAMILY: Family = Family {
    name: "files_move_into_folder",
    app: App::FileManager,
    split: FamilySplit::TrainAndTest,
    about: "file manager: move a named file into a named folder",
    generate,
};

const EXTENSIONS: &[&str] = &["txt", "pdf", "csv", "md", "odt"];

fn generate(g: &mut Gen) -> Instance {
    let others = g.int(1, 3) as usize;
    // Every item starts with a different word, so typing a name selects only that item.
    let w = distinct_words(g, others + 3);
    let file = format!("{}-{}.{}", w[0], g.int(1, 99), g.pick(EXTENSIONS));
    let folder = if g.chance(0.5) {
        super::common::capitalised(w[1])
    } else {
        w[1].to_string()
    };
    let text = sentence(g);
    let instruction = format!(
        "Using the file manager, move the file {file} from your home folder (/home/user) into \
         the folder {folder} (also in your home folder)."
    );
    let mut instance = Instance::new(instruction)
        .file(&file, format!("{text}\n"))
        .file(format!("{folder}/{}.txt", w[2]), "already here\n")
        .launch(["pcmanfm", "/home/user"])
        .check(Check::FileMissing { path: file.clone() })
        .check(Check::FileEquals {
            path: format!("{folder}/{file}"),
            text,
        });
    for word in &w[3..] {
        instance = instance.file(format!("{word}.txt"), "another file\n");
    }
    let instance = select_in_file_manager(instance.wait(1000), &file)
        .key("ctrl+x")
        .wait(200)
        .type_text(&folder)
        .wait(300)
        .key("Return")
        .wait_for(DemoCondition::Titled(folder.to_string()))
        .key("ctrl+v");
    instance
        .wait_for(DemoCondition::File(format!("{folder}/{file}")))
        .wait_for(DemoCondition::Missing(file))
}
