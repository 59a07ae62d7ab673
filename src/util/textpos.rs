//! Error positions in user files, in the units an editor shows: 1-based lines and 1-based
//! columns counted in characters. serde_json reports columns in bytes, which points past the
//! end of a line holding non-ASCII text; [`json_position`] converts.

/// The 1-based character column of serde_json's byte `column` on `line` (the text of that line,
/// without its newline). serde_json's column is the byte count up to and including the byte
/// it stopped at, so a column inside a multi-byte character names that character.
fn char_col(line: &str, column: usize) -> usize {
    let mut end = column.min(line.len());
    while !line.is_char_boundary(end) {
        end += 1;
    }
    line[..end].chars().count().max(1)
}

/// serde_json's message without its trailing ` at line L column C` (the caller puts the
/// position in front, in characters).
pub(crate) fn json_message(err: &serde_json::Error) -> String {
    let full = err.to_string();
    full.rsplit_once(" at line ")
        .map_or(full.as_str(), |(m, _)| m)
        .to_string()
}

/// The (line, character column) of a serde_json error in `text`, both 1-based.
pub(crate) fn json_position(text: &str, err: &serde_json::Error) -> (usize, usize) {
    let line = err.line().max(1);
    let line_text = text.split('\n').nth(line - 1).unwrap_or("");
    (line, char_col(line_text, err.column()))
}

/// 1-based line and column (in characters) of byte offset `at` in `text`.
pub(crate) fn line_col(text: &str, at: usize) -> (usize, usize) {
    let at = at.min(text.len());
    let before = text.get(..at).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let col = before.get(line_start..).map_or(0, |s| s.chars().count()) + 1;
    (line, col)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_count_characters_not_bytes() {
        assert_eq!(char_col("abc", 3), 3);
        assert_eq!(char_col("", 0), 1);
        // "é" is two bytes: byte column 3 (inside "é€"'s second char) is character 2.
        assert_eq!(char_col("é€x", 3), 2);
        assert_eq!(char_col("é€x", 99), 3);
        let text = "{}\n\"é€\" x";
        let err = serde_json::from_str::<serde_json::Value>(&text[3..]).unwrap_err();
        assert_eq!(err.column(), 9, "serde_json counts bytes");
        assert_eq!(json_position(&text[3..], &err), (1, 6));
        assert_eq!(json_message(&err), "trailing characters");
    }

    #[test]
    fn line_col_counts_characters() {
        assert_eq!(line_col("ab\ncdé\nx", 0), (1, 1));
        assert_eq!(line_col("ab\ncdé\nx", 3), (2, 1));
        assert_eq!(line_col("ab\ncdé\nx", 8), (3, 1));
        assert_eq!(line_col("ab\ncdé\nx", 5), (2, 3));
    }
}
