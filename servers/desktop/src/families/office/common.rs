//! Shared pieces of the office families: flat OpenDocument files built as text (LibreOffice
//! opens `.fods`, `.fodt` and `.fodp` directly), and the demo steps of LibreOffice's Save As
//! dialog.

use super::super::Instance;
use crate::tasks::DemoCondition;

/// A spreadsheet cell's content.
pub(super) enum Cell {
    /// Text.
    Text(String),
    /// A number.
    Number(i64),
}

/// `text` escaped for XML text and attribute values.
pub(super) fn xml(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const NAMESPACES: &str = concat!(
    r#"xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" "#,
    r#"xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" "#,
    r#"xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" "#,
    r#"xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" "#,
    r#"xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0" "#,
    r#"xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0" "#,
    r#"xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" "#,
    r#"office:version="1.2""#,
);

fn document(mimetype: &str, styles: &str, body: &str) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<office:document {NAMESPACES} \
         office:mimetype=\"application/vnd.oasis.opendocument.{mimetype}\">\n{styles}<office:body>\n\
         {body}</office:body>\n</office:document>\n"
    )
}

/// A flat spreadsheet with one sheet of `rows`.
pub(super) fn fods(sheet: &str, rows: &[Vec<Cell>]) -> String {
    let mut body = format!(
        "<office:spreadsheet>\n<table:table table:name=\"{}\">\n",
        xml(sheet)
    );
    for row in rows {
        body.push_str("<table:table-row>");
        for cell in row {
            match cell {
                Cell::Text(t) => body.push_str(&format!(
                    "<table:table-cell office:value-type=\"string\"><text:p>{}</text:p></table:table-cell>",
                    xml(t)
                )),
                Cell::Number(n) => body.push_str(&format!(
                    "<table:table-cell office:value-type=\"float\" office:value=\"{n}\"><text:p>{n}</text:p></table:table-cell>"
                )),
            }
        }
        body.push_str("</table:table-row>\n");
    }
    body.push_str("</table:table>\n</office:spreadsheet>\n");
    document("spreadsheet", "", &body)
}

/// A flat text document of plain paragraphs.
pub(super) fn fodt(paragraphs: &[String]) -> String {
    let mut body = String::from("<office:text>\n");
    for p in paragraphs {
        body.push_str(&format!("<text:p>{}</text:p>\n", xml(p)));
    }
    body.push_str("</office:text>\n");
    document("text", "", &body)
}

/// The "Title, Content" layout: a slide inserted after one that uses it gets a title and an
/// outline placeholder (after a slide without a layout, a new slide is blank).
const TITLE_CONTENT: &str = concat!(
    r#"<office:styles><style:presentation-page-layout style:name="AL1T1">"#,
    r#"<presentation:placeholder presentation:object="title" svg:x="2cm" svg:y="1cm" svg:width="24cm" svg:height="3cm"/>"#,
    r#"<presentation:placeholder presentation:object="outline" svg:x="2cm" svg:y="5cm" svg:width="24cm" svg:height="9cm"/>"#,
    "</style:presentation-page-layout></office:styles>\n",
);

/// A flat presentation of (title, body) slides, each a title and an outline frame.
pub(super) fn fodp(slides: &[(String, String)]) -> String {
    let mut body = String::from("<office:presentation>\n");
    for (i, (title, text)) in slides.iter().enumerate() {
        body.push_str(&format!(
            "<draw:page draw:name=\"page{}\" presentation:presentation-page-layout-name=\"AL1T1\">\
             <draw:frame presentation:class=\"title\" svg:x=\"2cm\" svg:y=\"1cm\" svg:width=\"24cm\" svg:height=\"3cm\"><draw:text-box><text:p>{}</text:p></draw:text-box></draw:frame>\
             <draw:frame presentation:class=\"outline\" svg:x=\"2cm\" svg:y=\"5cm\" svg:width=\"24cm\" svg:height=\"9cm\"><draw:text-box><text:p>{}</text:p></draw:text-box></draw:frame>\
             </draw:page>\n",
            i + 1,
            xml(title),
            xml(text)
        ));
    }
    body.push_str("</office:presentation>\n");
    document("presentation", TITLE_CONTENT, &body)
}

/// A file type in Calc's Save As type list (LibreOffice 7.4, a spreadsheet document): its
/// position from the top, and the extension it gives the name.
#[derive(Debug, Clone, Copy)]
pub(super) struct SaveType {
    index: usize,
    extension: &'static str,
}

