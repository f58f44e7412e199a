//! Helpers the text and file families share: leak-free generation, timestamps, filler text,
//! and hex for hidden checks.

use crate::families::{Gen, Instance, date_of};

/// Runs `attempt` until it yields an instance whose secret answer appears in neither the prompt
/// nor any file (compared case-insensitively), so a coincidence (an answer that happens to be
/// part of an address or of a file's text) never gives it away. Every draw comes from `g`, so
/// the result is as reproducible as one attempt; after many tries the last one is kept.
pub(super) fn without_leak(g: &mut Gen, attempt: fn(&mut Gen) -> Instance) -> Instance {
    let mut instance = attempt(g);
    for _ in 0..64 {
        if !leaks(&instance) {
            break;
        }
        instance = attempt(g);
    }
    instance
}

/// Whether the instance's secret occurs in its prompt or files (ASCII case ignored).
fn leaks(instance: &Instance) -> bool {
    let Some(secret) = &instance.secret else {
        return false;
    };
    let needle = secret.to_ascii_lowercase().into_bytes();
    if needle.is_empty() {
        return false;
    }
    let holds = |bytes: &[u8]| {
        bytes
            .windows(needle.len())
            .any(|w| w.eq_ignore_ascii_case(&needle))
    };
    holds(instance.prompt.as_bytes()) || instance.files.iter().any(|(_, bytes)| holds(bytes))
}

/// The date and time `seconds` after 2020-01-01 00:00:00: (`YYYY-MM-DD`, `HH:MM:SS`).
pub(super) fn date_time(seconds: i64) -> (String, String) {
    let day = seconds.div_euclid(86_400);
    let rest = seconds.rem_euclid(86_400);
    (
        date_of(day),
        format!("{:02}:{:02}:{:02}", rest / 3600, rest / 60 % 60, rest % 60),
    )
}

/// Lines of lowercase words (no digits), about `bytes` long in all: harmless file contents.
pub(super) fn filler(g: &mut Gen, bytes: usize) -> String {
    let mut text = String::with_capacity(bytes + 16);
    let mut line = 0;
    while text.len() < bytes {
        let word = g.word();
        text.push_str(word);
        line += word.len() + 1;
        if line > 60 {
            text.push('\n');
            line = 0;
        } else {
            text.push(' ');
        }
    }
    text.truncate(bytes);
    text
}

/// The word with its first letter in upper case.
pub(super) fn capital(word: &str) -> String {
    let mut chars = word.chars();
    chars.next().map_or_else(String::new, |c| {
        c.to_uppercase().collect::<String>() + chars.as_str()
    })
}

/// Setup code that compresses each file named in `GZIP_PATHS` with gzip (no name, time 0, so
/// the bytes are the same on every run) into `<path>.gz`, removing the original.
pub(super) const GZIP: &str = r#"import gzip

for _path in GZIP_PATHS:
    with open(_path, "rb") as _plain, open(_path + ".gz", "wb") as _raw:
        with gzip.GzipFile(filename="", mode="wb", fileobj=_raw, mtime=0) as _gz:
            _gz.write(_plain.read())
    os.remove(_path)
"#;
