//! `terminal_window_title`: set the terminal window's title to a given phrase.

use super::super::{Family, FamilySplit, Gen, Instance};
use super::common::{capitalised, terminal_command};
use crate::grading::Check;
use crate::tasks::{App, DemoCondition};

pub(super) const FAMILY: Family = Family {
    name: "terminal_window_title",
    app: App::Terminal,
    split: FamilySplit::TrainAndTest,
    about: "terminal: set the window title to a given phrase",
    generate,
};

const EVENTS: &[&str] = &[
    "finished", "started", "failed", "queued", "paused", "done", "ready", "running",
];

fn generate(g: &mut Gen) -> Instance {
    let title = match g.index(3) {
        0 => format!(
            "{} build {} {}",
            capitalised(g.word()),
            g.int(10, 999),
            g.pick(EVENTS)
        ),
        1 => format!(
            "Backup {} {} at {:02}:{:02}",
            g.city(),
            g.pick(EVENTS),
            g.int(0, 23),
            g.int(0, 59)
        ),
        _ => format!(
            "{} {} - {} {}",
            g.first_name(),
            g.last_name(),
            g.word(),
            g.int(1, 99)
        ),
    };
    let instruction = format!("Change the title of the terminal window to exactly: {title}");
    let instance = Instance::new(instruction)
        .launch(["xterm"])
        .check(Check::WindowTitleEquals {
            text: title.clone(),
        });
    let done = DemoCondition::Titled(title.clone());
    terminal_command(
        instance,
        &format!("printf '\\033]2;{title}\\007'"),
        Some(done),
    )
}
