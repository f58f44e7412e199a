//! `terminal_clipboard_line`: put one numbered line of a file on the clipboard.

use super::super::{Family, FamilySplit, Gen, Instance};
use super::common::{distinct_words, ordinal, terminal_command};
use crate::grading::Check;
use crate::tasks::App;

pub(super) const FAMILY: Family = Family {
    name: "terminal_clipboard_line",
    app: App::Terminal,
    split: FamilySplit::TrainAndTest,
    about: "terminal: copy a file's Nth line to the clipboard",
    generate,
};

/// An access code such as `tok-K4QZ-7PXM`, different on each line.
fn code(g: &mut Gen) -> String {
    const CHARS: &[u8] = b"ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
    let group = |g: &mut Gen| -> String {
        (0..4)
            .map(|_| char::from(CHARS[g.index(CHARS.len())]))
            .collect()
    };
    let (a, b) = (group(g), group(g));
    format!("{a}-{b}")
}

fn generate(g: &mut Gen) -> Instance {
    let w = distinct_words(g, 1);
    let file = format!("{}-keys.txt", w[0]);
    let count = g.int(3, 8) as usize;
    let services = distinct_words(g, count);
    let lines: Vec<String> = services
        .iter()
        .map(|service| format!("{service} {}", code(g)))
        .collect();
    let n = g.int(1, count as i64) as usize;
    let instruction = format!(
        "The file {file} in your home folder (/home/user) lists one service and its access \
         code per line. Put the whole {} line of that file (without its line break) on the \
         clipboard (the CLIPBOARD selection, what Ctrl+V pastes), for example with xclip in \
         the terminal.",
        ordinal(n)
    );
    let instance = Instance::new(instruction)
        .file(&file, lines.join("\n") + "\n")
        .launch(["xterm"])
        .check(Check::ClipboardEquals {
            text: lines[n - 1].clone(),
        });
    terminal_command(
        instance,
        &format!("sed -n '{n}p' {file} | xclip -selection clipboard"),
        None,
    )
}
