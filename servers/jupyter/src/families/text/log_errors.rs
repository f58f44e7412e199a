//! `log-errors`: an application log (timestamps, levels, services, messages) in one of three
//! layouts; how many lines of a level (and a service) fall in a time window.
//!
//! Messages name other services and say "error" at other levels, so a plain text search
//! miscounts: the fields must be parsed.
//!
//! Levels: easy is one file of a few hundred entries; medium splits a longer log into the file
//! and a rotated `<file>.1`, with lines that are not entries (an error's stack trace, naming
//! levels and services; in JSON Lines, a line cut off part way) to skip; hard has three or
//! four parts, the oldest two gzip-compressed, and levels written in any case.

use mcpgym_env::generate::wording::{precision, question};

use crate::families::{Family, FamilySplit, Gen, Instance, Level};
use crate::tasks::{Grader, TaskKind};

use super::common::{GZIP, capital, date_time};

pub(super) const FAMILY: Family = Family {
    name: "log-errors",
    kind: TaskKind::Text,
    split: FamilySplit::TrainAndTest,
    levelled: true,
    about: "log parsing: count a service's error lines in a time window",
    generate,
};

const SERVICES: &[&str] = &[
    "auth",
    "billing",
    "payments",
    "search",
    "gateway",
    "inventory",
    "mailer",
    "scheduler",
    "reports",
    "profile",
    "cart",
    "checkout",
    "shipping",
    "catalog",
];

const FILES: &[&str] = &[
    "app.log",
    "service.log",
    "server.log",
    "events.log",
    "logs/app.log",
    "logs/combined.log",
];

/// Message templates per level; `{s}` is another service.
const DEBUG: &[&str] = &[
    "cache lookup for key user:{n}",
    "error budget check for {s} ok",
    "opening connection to {s}",
    "retry policy loaded",
];
const INFO: &[&str] = &[
    "request to {s} completed in {n} ms",
    "recovered from error in {s}",
    "user {n} signed in",
    "job {n} finished",
    "health check passed",
    "ERROR count reset for {s}",
];
const WARN: &[&str] = &[
    "slow response from {s} ({n} ms)",
    "queue depth {n} above threshold",
    "retrying call to {s}",
    "deprecated endpoint used by client {n}",
];
const ERROR: &[&str] = &[
    "upstream {s} returned 503",
    "timeout after {n} ms calling {s}",
    "failed to write record {n}",
    "unhandled exception in worker {n}",
    "connection to {s} refused",
];

const LEVELS: &[&str] = &["DEBUG", "INFO", "WARN", "ERROR"];

