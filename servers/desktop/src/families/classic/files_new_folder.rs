//! `files_new_folder`: with the file manager, create a folder with a given name, in the home
//! folder or inside one of its folders.

use super::super::{Family, FamilySplit, Gen, Instance};
use super::common::{capitalised, distinct_words};
use crate::grading::Check;
use crate::tasks::{App, DemoCondition};

pub(super) const FAMILY: Family = Family {
    name: "files_new_folder",
    app: App::FileManager,
    split: FamilySplit::TrainAndTest,
    about: "file manager: create a named folder (at home or inside a folder)",
    generate,
};

fn generate(g: &mut Gen) -> Instance {
    let w = distinct_words(g, 4);
    let name = match g.index(3) {
        0 => format!("{}{}", capitalised(w[0]), g.int(2020, 2030)),
        1 => format!("{}-{}", w[0], g.int(1, 99)),
        _ => format!("{}_{}", capitalised(w[0]), capitalised(g.word())),
    };
    let parent = g.chance(0.5).then(|| w[1].to_string());
    let mut instance = Instance::new(match &parent {
        None => format!(
            "Using the file manager, create a new folder named {name} in your home folder \
             (/home/user)."
        ),
        Some(parent) => format!(
            "Using the file manager, create a folder named {name} inside the folder {parent} \
             in your home folder (/home/user)."
        ),
    })
    .launch(["pcmanfm", "/home/user"])
    .file(format!("{}.txt", w[2]), "notes\n")
    .wait(1000);
    let path = match &parent {
        None => name.clone(),
        Some(parent) => {
            instance = instance
                .file(format!("{parent}/{}.txt", w[3]), "plan\n")
                .type_text(parent)
                .wait(300)
                .key("Return")
                .wait_for(DemoCondition::Titled(parent.clone()));
            format!("{parent}/{name}")
        }
    };
    instance
        .check(Check::DirExists { path: path.clone() })
        .key("ctrl+shift+n")
        .wait_for(DemoCondition::Focused("Creating New Folder".into()))
        .type_text(&name)
        .wait(200)
        .key("Return")
        .wait_for(DemoCondition::Folder(path))
}
