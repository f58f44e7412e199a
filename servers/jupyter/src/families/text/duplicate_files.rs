//! `duplicate-files`: a folder tree where some files have identical content under other names;
//! how many groups of duplicates there are, how many files are redundant, or how many bytes
//! deleting them would free.
//!
//! Near-duplicates (same size, one letter different) sit among the copies, so comparing sizes
//! or names is not enough. Names and contents hold no digits, so a count never shows in them.
//!
//! Levels: easy is a few folders and up to eighteen distinct contents; medium has more of both,
//! and near-duplicates that differ only in line endings; hard has deeper folders, large files
//! whose near-duplicates differ only near the end, and copies that are hidden files.

use std::collections::BTreeSet;

use mcpgym_env::generate::wording::{precision, question};

use crate::families::{Family, FamilySplit, Gen, Instance, Level};
use crate::tasks::{Grader, TaskKind};

use super::common::{filler, without_leak};

pub(super) const FAMILY: Family = Family {
    name: "duplicate-files",
    kind: TaskKind::Files,
    split: FamilySplit::TrainAndTest,
    levelled: true,
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
    let level = g.level();
    let hard = level == Level::Hard;
    let root = *g.pick(ROOTS);
    let mut folders = vec![String::new()];
    for folder in g.subset(FOLDERS, 1, level.pick(3, 5, 7)) {
        folders.push(folder.to_owned());
        if g.chance(level.pick(0.3, 0.5, 0.7)) {
            let nested = format!("{folder}/{}", g.pick(FOLDERS));
            if hard && g.chance(0.5) {
                folders.push(format!("{nested}/{}", g.pick(FOLDERS)));
            }
            folders.push(nested);
        }
    }
    // Distinct contents, each with how many copies of it are placed.
    let mut contents: Vec<(String, usize)> = Vec::new();
    let distinct = level.pick(g.int(8, 18), g.int(15, 30), g.int(30, 50));
    for _ in 0..distinct {
        // Hard: some large files, whose near-duplicates differ only near the end.
        let large = hard && g.chance(0.2);
        let size = if large {
            g.int(10_000, 40_000)
        } else {
            g.int(20, 2500)
        } as usize;
        let text = filler(g, size);
        if contents.iter().any(|(c, _)| *c == text) {
            continue;
        }
        let copies = if g.chance(0.3) {
            g.int(2, 4) as usize
        } else {
            1
        };
        // A near-duplicate of the same size: one letter changed (near the end of a large file),
        // or from medium on the same text with Windows line endings.
        let near = if level != Level::Easy && text.contains('\n') && g.chance(0.15) {
            Some(text.replace('\n', "\r\n"))
        } else if large || g.chance(0.25) {
            let mut bytes = text.clone().into_bytes();
            let at = if large {
                bytes.len() - 1 - g.index(64)
            } else {
                g.index(bytes.len())
            };
            bytes[at] = if bytes[at] == b'q' { b'z' } else { b'q' };
            Some(String::from_utf8_lossy(&bytes).into_owned())
        } else {
            None
        };
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
            // Hard: some copies are hidden files.
            let name = if hard && copy > 0 && g.chance(0.3) {
                format!(".{name}")
            } else {
                name
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
    let opening = match g.index(4) {
        0 => format!("The folder {root} in your home directory holds files, some in subfolders."),
        1 => format!("In your home directory, the folder {root} holds files, some in subfolders."),
        2 => format!(
            "Your home directory has the folder {root}, full of files, some of them in subfolders."
        ),
        _ => format!(
            "Files have piled up in the folder {root} of your home directory and its subfolders."
        ),
    };
    let traps = match level {
        Level::Easy => "",
        Level::Medium => {
            " A file with the same text but other line endings (Windows \\r\\n against \\n) is \
             not identical."
        }
        Level::Hard => {
            " A file with the same text but other line endings (Windows \\r\\n against \\n) is \
             not identical, and hidden files (names starting with a dot) are files too."
        }
    };
    let (what, value) = match g.index(3) {
        0 => (
            "the number of groups of identical files (a group is a set of two or more files \
             with the same content)",
            groups.len(),
        ),
        1 => (
            "the number of files you would delete if you kept one file of each group of \
             identical files and deleted the other copies",
            groups.iter().map(|(n, _)| n - 1).sum(),
        ),
        _ => (
            "the number of bytes it would free to keep one file of each group of identical \
             files and delete the other copies",
            groups.iter().map(|(n, size)| (n - 1) * size).sum(),
        ),
    };
    let asked = question(g, what);
    let mut instance = Instance::new(
        format!(
            "{opening} Some files have exactly the same content (byte for byte) as others, \
             under other names; files that only look alike or have the same size do not \
             count.{traps} {asked} {}",
            precision(g, 0)
        ),
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
