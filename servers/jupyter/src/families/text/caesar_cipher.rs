//! `caesar-cipher` (held out): a message encrypted with a Caesar shift (given, or to be found
//! from a known opening), a Vigenère key, or a substitution alphabet; decrypt it and give the
//! code word it holds or the word at a position.
//!
//! Only letters are encrypted (case kept, everything else as is), and an instance is re-drawn
//! whenever the answer could be read, in any case, from the ciphertext or the prompt.
//!
//! Levels: easy is a short message under a Caesar shift (given, or found from the opening);
//! medium a longer one under a Vigenère key or a substitution alphabet; hard any of the four,
//! a longer message with typographic punctuation, cut into eight to twelve numbered parts (at
//! any point, inside words too) that must be joined in numeric order (`part_10` sorts before
//! `part_2` as text), the Vigenère key running on across the cuts.

use mcpgym_env::generate::wording::question;

use crate::families::{Family, FamilySplit, Gen, Instance, Level};
use crate::tasks::{Grader, TaskKind};

use super::common::{capital, without_leak};

pub(super) const FAMILY: Family = Family {
    name: "caesar-cipher",
    kind: TaskKind::Text,
    split: FamilySplit::TestOnly,
    levelled: true,
    about: "decoding: decrypt a Caesar, Vigenère or substitution cipher and read a word",
    generate,
};

const LINKS: &[&str] = &[
    "the", "a", "near", "under", "with", "by", "and", "past", "beside", "behind",
];
const VERBS: &[&str] = &[
    "meet", "leave", "find", "bring", "hide", "watch", "open", "carry", "paint", "check",
];
const FILES: &[&str] = &["message.txt", "secret.txt", "intercepted.txt", "note.txt"];
/// Where a hard instance's parts are.
const FOLDERS: &[&str] = &["intercepted", "parts", "fragments", "capture"];

fn generate(g: &mut Gen) -> Instance {
    without_leak(g, attempt)
}

