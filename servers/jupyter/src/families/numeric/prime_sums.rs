//! `prime-sums`: how many primes (or twin-prime pairs, or primes ending in a given digit) lie
//! in a generated range up to a few million, or what they sum to.
//!
//! The range is at most a quarter of a million numbers wide, so a segmented sieve over it
//! (with the primes up to its square root) computes the answer in a moment.
//!
//! Levels: easy ranges lie below five million, where a sieve from 0 does; medium ones start
//! between ten million and two hundred million; hard ones between ten billion and a
//! trillion, where a sieve from 0 cannot be held in memory and only sieving the range itself
//! (or testing each number) gets there.

use crate::families::{Family, FamilySplit, Gen, Instance, Level};
use crate::tasks::{Grader, TaskKind};

pub(super) const FAMILY: Family = Family {
    name: "prime-sums",
    kind: TaskKind::Numeric,
    split: FamilySplit::TrainAndTest,
    levelled: true,
    about: "number theory: count or sum the primes (or twin primes) in a range",
    generate,
};

fn generate(g: &mut Gen) -> Instance {
    super::unrevealed(g, draw)
}

fn draw(g: &mut Gen) -> Option<Instance> {
    let (low, width) = match g.level() {
        Level::Easy if g.chance(0.2) => (g.int(2, 1000), g.int(2_000, 250_000)),
        Level::Easy => (g.int(1000, 5_000_000), g.int(2_000, 250_000)),
        Level::Medium => (g.int(10_000_000, 200_000_000), g.int(2_000, 250_000)),
        // Narrower, so that a sum of primes near 10^12 stays an integer a float holds exactly.
        Level::Hard => (
            g.int(10_000_000_000, 1_000_000_000_000),
            g.int(2_000, 100_000),
        ),
    };
    let (low, high) = (low as u64, (low + width) as u64);
    let primes = primes_between(low, high);
    let range = format!("between {low} and {high} (both inclusive)");
    let (question, answer): (String, u64) = match g.index(4) {
        0 => (
            format!("How many prime numbers are there {range}?"),
            primes.len() as u64,
        ),
        1 => (
            format!("What is the sum of all prime numbers {range}?"),
            primes.iter().sum(),
        ),
        2 => {
            let twins = primes.windows(2).filter(|w| w[1] == w[0] + 2).count();
            (
                format!(
                    "How many twin-prime pairs (p, p + 2), with both p and p + 2 prime, lie \
                     {range}? Both members of a pair must be in the range."
                ),
                twins as u64,
            )
        }
        _ => {
            let digit = *g.pick(&[1u64, 3, 7, 9]);
            let count = primes.iter().filter(|p| *p % 10 == digit).count();
            (
                format!("How many prime numbers {range} have {digit} as their last decimal digit?"),
                count as u64,
            )
        }
    };
    Some(
        Instance::new(
            format!(
                "{question} {}",
                mcpgym_env::generate::wording::precision(g, 0)
            ),
            Grader::Numeric {
                value: answer as f64,
                rel_tol: 0.0,
                abs_tol: 0.0,
            },
        )
        .secret(answer.to_string()),
    )
}

/// The primes in `low..=high`, in order (segmented sieve of Eratosthenes over the odd
/// numbers; plain loops, since generators run unoptimised in tests).
fn primes_between(low: u64, high: u64) -> Vec<u64> {
    let root = (high as f64).sqrt() as u64 + 1;
    let mut small = vec![true; root as usize + 1];
    let mut base = Vec::new();
    let mut i = 3;
    while i <= root {
        if small[i as usize] {
            base.push(i);
            let mut j = i * i;
            while j <= root {
                small[j as usize] = false;
                j += 2 * i;
            }
        }
        i += 2;
    }
    // Index k stands for the odd number `first + 2k`.
    let first = low.max(3) | 1;
    let mut primes = Vec::new();
    if low <= 2 && high >= 2 {
        primes.push(2);
    }
    if first > high {
        return primes;
    }
    let len = ((high - first) / 2 + 1) as usize;
    let mut odd = vec![true; len];
    for p in base {
        // The first odd multiple of p that is at least first and at least p².
        let mut j = (p * p).max(first.div_ceil(p) * p);
        if j.is_multiple_of(2) {
            j += p;
        }
        let mut k = ((j - first) / 2) as usize;
        while k < len {
            odd[k] = false;
            k += p as usize;
        }
    }
    let mut k = 0;
    while k < len {
        if odd[k] {
            primes.push(first + 2 * k as u64);
        }
        k += 1;
    }
    primes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sieve_finds_the_primes() {
        assert_eq!(primes_between(1, 30), [2, 3, 5, 7, 11, 13, 17, 19, 23, 29]);
        assert_eq!(primes_between(90, 110), [97, 101, 103, 107, 109]);
        assert_eq!(primes_between(2, 1_000_000).len(), 78_498);
        assert_eq!(primes_between(2, 2), [2]);
        assert_eq!(primes_between(3, 4), [3]);
        assert_eq!(primes_between(1_000_000, 1_000_100).len(), 6);
    }
}
