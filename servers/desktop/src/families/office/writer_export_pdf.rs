//! `writer_export_pdf`: a closing line added to a document, which is then exported as PDF.

use super::super::{Family, FamilySplit, Gen, Instance};
use super::common::{fodt, loaded, sentence};
use crate::grading::Check;
use crate::tasks::{App, DemoCondition};

pub(super) const FAMILY: Family = Family {
    name: "writer_export_pdf",
    app: App::Writer,
    split: FamilySplit::TestOnly,
    about: "LibreOffice Writer: add a closing line and export the document as PDF",
    generate,
};

fn generate(g: &mut Gen) -> Instance {
    let count = g.int(2, 5) as usize;
    let sentences: Vec<String> = (0..count).map(|_| sentence(g, None)).collect();
    let closing = format!(
        "Signed by {} {} in {} on {} {}",
        g.first_name(),
        g.last_name(),
        g.city(),
        g.int(1, 28),
        g.pick(mcpgym_env::generate::words::MONTHS)
    );
    let paragraphs: Vec<String> = sentences.chunks(2).map(|c| c.join(" ")).collect();
    let stem = g.word();
    let source = format!("{stem}-letter.fodt");
    let pdf = format!("{stem}-{}.pdf", g.int(100, 999));
    let pdf_stem = pdf.trim_end_matches(".pdf").to_owned();
    let instruction = format!(
        "LibreOffice Writer has {source} (in /home/user) open. Add the line \"{closing}\" as a \
         new last paragraph, then export the document as a PDF file named {pdf} in your home \
         folder."
    );
    Instance::new(instruction)
        .file(&source, fodt(&paragraphs))
        .launch(["libreoffice", "--writer", source.as_str()])
        .check(Check::DocumentContains {
            path: pdf.clone(),
            text: closing.clone(),
        })
        .check(Check::DocumentContains {
            path: pdf.clone(),
            text: sentences[0].clone(),
        })
        .then(|i| loaded(i, &source))
        .key("ctrl+End")
        .key("Return")
        .type_text(closing)
        .wait(300)
        // File > Export As > Export Directly as PDF: a save dialog whose type is PDF, the
        // name field holding the document's name unselected.
        .key("alt+f")
        .wait(500)
        .key("e")
        .wait(500)
        .key("d")
        .wait_for(DemoCondition::Focused("Export".into()))
        .key("ctrl+a")
        .type_text(pdf_stem)
        .wait(300)
        .key("Return")
        .wait_for(DemoCondition::Gone("Export".into()))
        .wait_for(DemoCondition::File(pdf))
}
