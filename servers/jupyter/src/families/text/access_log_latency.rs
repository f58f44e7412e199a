//! `access-log-latency`: a web server's access log (method, path, status, latency); the mean
//! or a nearest-rank percentile of one endpoint's latency, with a status filter.
//!
//! Paths carry numeric ids and query strings, so an endpoint is a pattern, not a string.
//!
//! Levels: easy is a few hundred requests in milliseconds; medium more requests, latencies in
//! milliseconds or seconds, and aborted requests with no latency to leave out; hard more
//! endpoints and requests, the log rotated into two files, and paths with a trailing slash.

use mcpgym_env::generate::wording::{precision, question};

use crate::families::{Family, FamilySplit, Gen, Instance, Level};
use crate::tasks::{Grader, TaskKind};
use mcpgym_env::answer::half_unit;

use super::common::{date_time, without_leak};

pub(super) const FAMILY: Family = Family {
    name: "access-log-latency",
    kind: TaskKind::Text,
    split: FamilySplit::TrainAndTest,
    levelled: true,
    about: "log parsing: mean or percentile latency of one endpoint of an access log",
    generate,
};

/// (method, path pattern with `<id>` for a numeric id, typical latency in ms)
const ENDPOINTS: &[(&str, &str, f64)] = &[
    ("GET", "/api/users", 45.0),
    ("GET", "/api/users/<id>", 30.0),
    ("PUT", "/api/users/<id>", 80.0),
    ("POST", "/api/orders", 140.0),
    ("GET", "/api/orders", 95.0),
    ("GET", "/api/orders/<id>", 60.0),
    ("DELETE", "/api/orders/<id>", 70.0),
    ("GET", "/api/search", 220.0),
    ("GET", "/api/products/<id>", 35.0),
    ("POST", "/api/login", 120.0),
    ("GET", "/api/reports/<id>/export", 900.0),
    ("POST", "/api/uploads", 450.0),
    ("GET", "/health", 4.0),
];

const QUERIES: &[&str] = &[
    "page=2",
    "limit=50",
    "sort=desc",
    "q=lamp",
    "expand=items",
    "v=3",
];
const MONTHS: &[&str] = &[
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];
const PERCENTILES: &[u32] = &[50, 75, 90, 95, 99];

fn generate(g: &mut Gen) -> Instance {
    without_leak(g, attempt)
}

