//! What every property shares: the case count, input generators (arbitrary text and
//! structure-aware mutations of valid files) and the "error position lies inside the input" check.

use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::Config;

/// Cases per property in `cargo test` (see docs/testing.md, "Property tests"). `PROPTEST_CASES`
/// overrides it: `scripts/fuzz-long.sh` runs 100 000.
pub const DEFAULT_CASES: u32 = 256;

/// The proptest configuration of every property: [`DEFAULT_CASES`] unless `PROPTEST_CASES` says
/// otherwise; no regression files written into the tree (regressions are named tests instead).
pub fn config() -> Config {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_CASES);
    Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    }
}

/// A fixture file's text.
pub fn fixture(rel: &str) -> String {
    let path = format!("{}/{rel}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Tokens that mean something to TOML, JSON, JSONL, the exposition format or humantime, plus
/// values at the edges of the numeric types. Mutations insert these more often than noise.
const TOKENS: &[&str] = &[
    "\"",
    "'",
    "[",
    "]",
    "[[",
    "]]",
    "{",
    "}",
    ",",
    "=",
    ":",
    "\n",
    "\r\n",
    "#",
    "\\",
    "\\u",
    "'''",
    "\"\"\"",
    " ",
    "\t",
    "0",
    "-1",
    "1e400",
    "-0",
    "1.5",
    "NaN",
    "nan",
    "+Inf",
    "-Inf",
    "inf",
    "true",
    "null",
    "18446744073709551616",
    "9223372036854775807",
    "\"9999999999999years\"",
    "\"0s\"",
    "\"1ns\"",
    "\"584542046090years\"",
    "\u{0}",
    "é",
    "\u{1F600}",
    "\u{FEFF}",
    "le=",
    "quantile=",
    "_bucket",
    "_sum",
    "_count",
    "# TYPE x histogram",
    "# HELP",
    "kind",
    "route",
    "\"llm\"",
    "\"tool\"",
    "\"ws\"",
    "at_ms",
    "[[fault]]",
    "[[expect.transition]]",
    "[engine]",
];

/// One edit of a text.
#[derive(Debug, Clone)]
pub enum Edit {
    /// Remove up to `len` bytes at `at`.
    Delete(Index, usize),
    /// Insert this text at `at`.
    Insert(Index, String),
    /// Repeat the line containing `at`.
    DuplicateLine(Index),
    /// Swap two lines.
    SwapLines(Index, Index),
    /// Replace the character at `at` with this one.
    Replace(Index, char),
    /// Cut the text at `at` (a truncated file).
    Truncate(Index),
}

fn insertion() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(TOKENS).prop_map(str::to_string),
        1 => any::<String>(),
        1 => "[a-z_]{1,12}",
        1 => any::<u64>().prop_map(|n| n.to_string()),
    ]
}

/// A random edit.
pub fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        3 => (any::<Index>(), 1usize..40).prop_map(|(i, n)| Edit::Delete(i, n)),
        4 => (any::<Index>(), insertion()).prop_map(|(i, s)| Edit::Insert(i, s)),
        1 => any::<Index>().prop_map(Edit::DuplicateLine),
        1 => (any::<Index>(), any::<Index>()).prop_map(|(a, b)| Edit::SwapLines(a, b)),
        2 => (any::<Index>(), any::<char>()).prop_map(|(i, c)| Edit::Replace(i, c)),
        1 => any::<Index>().prop_map(Edit::Truncate),
    ]
}

/// 1 to 4 edits.
pub fn edits() -> impl Strategy<Value = Vec<Edit>> {
    prop::collection::vec(edit(), 1..=4)
}

/// The byte offset of the char boundary nearest below `idx` scaled into `text`.
fn boundary(text: &str, idx: &Index) -> usize {
    if text.is_empty() {
        return 0;
    }
    let mut at = idx.index(text.len() + 1);
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// `text` with `edits` applied in order.
pub fn apply(text: &str, edits: &[Edit]) -> String {
    let mut t = text.to_string();
    for e in edits {
        match e {
            Edit::Delete(i, n) => {
                let at = boundary(&t, i);
                let mut end = (at + n).min(t.len());
                while !t.is_char_boundary(end) {
                    end += 1;
                }
                t.replace_range(at..end, "");
            }
            Edit::Insert(i, s) => {
                let at = boundary(&t, i);
                t.insert_str(at, s);
            }
            Edit::DuplicateLine(i) => {
                let mut lines: Vec<&str> = t.split_inclusive('\n').collect();
                if !lines.is_empty() {
                    let k = i.index(lines.len());
                    lines.insert(k, lines[k]);
                }
                t = lines.concat();
            }
            Edit::SwapLines(a, b) => {
                let mut lines: Vec<&str> = t.split_inclusive('\n').collect();
                if !lines.is_empty() {
                    let (a, b) = (a.index(lines.len()), b.index(lines.len()));
                    lines.swap(a, b);
                }
                t = lines.concat();
            }
            Edit::Replace(i, c) => {
                let at = boundary(&t, i);
                if let Some(old) = t[at..].chars().next() {
                    t.replace_range(at..at + old.len_utf8(), &c.to_string());
                }
            }
            Edit::Truncate(i) => {
                let at = boundary(&t, i);
                t.truncate(at);
            }
        }
    }
    t
}

/// Arbitrary text biased towards the tokens of the formats (plus fully random strings).
pub fn noise() -> impl Strategy<Value = String> {
    prop_oneof![
        1 => any::<String>(),
        2 => prop::collection::vec(insertion(), 0..40).prop_map(|v| v.concat()),
    ]
}

/// Asserts that a 1-based (line, col) names a place in `text`: an existing line (or the line
/// just past a final newline) and a column at most one past that line's last character.
pub fn assert_inside(text: &str, line: usize, col: usize, what: &str) {
    let lines: Vec<&str> = text.split('\n').collect();
    assert!(
        line >= 1 && line <= lines.len(),
        "{what}: line {line} outside 1..={} of {text:?}",
        lines.len()
    );
    let chars = lines[line - 1].chars().count();
    assert!(
        col >= 1 && col <= chars + 1,
        "{what}: col {col} outside 1..={} of line {line} {:?}",
        chars + 1,
        lines[line - 1]
    );
}
