//! Series selectors (`requests_total{dep="x",outcome="ok"}`) and sums over an [`Exposition`].
//!
//! A selector matches every sample of that exact sample name whose labels include the given
//! ones (docs/scenario.md: `model_fallbacks_total` alone sums every series of that name).

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use super::parse::{Cursor, Exposition, ParseError, Sample};

/// A sample name plus required label values.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Selector {
    /// The sample name (e.g. `requests_total`, `request_latency_seconds_count`).
    pub name: String,
    /// Labels a sample must carry with exactly these values.
    pub labels: BTreeMap<String, String>,
}

impl Selector {
    /// Parses `name` or `name{a="b",...}` (label values escaped as in the exposition format).
    /// Errors carry the 1-based column (line is always 1).
    pub fn parse(text: &str) -> Result<Self, ParseError> {
        let mut c = Cursor {
            s: text,
            pos: 0,
            line: 1,
        };
        c.blanks();
        let name = c.metric_name()?.to_string();
        let labels = if c.peek() == Some(b'{') {
            c.labels()?
        } else {
            Vec::new()
        };
        c.blanks();
        if c.pos < text.len() {
            return Err(c.err("unexpected text after the selector"));
        }
        Ok(Self {
            name,
            labels: labels.into_iter().collect(),
        })
    }

    /// True when `s` has this name and carries every required label.
    pub fn matches(&self, s: &Sample) -> bool {
        s.name == self.name && self.labels.iter().all(|(k, v)| s.labels.get(k) == Some(v))
    }
}

impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)?;
        if !self.labels.is_empty() {
            let parts: Vec<String> = self
                .labels
                .iter()
                .map(|(k, v)| {
                    let v = v
                        .replace('\\', "\\\\")
                        .replace('"', "\\\"")
                        .replace('\n', "\\n");
                    format!("{k}=\"{v}\"")
                })
                .collect();
            write!(f, "{{{}}}", parts.join(","))?;
        }
        Ok(())
    }
}

/// A series selector (in a scenario's `expect.metric`) that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad series selector {text:?} at column {}: {}", source.col, source.msg)]
pub struct BadSelector {
    pub text: String,
    #[source]
    pub source: ParseError,
}

impl TryFrom<String> for Selector {
    type Error = BadSelector;
    fn try_from(s: String) -> Result<Self, BadSelector> {
        Selector::parse(&s).map_err(|source| BadSelector { text: s, source })
    }
}

impl From<Selector> for String {
    fn from(s: Selector) -> String {
        s.to_string()
    }
}

impl Exposition {
    /// Every sample, in input order.
    pub fn samples(&self) -> impl Iterator<Item = &Sample> {
        self.families.iter().flat_map(|f| f.samples.iter())
    }

    /// The samples a selector matches.
    pub fn select<'a>(&'a self, sel: &'a Selector) -> impl Iterator<Item = &'a Sample> + 'a {
        self.samples().filter(move |s| sel.matches(s))
    }

    /// The sum of every matching sample (0 when none match).
    pub fn sum(&self, sel: &Selector) -> f64 {
        self.select(sel).map(|s| s.value).sum()
    }

    /// The family called `name` (for histograms, the base name).
    pub fn family(&self, name: &str) -> Option<&super::parse::Family> {
        self.families.iter().find(|f| f.name == name)
    }
}
