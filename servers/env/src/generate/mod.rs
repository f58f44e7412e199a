//! Seeded generation of task instances: [`Gen`], the one source of randomness of a task
//! family's generator, [`words`], the lists it draws names and text from, and [`wording`], the
//! sentences its prompts draw their phrasing from.
//!
//! A family turns an instance number into a whole task; every random choice comes from a
//! [`Gen`]. A train instance's stream is seeded by the family's name and the instance number
//! alone, so the same id gives the same task on every machine. A test instance's stream also
//! mixes in the server's test secret ([`set_test_secret`]) when one is set: the public
//! generators and a test id then do not reveal the task's files or its answer, and two servers
//! with different secrets pose different test tasks under the same id.
//!
//! Instance `n`'s [`Level`] is `n % 3` (easy, medium, hard): a family that has levels makes
//! the work bigger or trickier with it (more files, more steps, more traps), never only the
//! wording.

pub mod wording;
pub mod words;

use std::ops::Range;
use std::sync::OnceLock;

use crate::TaskFamily;
use crate::rng::EpisodeRng;

/// Instance numbers of a training family's train split.
pub const TRAIN: Range<u64> = 0..900_000;
/// Instance numbers of a training family's test split (and, with [`TRAIN`], of a held-out
/// family's).
pub const TEST: Range<u64> = 900_000..1_000_000;

/// Which splits a family serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FamilySplit {
    /// Train instances from [`TRAIN`], test instances from [`TEST`].
    TrainAndTest,
    /// Held out: every instance is a test instance; training never sees the family.
    TestOnly,
}

impl FamilySplit {
    /// The instance ranges of family `name` with this split, for a [`crate::TaskSet`].
    pub fn ranges(self, name: &str) -> TaskFamily {
        match self {
            FamilySplit::TrainAndTest => TaskFamily::new(name, TRAIN, TEST),
            FamilySplit::TestOnly => TaskFamily::new(name, 0..0, TRAIN.start..TEST.end),
        }
    }
}

/// How much work an instance asks for: instance `n` has level `n % 3`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// The smallest version of the family's work.
    Easy,
    /// The family's usual size.
    Medium,
    /// More data, more steps and more traps.
    Hard,
}

impl Level {
    /// Every level, easiest first.
    pub const ALL: [Level; 3] = [Level::Easy, Level::Medium, Level::Hard];

    /// The level of instance `n`.
    pub fn of(n: u64) -> Self {
        Self::ALL[(n % 3) as usize]
    }

    /// Its name: `easy`, `medium` or `hard`.
    pub fn name(self) -> &'static str {
        match self {
            Level::Easy => "easy",
            Level::Medium => "medium",
            Level::Hard => "hard",
        }
    }

    /// The level named `name`.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|level| level.name() == name)
    }

    /// One of three values, by level.
    pub fn pick<T>(self, easy: T, medium: T, hard: T) -> T {
        match self {
            Level::Easy => easy,
            Level::Medium => medium,
            Level::Hard => hard,
        }
    }
}

impl std::str::FromStr for Level {
    type Err = String;
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Self::parse(name)
            .ok_or_else(|| format!("unknown level {name:?}: use \"easy\", \"medium\" or \"hard\""))
    }
}

