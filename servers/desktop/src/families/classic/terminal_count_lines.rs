//! `terminal_count_lines`: count the lines of a log (all of them, or those of one level) and
//! write the number into a new file. Held out.

use super::super::{Family, FamilySplit, Gen, Instance};
use super::common::{distinct_words, terminal_command};
use crate::grading::Check;
use crate::tasks::{App, DemoCondition};

pub(super) const FAMILY: Family = Family {
    name: "terminal_count_lines",
    app: App::Terminal,
    split: FamilySplit::TestOnly,
    about: "terminal: count a log's lines (or those of one level) into a new file",
    generate,
};

const LEVELS: &[&str] = &["INFO", "WARN", "ERROR", "DEBUG"];

fn generate(g: &mut Gen) -> Instance {
    let w = distinct_words(g, 2);
    let log = format!("{}.log", w[0]);
    let out = format!("{}_count.txt", w[1]);
    let lines = g.int(6, 40);
    let mut text = String::new();
    let mut per_level = [0u32; 4];
    for i in 0..lines {
        let level = g.index(LEVELS.len());
        per_level[level] += 1;
        let (what, n) = (g.word(), g.int(1, 999));
        text.push_str(&format!(
            "2025-03-{:02} 10:{:02} {} {what} took {n} ms\n",
            1 + i % 28,
            i % 60,
            LEVELS[level]
        ));
    }
    let by_level = g.chance(0.6);
    let (instruction, answer, command) = if by_level {
        // A level that occurs, so the answer is never a trivial zero.
        let level = loop {
            let l = g.index(LEVELS.len());
            if per_level[l] > 0 {
                break l;
            }
        };
        let name = LEVELS[level];
        (
            format!(
                "The file {log} in your home folder (/home/user) is a log. Count the lines that \
                 contain the word {name} and write that number (digits only) into a new file \
                 {out} in your home folder."
            ),
            per_level[level].to_string(),
            format!("grep -c {name} {log} > {out}"),
        )
    } else {
        (
            format!(
                "The file {log} in your home folder (/home/user) is a log. Count how many lines \
                 it has and write that number (digits only) into a new file {out} in your home \
                 folder."
            ),
            lines.to_string(),
            format!("wc -l < {log} > {out}"),
        )
    };
    let instance = Instance::new(instruction)
        .file(&log, text)
        .launch(["xterm"])
        .check(Check::FileEquals {
            path: out.clone(),
            text: answer,
        });
    terminal_command(instance, &command, Some(DemoCondition::File(out)))
}
