//! `word-frequency`: a text of generated sentences and a stop-word list; the most frequent
//! word that is not a stop word (unique by construction), how often a word occurs, or how many
//! distinct non-stop words there are.
//!
//! Words come capitalised, in capitals, in quotes and as plurals (`river` and `rivers` are
//! different words), and the text holds no digits, so a count never shows in it.
//!
//! Levels: easy is one file of a few dozen sentences; medium a longer text cut into two to
//! four chapter files, and a stop-word list with comments, blank lines, capitals and trailing
//! spaces; hard a longer text still in four to six chapters, some with Windows line ends,
//! curly quotes, words joined by a dash, and a most frequent word that may tie (the first in
//! alphabetical order wins).

use std::collections::BTreeMap;

use mcpgym_env::generate::wording::{precision, question};

use crate::families::{Family, FamilySplit, Gen, Instance, Level, words};
use crate::tasks::{Grader, TaskKind};

use super::common::{capital, without_leak};

pub(super) const FAMILY: Family = Family {
    name: "word-frequency",
    kind: TaskKind::Text,
    split: FamilySplit::TrainAndTest,
    levelled: true,
    about: "text processing: word frequencies with a stop-word list",
    generate,
};

const STOP_WORDS: &[&str] = &[
    "the", "a", "an", "and", "of", "to", "in", "is", "it", "that", "was", "for", "on", "with",
    "as", "at", "by", "from", "this", "be", "are", "his", "her", "they", "we", "but", "not", "or",
    "had", "have", "all", "were", "so", "there", "their", "what", "when", "which", "who", "will",
];

const MORE_WORDS: &[&str] = &[
    "lighthouse",
    "compass",
    "thunder",
    "orchard",
    "pebble",
    "mirror",
    "saddle",
    "voyage",
    "castle",
    "signal",
    "winter",
    "shadow",
    "ribbon",
    "market",
    "captain",
    "whisper",
    "harvest",
    "cottage",
    "tower",
    "letter",
];

const FILES: &[&str] = &[
    "story.txt",
    "text.txt",
    "essay.txt",
    "chapter.txt",
    "speech.txt",
];
const STOP_FILES: &[&str] = &["stopwords.txt", "stop_words.txt", "ignore.txt"];
/// Where a medium or hard instance's chapters are.
const FOLDERS: &[&str] = &["book", "chapters", "manuscript", "novel"];

fn generate(g: &mut Gen) -> Instance {
    without_leak(g, attempt)
}

