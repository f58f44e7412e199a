//! Which replica owns an episode, when several serve behind one proxy.
//!
//! An episode lives in the memory of the process that started it, so every later request must
//! reach that process. A replica started with a name ([`ReplicaName`], `--replica`) puts it in
//! front of every id it issues: episodes are `<name>-<32 hex>`, legacy MCP and ORS sessions
//! `<name>-<uuid>`. A proxy routes on the id alone (the path `/episodes/{id}/…`, the
//! [`EPISODE_HEADER`], `Mcp-Session-Id`, `X-Session-ID`); `manifests/nginx/` holds its rules.
//! A replica without a name issues the bare ids of a single server.

use std::fmt;
use std::sync::Arc;

/// The header that names a request's episode, as `_meta["mcpgym/episode"]` does inside a
/// JSON-RPC body, where a proxy cannot read it.
pub const EPISODE_HEADER: &str = "mcpgym-episode";

/// The longest replica name: a DNS label, as a StatefulSet pod's name is.
pub const MAX_NAME: usize = 63;

/// A replica's name: a DNS label (lowercase letters, digits and `-`, neither first nor last).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ReplicaName(Arc<str>);

/// Why a replica name was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid replica name {0:?}: use 1 to 63 lowercase letters, digits and '-', starting and ending with a letter or digit (e.g. mcpgym-0)"
)]
pub struct InvalidName(pub String);

impl ReplicaName {
    /// The name, if `name` is a DNS label.
    pub fn new(name: &str) -> Result<Self, InvalidName> {
        let label = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
        let valid = (1..=MAX_NAME).contains(&name.len())
            && name.bytes().all(|b| label(b) || b == b'-')
            && name.bytes().next().is_some_and(label)
            && name.bytes().last().is_some_and(label);
        if valid {
            Ok(Self(name.into()))
        } else {
            Err(InvalidName(name.to_owned()))
        }
    }

    /// The name as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ReplicaName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::str::FromStr for ReplicaName {
    type Err = InvalidName;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Self::new(name)
    }
}

/// `id` with the replica's name in front, when there is one.
pub fn qualify(replica: Option<&ReplicaName>, id: &str) -> String {
    match replica {
        Some(name) => format!("{name}-{id}"),
        None => id.to_owned(),
    }
}

/// The replica an episode id (`<name>-<32 hex>`) names; `None` for a bare id.
pub fn owner_of_episode(id: &str) -> Option<&str> {
    owner_before(id, 32, |tail| tail.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The replica a session id (`<name>-<uuid>`) names; `None` for a bare UUID.
pub fn owner_of_session(id: &str) -> Option<&str> {
    owner_before(id, uuid::fmt::Hyphenated::LENGTH, |tail| {
        uuid::Uuid::try_parse(tail).is_ok()
    })
}

/// The name before the last `tail_len` bytes of `id` and the `-` in front of them, when those
/// bytes pass `tail_ok` and the name is a replica name.
fn owner_before(id: &str, tail_len: usize, tail_ok: impl Fn(&str) -> bool) -> Option<&str> {
    let split = id.len().checked_sub(tail_len + 1)?;
    if !id.is_char_boundary(split) || id.as_bytes()[split] != b'-' {
        return None;
    }
    let (name, tail) = (&id[..split], &id[split + 1..]);
    (tail_ok(tail) && ReplicaName::new(name).is_ok()).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_dns_labels() {
        for good in ["mcpgym-0", "a", "r2", "mcpgym-wordle-12", &"x".repeat(63)] {
            assert_eq!(ReplicaName::new(good).unwrap().as_str(), good);
        }
        for bad in [
            "",
            "-a",
            "a-",
            "A",
            "mcpgym_0",
            "a.b",
            "a/b",
            "ü",
            &"x".repeat(64),
        ] {
            let error = ReplicaName::new(bad).unwrap_err();
            assert!(error.to_string().contains("invalid replica name"), "{bad}");
        }
    }

    #[test]
    fn the_owner_is_read_back_from_the_ids_it_issued() {
        let name = ReplicaName::new("mcpgym-2").unwrap();
        let episode = qualify(Some(&name), &uuid::Uuid::new_v4().simple().to_string());
        assert_eq!(owner_of_episode(&episode), Some("mcpgym-2"));
        assert_eq!(owner_of_session(&episode), None);
        let session = qualify(Some(&name), &uuid::Uuid::new_v4().to_string());
        assert_eq!(owner_of_session(&session), Some("mcpgym-2"));
        assert_eq!(owner_of_episode(&session), None);
        // Bare ids of an unnamed server name no replica.
        let bare = uuid::Uuid::new_v4();
        assert_eq!(owner_of_episode(&bare.simple().to_string()), None);
        assert_eq!(owner_of_session(&bare.to_string()), None);
        assert_eq!(qualify(None, "abc"), "abc");
        // Nothing else passes for an owner.
        for id in [
            "",
            "-0123456789abcdef0123456789abcdef",
            "Bad-0123456789abcdef0123456789abcdef",
            "a-0123456789abcdef0123456789abcdeg",
            "a_0123456789abcdef0123456789abcdef",
            "é-0123456789abcdef0123456789abcdef",
        ] {
            assert_eq!(owner_of_episode(id), None, "{id}");
        }
    }
}
