//! The office families: seeded tasks on LibreOffice Calc, Writer and Impress, graded by the
//! documents they save.

mod calc_chart;
mod calc_column_total;
mod calc_delete_rows;
mod calc_save_csv;
mod calc_sort_rows;
mod common;
mod impress_add_slide;
mod writer_bold_word;
mod writer_export_pdf;
mod writer_replace_sentence;
mod writer_replace_word;

use super::Family;

/// The families of this folder, in the order task lists show them.
pub(super) const FAMILIES: &[Family] = &[
    calc_column_total::FAMILY,
    calc_sort_rows::FAMILY,
    calc_delete_rows::FAMILY,
    calc_save_csv::FAMILY,
    calc_chart::FAMILY,
    writer_replace_word::FAMILY,
    writer_replace_sentence::FAMILY,
    writer_bold_word::FAMILY,
    writer_export_pdf::FAMILY,
    impress_add_slide::FAMILY,
];
