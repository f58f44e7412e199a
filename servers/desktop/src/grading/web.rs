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

/// Chromium's bookmarks file, relative to the home folder (the profile the browser is
/// started with, `~/.config/chromium`, and its default profile folder).
pub(super) const BOOKMARKS: &str = ".config/chromium/Default/Bookmarks";

/// Whether Chromium's profile holds a bookmark of `url` (in any folder). Chromium saves the
/// file a few seconds after a change, and on exit.
pub(super) async fn bookmark(home: &Path, url: &str) -> Result<String, String> {
    let text = match super::home::locate(home, BOOKMARKS).await? {
        super::home::Located::Absent => {
            return Err("the browser has saved no bookmarks".to_owned());
        }
        super::home::Located::Present(_) => super::home::read_text(home, BOOKMARKS).await?,
    };
    let json: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| format!("the browser's bookmarks file is not JSON: {e}"))?;
    let mut found = Vec::new();
    if let Some(roots) = json.get("roots").and_then(serde_json::Value::as_object) {
        for root in roots.values() {
            collect_urls(root, 0, &mut found);
        }
    }
    if found.iter().any(|u| u == url) {
        Ok(format!("{url} is bookmarked"))
    } else {
        Err(format!("no bookmark of {url}; bookmarked: {found:?}"))
    }
}

/// The URLs of a bookmark node and its children (folders nest; depth is bounded).
fn collect_urls(node: &serde_json::Value, depth: usize, found: &mut Vec<String>) {
    if depth > 64 || found.len() > 10_000 {
        return;
    }
    if let Some(url) = node.get("url").and_then(serde_json::Value::as_str) {
        found.push(url.to_owned());
    }
    if let Some(children) = node.get("children").and_then(serde_json::Value::as_array) {
        for child in children {
            collect_urls(child, depth + 1, found);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn bookmarks_are_found_in_any_folder() {
        let home = std::env::temp_dir().join(format!("mcpgym-bookmarks.{}", std::process::id()));
        std::fs::create_dir_all(&home).unwrap();
        let url = "http://127.0.0.1:8000/guide.html";
        assert!(bookmark(&home, url).await.is_err());
        let file = home.join(BOOKMARKS);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        let saved = serde_json::json!({
            "checksum": "0",
            "roots": {
                "bookmark_bar": {"children": [], "name": "Bookmarks bar", "type": "folder"},
                "other": {"children": [{"children": [
                    {"name": "Guide", "type": "url", "url": url}
                ], "name": "Work", "type": "folder"}], "name": "Other", "type": "folder"},
                "synced": {"children": [], "name": "Mobile", "type": "folder"}
            },
            "version": 1
        });
        std::fs::write(&file, saved.to_string()).unwrap();
        assert!(bookmark(&home, url).await.is_ok());
        let other = bookmark(&home, "http://127.0.0.1:8000/other.html").await;
        assert!(other.unwrap_err().contains("guide.html"));
        std::fs::write(&file, "not json").unwrap();
        assert!(bookmark(&home, url).await.is_err());
        std::fs::remove_dir_all(&home).unwrap();
    }
}