fn attempt(g: &mut Gen) -> Instance {
    let level = g.level();
    let hard = level == Level::Hard;
    let endpoints = g.subset(ENDPOINTS, 4, level.pick(7, 9, 11));
    let file = *g.pick(&[
        "access.log",
        "nginx_access.log",
        "logs/access.log",
        "web.log",
    ]);
    let layout = g.index(2);
    let lines = level.pick(g.int(200, 500), g.int(500, 1000), g.int(1000, 1600)) as usize;
    let mut t = g.int(0, 5 * 365) * 86_400 + g.int(0, 20 * 3600);
    let clients: Vec<String> = (0..g.int(4, 12))
        .map(|_| format!("10.{}.{}.{}", g.int(0, 40), g.int(0, 255), g.int(1, 254)))
        .collect();
    // (endpoint index, status, latency) of the requests with a latency
    let mut requests = Vec::with_capacity(lines);
    let mut entries: Vec<String> = Vec::with_capacity(lines);
    for _ in 0..lines {
        t += g.int(1, 20);
        let e = g.index(endpoints.len());
        let (method, pattern, typical) = endpoints[e];
        let status = match g.int(0, 99) {
            0..=74 => match method {
                "POST" => 201,
                "DELETE" => 204,
                _ => 200,
            },
            75..=79 => 304,
            80..=86 => 400,
            87..=92 => 404,
            93..=96 => 500,
            _ => 503,
        };
        let mut latency = typical * g.normal(0.0, 0.45).exp();
        if status >= 500 {
            // Failures are often timeouts: slow.
            latency *= g.float(2.0, 6.0);
        } else if status == 304 || status == 404 {
            latency *= 0.3;
        }
        let latency = (latency.round() as i64).max(1);
        let mut path = pattern.replace("<id>", &g.int(1, 99_999).to_string());
        // Hard: a trailing slash, which does not change the endpoint.
        if hard && g.chance(0.1) {
            path.push('/');
        }
        if method == "GET" && g.chance(0.25) {
            path = format!("{path}?{}", g.pick(QUERIES));
        }
        let bytes = if status == 204 || status == 304 {
            0
        } else {
            g.int(80, 60_000)
        };
        // Medium on: aborted requests have no latency ("-"), and some latencies are in seconds.
        let aborted = level != Level::Easy && g.chance(0.03);
        let seconds = level != Level::Easy && g.chance(0.3);
        let (date, time) = date_time(t);
        let line = if layout == 0 {
            let written = if aborted {
                "-".to_owned()
            } else if seconds {
                format!("{:.3}s", latency as f64 / 1000.0)
            } else {
                format!("{latency}ms")
            };
            let month = MONTHS[date[5..7].parse::<usize>().unwrap_or(1) - 1];
            format!(
                "{} - - [{}/{month}/{}:{time} +0000] \"{method} {path} HTTP/1.1\" \
                 {status} {bytes} {written}\n",
                g.pick(&clients),
                &date[8..10],
                &date[..4]
            )
        } else {
            let written = if aborted {
                "latency_ms=-".to_owned()
            } else if seconds {
                format!("latency_s={:.3}", latency as f64 / 1000.0)
            } else {
                format!("latency_ms={latency}")
            };
            format!(
                "ts={date}T{time}Z client={} method={method} path={path} status={status} \
                 bytes={bytes} {written}\n",
                g.pick(&clients)
            )
        };
        entries.push(line);
        if !aborted {
            requests.push((e, status, latency));
        }
    }
    // Hard: the log was rotated; the older half is in `<file>.1`.
    let (older, newer) = entries.split_at(if hard { lines / 2 } else { 0 });
    let (text, older) = (newer.concat(), older.concat());
    let filter = g.index(3);
    let keep = |status: i64| match filter {
        0 => (200..300).contains(&status),
        1 => status < 500,
        _ => true,
    };
    // An endpoint with enough matching requests for a percentile to mean something.
    let mut target = 0;
    let mut chosen: Vec<i64> = Vec::new();
    for _ in 0..20 {
        target = g.index(endpoints.len());
        chosen = requests
            .iter()
            .filter(|(e, s, _)| *e == target && keep(*s))
            .map(|r| r.2)
            .collect();
        if chosen.len() >= 8 {
            break;
        }
    }
    if chosen.is_empty() {
        chosen.push(0);
    }
    let (method, pattern, _) = endpoints[target];
    let filter_text = match filter {
        0 => "with a successful status (200–299)",
        1 => "excluding server errors (status 500 and above)",
        _ => "with any status",
    };
    let layout_text = match (layout, level) {
        (0, Level::Easy) => {
            "in the common log format (client address, two dashes, [time], \"request line\", \
             status, response size in bytes) followed by the latency as the last field (e.g. \
             87ms)"
        }
        (0, _) => {
            "in the common log format (client address, two dashes, [time], \"request line\", \
             status, response size in bytes) followed by the latency as the last field, in \
             milliseconds (87ms) or in seconds (0.087s); an aborted request has - instead"
        }
        (_, Level::Easy) => {
            "as key=value fields (ts, client, method, path, status, bytes, latency_ms)"
        }
        _ => {
            "as key=value fields (ts, client, method, path, status, bytes, then latency_ms in \
             milliseconds or latency_s in seconds); an aborted request has latency_ms=-"
        }
    };
    let rotated = if hard {
        format!(
            " The log was rotated: the older half of the requests is in {file}.1, and both \
             files count. A trailing slash on a path does not change its endpoint."
        )
    } else {
        String::new()
    };
    let skip = if level == Level::Easy {
        ""
    } else {
        " Aborted requests have no latency: leave them out."
    };
    let endpoint_text = if pattern.contains("<id>") {
        format!("{method} {pattern} (where <id> is any numeric id)")
    } else {
        format!("{method} {pattern}")
    };
    let opening = match g.index(4) {
        0 => format!("The file {file} in your home directory is a web server's access log"),
        1 => format!("A web server wrote its access log to {file} in your home directory"),
        2 => format!("In your home directory, {file} is the access log of a web server"),
        _ => format!("Your home directory holds {file}, a web server's access log"),
    };
    let common = format!(
        "{opening}, one request per line, {layout_text}.{rotated}{skip} Consider the requests \
         to the endpoint {endpoint_text}, ignoring any query string (the part from \"?\" on), \
         {filter_text}."
    );
    chosen.sort_unstable();
    let instance = if g.chance(0.5) {
        let mean = chosen.iter().sum::<i64>() as f64 / chosen.len() as f64;
        let asked = question(g, "their mean latency in milliseconds");
        Instance::new(
            format!("{common} {asked} {}", precision(g, 2)),
            Grader::Numeric {
                value: mean,
                rel_tol: 0.0,
                abs_tol: half_unit(2),
            },
        )
        .file(file, text.into_bytes())
        .secret(format!("{mean:.2}"))
    } else {
        let p = *g.pick(PERCENTILES);
        let rank = (u64::from(p) * chosen.len() as u64).div_ceil(100).max(1) as usize;
        let value = chosen[rank - 1];
        let asked = question(
            g,
            &format!(
                "the {p}th percentile of their latency in milliseconds, by the nearest-rank \
                 method (sort the latencies ascending; the value at rank ceil({p}/100 × n), \
                 counting from 1)"
            ),
        );
        Instance::new(
            format!("{common} {asked} {}", precision(g, 0)),
            Grader::Numeric {
                value: value as f64,
                rel_tol: 0.0,
                abs_tol: 0.0,
            },
        )
        .file(file, text.into_bytes())
    };
    if hard {
        instance.file(format!("{file}.1"), older.into_bytes())
    } else {
        instance
    }
}
