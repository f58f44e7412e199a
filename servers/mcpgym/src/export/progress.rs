//! A progress bar on stderr, drawn only when stderr is a terminal (a log file or a pipe gets
//! nothing but the summary line the commands print at the end).

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// How often the bar is redrawn: often enough to look alive, rarely enough to cost nothing.
const REDRAW_EVERY: Duration = Duration::from_millis(100);
/// Characters of the bar itself.
const WIDTH: u64 = 30;

/// Counts work done out of a known total, and shows it.
pub struct Progress {
    what: &'static str,
    total: u64,
    done: u64,
    drawn: Option<Instant>,
    shown: bool,
}

impl Progress {
    /// A bar for `total` items called `what` (e.g. `tasks`); silent unless stderr is a terminal.
    pub fn new(what: &'static str, total: u64) -> Self {
        Self {
            what,
            total,
            done: 0,
            drawn: None,
            shown: std::io::stderr().is_terminal(),
        }
    }

    /// One more item done.
    pub fn tick(&mut self) {
        self.done += 1;
        if self.shown
            && self
                .drawn
                .is_none_or(|drawn| drawn.elapsed() >= REDRAW_EVERY)
        {
            self.draw();
        }
    }

    fn draw(&mut self) {
        self.drawn = Some(Instant::now());
        let filled = (self.done * WIDTH).checked_div(self.total).unwrap_or(WIDTH);
        let bar: String = (0..WIDTH)
            .map(|i| if i < filled { '#' } else { '-' })
            .collect();
        let mut stderr = std::io::stderr().lock();
        let _ = write!(
            stderr,
            "\r[{bar}] {}/{} {}",
            self.done, self.total, self.what
        );
        let _ = stderr.flush();
    }

    /// Draws the final count and ends the bar's line.
    pub fn finish(mut self) {
        if self.shown {
            self.draw();
            eprintln!();
        }
    }
}