fn generate(g: &mut Gen) -> Instance {
    let level = g.level();
    let hard = level == Level::Hard;
    let services = g.subset(SERVICES, 3, 7);
    let file = *g.pick(FILES);
    let layout = g.index(3);
    let lines = level.pick(g.int(300, 700), g.int(700, 1300), g.int(1300, 2400)) as usize;
    // The log's parts, newest first: the file itself, then `file.1`, `file.2`, ...
    let parts = level.pick(1, 2, g.int(3, 4)) as usize;
    let gap = g.int(5, 90);
    // Seconds since 2020-01-01.
    let mut t = g.int(0, 5 * 365) * 86_400 + g.int(0, 20 * 3600);
    // Levels in weight order: DEBUG, INFO, WARN, ERROR.
    let weights = [g.int(5, 20), g.int(30, 60), g.int(8, 20), g.int(8, 20)];
    let mut records = Vec::with_capacity(lines);
    // Each entry's text, with the lines that are not entries (medium on) after it.
    let mut texts: Vec<String> = Vec::with_capacity(lines);
    for _ in 0..lines {
        t += g.int(1, gap);
        let service = *g.pick(&services);
        let level_index = weighted(g, &weights);
        let templates = [DEBUG, INFO, WARN, ERROR][level_index];
        let other = *g.pick(&services);
        let message = g
            .pick(templates)
            .replace("{s}", other)
            .replace("{n}", &g.int(2, 9999).to_string());
        let (date, time) = date_time(t);
        let name = LEVELS[level_index];
        // Hard: the level is not always in capitals.
        let written = if hard && g.chance(0.2) {
            if g.chance(0.5) {
                name.to_lowercase()
            } else {
                capital(&name.to_lowercase())
            }
        } else {
            name.to_owned()
        };
        let mut line = match layout {
            0 => format!("{date} {time} {written} [{service}] {message}\n"),
            1 => format!("{date}T{time}Z | {service} | {written} | {message}\n"),
            _ => format!(
                "{{\"time\": \"{date}T{time}\", \"level\": \"{}\", \
                 \"service\": \"{service}\", \"message\": \"{message}\"}}\n",
                if hard { written } else { name.to_lowercase() }
            ),
        };
        if level != Level::Easy && g.chance(0.04) {
            if layout == 2 {
                // A line cut off part way, then the entry written again whole.
                let cut = g.int(10, line.len() as i64 - 8) as usize;
                line = format!("{}\n{line}", &line[..cut]);
            } else if level_index == 3 {
                line.push_str(&format!(
                    "Traceback (most recent call last):\n  File \"/srv/{other}/worker.py\", \
                     line {}, in handle\n    raise UpstreamError(\"{other}\")\n\
                     UpstreamError: ERROR [{other}] gave up\n",
                    g.int(10, 400)
                ));
            }
        }
        texts.push(line);
        records.push((t, service, level_index));
    }
    let mut names = Vec::new();
    let mut compressed = Vec::new();
    let mut contents = Vec::new();
    let per_part = lines.div_ceil(parts);
    for (i, chunk) in texts.chunks(per_part).enumerate() {
        // The oldest entries are in the highest-numbered part.
        let number = parts - 1 - i;
        let name = if number == 0 {
            file.to_owned()
        } else {
            format!("{file}.{number}")
        };
        // Hard: the oldest two parts are compressed, as logrotate leaves them.
        if hard && number >= 2 {
            compressed.push(name.clone());
            names.push(format!("{name}.gz"));
        } else {
            names.push(name.clone());
        }
        contents.push((name, chunk.concat()));
    }
    names.reverse();
    let first = records[0].0;
    let last = records[lines - 1].0;
    let variant = g.index(3);
    let service = *g.pick(&services);
    let mut window = (first, last, 0);
    for _ in 0..40 {
        // Whole minutes, inside the log's span.
        let start = (g.int(first, last) / 60) * 60;
        let end = ((start + g.int(1800, (last - first).max(3600))) / 60) * 60;
        let count = records
            .iter()
            .filter(|(t, s, level)| {
                *t >= start
                    && *t < end
                    && match variant {
                        0 => *level == 3 && *s == service,
                        1 => *level >= 2 && *s == service,
                        _ => *level == 3,
                    }
            })
            .count();
        window = (start, end, count);
        if count > 0 {
            break;
        }
    }
    let (start, end, count) = window;
    let stamp = |t: i64| {
        let (date, time) = date_time(t);
        format!("{date} {time}")
    };
    let layout_text = match layout {
        0 => {
            "one entry per line: date, time, level, the service in square brackets, then the \
             message"
        }
        1 => {
            "one entry per line: an ISO timestamp (UTC), the service, the level and the \
             message, separated by \" | \""
        }
        _ => {
            "JSON Lines: one object per line with the keys time (ISO, UTC), level, service and \
             message"
        }
    };
    let what = match variant {
        0 => format!("entries at level ERROR logged by the service {service:?}"),
        1 => format!(
            "entries at level WARN or above (WARN or ERROR) logged by the service {service:?}"
        ),
        _ => "entries at level ERROR (any service)".to_owned(),
    };
    let opening = match g.index(4) {
        0 => format!("The file {file} in your home directory is an application log"),
        1 => format!("An application wrote the log {file} in your home directory"),
        2 => format!("In your home directory, {file} is the log of an application"),
        _ => format!("Your home directory holds {file}, an application's log"),
    };
    let rotated = if parts == 1 {
        String::new()
    } else {
        format!(
            " The log was rotated: its older entries are in {}, the highest number the oldest{}; \
             the question is about the whole log.",
            names[1..].join(", "),
            if hard {
                ", and the .gz files are compressed with gzip"
            } else {
                ""
            }
        )
    };
    let skipped = if level == Level::Easy {
        ""
    } else if hard {
        " Some lines are not entries (the stack trace of an error, a line cut off part way): \
         skip them. The level may be written in any case (ERROR, Error, error)."
    } else {
        " Some lines are not entries (the stack trace of an error, a line cut off part way): \
         skip them."
    };
    let asked = question(
        g,
        &format!(
            "the number of {what} with a timestamp from {} (inclusive) up to {} (exclusive)",
            stamp(start),
            stamp(end)
        ),
    );
    let prompt = format!(
        "{opening}, with the levels DEBUG, INFO, WARN and ERROR, {layout_text}.{rotated}{skipped} \
         Messages may mention other services or the word \"error\"; only the level and service \
         fields count. {asked} {}",
        precision(g, 0)
    );
    let mut instance = Instance::new(
        prompt,
        Grader::Numeric {
            value: count as f64,
            rel_tol: 0.0,
            abs_tol: 0.0,
        },
    );
    for (name, text) in contents {
        instance = instance.file(name, text.into_bytes());
    }
    if compressed.is_empty() {
        instance
    } else {
        instance.setup(format!("GZIP_PATHS = {compressed:?}\n{GZIP}"))
    }
}

/// An index drawn with the given integer weights.
fn weighted(g: &mut Gen, weights: &[i64]) -> usize {
    let mut roll = g.int(0, weights.iter().sum::<i64>() - 1);
    for (i, w) in weights.iter().enumerate() {
        if roll < *w {
            return i;
        }
        roll -= w;
    }
    weights.len() - 1
}
