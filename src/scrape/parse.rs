//! A strict parser for the Prometheus text exposition format 0.0.4.
//!
//! Why our own: `prometheus-parse` cuts label sets at the first `}` and splits on `,` and `=`
//! without unescaping, skips bad lines silently and returns histogram `_sum`/`_count` as
//! untyped (see `tests/scrape_parse.rs`). A rehearsal verdict must never rest on a misread
//! series, so this parser rejects what it does not understand and names the line and column.
//!
//! Accepted: `# HELP name text` (escapes `\\`, `\n`), `# TYPE name
//! counter|gauge|histogram|summary|untyped` (before the family's first sample, once), other
//! `#` comments, blank lines, and samples `name{label="value",...} value [timestamp_ms]` with
//! label values escaping `\\`, `\"`, `\n` (a raw `\r` or NUL is allowed only inside a label
//! value or HELP text, as in Prometheus' own parser), values per Go `ParseFloat` (`NaN`, `+Inf`, `-Inf`).
//! Histogram `_bucket`/`_sum`/`_count` and summary `_sum`/`_count` samples are grouped under
//! their family. A family's lines must stay together; a series may appear once.

use std::collections::HashSet;

pub use super::exposition::{Exposition, Family, MetricKind, ParseError, Sample};
pub(crate) use super::lexer::Cursor;
pub use super::lexer::parse_value;
use super::lexer::unescape;
use super::validate::check_family;

/// Parses a whole exposition. Never panics; the first problem is returned with its position.
pub fn parse(text: &str) -> Result<Exposition, ParseError> {
    let mut p = Parser::default();
    for (i, line) in text.split('\n').enumerate() {
        p.line(i + 1, line)?;
    }
    p.finish()
}

/// The byte offset of the first `\r` or NUL in `s`.
fn control_char(s: &str) -> Option<usize> {
    s.bytes().position(|b| b == b'\r' || b == 0)
}

/// The byte offset just past a sample line's metric name.
fn name_end(s: &str) -> usize {
    s.bytes()
        .position(|b| !(b.is_ascii_alphanumeric() || b == b'_' || b == b':'))
        .unwrap_or(s.len())
}

#[derive(Default)]
struct Parser {
    families: Vec<Family>,
    /// Line of each family's first line, parallel to `families`.
    family_lines: Vec<usize>,
    /// Family names that are finished (another family's samples followed them).
    closed: HashSet<String>,
    series: HashSet<(String, Vec<(String, String)>)>,
    sampled: HashSet<String>,
}

impl Parser {
    fn line(&mut self, no: usize, line: &str) -> Result<(), ParseError> {
        let c = Cursor {
            s: line,
            pos: 0,
            line: no,
        };
        if line.trim_matches([' ', '\t']).is_empty() {
            return Ok(());
        }
        if let Some(comment) = line.strip_prefix('#') {
            // HELP text, like a label value, may hold any character but `\n`.
            if let Some(b) = control_char(line)
                && !comment.trim_start_matches([' ', '\t']).starts_with("HELP")
            {
                return Err(c.err_at(b, "control character (\\r or NUL) in line"));
            }
            return self.comment(c);
        }
        self.sample(c)
    }

    fn comment(&mut self, mut c: Cursor<'_>) -> Result<(), ParseError> {
        c.pos = 1;
        c.blanks();
        let kw_at = c.pos;
        let kw = c.token();
        if kw != "HELP" && kw != "TYPE" {
            return Ok(()); // an ordinary comment
        }
        if !c.blanks() {
            return Err(c.err(format!("expected a metric name after # {kw}")));
        }
        let name_at = c.pos;
        let name = c.metric_name()?;
        let rest_at = c.pos;
        if kw == "HELP" {
            if c.pos < c.s.len() && !c.blanks() {
                return Err(c.err("expected a blank after the metric name"));
            }
            let help =
                unescape(&c.s[c.pos..], false).map_err(|(off, m)| c.err_at(c.pos + off, m))?;
            let fam = self.family_for_meta(&c, name_at, name)?;
            if fam.help.is_some() {
                return Err(c.err_at(kw_at, format!("second # HELP for {name}")));
            }
            fam.help = Some(help);
        } else {
            if !c.blanks() {
                return Err(c.err_at(rest_at, "expected a type after the metric name"));
            }
            let ty_at = c.pos;
            let ty = c.token();
            let kind = MetricKind::from_token(ty).ok_or_else(|| {
                c.err_at(
                    ty_at,
                    format!("unknown type {ty:?} (counter|gauge|histogram|summary|untyped)"),
                )
            })?;
            c.blanks();
            if c.pos < c.s.len() {
                return Err(c.err("unexpected text after the type"));
            }
            let sampled = self.sampled.contains(name);
            let fam = self.family_for_meta(&c, name_at, name)?;
            if fam.kind != MetricKind::Untyped || sampled {
                return Err(c.err_at(
                    kw_at,
                    format!("# TYPE for {name} must come once, before its samples"),
                ));
            }
            fam.kind = kind;
        }
        Ok(())
    }

