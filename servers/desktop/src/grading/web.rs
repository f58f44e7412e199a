//! Web graders: what the episode's page server received, and the browser's bookmarks.

use std::collections::BTreeMap;
use std::path::Path;

use crate::pages::PageRequest;

/// Which of the requests to a path a [`super::Check::PageRequest`] judges.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Requests {
    /// One of them matches.
    #[default]
    Any,
    /// The last one matches.
    Last,
    /// There is exactly one, and it matches.
    Only,
}

impl Requests {
    /// Its name in a task file.
    pub fn name(self) -> &'static str {
        match self {
            Requests::Any => "any",
            Requests::Last => "the last",
            Requests::Only => "the only",
        }
    }
}

/// Whether the page server received `method path` carrying every one of `fields` (and, with
/// `exact_fields`, no other field with a value), judged over `which` of its requests there.
pub(super) fn page_request(
    requests: &[PageRequest],
    method: &str,
    path: &str,
    fields: &BTreeMap<String, String>,
    which: Requests,
    exact_fields: bool,
) -> Result<String, String> {
    let matching = |r: &PageRequest| {
        fields.iter().all(|(name, value)| {
            r.fields
                .get(name)
                .is_some_and(|got| got.trim() == value.trim())
        }) && (!exact_fields
            || r.fields
                .iter()
                .all(|(name, value)| value.trim().is_empty() || fields.contains_key(name)))
    };
    let to_path: Vec<&PageRequest> = requests
        .iter()
        .filter(|r| r.method.eq_ignore_ascii_case(method) && r.path == path)
        .collect();
    let seen = || -> Vec<String> {
        to_path
            .iter()
            .map(|r| format!("{} {} {:?}", r.method, r.path, r.fields))
            .collect()
    };
    let judged: Vec<&PageRequest> = match which {
        Requests::Any => to_path.clone(),
        Requests::Last => to_path.last().copied().into_iter().collect(),
        Requests::Only if to_path.len() > 1 => {
            return Err(format!(
                "{method} {path} was received {} times, and only one is allowed: {:?}",
                to_path.len(),
                seen()
            ));
        }
        Requests::Only => to_path.clone(),
    };
    match judged.into_iter().find(|r| matching(r)) {
        Some(_) => Ok(format!("{method} {path} was received with the fields")),
        None => Err(format!(
            "no {method} {path} with {fields:?}{}; requests to that path: {:?}",
            if exact_fields {
                " and nothing else"
            } else {
                ""
            },
            seen()
        )),
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

    fn request(path: &str, fields: &[(&str, &str)]) -> PageRequest {
        PageRequest {
            method: "POST".into(),
            path: path.into(),
            fields: fields
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        }
    }

    #[test]
    fn requests_are_judged_as_the_check_says() {
        let wanted: BTreeMap<String, String> = [("q".to_owned(), "lamp".to_owned())].into();
        let judge = |requests: &[PageRequest], which, exact| {
            page_request(requests, "POST", "/find", &wanted, which, exact).is_ok()
        };
        let wrong_then_right = [
            request("/find", &[("q", "kettle")]),
            request("/other", &[("q", "lamp")]),
            request("/find", &[("q", "lamp")]),
        ];
        assert!(judge(&wrong_then_right, Requests::Any, false));
        assert!(judge(&wrong_then_right, Requests::Last, false));
        assert!(!judge(&wrong_then_right, Requests::Only, false));
        let right_then_wrong = [
            request("/find", &[("q", "lamp")]),
            request("/find", &[("q", "kettle")]),
        ];
        assert!(!judge(&right_then_wrong, Requests::Last, false));
        assert!(judge(
            &[request("/find", &[("q", "lamp")])],
            Requests::Only,
            true
        ));
        // Every box ticked is not the one asked for; an empty field is no field.
        let extra = [request("/find", &[("q", "lamp"), ("on_sale", "1")])];
        assert!(judge(&extra, Requests::Last, false));
        assert!(!judge(&extra, Requests::Last, true));
        let empty = [request("/find", &[("q", "lamp"), ("note", " ")])];
        assert!(judge(&empty, Requests::Only, true));
        assert!(!judge(&[], Requests::Any, false));
    }
}
