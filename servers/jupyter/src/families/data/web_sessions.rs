//! `web-sessions`: a clickstream in JSON Lines (ISO timestamps carrying the UTC offset of
//! whichever device logged them), users in SQLite and a list of bot user agents; sessions cut
//! at gaps of more than 30 minutes. A funnel's conversion for a cohort, the median session
//! length of a segment, the page that most often ends a session, or a segment's sessions.
//!
//! - `clicks.jsonl`: `{user_id, ts, page, agent}` a line, `ts` like
//!   `2024-06-03T14:22:05+02:00` (or `Z`);
//! - `users.db`: `users(user_id, signup_date, country, plan)`;
//! - `bots.txt`: the bots' user agents, one a line; their events are left out. A bot (a link
//!   previewer, a monitor) fetches pages with a user's cookie, inside or just after the user's
//!   sessions, so kept it joins sessions and changes their pages.
//!
//! The generator redraws an instance until reading the wall clocks without their offsets
//! gives a wrong answer, and so does keeping the bots (some fetch at any hour, making
//! sessions of their own).
//!
//! Levels: easy has a dozen users and a plain bots list; medium has more users and sessions,
//! comments and blank lines in the bots list and the funnel question; hard has many users, a
//! second stream from the mobile app in another schema (`app_events.jsonl`: string user ids,
//! epoch milliseconds, screens without the leading slash), bot agents in another case than
//! their line, and plans written in any case or padded.

use super::clock::{DAY, YEAR_2024, offset_iso, utc_iso};
use super::draw::{Attempt, draw};
use crate::families::{Family, FamilySplit, Gen, Instance, Level, date_of};
use crate::tasks::{Grader, TaskKind};
use mcpgym_env::answer::half_unit;
use mcpgym_env::generate::wording;
use mcpgym_env::generate::words::MONTHS;

pub(super) const FAMILY: Family = Family {
    name: "web-sessions",
    kind: TaskKind::DataAnalysis,
    split: FamilySplit::TrainAndTest,
    levelled: true,
    about: "a clickstream with mixed UTC offsets (JSON Lines), users (SQLite) and bot agents; \
            30-minute sessions, a funnel's conversion, a median length or a last page",
    generate,
};

const PAGES: &[&str] = &[
    "/",
    "/search",
    "/product",
    "/cart",
    "/checkout",
    "/account",
    "/help",
    "/blog",
];
/// Pages a visit wanders through besides the funnel's.
const BROWSING: &[&str] = &["/", "/search", "/account", "/help", "/blog", "/product"];

const COUNTRIES: &[&str] = &[
    "Kenya", "Brazil", "Japan", "Canada", "Germany", "India", "Mexico", "Norway", "Vietnam",
];
const PLANS: &[&str] = &["free", "pro", "team"];

/// UTC offsets (minutes) a device may log with.
const OFFSETS: &[i64] = &[-480, -300, -180, 0, 60, 120, 330, 480, 540];

const BROWSERS: &[&str] = &[
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15",
    "Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148",
];
const BOTS: &[&str] = &[
    "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)",
    "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
    "UptimeRobot/2.0 (http://www.uptimerobot.com/)",
    "python-requests/2.31.0",
    "Twitterbot/1.0",
    "Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)",
    "curl/8.4.0",
];

struct User {
    id: i64,
    signup: i64,
    country: usize,
    plan: usize,
}

/// One event: its user, instant (UTC seconds), the offset it was logged with, its page, and
/// whether a bot fetched it.
#[derive(Clone)]
struct Event {
    user: usize,
    t: i64,
    offset: i64,
    page: &'static str,
    bot: bool,
    /// Logged by the mobile app (hard only): epoch milliseconds, no offset to misread.
    app: bool,
}

/// A session: its user, its pages in time order, its first and last instants.
struct Session {
    user: usize,
    pages: Vec<&'static str>,
    start: i64,
    end: i64,
}

/// The users a question is about.
#[derive(Clone, Copy)]
enum Cohort {
    SignedUpIn(i64),
    Plan(usize),
    Country(usize),
}

