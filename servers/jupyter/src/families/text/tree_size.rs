//! `tree-size`: a directory tree of files with varied extensions and sizes; the bytes of all
//! files of one extension, the bytes under one folder, or which top-level folder is largest.
//!
//! Extensions come in upper case too, and names like `notes.txt.bak` or `csv_export.md` sit
//! among them: the extension is what follows the last dot. File contents are lowercase words
//! only, so a byte count never shows in them.
//!
//! Levels: easy is up to 25 files in a few folders; medium up to 50, deeper, with hidden
//! folders (which count) and empty files; hard up to 90, with names holding spaces and
//! symbolic links (to files of a counted extension, and to another folder) that the setup
//! makes and that must be neither counted nor followed.

use std::collections::BTreeSet;

use mcpgym_env::generate::wording::{name_only, precision, question};

use crate::families::{Family, FamilySplit, Gen, Instance, Level};
use crate::tasks::{Grader, TaskKind};

use super::common::{filler, without_leak};

pub(super) const FAMILY: Family = Family {
    name: "tree-size",
    kind: TaskKind::Files,
    split: FamilySplit::TrainAndTest,
    levelled: true,
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

/// Makes each link of `LINKS` (target relative to the link's folder, link path), creating the
/// link's folder if needed.
const LINK: &str = r#"for _target, _link in LINKS:
    os.makedirs(os.path.dirname(_link), exist_ok=True)
    os.symlink(_target, _link)
"#;

fn generate(g: &mut Gen) -> Instance {
    without_leak(g, attempt)
}

fn attempt(g: &mut Gen) -> Instance {
    let level = g.level();
    let hard = level == Level::Hard;
    let root = *g.pick(ROOTS);
    let tops = g.subset(FOLDERS, 3, level.pick(5, 6, 7));
    let mut folders: Vec<String> = tops.iter().map(|t| (*t).to_owned()).collect();
    for top in &tops {
        if level != Level::Easy && g.chance(0.5) {
            // Medium on: hidden folders, whose files count like any other.
            folders.push(format!(
                "{top}/.{}",
                g.pick(&["cache", "trash", "git", "config"])
            ));
        }
        if g.chance(level.pick(0.5, 0.7, 0.8)) {
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
    for _ in 0..level.pick(g.int(12, 25), g.int(25, 50), g.int(50, 90)) {
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
        // Hard: names with spaces.
        let name = if hard && g.chance(0.15) {
            format!("{} {name}", g.word())
        } else {
            name
        };
        let path = if folder.is_empty() {
            name
        } else {
            format!("{folder}/{name}")
        };
        if !paths.insert(path.to_lowercase()) {
            continue;
        }
        // Medium on: some files are empty.
        let size = if level != Level::Easy && g.chance(0.08) {
            0
        } else {
            g.int(0, 3000) as usize
        };
        files.push((folder, path, ext, filler(g, size)));
    }
    let under = |prefix: &str, files: &[(String, String, String, String)]| -> usize {
        files
            .iter()
            .filter(|f| f.0 == prefix || f.0.starts_with(&format!("{prefix}/")))
            .map(|f| f.3.len())
            .sum()
    };
    // Hard: symbolic links to files (with a counted extension) and to a folder, which are not
    // files and must not be followed.
    let mut links: Vec<(String, String)> = Vec::new();
    if hard {
        for _ in 0..g.int(2, 5) {
            let target = &files[g.index(files.len())];
            let folder = g.pick(&folders).clone();
            let depth = folder.matches('/').count() + 1;
            let name = format!("{}_link.{}", g.word(), target.2);
            let link = format!("{root}/{folder}/{name}");
            let clash = files
                .iter()
                .map(|f| format!("{root}/{}", f.1))
                .chain(links.iter().map(|l| l.1.clone()))
                .any(|path| path.to_lowercase() == link.to_lowercase());
            if clash {
                continue;
            }
            links.push((format!("{}{}", "../".repeat(depth), target.1), link));
        }
        let (from, to) = (g.pick(&tops).to_string(), g.pick(&tops).to_string());
        if from != to {
            links.push((
                format!("../{to}"),
                format!("{root}/{from}/{}_shortcut", g.word()),
            ));
        }
    }
    let opening = match g.index(4) {
        0 => format!("The folder {root} in your home directory holds files in nested subfolders."),
        1 => format!("In your home directory, the folder {root} holds files in nested subfolders."),
        2 => format!("Your home directory has the folder {root}, with files in nested subfolders."),
        _ => format!("Files sit in nested subfolders of the folder {root} in your home directory."),
    };
    let traps = match level {
        Level::Easy => "",
        Level::Medium => " Hidden files and folders (names starting with a dot) count too.",
        Level::Hard => {
            " Hidden files and folders (names starting with a dot) count too. Symbolic links \
             are not files: do not count them, and do not follow them."
        }
    };
    let intro = format!(
        "{opening} A file's extension is the part of its name after the last dot, compared \
         ignoring upper/lower case (so notes.TXT has the extension txt, and notes.txt.bak has \
         bak).{traps}"
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
            let asked = question(
                g,
                &format!(
                    "the total size in bytes of all files with the extension {ext} anywhere \
                     under {root}"
                ),
            );
            (
                format!("{intro} {asked} {}", precision(g, 0)),
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
            let asked = question(
                g,
                &format!(
                    "the total size in bytes of all files under {root}/{folder} (its subfolders \
                     included)"
                ),
            );
            (
                format!("{intro} {asked} {}", precision(g, 0)),
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
            let asked = question(
                g,
                &format!(
                    "the name of the folder directly inside {root} with the largest total size, \
                     counting every file under it (its subfolders included)"
                ),
            );
            (
                format!("{intro} {asked} {}", name_only(g)),
                Grader::Exact(name.to_owned()),
                None,
            )
        }
    };
    let mut instance = Instance::new(prompt, grader);
    for (_, path, _, content) in files {
        instance = instance.file(format!("{root}/{path}"), content.into_bytes());
    }
    if !links.is_empty() {
        instance = instance.setup(format!("LINKS = {links:?}\n{LINK}"));
    }
    match secret {
        Some(text) => instance.secret(text),
        None => instance,
    }
}
