//! Which episode a tool call names, the same way for every transport (the rmcp handler in
//! [`crate::mcp`] and the stateless direct path in [`crate::stateless`]): first the request's
//! `_meta["mcpgym/episode"]`, then the URL `/episodes/{id}/mcp` or, on the other MCP
//! endpoints, the `Mcpgym-Episode` header (the HTTP layer reads both into an
//! [`EpisodeRoute`]). A call that names none is the session's (or starts an episode), which
//! only the MCP handler knows about.

use std::sync::Arc;

use serde_json::Value;

use crate::META_EPISODE;

/// The episode named by the URL `/episodes/{id}/mcp`, put in the request's extensions by the
/// HTTP layer once it knows the episode exists.
#[derive(Debug, Clone)]
pub struct EpisodeRoute(pub Arc<str>);

/// Why a call's episode cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BindError {
    /// `_meta["mcpgym/episode"]` is there but not a string.
    #[error("_meta[\"{META_EPISODE}\"] must be an episode id string, not {0}")]
    NotAnId(String),
}

/// The episode a call names: `meta` is the value of its `_meta["mcpgym/episode"]` (if any),
/// `route` the episode of its URL (if any). `Ok(None)` when it names none.
pub fn named_episode(
    meta: Option<&Value>,
    route: Option<&EpisodeRoute>,
) -> Result<Option<Arc<str>>, BindError> {
    match meta {
        Some(Value::String(id)) => Ok(Some(id.as_str().into())),
        Some(other) => Err(BindError::NotAnId(other.to_string())),
        None => Ok(route.map(|route| route.0.clone())),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn route(id: &str) -> EpisodeRoute {
        EpisodeRoute(id.into())
    }

    #[test]
    fn meta_wins_over_the_url() {
        let named = named_episode(Some(&json!("from-meta")), Some(&route("from-url")));
        assert_eq!(named.unwrap().as_deref(), Some("from-meta"));
    }

    #[test]
    fn the_url_names_the_episode_when_meta_does_not() {
        assert_eq!(
            named_episode(None, Some(&route("from-url")))
                .unwrap()
                .as_deref(),
            Some("from-url")
        );
        assert_eq!(named_episode(None, None).unwrap(), None);
    }

    #[test]
    fn a_meta_value_that_is_not_a_string_is_refused_with_a_sentence() {
        for bad in [json!(7), json!(null), json!({"id": "x"}), json!(["x"])] {
            let error = named_episode(Some(&bad), Some(&route("from-url"))).unwrap_err();
            assert!(
                error.to_string().contains("must be an episode id string"),
                "{error}"
            );
        }
    }
}
