//! Where a field of a scenario file is written: a field path of a semantic error
//! (`expect.metric[1].series`) → the 1-based line and column of its value in the TOML text, so
//! `validate` points at a wrong value the way a parse error points at a wrong key. Spans come
//! from the `toml` crate's spanned document (`toml::de::DeTable`).

use std::ops::Range;

use toml::de::{DeTable, DeValue};

use crate::util::textpos::line_col;

/// One step of a field path.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

/// `expect.metric[1].series` → `[Key(expect), Key(metric), Index(1), Key(series)]`; `None` for
/// a path that is not of that shape.
fn steps(field: &str) -> Option<Vec<Step<'_>>> {
    let mut out = Vec::new();
    for part in field.split('.') {
        let (key, mut rest) = part.split_once('[').map_or((part, ""), |(k, r)| (k, r));
        if key.is_empty() {
            return None;
        }
        out.push(Step::Key(key));
        while !rest.is_empty() {
            let (n, after) = rest.split_once(']')?;
            out.push(Step::Index(n.parse().ok()?));
            rest = after.strip_prefix('[').unwrap_or(after);
            if !after.is_empty() && !after.starts_with('[') {
                return None;
            }
        }
    }
    Some(out)
}

/// The byte span of the deepest part of `field` present in `text` (the whole value when all of
/// it is; its nearest written ancestor otherwise, e.g. the `[engine]` table for a defaulted
/// key). `None` when the text does not parse or not even the first key is written.
pub(crate) fn span(text: &str, field: &str) -> Option<Range<usize>> {
    let doc = DeTable::parse(text).ok()?;
    let steps = steps(field)?;
    let mut found: Option<Range<usize>> = None;
    let mut cur: Option<&DeValue<'_>> = None;
    for step in &steps {
        let next = match (cur, step) {
            (None, Step::Key(k)) => doc.get_ref().get(*k),
            (Some(v), Step::Key(k)) => v.get(*k),
            (Some(v), Step::Index(i)) => v.get(*i),
            (None, Step::Index(_)) => None,
        };
        let Some(next) = next else { break };
        found = Some(next.span());
        cur = Some(next.get_ref());
    }
    found
}

/// 1-based line and column of `field`'s value (see [`span`]).
pub(crate) fn locate(text: &str, field: &str) -> Option<(usize, usize)> {
    span(text, field).map(|s| line_col(text, s.start))
}

/// 1-based line and column of `needle` inside `field`'s written value (e.g. a label inside a
/// series selector string), else of the value itself.
pub(crate) fn locate_within(text: &str, field: &str, needle: &str) -> Option<(usize, usize)> {
    let s = span(text, field)?;
    let at = text
        .get(s.clone())
        .and_then(|v| v.find(needle))
        .map_or(s.start, |i| s.start + i);
    Some(line_col(text, at))
}

/// An expectation's run-scope error as the file wrote it: a `policy` key written `version`
/// (the same key; docs/scenario.md) is pointed at as `version`, and in a run of OpenClaw
/// versions side by side (`versions`) the known runs are called versions.
pub(crate) fn run_scope(text: &str, field: &str, msg: &str, versions: bool) -> (String, String) {
    let msg = if versions {
        msg.replace(
            "is not one of the scenario's policies or runs",
            "is not one of the scenario's `[target] versions`",
        )
    } else {
        msg.to_string()
    };
    let Some(table) = field.strip_suffix(".policy") else {
        return (field.to_string(), msg);
    };
    let as_version = format!("{table}.version");
    let written = span(text, &as_version).is_some_and(|s| Some(s) != span(text, table));
    (if written { as_version } else { field.to_string() }, msg)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "name = \"x\"\nduration = \"10s\"\n\n[engine]\ntimeoutSeconds = 30\n\n\
        [[expect.metric]]\nseries = 'a_total'\nequals = 0\n\n[[expect.metric]]\n\
        series = 'requests_total{dep=\"c\",outcom=\"ok\"}'\nat_most = 0\n";

    #[test]
    fn field_paths_split_into_keys_and_indexes() {
        assert_eq!(
            steps("expect.metric[1].series"),
            Some(vec![
                Step::Key("expect"),
                Step::Key("metric"),
                Step::Index(1),
                Step::Key("series")
            ])
        );
        assert_eq!(
            steps("fault[2]"),
            Some(vec![Step::Key("fault"), Step::Index(2)])
        );
        assert_eq!(steps("a[x]"), None);
        assert_eq!(steps("a[1]b"), None);
        assert_eq!(steps(".a"), None);
    }

    #[test]
    fn values_are_located_at_their_first_character() {
        assert_eq!(locate(TEXT, "duration"), Some((2, 12)));
        assert_eq!(locate(TEXT, "expect.metric[0].series"), Some((8, 10)));
        assert_eq!(locate(TEXT, "expect.metric[1].series"), Some((12, 10)));
        assert_eq!(locate(TEXT, "expect.metric[1].at_most"), Some((13, 11)));
        // A defaulted key points at the table it would live in.
        assert_eq!(
            locate(TEXT, "engine.modelFailover.fallbacks").map(|p| p.0),
            locate(TEXT, "engine").map(|p| p.0)
        );
        assert_eq!(locate(TEXT, "traffic"), None);
        assert_eq!(locate("not = [toml", "not"), None);
    }

    #[test]
    fn a_needle_inside_a_value_is_located() {
        assert_eq!(
            locate_within(TEXT, "expect.metric[1].series", "outcom="),
            Some((12, 34))
        );
        assert_eq!(
            locate_within(TEXT, "expect.metric[1].series", "absent"),
            Some((12, 10))
        );
    }
}
