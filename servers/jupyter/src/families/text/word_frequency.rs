//! `word-frequency`: a text of generated sentences and a stop-word list; the most frequent
//! word that is not a stop word (unique by construction), how often a word occurs, or how many
//! distinct non-stop words there are.
//!
//! Words come capitalised, in capitals, in quotes and as plurals (`river` and `rivers` are
//! different words), and the text holds no digits, so a count never shows in it.

use std::collections::BTreeMap;

use crate::families::{Family, FamilySplit, Gen, Instance, words};
use crate::tasks::{Grader, TaskKind};

use super::common::{capital, without_leak};

pub(super) const FAMILY: Family = Family {
    name: "word-frequency",
    kind: TaskKind::Text,
    split: FamilySplit::TrainAndTest,
    levelled: false,
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

fn generate(g: &mut Gen) -> Instance {
    without_leak(g, attempt)
}

fn attempt(g: &mut Gen) -> Instance {
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
    for _ in 0..g.int(40, 140) {
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
                written = format!("\"{written}\"");
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
                text.push(' ');
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
    if variant == 0 && content.len() > 1 && content[0].1 < content[1].1 + 2 {
        // A closing sentence settles a near-tie: the winner leads by two, nothing to argue.
        let top = content[0].0.clone();
        let (a, b) = (*g.pick(&stops), *g.pick(&stops));
        text.push_str(&format!("{} {top} {b} {top}.\n", capital(a)));
        *counts.entry(top).or_default() += 2;
        content = ranked(&counts);
    }
    let file = *g.pick(FILES);
    let stop_file = *g.pick(STOP_FILES);
    let mut stop_text = listed_stops.join("\n");
    stop_text.push('\n');
    let intro = format!(
        "The file {file} in your home directory is an English text, and {stop_file} lists stop \
         words, one per line. A word is a maximal run of the letters a to z; words are compared \
         ignoring upper/lower case (so \"River\" and \"river\" are the same word, while \
         \"rivers\" is another)."
    );
    let instance = match variant {
        0 => {
            let top = content[0].0.clone();
            Instance::new(
                format!(
                    "{intro} Which word that is not a stop word occurs most often in {file}? \
                     Give the word in lowercase."
                ),
                Grader::OneOf(vec![top]),
            )
        }
        1 => {
            let (word, count) = &content[g.index(content.len().min(8))];
            Instance::new(
                format!(
                    "{intro} How many times does the word \"{word}\" occur in {file}? Give the \
                     count as an integer."
                ),
                Grader::Numeric {
                    value: *count as f64,
                    rel_tol: 0.0,
                    abs_tol: 0.0,
                },
            )
            .secret(count.to_string())
        }
        _ => Instance::new(
            format!(
                "{intro} How many distinct words that are not stop words occur in {file}? Give \
                 the count as an integer."
            ),
            Grader::Numeric {
                value: content.len() as f64,
                rel_tol: 0.0,
                abs_tol: 0.0,
            },
        )
        .secret(content.len().to_string()),
    };
    instance
        .file(file, text.into_bytes())
        .file(stop_file, stop_text.into_bytes())
}
