//! `survey-waves`: two waves of a staff survey with different column names and answer
//! formats, and a codebook; the mean change of a scale score for the respondents present in
//! both waves, which takes mapping the columns through the codebook, turning text answers into
//! numbers, reverse-coding, matching respondent ids written two ways and dropping repeated
//! submissions.
//!
//! - `codebook.csv`: `scale,item,wave1_column,wave2_column,reverse_coded` (`yes` or `no`).
//! - `wave1.csv`: `respondent_id` (`R-0012`), `segment`, and the items' answers as text
//!   (`Strongly disagree` … `Strongly agree`).
//! - `wave2.csv`: `resp` (`12`), `group` (the segment), and the items' answers as 1–5.
//!
//! A scale score is the mean of the scale's items, a reverse-coded item counted as 6 minus its
//! answer; a change is the wave-2 score less the wave-1 score.
//!
//! Levels: easy has one scale of four items (one reverse-coded) and two segments; medium has
//! six items (two reverse-coded), three segments and respondents who submitted wave 2 twice;
//! hard has two scales in the codebook (the question asks one), four segments, repeated
//! submissions in both waves and text answers in any case, padded with spaces. Every level has
//! dropouts (wave-1 respondents missing from wave 2) and newcomers (wave 2 only).
//!
//! Questions: a segment's mean change; the largest mean change of any segment; (medium on) the
//! difference between two segments' mean changes. Every instance is drawn so that leaving out
//! any one of its cleaning steps (a [`Skip`]) gives a wrong answer.

use super::draw::{Attempt, draw};
use crate::families::{Family, FamilySplit, Gen, Instance, Level};
use crate::tasks::{Grader, TaskKind};
use mcpgym_env::answer::half_unit;
use mcpgym_env::generate::wording;

pub(super) const FAMILY: Family = Family {
    name: "survey-waves",
    kind: TaskKind::DataAnalysis,
    split: FamilySplit::TrainAndTest,
    levelled: true,
    about: "match two survey waves (text and 1-5 answers, ids written two ways, reverse-coded \
            items in a codebook); a segment's mean change of a scale score",
    generate,
};

/// The answers, 1 to 5, as wave 1 writes them.
const LABELS: [&str; 5] = [
    "Strongly disagree",
    "Disagree",
    "Neutral",
    "Agree",
    "Strongly agree",
];

/// Scales and their items' short names.
const SCALES: &[(&str, &[&str])] = &[
    (
        "engagement",
        &["enjoy", "proud", "energy", "recommend", "absorbed", "stay"],
    ),
    (
        "wellbeing",
        &[
            "rested", "calm", "workload", "balance", "support", "cheerful",
        ],
    ),
    (
        "trust",
        &["honest", "informed", "fair", "listened", "reliable", "open"],
    ),
];

const SEGMENTS: &[&str] = &[
    "Sales",
    "Engineering",
    "Operations",
    "Support",
    "Finance",
    "Marketing",
];

/// A cleaning step a careless solution leaves out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Skip {
    /// Every step done.
    None,
    /// Reverse-coded items counted as answered.
    Reverse,
    /// Repeated submissions kept.
    Duplicates,
    /// Each wave's mean taken over all its respondents, not only those in both waves.
    Panel,
    /// Text answers matched exactly (an answer in another case or padded is lost).
    Text,
    /// Ids compared as written (`R-0012` is not `12`: no respondent is in both waves).
    Ids,
}

/// The steps whose traps a level sets.
fn skips(level: Level) -> &'static [Skip] {
    match level {
        Level::Easy => &[Skip::Reverse, Skip::Panel, Skip::Ids],
        Level::Medium => &[Skip::Reverse, Skip::Panel, Skip::Duplicates, Skip::Ids],
        Level::Hard => &[
            Skip::Reverse,
            Skip::Panel,
            Skip::Duplicates,
            Skip::Text,
            Skip::Ids,
        ],
    }
}

