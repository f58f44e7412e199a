//! Flags whose value is one of an environment's named choices (reward modes, action spaces):
//! `--help` lists every choice with its description, and a wrong value is refused by clap with
//! the list, as for a `clap::ValueEnum`, while the environment crates stay free of clap.

use std::str::FromStr;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use mcpgym_shared::choice::Choice;

/// The value parser of a flag taking one of `T`'s choices.
pub fn parser<T>() -> impl TypedValueParser<Value = T>
where
    T: Choice + FromStr,
    T::Err: std::error::Error + Send + Sync + 'static,
{
    // Help lines end without a full stop, as clap writes doc comments.
    let values = T::ALL.iter().map(|choice| {
        PossibleValue::new(choice.name()).help(choice.describe().trim_end_matches('.'))
    });
    PossibleValuesParser::new(values).try_map(|name| name.parse::<T>())
}