impl std::fmt::Display for Level {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The secret test instances are derived with, once set.
static TEST_SECRET: OnceLock<[u8; 32]> = OnceLock::new();

/// Sets the secret every test instance generated in this process is derived with (a server
/// calls it once, at start, with the bytes of its secret file). Returns `false`, changing
/// nothing, when a different secret was set already.
pub fn set_test_secret(secret: [u8; 32]) -> bool {
    *TEST_SECRET.get_or_init(|| secret) == secret
}

/// A short public fingerprint of the test secret (`public` when none is set), recorded so that
/// a reader of a test episode can tell whether it holds the same secret.
pub fn test_secret_fingerprint() -> String {
    match TEST_SECRET.get() {
        None => "public".to_owned(),
        Some(secret) => format!("{:016x}", fnv1a(0xcbf2_9ce4_8422_2325, secret)),
    }
}

fn fnv1a(mut hash: u64, bytes: &[u8]) -> u64 {
    for byte in bytes {
        hash = (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// A seeded stream of random choices for one instance of one family: the same family name
/// and instance number give the same choices on every machine and every version of Rust.
#[derive(Debug, Clone)]
pub struct Gen {
    rng: EpisodeRng,
    level: Level,
}

impl Gen {
    /// The public stream of instance `n` of `family` (what a train instance uses).
    pub fn new(family: &str, n: u64) -> Self {
        // FNV-1a of the name, so two families' instance 7 differ.
        let hash = fnv1a(0xcbf2_9ce4_8422_2325, family.as_bytes());
        let mut mix = EpisodeRng::new(hash ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        Self {
            rng: EpisodeRng::new(mix.next_u64()),
            level: Level::of(n),
        }
    }

    /// The stream of instance `n` of `family` in `split`: for a test instance, mixed with the
    /// test secret when one is set ([`set_test_secret`]), else the public stream.
    pub fn for_instance(family: &str, n: u64, split: crate::Split) -> Self {
        let mut public = Self::new(family, n);
        match (split, TEST_SECRET.get()) {
            (crate::Split::Test, Some(secret)) => {
                let keyed = fnv1a(fnv1a(public.rng.next_u64(), secret), family.as_bytes());
                Self {
                    rng: EpisodeRng::new(EpisodeRng::new(keyed ^ n).next_u64()),
                    level: public.level,
                }
            }
            _ => Self::new(family, n),
        }
    }

    /// The instance's level.
    pub fn level(&self) -> Level {
        self.level
    }

    /// 64 random bits.
    pub fn bits(&mut self) -> u64 {
        self.rng.next_u64()
    }

    /// An integer in `low..=high`.
    pub fn int(&mut self, low: i64, high: i64) -> i64 {
        assert!(low <= high, "int({low}, {high})");
        let span = (high - low) as u64 + 1;
        low + self.rng.below_u64(span) as i64
    }

    /// An index in `0..len`.
    pub fn index(&mut self, len: usize) -> usize {
        self.rng.below(len)
    }

    /// A float in `[low, high)`.
    pub fn float(&mut self, low: f64, high: f64) -> f64 {
        let unit = (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        low + (high - low) * unit
    }

    /// A float in `[low, high)` rounded to `decimals` places (as it will be written).
    pub fn money(&mut self, low: f64, high: f64, decimals: i32) -> f64 {
        round(self.float(low, high), decimals)
    }

    /// `true` with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.float(0.0, 1.0) < p
    }

    /// A normally distributed float (Box–Muller).
    pub fn normal(&mut self, mean: f64, sd: f64) -> f64 {
        let u1 = self.float(f64::MIN_POSITIVE, 1.0);
        let u2 = self.float(0.0, 1.0);
        mean + sd * (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    /// One element of a non-empty slice.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.index(items.len())]
    }

    /// `k` distinct elements of `items` (`k ≤ len`), in random order.
    pub fn sample<T: Clone>(&mut self, items: &[T], k: usize) -> Vec<T> {
        let mut pool: Vec<T> = items.to_vec();
        self.shuffle(&mut pool);
        pool.truncate(k);
        pool
    }

    /// Between `min` and `max` (inclusive) distinct elements of `items`, in random order.
    pub fn subset<T: Clone>(&mut self, items: &[T], min: usize, max: usize) -> Vec<T> {
        let k = self.int(min as i64, max.min(items.len()) as i64) as usize;
        self.sample(items, k)
    }

    /// Shuffles in place (Fisher–Yates).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.index(i + 1);
            items.swap(i, j);
        }
    }

    /// A lowercase word of `len` random letters.
    pub fn letters(&mut self, len: usize) -> String {
        (0..len)
            .map(|_| char::from(b'a' + self.index(26) as u8))
            .collect()
    }

    /// A person's first name.
    pub fn first_name(&mut self) -> &'static str {
        words::FIRST_NAMES[self.index(words::FIRST_NAMES.len())]
    }

    /// A family name.
    pub fn last_name(&mut self) -> &'static str {
        words::LAST_NAMES[self.index(words::LAST_NAMES.len())]
    }

    /// A city.
    pub fn city(&mut self) -> &'static str {
        words::CITIES[self.index(words::CITIES.len())]
    }

    /// An ordinary English word.
    pub fn word(&mut self) -> &'static str {
        words::WORDS[self.index(words::WORDS.len())]
    }

    /// A date `YYYY-MM-DD` in 2020–2025, with its day number since 2020-01-01.
    pub fn date(&mut self) -> (String, i64) {
        let day = self.int(0, 6 * 365);
        (date_of(day), day)
    }
}

/// `x` rounded half away from zero to `decimals` places.
pub fn round(x: f64, decimals: i32) -> f64 {
    let scale = 10f64.powi(decimals);
    (x * scale).round() / scale
}

/// The date `day` days after 2020-01-01, as `YYYY-MM-DD`.
pub fn date_of(day: i64) -> String {
    // Civil-from-days (proleptic Gregorian), from 1970-01-01.
    let z = day + 18_262 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_depend_on_family_and_instance_only() {
        let a: Vec<u64> = (0..4).map(|_| Gen::new("x", 1).bits()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        assert_ne!(Gen::new("x", 1).bits(), Gen::new("x", 2).bits());
        assert_ne!(Gen::new("x", 1).bits(), Gen::new("y", 1).bits());
        let mut g = Gen::new("x", 3);
        for _ in 0..1000 {
            let v = g.int(-3, 3);
            assert!((-3..=3).contains(&v));
        }
    }

    #[test]
    fn dates_are_civil() {
        assert_eq!(date_of(0), "2020-01-01");
        assert_eq!(date_of(59), "2020-02-29");
        assert_eq!(date_of(366), "2021-01-01");
    }
}
