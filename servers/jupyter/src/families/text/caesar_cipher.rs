//! `caesar-cipher` (held out): a message encrypted with a Caesar shift (given, or to be found
//! from a known opening), a Vigenère key, or a substitution alphabet; decrypt it and give the
//! code word it holds or the word at a position.
//!
//! Only letters are encrypted (case kept, everything else as is), and an instance is re-drawn
//! whenever the answer could be read, in any case, from the ciphertext or the prompt.

use crate::families::{Family, FamilySplit, Gen, Instance};
use crate::tasks::{Grader, TaskKind};

use super::common::{capital, without_leak};

pub(super) const FAMILY: Family = Family {
    name: "caesar-cipher",
    kind: TaskKind::Text,
    split: FamilySplit::TestOnly,
    levelled: false,
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

fn generate(g: &mut Gen) -> Instance {
    without_leak(g, attempt)
}

fn attempt(g: &mut Gen) -> Instance {
    let name = g.first_name();
    let mut sentences = vec![format!("Dear {name},")];
    let code = format!("{}{}", g.word(), g.word());
    let code_at = g.int(1, 4) as usize;
    for i in 0..g.int(3, 7) as usize {
        if i == code_at {
            sentences.push(format!("The code word is {code}."));
        }
        let verb = *g.pick(VERBS);
        let sentence = format!(
            "{} {} {} {} {} {} {}.",
            capital(verb),
            g.pick(LINKS),
            g.word(),
            g.pick(LINKS),
            g.word(),
            g.pick(LINKS),
            g.word()
        );
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
    let (cipher_text, how, extra) = match g.index(4) {
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
    let (question, answer) = if g.chance(0.5) {
        (
            "The decrypted message contains a sentence \"The code word is ...\". What is the \
             code word? Give it in lowercase."
                .to_owned(),
            code,
        )
    } else {
        // A word of five letters or more, after the greeting.
        let candidates: Vec<usize> = (2..words_of.len())
            .filter(|&i| words_of[i].len() >= 5)
            .collect();
        let at = candidates[g.index(candidates.len())];
        (
            format!(
                "What is the {} word of the decrypted message (a word is a maximal run of \
                 letters; the first word is \"Dear\")? Give it in lowercase.",
                ordinal(at + 1)
            ),
            words_of[at].clone(),
        )
    };
    let mut instance = Instance::new(
        format!(
            "The file {file} in your home directory holds a message that was encrypted {how}. \
             {question}"
        ),
        Grader::OneOf(vec![answer.clone()]),
    )
    .file(file, cipher_text.into_bytes())
    .secret(answer);
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
