//! `tree-size`: a directory tree of files with varied extensions and sizes; the bytes of all
//! files of one extension, the bytes under one folder, or which top-level folder is largest.
//!
//! Extensions come in upper case too, and names like `notes.txt.bak` or `csv_export.md` sit
//! among them: the extension is what follows the last dot. File contents are lowercase words
//! only, so a byte count never shows in them.

use std::collections::BTreeSet;

use crate::families::{Family, FamilySplit, Gen, Instance};
use crate::tasks::{Grader, TaskKind};

use super::common::{filler, without_leak};

pub(super) const FAMILY: Family = Family {
    name: "tree-size",
    kind: TaskKind::Files,
    split: FamilySplit::TrainAndTest,
    levelled: false,
    about: "file work: sizes in a directory tree by extension or folder",
    generate,
};

const ROOTS: &[&str] = &[
    "project",
    "data",
    "share",
    "archive",
    "workspace",
    "site",
    "drive",
];
const FOLDERS: &[&str] = &[
    "docs", "src", "assets", "logs", "reports", "images", "scripts", "backup", "config", "notes",
    "exports", "drafts",
];
const NESTED: &[&str] = &["old", "archive", "tmp", "v", "final", "shared", "misc"];
const EXTENSIONS: &[&str] = &[
    "txt", "csv", "log", "json", "md", "py", "html", "dat", "xml",
];

fn generate(g: &mut Gen) -> Instance {
    without_leak(g, attempt)
}

fn attempt(g: &mut Gen) -> Instance {
    let root = *g.pick(ROOTS);
    let tops = g.subset(FOLDERS, 3, 6);
    let mut folders: Vec<String> = tops.iter().map(|t| (*t).to_owned()).collect();
    for top in &tops {
        if g.chance(0.6) {
            let nested = format!("{top}/{}", g.pick(NESTED));
            if g.chance(0.4) {
                folders.push(format!("{nested}/{}", g.pick(NESTED)));
            }
            folders.push(nested);
        }
    }
    folders.sort();
    folders.dedup();
    let extensions = g.subset(EXTENSIONS, 4, 7);
    let mut paths = BTreeSet::new();
    // (folder relative to the root, or "" for the root itself; file path; extension; content)
    let mut files: Vec<(String, String, String, String)> = Vec::new();
    for _ in 0..g.int(15, 45) {
        let folder = if g.chance(0.1) {
            String::new()
        } else {
            g.pick(&folders).clone()
        };
        let ext = (*g.pick(&extensions)).to_owned();
        let stem = match g.index(4) {
            0 => g.word().to_owned(),
            1 => format!("{}_{}", g.word(), g.word()),
            2 => format!("{}_{}", g.pick(&extensions), g.word()),
            _ => format!(
                "{}-{}",
                g.word(),
                g.pick(&["final", "draft", "copy", "old"])
            ),
        };
        let written_ext = if g.chance(0.15) {
            ext.to_uppercase()
        } else {
            ext.clone()
        };
        let (name, ext) = if g.chance(0.08) {
            let extra = (*g.pick(&["bak", "orig", "old"])).to_owned();
            (format!("{stem}.{written_ext}.{extra}"), extra)
        } else {
            (format!("{stem}.{written_ext}"), ext)
        };
        let path = if folder.is_empty() {
            name
        } else {
            format!("{folder}/{name}")
        };
        if !paths.insert(path.to_lowercase()) {
            continue;
        }
        let size = g.int(0, 3000) as usize;
        files.push((folder, path, ext, filler(g, size)));
    }
    let under = |prefix: &str, files: &[(String, String, String, String)]| -> usize {
        files
            .iter()
            .filter(|f| f.0 == prefix || f.0.starts_with(&format!("{prefix}/")))
            .map(|f| f.3.len())
            .sum()
    };
    let intro = format!(
        "The folder {root} in your home directory holds files in nested subfolders. A file's \
         extension is the part of its name after the last dot, compared ignoring upper/lower \
         case (so notes.TXT has the extension txt, and notes.txt.bak has bak)."
    );
    let numeric = |value: usize| Grader::Numeric {
        value: value as f64,
        rel_tol: 0.0,
        abs_tol: 0.0,
    };
    let (prompt, grader, secret) = match g.index(3) {
        0 => {
            let ext = g.pick(&extensions).to_owned();
            let total: usize = files.iter().filter(|f| f.2 == ext).map(|f| f.3.len()).sum();
            (
                format!(
                    "{intro} What is the total size in bytes of all files with the extension \
                     {ext} anywhere under {root}? Give the number of bytes as an integer."
                ),
                numeric(total),
                Some(total.to_string()),
            )
        }
        1 => {
            // A folder that exists: one with a file somewhere under it.
            let filled: Vec<&String> = folders.iter().filter(|f| under(f, &files) > 0).collect();
            let folder = if filled.is_empty() {
                String::new()
            } else {
                (*g.pick(&filled)).clone()
            };
            let total = under(&folder, &files);
            (
                format!(
                    "{intro} What is the total size in bytes of all files under {root}/{folder} \
                     (its subfolders included)? Give the number of bytes as an integer."
                ),
                numeric(total),
                Some(total.to_string()),
            )
        }
        _ => {
            let mut sizes: Vec<(usize, &str)> =
                tops.iter().map(|t| (under(t, &files), *t)).collect();
            sizes.sort_unstable_by(|a, b| b.cmp(a));
            let (largest, name) = sizes[0];
            if largest < sizes[1].0 + 50 {
                // Settles a near-tie: the largest folder grows a file, or gains one.
                let grow = sizes[1].0 + 50 - largest;
                if let Some(file) = files
                    .iter_mut()
                    .find(|f| f.0 == name || f.0.starts_with(&format!("{name}/")))
                {
                    file.3.push_str(&filler(g, grow));
                } else {
                    let ext = (*g.pick(&extensions)).to_owned();
                    let path = format!("{name}/{}_{}.{ext}", g.word(), g.word());
                    files.push((name.to_owned(), path, ext, filler(g, grow)));
                }
            }
            (
                format!(
                    "{intro} Which folder directly inside {root} has the largest total size, \
                     counting every file under it (its subfolders included)? Give just the \
                     folder's name, as it is spelled."
                ),
                Grader::Exact(name.to_owned()),
                None,
            )
        }
    };
    let mut instance = Instance::new(prompt, grader);
    for (_, path, _, content) in files {
        instance = instance.file(format!("{root}/{path}"), content.into_bytes());
    }
    match secret {
        Some(text) => instance.secret(text),
        None => instance,
    }
}