fn attempt(g: &mut Gen) -> Instance {
    let level = g.level();
    let hard = level == Level::Hard;
    let pool: Vec<&str> = words::WORDS.iter().chain(MORE_WORDS).copied().collect();
    let mut vocabulary = g.subset(&pool, 12, 32);
    vocabulary.sort_unstable();
    vocabulary.dedup();
    g.shuffle(&mut vocabulary);
    // Zipf-like weights over the shuffled vocabulary.
    let weights: Vec<f64> = (0..vocabulary.len())
        .map(|r| 1.0 / (r as f64 + 1.0).powf(g.float(0.6, 1.1)))
        .collect();
    let total: f64 = weights.iter().sum();
    let stops = g.subset(STOP_WORDS, 15, STOP_WORDS.len());
    let listed_stops = {
        let mut listed = stops.clone();
        // The list also names stop words the text never uses.
        for w in STOP_WORDS {
            if !listed.contains(w) && g.chance(0.3) {
                listed.push(w);
            }
        }
        g.shuffle(&mut listed);
        listed
    };
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut text = String::new();
    let mut line = 0;
    for _ in 0..level.pick(g.int(40, 80), g.int(80, 160), g.int(150, 260)) {
        let tokens = g.int(5, 14);
        for i in 0..tokens {
            let word = if g.chance(0.45) {
                (*g.pick(&stops)).to_owned()
            } else {
                let mut roll = g.float(0.0, total);
                let mut pick = vocabulary[vocabulary.len() - 1];
                for (w, weight) in vocabulary.iter().zip(&weights) {
                    if roll < *weight {
                        pick = w;
                        break;
                    }
                    roll -= weight;
                }
                if !pick.ends_with('s') && g.chance(0.1) {
                    format!("{pick}s")
                } else {
                    pick.to_owned()
                }
            };
            *counts.entry(word.clone()).or_default() += 1;
            let mut written = if i == 0 {
                capital(&word)
            } else if g.chance(0.03) {
                word.to_uppercase()
            } else {
                word
            };
            if i > 0 && g.chance(0.04) {
                written = if hard {
                    format!("“{written}”")
                } else {
                    format!("\"{written}\"")
                };
            }
            if i + 1 == tokens {
                written.push(*g.pick(&['.', '.', '.', '!', '?']));
            } else if g.chance(0.08) {
                written.push(',');
            }
            if line + written.len() > 72 {
                text.push('\n');
                line = 0;
            } else if line > 0 {
                // Hard: some words are joined by a dash, with no space.
                text.push_str(if hard && g.chance(0.03) { "—" } else { " " });
                line += 1;
            }
            line += written.len();
            text.push_str(&written);
        }
    }
    text.push('\n');
    let ranked = |counts: &BTreeMap<String, usize>| {
        let mut content: Vec<(String, usize)> = counts
            .iter()
            .filter(|(w, _)| !listed_stops.contains(&w.as_str()))
            .map(|(w, c)| (w.clone(), *c))
            .collect();
        content.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        content
    };
    let mut content = ranked(&counts);
    let variant = g.index(3);
    // Hard leaves near-ties, and even ties, to the stated rule (the first in alphabetical order).
    if variant == 0 && !hard && content.len() > 1 && content[0].1 < content[1].1 + 2 {
        // A closing sentence settles a near-tie: the winner leads by two, nothing to argue.
        let top = content[0].0.clone();
        let (a, b) = (*g.pick(&stops), *g.pick(&stops));
        text.push_str(&format!("{} {top} {b} {top}.\n", capital(a)));
        *counts.entry(top).or_default() += 2;
        content = ranked(&counts);
    }
    let file = *g.pick(FILES);
    let stop_file = *g.pick(STOP_FILES);
    let folder = *g.pick(FOLDERS);
    // Medium on: the text is cut, at line ends, into chapters of a folder.
    let parts = level.pick(1, g.int(2, 4), g.int(4, 6)) as usize;
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut files: Vec<(String, String)> = Vec::new();
    for (i, chunk) in lines.chunks(lines.len().div_ceil(parts)).enumerate() {
        let path = if parts == 1 {
            file.to_owned()
        } else {
            format!("{folder}/chapter_{}.txt", i + 1)
        };
        let mut part = chunk.concat();
        if hard && g.chance(0.5) {
            part = part.replace('\n', "\r\n");
        }
        files.push((path, part));
    }
    // Medium on: the list has comments, blank lines, capitals and trailing spaces.
    let mut stop_text = String::new();
    if level != Level::Easy {
        stop_text.push_str("# stop words, one per line\n");
    }
    for (i, word) in listed_stops.iter().enumerate() {
        if level != Level::Easy && i > 0 && g.chance(0.1) {
            stop_text.push_str(if g.chance(0.5) { "\n" } else { "# more\n" });
        }
        let written = if level != Level::Easy && g.chance(0.15) {
            word.to_uppercase()
        } else {
            (*word).to_owned()
        };
        let space = if level != Level::Easy && g.chance(0.1) {
            "  "
        } else {
            ""
        };
        stop_text.push_str(&format!("{written}{space}\n"));
    }
    let (target, source) = if parts == 1 {
        (
            file.to_owned(),
            format!("The file {file} in your home directory is an English text"),
        )
    } else {
        (
            "the text".to_owned(),
            format!(
                "The folder {folder} in your home directory holds an English text in {parts} \
                 files, chapter_1.txt to chapter_{parts}.txt (the text is all of them together)"
            ),
        )
    };
    let opening = match g.index(3) {
        0 => format!("{source}, and {stop_file} lists stop words, one per line."),
        1 => format!("{source}; the file {stop_file} beside it lists stop words, one per line."),
        _ => format!("{source}. Stop words are listed in {stop_file}, one per line."),
    };
    let list_rules = if level == Level::Easy {
        ""
    } else {
        " In the stop-word list, lines starting with # are comments, blank lines mean nothing, \
         and spaces around a word are not part of it."
    };
    let intro = format!(
        "{opening}{list_rules} A word is a maximal run of the letters a to z; words are compared \
         ignoring upper/lower case, stop words too (so \"River\" and \"river\" are the same \
         word, while \"rivers\" is another)."
    );
    let instance = match variant {
        0 => {
            let top = content[0].0.clone();
            let ties = if hard {
                " If several words occur equally often, give the first of them in alphabetical \
                 order."
            } else {
                ""
            };
            let asked = question(
                g,
                &format!("the word that is not a stop word and occurs most often in {target}"),
            );
            Instance::new(
                format!("{intro} {asked}{ties} Give the word in lowercase."),
                Grader::OneOf(vec![top]),
            )
        }
        1 => {
            let (word, count) = &content[g.index(content.len().min(8))];
            let asked = question(
                g,
                &format!("the number of times the word \"{word}\" occurs in {target}"),
            );
            Instance::new(
                format!("{intro} {asked} {}", precision(g, 0)),
                Grader::Numeric {
                    value: *count as f64,
                    rel_tol: 0.0,
                    abs_tol: 0.0,
                },
            )
            .secret(count.to_string())
        }
        _ => Instance::new(
            {
                let asked = question(
                    g,
                    &format!(
                        "the number of distinct words that are not stop words and occur in \
                         {target}"
                    ),
                );
                format!("{intro} {asked} {}", precision(g, 0))
            },
            Grader::Numeric {
                value: content.len() as f64,
                rel_tol: 0.0,
                abs_tol: 0.0,
            },
        )
        .secret(content.len().to_string()),
    };
    let mut instance = instance.file(stop_file, stop_text.into_bytes());
    for (path, part) in files {
        instance = instance.file(path, part.into_bytes());
    }
    instance
}
