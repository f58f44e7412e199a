//! Redrawing an instance whose answer would be fragile or visible.

use crate::families::{Gen, Instance};

/// Attempts before an instance is kept whatever its flaw.
const ATTEMPTS: usize = 100;

/// One attempt of a generator: a gradeable instance, and whether it is sound (its answer
/// clear of ties and of rounding edges, its data rich enough for the question).
pub(super) struct Attempt {
    instance: Instance,
    sound: bool,
}

impl Attempt {
    /// `instance`, sound or better drawn again.
    pub(super) fn new(instance: Instance, sound: bool) -> Self {
        Self { instance, sound }
    }
}

/// Draws from `make` until an instance is sound and its secret answer shows in neither its
/// prompt nor its files (a computed total can equal some number in the data by chance; that
/// instance is drawn again rather than kept). Every draw comes from `g`, so the instance
/// number alone still fixes the result.
pub(super) fn draw(g: &mut Gen, make: fn(&mut Gen) -> Attempt) -> Instance {
    let mut attempt = make(g);
    for _ in 1..ATTEMPTS {
        if attempt.sound && !leaks(&attempt.instance) {
            break;
        }
        attempt = make(g);
    }
    // After ATTEMPTS flawed draws (never seen in practice) the last one is kept.
    attempt.instance
}

/// Whether the instance's secret appears in its prompt or in one of its files.
fn leaks(instance: &Instance) -> bool {
    let Some(secret) = &instance.secret else {
        return false;
    };
    let needle = secret.as_bytes();
    if needle.is_empty() {
        return false;
    }
    instance.prompt.contains(secret.as_str())
        || instance
            .files
            .iter()
            .any(|(_, bytes)| match std::str::from_utf8(bytes) {
                // Text files (all of them, in practice) use the standard library's fast search.
                Ok(text) => text.contains(secret.as_str()),
                Err(_) => bytes.windows(needle.len()).any(|w| w == needle),
            })
}
