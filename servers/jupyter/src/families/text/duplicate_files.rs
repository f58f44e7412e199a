//! `duplicate-files`: a folder tree where some files have identical content under other names;
//! how many groups of duplicates there are, how many files are redundant, or how many bytes
//! deleting them would free.
//!
//! Near-duplicates (same size, one letter different) sit among the copies, so comparing sizes
//! or names is not enough. Names and contents hold no digits, so a count never shows in them.

use std::collections::BTreeSet;

use crate::families::{Family, FamilySplit, Gen, Instance};
use crate::tasks::{Grader, TaskKind};

use super::common::{filler, without_leak};

pub(super) const FAMILY: Family = Family {
    name: "duplicate-files",
    kind: TaskKind::Files,
    split: FamilySplit::TrainAndTest,
    levelled: false,
    about: "file work: find files with identical content",
    generate,
};

const ROOTS: &[&str] = &[
    "documents",
    "downloads",
    "backup",
    "shared",
    "inbox",
    "library",
];
const FOLDERS: &[&str] = &[
    "misc", "old", "work", "personal", "archive", "sorted", "new",
];
const EXTENSIONS: &[&str] = &["txt", "md", "csv", "log", "dat"];

fn generate(g: &mut Gen) -> Instance {
    without_leak(g, attempt)
}

fn attempt(g: &mut Gen) -> Instance {
    let root = *g.pick(ROOTS);
    let mut folders = vec![String::new()];
    for folder in g.subset(FOLDERS, 1, 4) {
        folders.push(folder.to_owned());
        if g.chance(0.3) {
            folders.push(format!("{folder}/{}", g.pick(FOLDERS)));
        }
    }
    // Distinct contents, each with how many copies of it are placed.
    let mut contents: Vec<(String, usize)> = Vec::new();
    for _ in 0..g.int(10, 30) {
        let size = g.int(20, 2500) as usize;
        let text = filler(g, size);
        if contents.iter().any(|(c, _)| *c == text) {
            continue;
        }
        let copies = if g.chance(0.3) {
            g.int(2, 4) as usize
        } else {
            1
        };
        // A near-duplicate of the same size: one letter changed.
        let near = g.chance(0.25).then(|| {
            let mut bytes = text.clone().into_bytes();
            let at = g.index(bytes.len());
            bytes[at] = if bytes[at] == b'q' { b'z' } else { b'q' };
            String::from_utf8_lossy(&bytes).into_owned()
        });
        contents.push((text, copies));
        if let Some(near) = near
            && !contents.iter().any(|(c, _)| *c == near)
        {
            contents.push((near, 1));
        }
    }
    if contents.iter().all(|(_, n)| *n == 1) {
        contents[0].1 = 2;
    }
    let mut taken = BTreeSet::new();
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    for (text, copies) in &contents {
        let base = format!("{}_{}", g.word(), g.word());
        for copy in 0..*copies {
            let ext = *g.pick(EXTENSIONS);
            let name = match (copy, g.index(4)) {
                (0, _) => format!("{base}.{ext}"),
                (_, 0) => format!("copy of {base}.{ext}"),
                (_, 1) => format!("{base} (copy).{ext}"),
                (_, 2) => format!("{base}_backup.{ext}"),
                _ => format!("{}_{}.{ext}", g.word(), g.word()),
            };
            let folder = g.pick(&folders);
            let path = if folder.is_empty() {
                format!("{root}/{name}")
            } else {
                format!("{root}/{folder}/{name}")
            };
            if taken.insert(path.to_lowercase()) {
                files.push((path, text.clone().into_bytes()));
            }
        }
    }
    g.shuffle(&mut files);
    // What was actually written (a clashing name drops a copy).
    let mut groups: Vec<(usize, usize)> = Vec::new();
    for (text, _) in &contents {
        let n = files.iter().filter(|f| f.1 == text.as_bytes()).count();
        if n >= 2 {
            groups.push((n, text.len()));
        }
    }
    let intro = format!(
        "The folder {root} in your home directory holds files, some in subfolders. Some files \
         have exactly the same content (byte for byte) as others, under other names; files \
         that only look alike or have the same size do not count."
    );
    let (question, value) = match g.index(3) {
        0 => (
            "How many groups of identical files are there (a group is a set of two or more \
             files with the same content)?",
            groups.len(),
        ),
        1 => (
            "If you kept one file of each group of identical files and deleted the other \
             copies, how many files would you delete?",
            groups.iter().map(|(n, _)| n - 1).sum(),
        ),
        _ => (
            "If you kept one file of each group of identical files and deleted the other \
             copies, how many bytes would that free?",
            groups.iter().map(|(n, size)| (n - 1) * size).sum(),
        ),
    };
    let mut instance = Instance::new(
        format!("{intro} {question} Give the answer as an integer."),
        Grader::Numeric {
            value: value as f64,
            rel_tol: 0.0,
            abs_tol: 0.0,
        },
    )
    .secret(value.to_string());
    for (path, bytes) in files {
        instance = instance.file(path, bytes);
    }
    instance
}
