//! `files_rename`: with the file manager, rename one of several similarly named files.

use super::super::{Family, FamilySplit, Gen, Instance};
use super::common::{distinct_words, select_in_file_manager};
use crate::grading::Check;
use crate::tasks::{App, DemoCondition};

pub(super) const FAMILY: Family = Family {
    name: "files_rename",
    app: App::FileManager,
    split: FamilySplit::TrainAndTest,
    about: "file manager: rename a named file among similar ones",
    generate,
};

/// (prefix of camera-style names, extension)
const SERIES: &[(&str, &str)] = &[
    ("IMG_", "jpg"),
    ("DSC", "jpg"),
    ("scan_", "pdf"),
    ("REC", "mp3"),
    ("clip_", "mp4"),
];

fn generate(g: &mut Gen) -> Instance {
    let (prefix, ext) = *g.pick(SERIES);
    let count = g.int(2, 4) as usize;
    // Same-length numbers, all different: no name is a prefix of another.
    let mut numbers: Vec<i64> = Vec::new();
    while numbers.len() < count {
        let n = g.int(1, 9999);
        if !numbers.contains(&n) {
            numbers.push(n);
        }
    }
    let names: Vec<String> = numbers
        .iter()
        .map(|n| format!("{prefix}{n:04}.{ext}"))
        .collect();
    let target = g.index(count);
    let old = &names[target];
    let w = distinct_words(g, 2);
    let new = format!("{}-{}.{ext}", w[0], w[1]);
    let contents: Vec<String> = numbers
        .iter()
        .map(|n| format!("placeholder {ext} number {n}\n"))
        .collect();
    let instruction = format!(
        "Using the file manager, rename the file {old} in your home folder (/home/user) to \
         {new}."
    );
    let mut instance = Instance::new(instruction).launch(["pcmanfm", "/home/user"]);
    for (i, (name, text)) in names.iter().zip(&contents).enumerate() {
        instance = instance.file(name, text.clone());
        if i == target {
            instance = instance
                .check(Check::FileMissing { path: name.clone() })
                .check(Check::FileEquals {
                    path: new.clone(),
                    text: text.clone(),
                });
        } else {
            instance = instance.check(Check::FileExists { path: name.clone() });
        }
    }
    let stem = old.trim_end_matches(&format!(".{ext}")).to_string();
    select_in_file_manager(instance.wait(1000), &stem)
        .key("F2")
        .wait_for(DemoCondition::Focused("Rename File".into()))
        .key("ctrl+a")
        .type_text(&new)
        .wait(200)
        .key("Return")
        .wait_for(DemoCondition::File(new.clone()))
        .wait_for(DemoCondition::Missing(old.clone()))
}
