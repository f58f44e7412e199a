//! Shared pieces of the classic families: names and text drawn from the generator, and the
//! demo steps several applications share.

use super::super::{Gen, Instance, words};
use crate::tasks::DemoCondition;

/// Distinct words from the word list, in random order.
pub(super) fn distinct_words(g: &mut Gen, k: usize) -> Vec<&'static str> {
    g.sample(words::WORDS, k)
}

/// `word` with its first letter in uppercase.
pub(super) fn capitalised(word: &str) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// A short sentence without quotes or shell specials, different on most draws
/// (`Elena packed 14 lanterns in Oslo`).
pub(super) fn sentence(g: &mut Gen) -> String {
    const VERBS: &[&str] = &[
        "packed", "ordered", "counted", "shipped", "painted", "found", "sold", "checked",
    ];
    let who = g.first_name();
    let verb = *g.pick(VERBS);
    let n = g.int(2, 99);
    let what = g.word();
    let city = g.city();
    format!("{who} {verb} {n} {what}s in {city}")
}

/// `n` different sentences.
pub(super) fn sentences(g: &mut Gen, n: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    while out.len() < n {
        let s = sentence(g);
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

/// An ordinal word for small line numbers (`third`).
pub(super) fn ordinal(n: usize) -> &'static str {
    const ORDINALS: &[&str] = &[
        "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth",
        "tenth",
    ];
    ORDINALS[n - 1]
}

/// Runs one command line in the terminal the task opened: a pause until bash reads keys
/// (nothing shows when it does), the command, Return, and a wait until its effect `done` is
/// there (without one, a pause so its effect lands before grading).
pub(super) fn terminal_command(
    instance: Instance,
    command: &str,
    done: Option<DemoCondition>,
) -> Instance {
    let instance = instance.wait(1500).type_text(command).key("Return");
    match done {
        Some(condition) => instance.wait_for(condition),
        None => instance.wait(800),
    }
}

/// Mousepad's title for `file` (under home) while it has no unsaved changes (unsaved, the
/// title starts with `*`).
pub(super) fn mousepad_title(file: &str) -> String {
    format!("~/{file} - Mousepad")
}

/// Gnumeric's Save As dialog's title.
pub(super) const GNUMERIC_SAVE_AS: &str = "Save the current workbook as";

/// Saves under `name` (under home) from the Save As dialog titled `dialog` that is opening:
/// the name field holds a selected default (mousepad, gnumeric), replaced whole; the pause
/// before Return waits out the field's completion. Waits until the dialog is gone and the
/// file is there.
pub(super) fn save_as_dialog(instance: Instance, name: &str, dialog: &str) -> Instance {
    instance
        .wait_for(DemoCondition::Focused(dialog.into()))
        .key("ctrl+a")
        .type_text(name)
        .wait(400)
        .key("Return")
        .wait_for(DemoCondition::Gone(dialog.into()))
        .wait_for(DemoCondition::File(name.into()))
}

/// Selects the item named `name` in pcmanfm's folder view by typing it, and ends the search
/// with the item still selected.
pub(super) fn select_in_file_manager(instance: Instance, name: &str) -> Instance {
    instance.type_text(name).wait(300).key("Escape")
}