/// OpenDocument Spreadsheet (.ods).
pub(super) const TYPE_ODS: SaveType = SaveType {
    index: 0,
    extension: "ods",
};
/// Excel 2007-365 (.xlsx).
pub(super) const TYPE_XLSX: SaveType = SaveType {
    index: 4,
    extension: "xlsx",
};
/// Text CSV (.csv): Calc asks for the export's options before it writes the file.
pub(super) const TYPE_CSV: SaveType = SaveType {
    index: 12,
    extension: "csv",
};

/// The title of LibreOffice's Save As dialog.
const SAVE_AS: &str = "Save as";

/// Waits until LibreOffice has loaded `file` (its lock file is there) and its window has the
/// focus: what the first key of a demo needs.
pub(super) fn loaded(instance: Instance, file: &str) -> Instance {
    instance
        .wait_for(DemoCondition::File(format!(".~lock.{file}#")))
        .wait_for(DemoCondition::Focused(format!("{file} - LibreOffice")))
}

/// The title of Writer's Find and Replace dialog.
pub(super) const FIND_AND_REPLACE: &str = "Find and Replace";

/// Waits until `file` (under home) holds `text`: the document was saved over itself with the
/// change (LibreOffice writes flat ODF as plain XML).
pub(super) fn saved_holding(instance: Instance, file: &str, text: &str) -> Instance {
    instance.wait_for(DemoCondition::FileContains(file.into(), text.into()))
}

/// Opens Save As (Ctrl+Shift+S), replaces the proposed name with `stem`, picks `file_type`
/// in the type list (the name gets its extension from it) and saves; waits until the file is
/// written (for CSV, until the dialog closes: the export's options come next).
///
/// The name field holds the document's name unselected, hence Ctrl+A; the type list is
/// reached with Tab and walked from its top, because typing in it matches entries whose
/// names hold an en dash ("Excel 2007–365").
pub(super) fn save_as(instance: Instance, stem: &str, file_type: SaveType) -> Instance {
    let mut instance = instance
        .key("ctrl+shift+s")
        .wait_for(DemoCondition::Focused(SAVE_AS.into()))
        .key("ctrl+a")
        .type_text(stem)
        .key("Tab")
        .key("Home");
    for _ in 0..file_type.index {
        instance = instance.key("Down");
    }
    let instance = instance
        .wait(300)
        .key("Return")
        .wait_for(DemoCondition::Gone(SAVE_AS.into()));
    if file_type.extension == TYPE_CSV.extension {
        instance
    } else {
        saved(instance, &format!("{stem}.{}", file_type.extension))
    }
}

/// Waits until LibreOffice has saved the document as `path` (under home): the window is
/// named after it, which happens once the save is done, and the file is there.
pub(super) fn saved(instance: Instance, path: &str) -> Instance {
    instance
        .wait_for(DemoCondition::Focused(format!("{path} - LibreOffice")))
        .wait_for(DemoCondition::File(path.into()))
}

/// Moves the cell cursor to the zero-based `(col, row)` from A1.
pub(super) fn go_to(mut instance: Instance, col: usize, row: usize) -> Instance {
    instance = instance.key("ctrl+Home");
    for _ in 0..row {
        instance = instance.key("Down");
    }
    for _ in 0..col {
        instance = instance.key("Right");
    }
    instance
}

/// Distinct words, none containing another (so a check for one never matches inside
/// another).
pub(super) fn unrelated_words(g: &mut super::super::Gen, k: usize) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    while out.len() < k {
        let w = g.word();
        if out.iter().all(|o| !o.contains(w) && !w.contains(o)) {
            out.push(w);
        }
    }
    out
}

/// A sentence holding `word` (lowercase, mid-sentence) when given, with a name, a city and a
/// number from the generator: `Mara moved 14 lanterns to the harbor in Oslo.`
pub(super) fn sentence(g: &mut super::super::Gen, word: Option<&str>) -> String {
    const VERBS: &[&str] = &[
        "moved", "counted", "painted", "ordered", "checked", "shipped", "found", "cleaned",
    ];
    let who = g.first_name();
    let verb = *g.pick(VERBS);
    let n = g.int(2, 99);
    let what = word.unwrap_or_else(|| g.word());
    let place = g.word();
    let city = g.city();
    format!("{who} {verb} {n} {what}s near the {place} in {city}.")
}
