//! Flags whose value is one of an environment's named choices (reward modes, action spaces):
//! `--help` lists every choice with its description, and a wrong value is refused by clap with
//! the list, as for a `clap::ValueEnum`, while the environment crates stay free of clap.

use std::str::FromStr;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};

/// An environment's enum of named choices.
pub trait Choice: Copy + Send + Sync + FromStr + 'static {
    /// Every choice, in the order `--help` lists them.
    const ALL: &'static [Self];
    /// The choice's name on the command line.
    fn name(self) -> &'static str;
    /// One sentence on the choice.
    fn describe(self) -> &'static str;
}

/// The value parser of a flag taking one of `T`'s choices.
pub fn parser<T>() -> impl TypedValueParser<Value = T>
where
    T: Choice,
    T::Err: std::error::Error + Send + Sync + 'static,
{
    // Help lines end without a full stop, as clap writes doc comments.
    let values = T::ALL.iter().map(|choice| {
        PossibleValue::new(choice.name()).help(choice.describe().trim_end_matches('.'))
    });
    PossibleValuesParser::new(values).try_map(|name| name.parse::<T>())
}

/// Implements [`Choice`] for an environment enum with `ALL`, `as_str` and `describe`.
macro_rules! choice {
    ($type:ty) => {
        impl $crate::choices::Choice for $type {
            const ALL: &'static [Self] = &<$type>::ALL;
            fn name(self) -> &'static str {
                self.as_str()
            }
            fn describe(self) -> &'static str {
                <$type>::describe(self)
            }
        }
    };
}
pub(crate) use choice;
