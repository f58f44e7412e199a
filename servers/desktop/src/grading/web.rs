//! Web graders: what the episode's page server received, and the browser's bookmarks.

use std::collections::BTreeMap;
use std::path::Path;

use crate::pages::PageRequest;

/// Whether the page server received `method path` carrying every one of `fields`.
pub(super) fn page_request(
    requests: &[PageRequest],
    method: &str,
    path: &str,
    fields: &BTreeMap<String, String>,
) -> Result<String, String> {
    let matching = |r: &&PageRequest| {
        r.method.eq_ignore_ascii_case(method)
            && r.path == path
            && fields.iter().all(|(name, value)| {
                r.fields
                    .get(name)
                    .is_some_and(|got| got.trim() == value.trim())
            })
    };
    match requests.iter().find(matching) {
        Some(_) => Ok(format!("{method} {path} was received with the fields")),
        None => {
            let seen: Vec<String> = requests
                .iter()
                .filter(|r| r.path == path)
                .map(|r| format!("{} {} {:?}", r.method, r.path, r.fields))
                .collect();
            Err(format!(
                "no {method} {path} with {fields:?}; requests to that path: {seen:?}"
            ))
        }
    }
}

/// Whether Chromium's profile holds a bookmark of `url`.
pub(super) async fn bookmark(_home: &Path, url: &str) -> Result<String, String> {
    Err(format!("bookmarks are not read yet ({url})"))
}
