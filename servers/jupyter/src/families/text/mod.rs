//! Families of text and log processing, and of file and shell work.

mod access_log_latency;
mod archive_contents;
mod caesar_cipher;
mod common;
mod csv_to_json;
mod duplicate_files;
mod extract_contacts;
mod log_errors;
mod organise_files;
mod tree_size;
mod word_frequency;

use super::Family;

/// This module's families.
pub(super) static FAMILIES: &[Family] = &[
    log_errors::FAMILY,
    access_log_latency::FAMILY,
    extract_contacts::FAMILY,
    word_frequency::FAMILY,
    caesar_cipher::FAMILY,
    tree_size::FAMILY,
    duplicate_files::FAMILY,
    archive_contents::FAMILY,
    csv_to_json::FAMILY,
    organise_files::FAMILY,
];
