//! Office documents read as graders: text, formatting, slides, formulas and charts, from the
//! saved files themselves.
//!
//! Filled in with the LibreOffice families; until then every check here fails with a
//! sentence saying the format is not read yet.

use std::path::Path;

/// Formatting a [`super::Check::DocumentStyled`] asks for; `None` is not checked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Style {
    pub bold: Option<bool>,
    pub italic: Option<bool>,
    pub underline: Option<bool>,
}

fn unread(path: &str) -> String {
    format!("{path}: this document format is not read yet")
}

/// The document's plain text.
pub(super) async fn text(_home: &Path, path: &str) -> Result<String, String> {
    Err(unread(path))
}

/// Each slide's text, in order.
pub(super) async fn slides(_home: &Path, path: &str) -> Result<Vec<String>, String> {
    Err(unread(path))
}

/// Whether a slide (or any) contains `text`.
pub(super) async fn slide_text(
    _home: &Path,
    path: &str,
    _slide: Option<u32>,
    _text: &str,
) -> Result<String, String> {
    Err(unread(path))
}

/// Whether every character of `text` has the formatting `want`.
pub(super) async fn styled(
    _home: &Path,
    path: &str,
    _text: &str,
    _want: Style,
) -> Result<String, String> {
    Err(unread(path))
}

/// Whether a cell holds a formula containing `contains`.
pub(super) async fn spreadsheet_formula(
    _home: &Path,
    path: &str,
    _sheet: Option<&str>,
    _cell: &str,
    _contains: &str,
) -> Result<String, String> {
    Err(unread(path))
}

/// Whether the spreadsheet holds a chart.
pub(super) async fn spreadsheet_chart(_home: &Path, path: &str) -> Result<String, String> {
    Err(unread(path))
}
