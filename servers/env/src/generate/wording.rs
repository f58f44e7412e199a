//! Wordings a generated prompt draws its sentences from, so that a family's instances do not
//! share one phrasing a policy can learn instead of reading.
//!
//! Each function draws one form from the instance's stream: the question's frame
//! ([`question`], eight forms), how a number is to be given ([`precision`], six forms per
//! precision) and how a name is to be given ([`name_only`], six forms). Combined they give a
//! family dozens of wordings; a family adds its own framing of its files on top. The parts a
//! solver reads (the names and values the question is about) are the family's and stay as
//! it writes them.
//!
//! Draw them after the instance's data, so the files an instance number gives do not depend on
//! its wording.

use super::Gen;

/// Frames `what` ("the total revenue of the north region") as a question or a request: "What
/// is …?", "Compute …." and six more.
pub fn question(g: &mut Gen, what: &str) -> String {
    const FORMS: [(&str, &str); 8] = [
        ("What is", "?"),
        ("Compute", "."),
        ("Work out", "."),
        ("Find", "."),
        ("Determine", "."),
        ("Calculate", "."),
        ("Report", "."),
        ("I need to know", "."),
    ];
    let (start, end) = g.pick(&FORMS);
    format!("{start} {what}{end}")
}

/// How a number is to be given: rounded to `decimals` places (a whole number for 0), in one
/// of six sentences.
pub fn precision(g: &mut Gen, decimals: u32) -> String {
    if decimals == 0 {
        const FORMS: [&str; 6] = [
            "Give a whole number.",
            "Answer with an integer.",
            "The answer is a whole number; give it without decimals.",
            "Reply with the integer alone.",
            "Give the count as a plain integer.",
            "Answer with a whole number, nothing else.",
        ];
        return (*g.pick(&FORMS)).to_owned();
    }
    let places = if decimals == 1 {
        "1 decimal place".to_owned()
    } else {
        format!("{decimals} decimal places")
    };
    match g.int(0, 5) {
        0 => format!("Give the number rounded to {places}."),
        1 => format!("Round your answer to {places}."),
        2 => format!("Answer with {places}."),
        3 => format!("Report the value to {places}."),
        4 => format!("Give it to {places}, as a plain number."),
        _ => format!("Reply with the number alone, rounded to {places}."),
    }
}

/// How a name (a person, a product, a word) is to be given, in one of six sentences.
pub fn name_only(g: &mut Gen) -> &'static str {
    const FORMS: [&str; 6] = [
        "Answer with the name only.",
        "Give just the name.",
        "Reply with the name and nothing else.",
        "The answer is the name alone.",
        "Give the name exactly as the data spells it.",
        "Answer with that name, nothing more.",
    ];
    g.pick::<&'static str>(&FORMS)
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn each_sentence_has_its_forms_and_keeps_what_it_is_given() {
        let mut g = Gen::new("wording", 1);
        let mut questions = HashSet::new();
        let mut precisions = HashSet::new();
        let mut names = HashSet::new();
        for _ in 0..500 {
            let asked = question(&mut g, "the mean of x");
            assert!(asked.contains(" the mean of x"), "{asked}");
            questions.insert(asked);
            let rounded = precision(&mut g, 2);
            assert!(rounded.contains("2 decimal places"), "{rounded}");
            precisions.insert(rounded);
            names.insert(name_only(&mut g));
        }
        assert_eq!(questions.len(), 8);
        assert_eq!(precisions.len(), 6);
        assert_eq!(names.len(), 6);
        assert!(precision(&mut g, 1).contains("1 decimal place"));
        assert!(!precision(&mut g, 0).contains("decimal place"));
    }
}