impl Cohort {
    fn describe(self) -> String {
        match self {
            Cohort::SignedUpIn(month) => {
                format!("users who signed up in {} 2024", MONTHS[month as usize - 1])
            }
            Cohort::Plan(p) => format!("users on the {} plan", PLANS[p]),
            Cohort::Country(c) => format!("users from {}", COUNTRIES[c]),
        }
    }

    fn holds(self, user: &User) -> bool {
        match self {
            Cohort::SignedUpIn(month) => {
                let date = date_of(user.signup);
                date.starts_with(&format!("2024-{month:02}"))
            }
            Cohort::Plan(p) => user.plan == p,
            Cohort::Country(c) => user.country == c,
        }
    }
}

/// Sessions of `events` (each user's events in time order, cut at gaps over 30 minutes), the
/// times as `clock` reads them.
fn sessions(events: &[Event], clock: impl Fn(&Event) -> i64) -> Vec<Session> {
    let mut order: Vec<&Event> = events.iter().collect();
    order.sort_by_key(|e| (e.user, clock(e)));
    let mut out: Vec<Session> = Vec::new();
    for e in order {
        let t = clock(e);
        match out.last_mut() {
            Some(s) if s.user == e.user && t - s.end <= 30 * 60 => {
                s.pages.push(e.page);
                s.end = t;
            }
            _ => out.push(Session {
                user: e.user,
                pages: vec![e.page],
                start: t,
                end: t,
            }),
        }
    }
    out
}

/// Whether a session visited /product, then /cart, then /checkout.
fn converted(pages: &[&str]) -> bool {
    let mut steps = ["/product", "/cart", "/checkout"].into_iter().peekable();
    for page in pages {
        if steps.peek() == Some(page) {
            steps.next();
        }
    }
    steps.peek().is_none()
}

/// What the question asks, of the cohort's sessions.
#[derive(Clone, Copy, PartialEq)]
enum Shape {
    Funnel,
    MedianLength,
    LastPage,
    Count,
}

/// The answer of `shape` over `sessions` of the cohort's users: a number, or a page; `None`
/// when the cohort has too little to ask about.
fn answer(shape: Shape, sessions: &[&Session]) -> Option<Answer> {
    match shape {
        Shape::Funnel => {
            let visited: Vec<&&Session> = sessions
                .iter()
                .filter(|s| s.pages.contains(&"/product"))
                .collect();
            let won = visited.iter().filter(|s| converted(&s.pages)).count();
            (visited.len() >= 5 && won > 0)
                .then(|| Answer::Number(100.0 * won as f64 / visited.len() as f64))
        }
        Shape::MedianLength => {
            let mut minutes: Vec<f64> = sessions
                .iter()
                .map(|s| (s.end - s.start) as f64 / 60.0)
                .collect();
            minutes.sort_by(f64::total_cmp);
            let n = minutes.len();
            (n >= 5).then(|| {
                Answer::Number(if n % 2 == 1 {
                    minutes[n / 2]
                } else {
                    (minutes[n / 2 - 1] + minutes[n / 2]) / 2.0
                })
            })
        }
        Shape::LastPage => {
            let mut counts: Vec<(usize, &str)> = PAGES
                .iter()
                .map(|&p| {
                    (
                        sessions
                            .iter()
                            .filter(|s| s.pages.last() == Some(&p))
                            .count(),
                        p,
                    )
                })
                .collect();
            counts.sort_by_key(|c| std::cmp::Reverse(c.0));
            (counts[0].0 > counts[1].0).then(|| Answer::Page(counts[0].1))
        }
        Shape::Count => (sessions.len() >= 3).then_some(Answer::Number(sessions.len() as f64)),
    }
}

