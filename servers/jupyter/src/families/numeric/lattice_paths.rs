//! `lattice-paths`: counting by dynamic programming: monotone paths through a grid with
//! blocked cells (given as a text file), or the ways to pay an amount with given coins,
//! modulo a prime.
//!
//! Levels: easy grids are at most 15 cells a side with steps right and down, and amounts at
//! most 2,000 from three or four coins; medium grids run to 60 a side and may allow diagonal
//! steps, amounts to 20,000; hard grids run to 200 a side, amounts to 200,000 from up to ten
//! coins, and the largest coin may be used only a limited number of times, which the plain
//! coin-change recurrence does not count.

use crate::families::{Family, FamilySplit, Gen, Instance, Level};
use crate::tasks::{Grader, TaskKind};

pub(super) const FAMILY: Family = Family {
    name: "lattice-paths",
    kind: TaskKind::Numeric,
    split: FamilySplit::TrainAndTest,
    levelled: true,
    about: "counting: paths through a grid with blocked cells, or coin change, modulo a prime",
    generate,
};

const PRIMES: &[u64] = &[1_000_000_007, 998_244_353, 1_000_000_009];

fn generate(g: &mut Gen) -> Instance {
    super::unrevealed(g, draw)
}

fn draw(g: &mut Gen) -> Option<Instance> {
    let modulus = *g.pick(PRIMES);
    let (prompt, file, count) = if g.chance(0.7) {
        grid(g, modulus)?
    } else {
        coins(g, modulus)?
    };
    let mut instance = Instance::new(
        format!("{prompt} {}", modulo(g, modulus)),
        Grader::Numeric {
            value: count as f64,
            rel_tol: 0.0,
            abs_tol: 0.0,
        },
    );
    if let Some((name, text)) = file {
        instance = instance.file(name, text.into_bytes());
    }
    Some(instance.secret(count.to_string()))
}

/// How the count is to be given, in one of six sentences that all name the modulus.
fn modulo(g: &mut Gen, modulus: u64) -> String {
    match g.index(6) {
        0 => format!("Give the count modulo {modulus}, as an integer."),
        1 => format!("Answer with the count modulo {modulus}."),
        2 => format!("The count is large: reply with it modulo {modulus}."),
        3 => format!("Report the remainder of the count modulo {modulus}."),
        4 => format!("Reduce the count modulo {modulus} and give that integer."),
        _ => format!("Only the count modulo {modulus} is wanted, as a plain integer."),
    }
}

type Drawn = (String, Option<(&'static str, String)>, u64);

fn grid(g: &mut Gen, modulus: u64) -> Option<Drawn> {
    let (small, large) = g.level().pick((6, 15), (15, 60), (60, 200));
    let rows = g.int(small, large) as usize;
    let cols = g.int(small, large) as usize;
    let density = g.float(0.05, 0.3);
    let (open, wall) = *g.pick(&[('.', '#'), ('.', 'X'), ('0', '1')]);
    let mut blocked = vec![vec![false; cols]; rows];
    for row in blocked.iter_mut() {
        for cell in row.iter_mut() {
            *cell = g.chance(density);
        }
    }
    blocked[0][0] = false;
    blocked[rows - 1][cols - 1] = false;
    let diagonal = g.chance(g.level().pick(0.0, 0.3, 0.5));
    let mut ways = vec![vec![0u64; cols]; rows];
    for r in 0..rows {
        for c in 0..cols {
            if blocked[r][c] {
                continue;
            }
            ways[r][c] = if r == 0 && c == 0 {
                1
            } else {
                let up = if r > 0 { ways[r - 1][c] } else { 0 };
                let left = if c > 0 { ways[r][c - 1] } else { 0 };
                let corner = if diagonal && r > 0 && c > 0 {
                    ways[r - 1][c - 1]
                } else {
                    0
                };
                (up + left + corner) % modulus
            };
        }
    }
    let count = ways[rows - 1][cols - 1];
    if count == 0 {
        return None;
    }
    let file = *g.pick(&["grid.txt", "maze.txt", "map.txt", "board.txt"]);
    let text: String = blocked
        .iter()
        .map(|row| {
            let mut line: String = row.iter().map(|b| if *b { wall } else { open }).collect();
            line.push('\n');
            line
        })
        .collect();
    let moves = if diagonal {
        "one cell right, one cell down, or one cell diagonally down-right"
    } else {
        "one cell right or one cell down"
    };
    let prompt = format!(
        "The file {file} in your home directory is a grid of {rows} rows and {cols} columns, one \
         row per line: '{open}' is an open cell, '{wall}' a blocked one. How many paths lead from \
         the top-left cell to the bottom-right cell if each step moves {moves} and a path never \
         enters a blocked cell?"
    );
    Some((prompt, Some((file, text)), count))
}

fn coins(g: &mut Gen, modulus: u64) -> Option<Drawn> {
    let level = g.level();
    let kinds = level.pick(g.int(3, 4), g.int(4, 7), g.int(6, 10)) as usize;
    let mut values: Vec<u64> = g.sample(&(1..=60).collect::<Vec<u64>>(), kinds);
    values.sort_unstable();
    let amount = level.pick(
        g.int(200, 2_000),
        g.int(2_000, 20_000),
        g.int(20_000, 200_000),
    );
    let amount = amount as usize;
    let largest = *values.last().expect("coins");
    // Hard: the largest coin at most `limit` times.
    let limit = (level == Level::Hard).then(|| g.int(1, 12) as usize);
    let free = if limit.is_some() {
        &values[..values.len() - 1]
    } else {
        &values[..]
    };
    let mut ways = vec![0u64; amount + 1];
    ways[0] = 1;
    for &coin in free {
        for total in coin as usize..=amount {
            ways[total] = (ways[total] + ways[total - coin as usize]) % modulus;
        }
    }
    let count = match limit {
        None => ways[amount],
        Some(limit) => (0..=limit)
            .filter_map(|k| amount.checked_sub(k * largest as usize))
            .fold(0, |sum, rest| (sum + ways[rest]) % modulus),
    };
    if count == 0 {
        return None;
    }
    let list: Vec<String> = values.iter().map(u64::to_string).collect();
    let supply = match limit {
        None => "as many of each as needed".to_owned(),
        Some(limit) => {
            format!("as many of each as needed, except at most {limit} coins of {largest}")
        }
    };
    let prompt = format!(
        "Coins come in the denominations {} ({supply}). In how many ways can an amount of \
         exactly {amount} be paid? Two ways differ when some denomination is used a different \
         number of times (the order of the coins does not matter).",
        list.join(", ")
    );
    Some((prompt, None, count))
}
