//! Named choices (reward modes, action spaces): one declaration gives the enum, its names in
//! flags and options, a sentence per choice, parsing with a clear error, and serde and schema
//! support.
//!
//! ```
//! mcpgym_env::choices! {
//!     /// Which reward to pay.
//!     pub enum Mode: "reward mode" {
//!         /// Only the terminal reward.
//!         Sparse = "sparse",
//!         /// Also a reward per step.
//!         Shaped = "shaped",
//!     }
//! }
//! use mcpgym_env::Choice;
//!
//! assert_eq!(Mode::default(), Mode::Sparse);
//! assert_eq!("shaped".parse::<Mode>().unwrap().name(), "shaped");
//! assert_eq!(Mode::Shaped.describe(), "Also a reward per step.");
//! let wrong = "dense".parse::<Mode>().unwrap_err().to_string();
//! assert_eq!(wrong, "unknown reward mode \"dense\": expected `sparse` or `shaped`");
//! ```

/// An enum of named choices, declared with [`choices!`](crate::choices).
pub trait Choice: Copy + Send + Sync + 'static {
    /// What a choice is, in messages: `reward mode`.
    const KIND: &'static str;
    /// Every choice, in the order they are listed; the first is the default.
    const ALL: &'static [Self];
    /// The choice's name in flags and episode options.
    fn name(self) -> &'static str;
    /// One sentence on the choice (its doc comment).
    fn describe(self) -> &'static str;
}

/// A name that is not one of a [`Choice`]'s names.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {kind} {value:?}: expected {expected}")]
pub struct UnknownChoice {
    /// What was being chosen (`reward mode`).
    pub kind: &'static str,
    /// The name given.
    pub value: String,
    /// The names allowed, as a phrase: `` `sparse` or `shaped` ``.
    pub expected: String,
}

/// Finds the choice named `text`, exactly.
pub fn parse<T: Choice>(text: &str) -> Result<T, UnknownChoice> {
    T::ALL
        .iter()
        .copied()
        .find(|choice| choice.name() == text)
        .ok_or_else(|| UnknownChoice {
            kind: T::KIND,
            value: text.to_owned(),
            expected: expected::<T>(),
        })
}

/// `` `a`, `b` or `c` ``: the names of `T`'s choices, as serde lists expected variants.
fn expected<T: Choice>() -> String {
    let names: Vec<String> = T::ALL.iter().map(|c| format!("`{}`", c.name())).collect();
    match names.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// Declares an enum of named choices and implements [`Choice`], `Default` (the first choice),
/// `Display` and `FromStr` (by name), serde (as the name; an unknown name is refused as serde
/// refuses an unknown variant) and `JsonSchema` (a string enum).
///
/// Each variant's doc comment is its [`Choice::describe`] sentence (`--help` shows it).
#[macro_export]
macro_rules! choices {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident : $kind:literal {
            $( $(#[doc = $doc:literal])* $variant:ident = $text:literal ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        $vis enum $name {
            $( $(#[doc = $doc])* $variant, )+
        }

        impl $name {
            /// Every choice's name, in order.
            pub const NAMES: &'static [&'static str] = &[$($text),+];
        }

        impl $crate::choice::Choice for $name {
            const KIND: &'static str = $kind;
            const ALL: &'static [Self] = &[$(Self::$variant),+];
            fn name(self) -> &'static str {
                match self { $(Self::$variant => $text,)+ }
            }
            fn describe(self) -> &'static str {
                match self { $(Self::$variant => concat!($($doc),*).trim_ascii(),)+ }
            }
        }

        impl ::std::default::Default for $name {
            fn default() -> Self {
                <Self as $crate::choice::Choice>::ALL[0]
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str($crate::choice::Choice::name(*self))
            }
        }

        impl ::std::str::FromStr for $name {
            type Err = $crate::choice::UnknownChoice;
            fn from_str(text: &str) -> ::std::result::Result<Self, Self::Err> {
                $crate::choice::parse(text)
            }
        }

        impl $crate::__private::serde::Serialize for $name {
            fn serialize<S: $crate::__private::serde::Serializer>(
                &self,
                serializer: S,
            ) -> ::std::result::Result<S::Ok, S::Error> {
                serializer.serialize_str($crate::choice::Choice::name(*self))
            }
        }

        impl<'de> $crate::__private::serde::Deserialize<'de> for $name {
            fn deserialize<D: $crate::__private::serde::Deserializer<'de>>(
                deserializer: D,
            ) -> ::std::result::Result<Self, D::Error> {
                let text: ::std::borrow::Cow<'de, str> =
                    $crate::__private::serde::Deserialize::deserialize(deserializer)?;
                $crate::choice::parse(&text).map_err(|_| {
                    <D::Error as $crate::__private::serde::de::Error>::unknown_variant(
                        &text,
                        Self::NAMES,
                    )
                })
            }
        }

        impl $crate::__private::schemars::JsonSchema for $name {
            fn schema_name() -> ::std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }
            fn json_schema(
                _: &mut $crate::__private::schemars::SchemaGenerator,
            ) -> $crate::__private::schemars::Schema {
                $crate::__private::schemars::json_schema!({
                    "type": "string",
                    "enum": [$($text),+],
                })
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    crate::choices! {
        /// Colours.
        pub enum Colour: "colour" {
            /// Red, the default;
            /// on two lines.
            Red = "red",
            /// Green.
            Green = "green",
            /// Blue.
            Blue = "blue",
        }
    }

    #[test]
    fn names_parse_and_print() {
        for colour in Colour::ALL {
            assert_eq!(colour.name().parse::<Colour>().unwrap(), *colour);
            assert_eq!(colour.to_string(), colour.name());
        }
        assert_eq!(Colour::default(), Colour::Red);
        assert_eq!(Colour::Red.describe(), "Red, the default; on two lines.");
    }

    #[test]
    fn unknown_names_list_the_choices() {
        let error = "pink".parse::<Colour>().unwrap_err().to_string();
        assert_eq!(
            error,
            "unknown colour \"pink\": expected `red`, `green` or `blue`"
        );
        let serde_error = serde_json::from_str::<Colour>("\"Red\"")
            .unwrap_err()
            .to_string();
        assert!(
            serde_error.contains("unknown variant `Red`, expected one of `red`, `green`, `blue`"),
            "{serde_error}"
        );
        assert_eq!(serde_json::to_string(&Colour::Blue).unwrap(), "\"blue\"");
    }
}