#[derive(PartialEq)]
enum Answer {
    Number(f64),
    Page(&'static str),
}

fn generate(g: &mut Gen) -> Instance {
    draw(g, attempt)
}

fn attempt(g: &mut Gen) -> Attempt {
    let level = g.level();
    let easy = level == Level::Easy;
    let hard = level == Level::Hard;
    let countries = g.sample(
        &(0..COUNTRIES.len()).collect::<Vec<_>>(),
        level.pick(2, 3, 4),
    );
    let user_count = level.pick(g.int(10, 14), g.int(25, 40), g.int(50, 75));
    let mut ids: Vec<i64> = Vec::new();
    while ids.len() < user_count as usize {
        let id = g.int(100, 9999);
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    ids.sort_unstable();
    let users: Vec<User> = ids
        .iter()
        .map(|&id| User {
            id,
            // From mid-2023 to the end of May 2024.
            signup: YEAR_2024 / DAY - 200 + g.int(0, 350),
            country: *g.pick(&countries),
            plan: g.index(PLANS.len()),
        })
        .collect();
    let bots: Vec<&str> = g.sample(BOTS, level.pick(3, 5, 7));

    // Two weeks of June 2024.
    let window = YEAR_2024 + 152 * DAY;
    let mut events: Vec<Event> = Vec::new();
    for (u, _) in users.iter().enumerate() {
        let home = *g.pick(OFFSETS);
        let other = *g.pick(OFFSETS);
        let mut t = window + g.int(0, 12 * 3600);
        for _ in 0..level.pick(g.int(2, 4), g.int(3, 6), g.int(4, 7)) {
            // A device per session, now and then another within it.
            let device = if g.chance(0.6) { home } else { other };
            let app = hard && g.chance(0.3);
            let mut pages: Vec<&'static str> =
                (0..g.int(0, 4)).map(|_| *g.pick(BROWSING)).collect();
            if g.chance(0.6) {
                pages.push("/product");
                if g.chance(0.6) {
                    pages.push("/cart");
                    if g.chance(0.6) {
                        pages.push("/checkout");
                    }
                }
            }
            for _ in 0..g.int(0, 2) {
                pages.push(*g.pick(BROWSING));
            }
            if pages.is_empty() {
                pages.push("/");
            }
            let mut first = true;
            for page in pages {
                if !first {
                    t += if g.chance(0.2) {
                        g.int(600, 1500)
                    } else {
                        g.int(15, 400)
                    };
                }
                first = false;
                let offset = if g.chance(0.2) { other } else { device };
                events.push(Event {
                    user: u,
                    t,
                    offset,
                    page,
                    bot: false,
                    app,
                });
            }
            let end = t;
            // Bots: inside the session, or within half an hour after it (bridging a gap).
            for _ in 0..g.int(0, level.pick(1, 2, 2)) {
                let at = if g.chance(0.5) {
                    end + g.int(5 * 60, 29 * 60)
                } else {
                    end - g.int(1, 600)
                };
                events.push(Event {
                    user: u,
                    t: at,
                    offset: *g.pick(OFFSETS),
                    page: PAGES[g.index(PAGES.len())],
                    bot: true,
                    app: false,
                });
            }
            // The next visit: from 40 minutes to a day and a half later.
            t = end + g.int(40 * 60, 36 * 3600);
        }
        // A monitor checking a page the user bookmarked, at any hour.
        for _ in 0..g.int(0, level.pick(2, 2, 3)) {
            events.push(Event {
                user: u,
                t: window + g.int(0, 14 * 24 * 3600),
                offset: *g.pick(OFFSETS),
                page: PAGES[g.index(PAGES.len())],
                bot: true,
                app: false,
            });
        }
    }
    // Distinct instants per user, so that time order is never a tie.
    events.sort_by_key(|e| (e.user, e.t));
    for i in 1..events.len() {
        if events[i].user == events[i - 1].user && events[i].t <= events[i - 1].t {
            events[i].t = events[i - 1].t + 1;
        }
    }

    let humans: Vec<Event> = events.iter().filter(|e| !e.bot).cloned().collect();
    let truth = sessions(&humans, |e| e.t);
    // The sessions of a solver that skips one step: that keeps the bots, or that reads wall
    // clocks as UTC (the app's epoch times read right either way).
    let with_bots = sessions(&events, |e| e.t);
    let wall_clocks = sessions(&humans, |e| if e.app { e.t } else { e.t + e.offset * 60 });

    let shapes: &[Shape] = if easy {
        &[Shape::MedianLength, Shape::LastPage, Shape::Count]
    } else {
        &[
            Shape::Funnel,
            Shape::MedianLength,
            Shape::LastPage,
            Shape::Count,
        ]
    };
    let shape = *g.pick(shapes);
    let cohort = match g.index(3) {
        0 => Cohort::SignedUpIn(g.int(1, 5)),
        1 => Cohort::Plan(g.index(PLANS.len())),
        _ => Cohort::Country(*g.pick(&countries)),
    };
    let of = |all: &[Session]| -> Option<Answer> {
        let mine: Vec<&Session> = all
            .iter()
            .filter(|s| cohort.holds(&users[s.user]))
            .collect();
        answer(shape, &mine)
    };
    let (Some(right), Some(bots_kept), Some(offsets_lost)) =
        (of(&truth), of(&with_bots), of(&wall_clocks))
    else {
        return Attempt::new(Instance::new("", Grader::Exact(String::new())), false);
    };
    let decimals = match shape {
        Shape::Funnel => 1,
        Shape::MedianLength => 2,
        _ => 0,
    };
    let differs = |wrong: &Answer| match (&right, wrong) {
        (Answer::Number(a), Answer::Number(b)) => (a - b).abs() > half_unit(decimals),
        (a, b) => a != b,
    };
    let sound = differs(&bots_kept) && differs(&offsets_lost);
    if !sound {
        return Attempt::new(Instance::new("", Grader::Exact(String::new())), false);
    }

    let who = cohort.describe();
    let asked = match shape {
        Shape::Funnel => {
            let what = format!(
                "the percentage of the sessions of {who} that visited /product which went on \
                 to visit /cart and after that /checkout"
            );
            format!(
                "{} {}",
                wording::question(g, &what),
                wording::precision(g, 1)
            )
        }
        Shape::MedianLength => {
            let what = format!("the median length in minutes of the sessions of {who}");
            format!(
                "{} {}",
                wording::question(g, &what),
                wording::precision(g, 2)
            )
        }
        Shape::Count => {
            let what = format!("the number of sessions of {who}");
            format!(
                "{} {}",
                wording::question(g, &what),
                wording::precision(g, 0)
            )
        }
        Shape::LastPage => {
            let frame = *g.pick(&[
                "Which page most often ends a session of {}?",
                "Name the page that most often ends a session of {}.",
                "Find the page that most often ends a session of {}.",
                "Which page is most often the last of a session of {}?",
            ]);
            let answer_form = *g.pick(&[
                "Answer with the page as the clickstream writes it, such as /help.",
                "Give the page's path, such as /help, and nothing else.",
                "Reply with the path alone (like /help).",
            ]);
            format!("{} {answer_form}", frame.replace("{}", &who))
        }
    };
    let (grader, secret) = match right {
        Answer::Number(value) => (
            Grader::Numeric {
                value,
                rel_tol: 0.0,
                abs_tol: if decimals == 0 {
                    0.0
                } else {
                    half_unit(decimals)
                },
            },
            (decimals > 0).then(|| format!("{value:.*}", decimals as usize)),
        ),
        Answer::Page(page) => (Grader::OneOf(vec![page.to_owned()]), None),
    };

    let intro = *g.pick(&[
        "Your home directory holds a web shop's clickstream for two weeks of June 2024.",
        "The files in your home directory are two weeks of a web shop's clickstream (June 2024).",
        "A web shop logged two weeks of visits in June 2024; the logs are in your home directory.",
        "You are given a web shop's clickstream of two weeks in June 2024, in your home directory.",
    ]);
    let bots_text = if easy {
        ""
    } else {
        " bots.txt also holds comment lines (starting with #) and blank lines."
    };
    let hard_text = if hard {
        " Visits from the mobile app are in app_events.jsonl, one JSON object a line: uid (u and \
         the user id, zero-padded to 4 digits), time_ms (milliseconds since 1970-01-01 UTC), \
         screen (the page without its leading slash; home is the page /) and ua (the user \
         agent); a user's sessions run across both files. A bot's agent may be written in \
         another case than its line in bots.txt (compare ignoring case), and a plan in users.db \
         may be in any case or padded with spaces."
    } else {
        ""
    };
    let session_rule = *g.pick(&[
        "A session is a user's run of events, in time order, with no gap of more than 30 \
         minutes between one event and the next; its length is the time from its first event \
         to its last.",
        "Cut each user's events, in time order, into sessions wherever more than 30 minutes \
         pass between two events; a session's length is the time from its first event to its \
         last.",
        "Sessions: a user's events in time order, a new session starting after any gap of more \
         than 30 minutes; the length of a session is the time between its first and last \
         events.",
    ]);
    let prompt = format!(
        "{intro} clicks.jsonl has one JSON object a line: user_id, ts (ISO 8601, with the UTC \
         offset of the device that logged it), page and agent (the user agent). users.db is a \
         SQLite database: users(user_id, signup_date, country, plan). bots.txt lists the user \
         agents of bots, one a line: their events are no user's visits and are left out.\
         {bots_text}{hard_text} {session_rule} {asked}"
    );

    let mut clicks = String::new();
    let mut app_events = String::new();
    // Logged as it arrived: roughly in time order, users interleaved.
    let mut written: Vec<(i64, &Event)> = events.iter().map(|e| (e.t + g.int(0, 120), e)).collect();
    written.sort_by_key(|&(arrived, e)| (arrived, e.user, e.t));
    for &(_, e) in &written {
        let user = &users[e.user];
        let agent = if e.bot {
            let bot = *g.pick(&bots);
            if hard && g.chance(0.3) {
                bot.to_lowercase()
            } else {
                bot.to_owned()
            }
        } else {
            BROWSERS[(user.id as usize) % BROWSERS.len()].to_owned()
        };
        if e.app {
            let screen = if e.page == "/" { "home" } else { &e.page[1..] };
            app_events.push_str(&format!(
                "{}\n",
                serde_json::json!({
                    "uid": format!("u{:04}", user.id),
                    // Seconds since 1970: 2020-01-01 is 1,577,836,800.
                    "time_ms": (e.t + 1_577_836_800) * 1000,
                    "screen": screen,
                    "ua": agent,
                })
            ));
        } else {
            let ts = if e.offset == 0 && g.chance(0.5) {
                utc_iso(e.t)
            } else {
                offset_iso(e.t, e.offset)
            };
            clicks.push_str(&format!(
                "{}\n",
                serde_json::json!({"user_id": user.id, "ts": ts, "page": e.page, "agent": agent})
            ));
        }
    }
    let mut bots_txt = String::new();
    if !easy {
        bots_txt.push_str("# Crawlers, previewers and monitors seen on the shop\n\n");
    }
    for (i, bot) in bots.iter().enumerate() {
        bots_txt.push_str(bot);
        bots_txt.push('\n');
        if !easy && i % 3 == 2 {
            bots_txt.push_str("\n# more\n");
        }
    }
    let mut db = String::from("USERS = [");
    for user in &users {
        let plan = PLANS[user.plan];
        let plan = if hard && g.chance(0.25) {
            match g.index(3) {
                0 => plan.to_uppercase(),
                1 => format!("{plan} "),
                _ => format!("{}{}", plan[..1].to_uppercase(), &plan[1..]),
            }
        } else {
            plan.to_owned()
        };
        db.push_str(&format!(
            "({}, {:?}, {:?}, {plan:?}), ",
            user.id,
            date_of(user.signup),
            COUNTRIES[user.country]
        ));
    }
    db.push_str("]\n");
    let mut instance = Instance::new(prompt, grader)
        .file("clicks.jsonl", clicks)
        .file("bots.txt", bots_txt)
        .setup(format!("{db}{SETUP}"));
    if hard {
        instance = instance.file("app_events.jsonl", app_events);
    }
    if let Some(secret) = secret {
        instance = instance.secret(secret);
    }
    Attempt::new(instance, true)
}

/// Builds users.db from `USERS`.
const SETUP: &str = r#"import sqlite3
db = sqlite3.connect("users.db")
db.execute("CREATE TABLE users (user_id INTEGER PRIMARY KEY, signup_date TEXT NOT NULL, country TEXT NOT NULL, plan TEXT NOT NULL)")
db.executemany("INSERT INTO users VALUES (?, ?, ?, ?)", USERS)
db.commit()
db.close()
del db, sqlite3
"#;

#[cfg(test)]
mod tests {
    use super::converted;

    #[test]
    fn a_funnel_is_its_steps_in_order() {
        assert!(converted(&["/", "/product", "/help", "/cart", "/checkout"]));
        assert!(!converted(&["/cart", "/product", "/checkout"]));
        assert!(!converted(&["/product", "/cart"]));
    }
}
