//! What the web families share: the local site's address, HTML pages, and the demo's way
//! of opening a page.

use crate::families::{Gen, Instance};
use crate::pages::PAGE_PORT;
use crate::tasks::DemoCondition;

/// The local site's address as the browser sees it (without the trailing `/`).
pub(super) fn site() -> String {
    format!("http://127.0.0.1:{PAGE_PORT}")
}

/// Escapes text for HTML.
pub(super) fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A whole HTML page titled `title` (escaped) around `body` (HTML as is), with a little
/// style so it reads like a real site.
pub(super) fn html(title: &str, body: &str) -> String {
    let title = escape(title);
    format!(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{title}</title>\n\
         <style>body{{font-family:sans-serif;max-width:46em;margin:2em auto;line-height:1.5}}\
         label{{display:block;margin-top:.8em}}input,select{{font-size:1em}}\
         table{{border-collapse:collapse}}td,th{{border:1px solid #aaa;padding:.2em .6em}}</style>\n\
         </head>\n<body>\n<h1>{title}</h1>\n{body}\n</body>\n</html>\n"
    )
}

/// A URL-safe slug of words (`Quarterly sales` → `quarterly-sales`).
pub(super) fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    out.trim_end_matches('-').to_owned()
}

/// A word with its first letter upper-case.
pub(super) fn capital(word: &str) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// A full person's name.
pub(super) fn person(g: &mut Gen) -> String {
    format!("{} {}", g.first_name(), g.last_name())
}

/// Demo steps that open `path` of the local site from the address bar. Delete drops any
/// inline completion the address bar added from history.
pub(super) fn open_page(instance: Instance, path: &str) -> Instance {
    instance
        .key("ctrl+l")
        .wait(300)
        .type_text(format!("127.0.0.1:{PAGE_PORT}/{path}"))
        .key("Delete")
        .key("Return")
}

/// Waits until Chromium shows the page titled `title`.
pub(super) fn page_shown(instance: Instance, title: &str) -> Instance {
    instance.wait_for(DemoCondition::Focused(format!("{title} - Chromium")))
}

/// Waits until Chromium shows the form page titled `title`, then pauses: the page focuses
/// its first field (`autofocus`) some time after its title shows, and nothing outside the
/// page shows when (on a loaded machine a shorter pause lost the first typed key).
pub(super) fn form_shown(instance: Instance, title: &str) -> Instance {
    page_shown(instance, title).wait(1500)
}

/// The wait a demo starts with: Chromium takes about one and a half seconds to show its
/// window, more on a busy machine.
pub(super) const START_WAIT: u32 = 3000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_and_escapes() {
        assert_eq!(slug("Quarterly sales, 2024!"), "quarterly-sales-2024");
        assert_eq!(escape("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
        assert_eq!(capital("kettle"), "Kettle");
    }
}
