//! `calculator_result_file`: compute a seeded expression (the calculator is open) and save
//! the result, digits only, in a named text file with the text editor.

use super::super::{Family, FamilySplit, Gen, Instance};
use super::calculator_arithmetic::expression;
use super::common::distinct_words;
use super::common::mousepad_title;
use crate::grading::Check;
use crate::tasks::{App, DemoCondition};

pub(super) const FAMILY: Family = Family {
    name: "calculator_result_file",
    app: App::TextEditor,
    split: FamilySplit::TrainAndTest,
    about: "calculator and text editor: compute an expression, save the result as a file",
    generate,
};

fn generate(g: &mut Gen) -> Instance {
    let expression = loop {
        let e = expression(g);
        if !e.text.contains(&e.value.to_string()) {
            break e;
        }
    };
    let w = distinct_words(g, 1);
    let name = format!("{}-result.txt", w[0]);
    let instruction = format!(
        "Compute {} (the calculator is open), then use the text editor to save a file {name} \
         in your home folder (/home/user) whose only line is the result, digits only.",
        expression.text
    );
    // The editor, launched last, has the focus; the demo knows the result.
    Instance::new(instruction)
        .launch(["galculator"])
        .launch(["mousepad"])
        .check(Check::FileEquals {
            path: name.clone(),
            text: expression.value.to_string(),
        })
        .wait_for(DemoCondition::Titled("Untitled 1 - Mousepad".into()))
        .type_text(expression.value.to_string())
        .key("ctrl+s")
        .wait_for(DemoCondition::Focused("Save As".into()))
        .type_text(&name)
        .wait(400)
        .key("Return")
        .wait_for(DemoCondition::Titled(mousepad_title(&name)))
}
