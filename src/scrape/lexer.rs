//! Line-level lexing shared by the exposition parser and the selector parser: a cursor over one
//! line with metric names, label sets, escapes and Go-style float values.

use super::exposition::ParseError;

/// Parses a sample value (or an `le`/`quantile` label) the way Go's `ParseFloat` does for the values Prometheus emits.
pub fn parse_value(t: &str) -> Option<f64> {
    match t {
        "" => None,
        "+Inf" | "Inf" | "+inf" | "inf" => Some(f64::INFINITY),
        "-Inf" | "-inf" => Some(f64::NEG_INFINITY),
        "NaN" | "nan" => Some(f64::NAN),
        _ if t
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.' | b'e' | b'E')) =>
        {
            t.parse().ok()
        }
        _ => None,
    }
}

/// Unescapes HELP text (`\\`, `\n`) or, with `quote`, a label value (`\\`, `\"`, `\n`).
/// On error returns the byte offset of the bad escape.
pub(crate) fn unescape(s: &str, quote: bool) -> Result<String, (usize, String)> {
    let mut out = String::with_capacity(s.len());
    let mut it = s.char_indices();
    while let Some((i, ch)) = it.next() {
        if ch != '\\' {
            out.push(ch);
            continue;
        }
        match it.next() {
            Some((_, '\\')) => out.push('\\'),
            Some((_, 'n')) => out.push('\n'),
            Some((_, '"')) if quote => out.push('"'),
            Some((_, o)) => return Err((i, format!("invalid escape \\{o}"))),
            None => return Err((i, "dangling backslash".into())),
        }
    }
    Ok(out)
}

/// A position in one line.
pub(crate) struct Cursor<'a> {
    pub(crate) s: &'a str,
    pub(crate) pos: usize,
    pub(crate) line: usize,
}

impl<'a> Cursor<'a> {
    pub(crate) fn peek(&self) -> Option<u8> {
        self.s.as_bytes().get(self.pos).copied()
    }

    /// Skips blanks and tabs; true when at least one was skipped.
    pub(crate) fn blanks(&mut self) -> bool {
        let start = self.pos;
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.pos += 1;
        }
        self.pos > start
    }

    /// Reads up to the next blank (or the end).
    pub(crate) fn token(&mut self) -> &'a str {
        let start = self.pos;
        while self.peek().is_some_and(|b| b != b' ' && b != b'\t') {
            self.pos += 1;
        }
        self.s.get(start..self.pos).unwrap_or("")
    }

    fn ident(
        &mut self,
        first: fn(u8) -> bool,
        rest: fn(u8) -> bool,
        what: &str,
    ) -> Result<&'a str, ParseError> {
        let start = self.pos;
        if !self.peek().is_some_and(first) {
            return Err(self.err(format!("expected a {what}")));
        }
        while self.peek().is_some_and(rest) {
            self.pos += 1;
        }
        Ok(self.s.get(start..self.pos).unwrap_or(""))
    }

    /// `[a-zA-Z_:][a-zA-Z0-9_:]*`
    pub(crate) fn metric_name(&mut self) -> Result<&'a str, ParseError> {
        self.ident(
            |b| b.is_ascii_alphabetic() || b == b'_' || b == b':',
            |b| b.is_ascii_alphanumeric() || b == b'_' || b == b':',
            "metric name",
        )
    }

    /// `{name="value",...}` with an optional trailing comma; errors on duplicate names.
    pub(crate) fn labels(&mut self) -> Result<Vec<(String, String)>, ParseError> {
        self.pos += 1; // '{'
        let mut out: Vec<(String, String)> = Vec::new();
        loop {
            self.blanks();
            if self.peek() == Some(b'}') {
                self.pos += 1;
                return Ok(out);
            }
            let name_at = self.pos;
            let name = self.ident(
                |b| b.is_ascii_alphabetic() || b == b'_',
                |b| b.is_ascii_alphanumeric() || b == b'_',
                "label name or '}'",
            )?;
            if out.iter().any(|(n, _)| n == name) {
                return Err(self.err_at(name_at, format!("duplicate label {name}")));
            }
            self.blanks();
            if self.peek() != Some(b'=') {
                return Err(self.err("expected '=' after the label name"));
            }
            self.pos += 1;
            self.blanks();
            if self.peek() != Some(b'"') {
                return Err(self.err("expected '\"' to open the label value"));
            }
            self.pos += 1;
            let start = self.pos;
            let bytes = self.s.as_bytes();
            loop {
                match bytes.get(self.pos) {
                    None => return Err(self.err("unterminated label value")),
                    Some(b'\\') => self.pos += 2,
                    Some(b'"') => break,
                    Some(_) => self.pos += 1,
                }
            }
            let raw = self.s.get(start..self.pos).unwrap_or("");
            let value = unescape(raw, true).map_err(|(off, m)| self.err_at(start + off, m))?;
            self.pos += 1; // closing quote
            out.push((name.to_string(), value));
            self.blanks();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {}
                _ => return Err(self.err("expected ',' or '}' after a label value")),
            }
        }
    }

    pub(crate) fn err(&self, msg: impl Into<String>) -> ParseError {
        self.err_at(self.pos, msg)
    }

    pub(crate) fn err_at(&self, byte: usize, msg: impl Into<String>) -> ParseError {
        let col = self
            .s
            .get(..byte)
            .map_or(self.s.chars().count(), |p| p.chars().count())
            + 1;
        ParseError {
            line: self.line,
            col,
            msg: msg.into(),
        }
    }
}
