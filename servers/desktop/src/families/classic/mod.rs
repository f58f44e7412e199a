//! The classic families: seeded tasks on the desktop's own applications (xterm, mousepad,
//! gnumeric, galculator, pcmanfm), modelled on the fixed tasks and their demos.

mod calculator_arithmetic;
mod calculator_result_file;
mod common;
mod editor_delete_line;
mod editor_replace_all;
mod editor_write_save;
mod files_delete;
mod files_move_into_folder;
mod files_new_folder;
mod files_rename;
mod sheet_column_total;
mod sheet_product_column;
mod terminal_append_line;
mod terminal_clipboard_line;
mod terminal_count_lines;
mod terminal_folder_tree;
mod terminal_rename_file;
mod terminal_window_title;

use super::Family;

/// The families of this folder, in the order task lists show them.
pub(super) const FAMILIES: &[Family] = &[
    terminal_rename_file::FAMILY,
    terminal_append_line::FAMILY,
    terminal_count_lines::FAMILY,
    terminal_folder_tree::FAMILY,
    terminal_window_title::FAMILY,
    terminal_clipboard_line::FAMILY,
    editor_write_save::FAMILY,
    editor_replace_all::FAMILY,
    editor_delete_line::FAMILY,
    sheet_column_total::FAMILY,
    sheet_product_column::FAMILY,
    calculator_arithmetic::FAMILY,
    calculator_result_file::FAMILY,
    files_move_into_folder::FAMILY,
    files_new_folder::FAMILY,
    files_rename::FAMILY,
    files_delete::FAMILY,
];
