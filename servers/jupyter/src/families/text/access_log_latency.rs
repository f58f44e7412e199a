//! `access-log-latency`: a web server's access log (method, path, status, latency); the mean
//! or a nearest-rank percentile of one endpoint's latency, with a status filter.
//!
//! Paths carry numeric ids and query strings, so an endpoint is a pattern, not a string.

use crate::families::{Family, FamilySplit, Gen, Instance};
use crate::tasks::{Grader, TaskKind};
use mcpgym_env::answer::half_unit;

use super::common::{date_time, without_leak};

pub(super) const FAMILY: Family = Family {
    name: "access-log-latency",
    kind: TaskKind::Text,
    split: FamilySplit::TrainAndTest,
    levelled: false,
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
    let endpoints = g.subset(ENDPOINTS, 4, 8);
    let file = *g.pick(&[
        "access.log",
        "nginx_access.log",
        "logs/access.log",
        "web.log",
    ]);
    let layout = g.index(2);
    let lines = g.int(300, 900) as usize;
    let mut t = g.int(0, 5 * 365) * 86_400 + g.int(0, 20 * 3600);
    let clients: Vec<String> = (0..g.int(4, 12))
        .map(|_| format!("10.{}.{}.{}", g.int(0, 40), g.int(0, 255), g.int(1, 254)))
        .collect();
    // (endpoint index, status, latency)
    let mut requests = Vec::with_capacity(lines);
    let mut text = String::new();
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
        if method == "GET" && g.chance(0.25) {
            path = format!("{path}?{}", g.pick(QUERIES));
        }
        let bytes = if status == 204 || status == 304 {
            0
        } else {
            g.int(80, 60_000)
        };
        let (date, time) = date_time(t);
        let line = if layout == 0 {
            let month = MONTHS[date[5..7].parse::<usize>().unwrap_or(1) - 1];
            format!(
                "{} - - [{}/{month}/{}:{time} +0000] \"{method} {path} HTTP/1.1\" \
                 {status} {bytes} {latency}ms\n",
                g.pick(&clients),
                &date[8..10],
                &date[..4]
            )
        } else {
            format!(
                "ts={date}T{time}Z client={} method={method} path={path} status={status} \
                 bytes={bytes} latency_ms={latency}\n",
                g.pick(&clients)
            )
        };
        text.push_str(&line);
        requests.push((e, status, latency));
    }
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
    let layout_text = if layout == 0 {
        "in the common log format (client address, two dashes, [time], \"request line\", \
         status, response size in bytes) followed by the latency as the last field (e.g. 87ms)"
    } else {
        "as key=value fields (ts, client, method, path, status, bytes, latency_ms)"
    };
    let endpoint_text = if pattern.contains("<id>") {
        format!("{method} {pattern} (where <id> is any numeric id)")
    } else {
        format!("{method} {pattern}")
    };
    let common = format!(
        "The file {file} in your home directory is a web server's access log, one request per \
         line, {layout_text}. Consider the requests to the endpoint {endpoint_text}, ignoring \
         any query string (the part from \"?\" on), {filter_text}."
    );
    chosen.sort_unstable();
    if g.chance(0.5) {
        let mean = chosen.iter().sum::<i64>() as f64 / chosen.len() as f64;
        Instance::new(
            format!(
                "{common} What is their mean latency in milliseconds? Give the number rounded \
                 to 2 decimal places."
            ),
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
        Instance::new(
            format!(
                "{common} What is the {p}th percentile of their latency in milliseconds, by the \
                 nearest-rank method (sort the latencies ascending; the value at rank \
                 ceil({p}/100 × n), counting from 1)? Give the latency as an integer."
            ),
            Grader::Numeric {
                value: value as f64,
                rel_tol: 0.0,
                abs_tol: 0.0,
            },
        )
        .file(file, text.into_bytes())
    }
}
