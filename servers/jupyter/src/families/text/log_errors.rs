//! `log-errors`: an application log (timestamps, levels, services, messages) in one of three
//! layouts; how many lines of a level (and a service) fall in a time window.
//!
//! Messages name other services and say "error" at other levels, so a plain text search
//! miscounts: the fields must be parsed.

use crate::families::{Family, FamilySplit, Gen, Instance};
use crate::tasks::{Grader, TaskKind};

use super::common::date_time;

pub(super) const FAMILY: Family = Family {
    name: "log-errors",
    kind: TaskKind::Text,
    split: FamilySplit::TrainAndTest,
    levelled: false,
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
    let services = g.subset(SERVICES, 3, 7);
    let file = *g.pick(FILES);
    let layout = g.index(3);
    let lines = g.int(300, 1100) as usize;
    let gap = g.int(5, 90);
    // Seconds since 2020-01-01.
    let mut t = g.int(0, 5 * 365) * 86_400 + g.int(0, 20 * 3600);
    // Levels in weight order: DEBUG, INFO, WARN, ERROR.
    let weights = [g.int(5, 20), g.int(30, 60), g.int(8, 20), g.int(8, 20)];
    let mut records = Vec::with_capacity(lines);
    let mut text = String::new();
    for _ in 0..lines {
        t += g.int(1, gap);
        let service = *g.pick(&services);
        let level = weighted(g, &weights);
        let templates = [DEBUG, INFO, WARN, ERROR][level];
        let other = *g.pick(&services);
        let message = g
            .pick(templates)
            .replace("{s}", other)
            .replace("{n}", &g.int(2, 9999).to_string());
        let (date, time) = date_time(t);
        let name = LEVELS[level];
        let line = match layout {
            0 => format!("{date} {time} {name} [{service}] {message}\n"),
            1 => format!("{date}T{time}Z | {service} | {name} | {message}\n"),
            _ => format!(
                "{{\"time\": \"{date}T{time}\", \"level\": \"{}\", \
                 \"service\": \"{service}\", \"message\": \"{message}\"}}\n",
                name.to_lowercase()
            ),
        };
        text.push_str(&line);
        records.push((t, service, level));
    }
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
            "JSON Lines: one object per line with the keys time (ISO, UTC), level (lowercase), \
             service and message"
        }
    };
    let what = match variant {
        0 => format!("entries at level ERROR logged by the service {service:?}"),
        1 => format!(
            "entries at level WARN or above (WARN or ERROR) logged by the service {service:?}"
        ),
        _ => "entries at level ERROR (any service)".to_owned(),
    };
    Instance::new(
        format!(
            "The file {file} in your home directory is an application log with the levels \
             DEBUG, INFO, WARN and ERROR, {layout_text}. Messages may mention other services \
             or the word \"error\"; only the level and service fields count. How many {what} \
             have a timestamp from {} (inclusive) up to {} (exclusive)? Give the count as an \
             integer.",
            stamp(start),
            stamp(end)
        ),
        Grader::Numeric {
            value: count as f64,
            rel_tol: 0.0,
            abs_tol: 0.0,
        },
    )
    .file(file, text.into_bytes())
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