    /// The family a HELP/TYPE line refers to: the current one, or a new one.
    fn family_for_meta(
        &mut self,
        c: &Cursor<'_>,
        at: usize,
        name: &str,
    ) -> Result<&mut Family, ParseError> {
        let is_current = self.families.last().is_some_and(|f| f.name == name);
        if !is_current {
            if self.closed.contains(name) || self.families.iter().any(|f| f.name == name) {
                return Err(c.err_at(at, format!("metadata for {name} after its family ended")));
            }
            self.open_family(c.line, name.to_string(), None);
        }
        let n = self.families.len() - 1;
        Ok(&mut self.families[n])
    }

    fn open_family(&mut self, line: usize, name: String, kind: Option<MetricKind>) {
        if let Some(prev) = self.families.last() {
            self.closed.insert(prev.name.clone());
        }
        self.families.push(Family {
            name,
            help: None,
            kind: kind.unwrap_or(MetricKind::Untyped),
            samples: Vec::new(),
        });
        self.family_lines.push(line);
    }

    fn sample(&mut self, mut c: Cursor<'_>) -> Result<(), ParseError> {
        if let Some(b) = control_char(c.s).filter(|&b| b <= name_end(c.s)) {
            return Err(c.err_at(b, "control character (\\r or NUL) in line"));
        }
        let name = c.metric_name()?.to_string();
        let labels_at = c.pos;
        let labels = if c.peek() == Some(b'{') {
            c.labels()?
        } else {
            Vec::new()
        };
        // Label values may hold `\r` and NUL (the engine's deps are traffic names); nothing
        // after them may (a CRLF file ends every value with `\r`).
        if let Some(b) = control_char(&c.s[c.pos..]) {
            return Err(c.err_at(c.pos + b, "control character (\\r or NUL) in line"));
        }
        if !c.blanks() {
            return Err(c.err("expected a blank before the value"));
        }
        let value_at = c.pos;
        let value =
            parse_value(c.token()).ok_or_else(|| c.err_at(value_at, "invalid sample value"))?;
        let mut timestamp_ms = None;
        if c.blanks() && c.pos < c.s.len() {
            let ts_at = c.pos;
            let t = c.token();
            timestamp_ms = Some(
                t.parse::<i64>()
                    .map_err(|_| c.err_at(ts_at, "invalid timestamp (integer ms)"))?,
            );
            c.blanks();
        }
        if c.pos < c.s.len() {
            return Err(c.err("unexpected text after the sample"));
        }
        let mut sorted = labels.clone();
        sorted.sort();
        if !self.series.insert((name.clone(), sorted)) {
            return Err(c.err_at(0, format!("duplicate series {name}")));
        }
        // Which family does this sample belong to?
        let fam_name = self.family_of(&name);
        let is_current = self.families.last().is_some_and(|f| f.name == fam_name);
        if !is_current {
            if self.closed.contains(&fam_name) || self.families.iter().any(|f| f.name == fam_name) {
                return Err(c.err_at(0, format!("samples of {fam_name} are not together")));
            }
            self.open_family(c.line, fam_name.clone(), None);
        }
        let kind = self.families.last().map_or(MetricKind::Untyped, |f| f.kind);
        let has = |k: &str| labels.iter().any(|(n, _)| n == k);
        match kind {
            MetricKind::Histogram if name.ends_with("_bucket") && !has("le") => {
                return Err(c.err_at(labels_at, "histogram bucket without an le label"));
            }
            MetricKind::Summary if name == fam_name && !has("quantile") => {
                return Err(c.err_at(labels_at, "summary sample without a quantile label"));
            }
            _ => {}
        }
        self.sampled.insert(fam_name);
        let n = self.families.len() - 1;
        self.families[n].samples.push(Sample {
            name,
            labels: labels.into_iter().collect(),
            value,
            timestamp_ms,
        });
        Ok(())
    }

    /// The family name a sample name belongs to, given the declared types so far.
    fn family_of(&self, name: &str) -> String {
        let Some(cur) = self.families.last() else {
            return name.to_string();
        };
        let suffixes: &[&str] = match cur.kind {
            MetricKind::Histogram => &["_bucket", "_sum", "_count"],
            MetricKind::Summary => &["_sum", "_count"],
            _ => &[],
        };
        for s in suffixes {
            if name.strip_suffix(s) == Some(cur.name.as_str()) {
                return cur.name.clone();
            }
        }
        name.to_string()
    }

    fn finish(self) -> Result<Exposition, ParseError> {
        for (f, line) in self.families.iter().zip(&self.family_lines) {
            check_family(f).map_err(|e| ParseError {
                line: *line,
                col: 1,
                msg: e.0,
            })?;
        }
        Ok(Exposition {
            families: self.families,
        })
    }
}
