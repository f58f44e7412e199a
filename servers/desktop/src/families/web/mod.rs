//! The web families: tasks in Chromium on a local site the episode's page server serves.

mod bookmark_page;
mod common;
mod download_file;
mod find_fact;
mod form_from_file;
mod form_submit;
mod search_filter;

use super::Family;

/// The families of this folder, in the order task lists show them.
pub(super) const FAMILIES: &[Family] = &[
    form_submit::FAMILY,
    find_fact::FAMILY,
    download_file::FAMILY,
    bookmark_page::FAMILY,
    search_filter::FAMILY,
    form_from_file::FAMILY,
];