fn attempt(g: &mut Gen) -> Instance {
    let level = g.level();
    let hard = level == Level::Hard;
    let name = g.first_name();
    let mut sentences = vec![format!("Dear {name},")];
    let code = format!("{}{}", g.word(), g.word());
    let code_at = g.int(1, 4) as usize;
    let count = level.pick(g.int(3, 6), g.int(5, 9), g.int(8, 14)) as usize;
    for i in 0..count {
        if i == code_at {
            sentences.push(format!("The code word is {code}."));
        }
        let verb = *g.pick(VERBS);
        let (a, b, c) = (g.word(), g.word(), g.word());
        let (l1, l2, l3) = (g.pick(LINKS), g.pick(LINKS), g.pick(LINKS));
        // Hard: typographic punctuation (not letters, so never encrypted).
        let sentence = if hard && g.chance(0.4) {
            format!("{} {l1} “{a}” {l2} {b} — {l3} {c}.", capital(verb))
        } else {
            format!("{} {l1} {a} {l2} {b} {l3} {c}.", capital(verb))
        };
        sentences.push(sentence);
    }
    if !sentences.iter().any(|s| s.contains("code word")) {
        sentences.push(format!("The code word is {code}."));
    }
    sentences.push(format!("Yours, {}", g.first_name()));
    let plain = sentences.join("\n") + "\n";
    let words_of: Vec<String> = plain
        .split(|c: char| !c.is_ascii_alphabetic())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let file = *g.pick(FILES);
    // Easy: a Caesar shift; medium: Vigenère or substitution; hard: any of them.
    let cipher = match level {
        Level::Easy => g.index(2),
        Level::Medium => 2 + g.index(2),
        Level::Hard => g.index(4),
    };
    let (cipher_text, how, extra) = match cipher {
        0 => {
            let shift = g.int(1, 25) as u8;
            (
                shift_text(&plain, |_| shift),
                format!(
                    "with a Caesar cipher: every letter was shifted forward by {shift} places in \
                     the alphabet (wrapping around from z to a), keeping its case; everything \
                     else is unchanged"
                ),
                None,
            )
        }
        1 => {
            let shift = g.int(1, 25) as u8;
            (
                shift_text(&plain, |_| shift),
                format!(
                    "with a Caesar cipher: every letter was shifted forward by the same unknown \
                     number of places in the alphabet (wrapping around from z to a), keeping its \
                     case; everything else is unchanged. The original message begins with \
                     \"Dear {name},\""
                ),
                None,
            )
        }
        2 => {
            let len = g.int(3, 8) as usize;
            let key = g.letters(len);
            let shifts: Vec<u8> = key.bytes().map(|b| b - b'a').collect();
            (
                shift_text(&plain, |i| shifts[i % shifts.len()]),
                format!(
                    "with a Vigenère cipher with the key \"{key}\": the n-th letter of the \
                     message (counting letters only, from 0) was shifted forward by the \
                     alphabet position of key letter n mod {} (a = 0, b = 1, ...), wrapping from \
                     z to a and keeping its case; everything else is unchanged",
                    key.len()
                ),
                None,
            )
        }
        _ => {
            let mut alphabet: Vec<u8> = (b'a'..=b'z').collect();
            g.shuffle(&mut alphabet);
            let text = plain
                .chars()
                .map(|c| {
                    if c.is_ascii_lowercase() {
                        char::from(alphabet[usize::from(c as u8 - b'a')])
                    } else if c.is_ascii_uppercase() {
                        char::from(alphabet[usize::from(c as u8 - b'A')]).to_ascii_uppercase()
                    } else {
                        c
                    }
                })
                .collect::<String>();
            let key = format!(
                "plain:  abcdefghijklmnopqrstuvwxyz\ncipher: {}\n",
                String::from_utf8_lossy(&alphabet)
            );
            (
                text,
                "with a substitution cipher: key.txt gives, under each plain letter, the letter \
                 that replaced it (upper case letters were replaced by the upper case of the \
                 same letter); everything else is unchanged"
                    .to_owned(),
                Some(key),
            )
        }
    };
    // Hard: the ciphertext is cut into eight to twelve parts at arbitrary points (inside a word
    // too), numbered so that sorting the names as text puts part_10 before part_2.
    let parts: Vec<(String, String)> = if hard {
        let chars: Vec<char> = cipher_text.chars().collect();
        let n = g.int(8, 12) as usize;
        let mut cuts: Vec<usize> = (1..n)
            .map(|_| g.int(1, chars.len() as i64 - 1) as usize)
            .collect();
        cuts.sort_unstable();
        cuts.dedup();
        let mut bounds = vec![0];
        bounds.extend(cuts);
        bounds.push(chars.len());
        bounds
            .windows(2)
            .enumerate()
            .map(|(i, w)| {
                (
                    format!("part_{}.txt", i + 1),
                    chars[w[0]..w[1]].iter().collect(),
                )
            })
            .collect()
    } else {
        vec![(file.to_owned(), cipher_text)]
    };
    let folder = *g.pick(FOLDERS);
    let (asked, answer) = if g.chance(0.5) {
        (
            question(
                g,
                "the code word (the decrypted message contains a sentence \"The code word is \
                 ...\")",
            ),
            code,
        )
    } else {
        // A word of five letters or more, after the greeting.
        let candidates: Vec<usize> = (2..words_of.len())
            .filter(|&i| words_of[i].len() >= 5)
            .collect();
        let at = candidates[g.index(candidates.len())];
        (
            question(
                g,
                &format!(
                    "the {} word of the decrypted message (a word is a maximal run of the \
                     letters a to z in either case; the first word is \"Dear\")",
                    ordinal(at + 1)
                ),
            ),
            words_of[at].clone(),
        )
    };
    let holder = if hard {
        format!(
            "The folder {folder} in your home directory holds a message cut into {} files, \
             part_1.txt to part_{}.txt: the message is their contents joined in the order of \
             their numbers, with nothing added between them. It was encrypted {how}.",
            parts.len(),
            parts.len()
        )
    } else {
        match g.index(4) {
            0 => format!(
                "The file {file} in your home directory holds a message that was encrypted \
                 {how}."
            ),
            1 => format!(
                "Someone encrypted the message in the file {file} in your home directory {how}."
            ),
            2 => format!("In your home directory, the file {file} is a message encrypted {how}."),
            _ => format!(
                "Your home directory holds an intercepted message, the file {file}, encrypted \
                 {how}."
            ),
        }
    };
    const LOWERCASE: &[&str] = &[
        "Give it in lowercase.",
        "Answer in lowercase letters.",
        "Write the word in lowercase.",
        "Reply with the word alone, in lowercase.",
    ];
    let mut instance = Instance::new(
        format!("{holder} {asked} {}", g.pick(LOWERCASE)),
        Grader::OneOf(vec![answer.clone()]),
    )
    .secret(answer);
    for (path, text) in parts {
        let path = if hard {
            format!("{folder}/{path}")
        } else {
            path
        };
        instance = instance.file(path, text.into_bytes());
    }
    if let Some(key) = extra {
        instance = instance.file("key.txt", key.into_bytes());
    }
    instance
}

/// Shifts the `n`-th letter (counting letters only) forward by `shift(n)`, keeping case.
fn shift_text(text: &str, shift: impl Fn(usize) -> u8) -> String {
    let mut n = 0;
    text.chars()
        .map(|c| {
            let base = if c.is_ascii_lowercase() {
                b'a'
            } else if c.is_ascii_uppercase() {
                b'A'
            } else {
                return c;
            };
            let out = char::from(base + (c as u8 - base + shift(n)) % 26);
            n += 1;
            out
        })
        .collect()
}

/// `1st`, `2nd`, `3rd`, `4th`, ..., `11th`, `21st`.
fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shifts_letters_only() {
        assert_eq!(shift_text("Az, z!", |_| 1), "Ba, a!");
        assert_eq!(shift_text("abc", |i| i as u8), "ace");
        assert_eq!(ordinal(12), "12th");
        assert_eq!(ordinal(22), "22nd");
    }
}