/// One item of the codebook.
struct Item {
    scale: usize,
    wave1: String,
    wave2: String,
    reverse: bool,
}

/// One respondent's answers in a wave, as written (1–5), and which text answers are dirty.
struct Answers {
    raw: Vec<i64>,
    dirty: Vec<bool>,
    twice: bool,
}

struct Respondent {
    id: i64,
    segment: usize,
    wave1: Option<Answers>,
    wave2: Option<Answers>,
}

fn generate(g: &mut Gen) -> Instance {
    draw(g, attempt)
}

fn attempt(g: &mut Gen) -> Attempt {
    let level = g.level();
    let (medium_on, hard) = (level != Level::Easy, level == Level::Hard);
    let scale_count = if hard { 2 } else { 1 };
    let scales: Vec<usize> = g.sample(&(0..SCALES.len()).collect::<Vec<_>>(), scale_count);
    let per_scale = level.pick(4, 6, 5);
    let reversed = level.pick(1, 2, 2);
    let mut items = Vec::new();
    let mut column = 0;
    for (s, &scale) in scales.iter().enumerate() {
        let stems = g.sample(SCALES[scale].1, per_scale);
        let reverse: Vec<usize> = g.sample(&(0..per_scale).collect::<Vec<_>>(), reversed);
        for (i, stem) in stems.iter().enumerate() {
            column += 1;
            items.push(Item {
                scale: s,
                wave1: format!("Q{column}"),
                wave2: format!("{}_{stem}", &SCALES[scale].0[..3]),
                reverse: reverse.contains(&i),
            });
        }
    }
    // The codebook lists the items in an order of its own, and wave 2 its columns too.
    let mut wave2_order: Vec<usize> = (0..items.len()).collect();
    g.shuffle(&mut wave2_order);
    let segment_count = level.pick(2, 3, 4);
    let segments: Vec<&str> = g.sample(SEGMENTS, segment_count);
    // Each segment's mean shift between the waves.
    let shifts: Vec<f64> = (0..segment_count).map(|_| g.float(-0.6, 0.6)).collect();
    let count = level.pick(g.int(50, 80), g.int(150, 250), g.int(350, 550));
    let mut respondents = Vec::new();
    let mut id = g.int(1, 50);
    for _ in 0..count {
        id += g.int(1, 4);
        let segment = g.index(segment_count);
        let first = g.normal(3.1, 0.7);
        let second = first + shifts[segment] + g.normal(0.0, 0.5);
        // One in five drops out after wave 1; one in ten joins at wave 2.
        let presence = g.float(0.0, 1.0);
        let (in1, in2) = (presence >= 0.1, !(0.1..0.3).contains(&presence));
        // A wave's answers around the respondent's level of agreement, written reversed for
        // a reverse-coded item.
        let wave = |g: &mut Gen, present: bool, level: f64, twice_p: f64| {
            present.then(|| {
                let raw: Vec<i64> = items
                    .iter()
                    .map(|item| {
                        let agreement = (level + g.normal(0.0, 0.8)).round().clamp(1.0, 5.0) as i64;
                        if item.reverse {
                            6 - agreement
                        } else {
                            agreement
                        }
                    })
                    .collect();
                Answers {
                    dirty: raw.iter().map(|_| hard && g.chance(0.15)).collect(),
                    raw,
                    twice: g.chance(twice_p),
                }
            })
        };
        let wave1 = wave(g, in1, first, if hard { 0.06 } else { 0.0 });
        let wave2 = wave(g, in2, second, if medium_on { 0.07 } else { 0.0 });
        respondents.push(Respondent {
            id,
            segment,
            wave1,
            wave2,
        });
    }

    let scale = g.index(scale_count);
    let scale_items: Vec<usize> = (0..items.len())
        .filter(|&i| items[i].scale == scale)
        .collect();
    // A respondent's score in a wave under a skipped step (`None` when no item is read).
    let score = |answers: &Answers, text: bool, skip: Skip| -> Option<f64> {
        let values: Vec<f64> = scale_items
            .iter()
            .filter(|&&i| !(text && skip == Skip::Text && answers.dirty[i]))
            .map(|&i| {
                let raw = answers.raw[i];
                let coded = if items[i].reverse && skip != Skip::Reverse {
                    6 - raw
                } else {
                    raw
                };
                coded as f64
            })
            .collect();
        (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
    };
    // A segment's mean change under a skipped step.
    let mean_change = |segment: usize, skip: Skip| -> f64 {
        let weight = |a: &Answers| {
            if a.twice && skip == Skip::Duplicates {
                2.0
            } else {
                1.0
            }
        };
        let mut sums = [(0.0, 0.0); 3];
        for r in respondents.iter().filter(|r| r.segment == segment) {
            let one = r
                .wave1
                .as_ref()
                .and_then(|a| Some((score(a, true, skip)?, weight(a))));
            let two = r
                .wave2
                .as_ref()
                .and_then(|a| Some((score(a, false, skip)?, weight(a))));
            if let Some((s, w)) = one {
                sums[1].0 += s * w;
                sums[1].1 += w;
            }
            if let Some((s, w)) = two {
                sums[2].0 += s * w;
                sums[2].1 += w;
            }
            if let (Some((s1, w1)), Some((s2, w2))) = (one, two) {
                sums[0].0 += (s2 - s1) * w1 * w2;
                sums[0].1 += w1 * w2;
            }
        }
        if skip == Skip::Panel {
            sums[2].0 / sums[2].1 - sums[1].0 / sums[1].1
        } else if skip == Skip::Ids {
            f64::NAN
        } else {
            sums[0].0 / sums[0].1
        }
    };
    let shape = g.index(level.pick(2, 3, 3));
    let pair = g.sample(&(0..segment_count).collect::<Vec<_>>(), 2);
    let answer = |skip: Skip| -> f64 {
        match shape {
            0 => mean_change(pair[0], skip),
            1 => (0..segment_count)
                .map(|s| mean_change(s, skip))
                .fold(f64::NAN, f64::max),
            _ => mean_change(pair[0], skip) - mean_change(pair[1], skip),
        }
    };
    let value = answer(Skip::None);
    let panel = respondents
        .iter()
        .filter(|r| r.segment == pair[0] && r.wave1.is_some() && r.wave2.is_some())
        .count();
    let mut sound = value.is_finite() && clear_of_edge(value) && panel >= 5;
    for &skip in skips(level) {
        let careless = answer(skip);
        sound &= !careless.is_finite() || (careless - value).abs() > 0.02;
    }

    let scale_name = SCALES[scales[scale]].0;
    let what = match shape {
        0 => format!(
            "the mean change of the {scale_name} score from wave 1 to wave 2 among the \
             respondents of segment {} who took part in both waves",
            segments[pair[0]]
        ),
        1 => format!(
            "the largest mean change of the {scale_name} score from wave 1 to wave 2 of any \
             segment, over the respondents who took part in both waves"
        ),
        _ => format!(
            "how much larger the mean change of the {scale_name} score from wave 1 to wave 2 \
             is in segment {} than in segment {} (negative if smaller), over the respondents \
             who took part in both waves",
            segments[pair[0]], segments[pair[1]]
        ),
    };
    let intro = *g.pick(&[
        "Your home directory holds two waves of a staff survey.",
        "A staff survey was run twice; both waves are in your home directory.",
        "The files in your home directory are two waves of an employee survey and its codebook.",
        "In your home directory are the results of a survey's first and second waves.",
    ]);
    let files = "codebook.csv lists each item: scale, item, wave1_column, wave2_column and \
                 reverse_coded (yes or no). wave1.csv has respondent_id (such as R-0012), \
                 segment, and the answers as text: Strongly disagree, Disagree, Neutral, Agree \
                 or Strongly agree, for 1 to 5. wave2.csv has resp (the same respondent's \
                 number, such as 12), group (the segment) and the answers as numbers 1 to 5.";
    let scoring = *g.pick(&[
        "A respondent's scale score in a wave is the mean of the scale's items, a \
         reverse-coded item counting as 6 minus its answer.",
        "Score a scale as the mean of its items' answers, taking 6 minus the answer for a \
         reverse-coded item.",
    ]);
    let mut rules = String::from(
        " A change is the wave-2 score minus the wave-1 score of the same respondent; a mean \
         change is the mean of those changes.",
    );
    if medium_on {
        rules.push_str(
            " Some respondents submitted a wave twice: count each respondent once per wave.",
        );
    }
    if hard {
        rules.push_str(" A text answer may be in any case and padded with spaces.");
    }
    let question = wording::question(g, &what);
    let precision = wording::precision(g, 2);
    let prompt = format!("{intro} {files} {scoring}{rules} {question} {precision}");

    let mut codebook = String::from("scale,item,wave1_column,wave2_column,reverse_coded\n");
    let mut listed: Vec<usize> = (0..items.len()).collect();
    g.shuffle(&mut listed);
    for &i in &listed {
        let item = &items[i];
        let stem = item.wave2.split_once('_').unwrap().1;
        codebook.push_str(&format!(
            "{},{stem},{},{},{}\n",
            SCALES[scales[item.scale]].0,
            item.wave1,
            item.wave2,
            if item.reverse { "yes" } else { "no" }
        ));
    }
    let mut wave1 = String::from("respondent_id,segment");
    for item in &items {
        wave1.push_str(&format!(",{}", item.wave1));
    }
    wave1.push('\n');
    let mut wave2 = String::from("resp,group");
    for &i in &wave2_order {
        wave2.push_str(&format!(",{}", items[i].wave2));
    }
    wave2.push('\n');
    let mut rows1 = Vec::new();
    let mut rows2 = Vec::new();
    for r in &respondents {
        if let Some(a) = &r.wave1 {
            let mut row = format!("R-{:04},{}", r.id, segments[r.segment]);
            for (i, &raw) in a.raw.iter().enumerate() {
                let label = LABELS[(raw - 1) as usize];
                let text = if a.dirty[i] {
                    match g.index(4) {
                        0 => label.to_lowercase(),
                        1 => label.to_uppercase(),
                        2 => format!(" {label}"),
                        _ => format!("{} ", label.to_lowercase()),
                    }
                } else {
                    label.to_owned()
                };
                row.push(',');
                row.push_str(&text);
            }
            if a.twice {
                rows1.push(row.clone());
            }
            rows1.push(row);
        }
        if let Some(a) = &r.wave2 {
            let mut row = format!("{},{}", r.id, segments[r.segment]);
            for &i in &wave2_order {
                row.push_str(&format!(",{}", a.raw[i]));
            }
            if a.twice {
                rows2.push(row.clone());
            }
            rows2.push(row);
        }
    }
    // Wave 2 came back in the order people answered it.
    g.shuffle(&mut rows2);
    for (text, rows) in [(&mut wave1, rows1), (&mut wave2, rows2)] {
        for row in rows {
            text.push_str(&row);
            text.push('\n');
        }
    }
    let instance = Instance::new(
        prompt,
        Grader::Numeric {
            value,
            rel_tol: 0.0,
            abs_tol: half_unit(2),
        },
    )
    .file("codebook.csv", codebook)
    .file("wave1.csv", wave1)
    .file("wave2.csv", wave2)
    .secret(format!("{value:.2}"));
    Attempt::new(instance, sound)
}

/// Whether `value` is clear of a rounding edge at 2 decimals.
fn clear_of_edge(value: f64) -> bool {
    ((value * 100.0).abs().fract() - 0.5).abs() > 0.02
}
