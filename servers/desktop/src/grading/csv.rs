//! The CSV that `ssconvert` writes, read back into rows of cells.

/// A CSV parser for what `ssconvert` writes: `,` separators, `"` quoting with `""` escapes,
/// newlines allowed inside quotes.
pub(super) fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let mut row = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if quoted {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    field.push('"');
                    chars.next();
                }
                '"' => quoted = false,
                _ => field.push(c),
            }
            continue;
        }
        match c {
            '"' => quoted = true,
            ',' => row.push(std::mem::take(&mut field)),
            '\r' => {}
            '\n' => {
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
            }
            _ => field.push(c),
        }
    }
    if !field.is_empty() || !row.is_empty() {
        row.push(field);
        rows.push(row);
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_parses_quotes_and_newlines() {
        let rows = parse_csv("a,\"b,c\",\"say \"\"hi\"\"\"\r\n1,\"x\ny\",\n");
        assert_eq!(rows[0], vec!["a", "b,c", "say \"hi\""]);
        assert_eq!(rows[1], vec!["1", "x\ny", ""]);
        assert_eq!(rows.len(), 2);
    }
}
