//! The sample names the engine's families export (a histogram's `_bucket`, `_sum`, `_count`),
//! the family of a sample, what it measures in time, a histogram's `le` values, and the check of
//! an `[[expect.metric]]` selector against them ([`check_selector`], [`SelectorProblem`]).

use super::{FAMILIES, Family, FamilyType, SampleTime, TimeBase};
use crate::util::suggest::closest;

const HISTOGRAM_SUFFIXES: [&str; 3] = ["_bucket", "_sum", "_count"];

/// Every sample name the engine can export, with its family and the label names a sample of
/// that name carries (a histogram's `_bucket` adds `le`).
pub fn sample_names() -> Vec<(String, &'static Family, Vec<&'static str>)> {
    let mut out = Vec::new();
    for f in &FAMILIES {
        match f.kind {
            FamilyType::Histogram(_) => {
                for suffix in HISTOGRAM_SUFFIXES {
                    let mut labels = f.labels.to_vec();
                    if suffix == "_bucket" {
                        labels.push("le");
                    }
                    out.push((format!("{}{suffix}", f.name), f, labels));
                }
            }
            _ => out.push((f.name.to_string(), f, f.labels.to_vec())),
        }
    }
    out
}

/// The family a sample name of the engine belongs to (a histogram's `_bucket`, `_sum` and
/// `_count` belong to it).
pub fn family_of(sample: &str) -> Option<&'static Family> {
    FAMILIES.iter().find(|f| match f.kind {
        FamilyType::Histogram(_) => HISTOGRAM_SUFFIXES
            .iter()
            .any(|x| sample.strip_suffix(x) == Some(f.name)),
        _ => f.name == sample,
    })
}

/// What the sample `name` measures in time (`None`: not a sample the engine exports).
pub fn sample_time(name: &str) -> Option<SampleTime> {
    let f = family_of(name)?;
    Some(match f.kind {
        FamilyType::Histogram(_) if name.ends_with("_count") => SampleTime::Base(TimeBase::NotTime),
        FamilyType::Histogram(_) if name.ends_with("_bucket") && f.time == TimeBase::Wall => {
            SampleTime::WallBuckets
        }
        _ => SampleTime::Base(f.time),
    })
}

/// The `le` values of a histogram's buckets as the exporter writes them (`0.025`, `1`, `+Inf`);
/// empty for a family that is not a histogram.
pub fn le_values(f: &Family) -> Vec<String> {
    match f.kind {
        FamilyType::Histogram(bounds) => bounds
            .iter()
            .map(|b| b.to_string())
            .chain(std::iter::once("+Inf".to_string()))
            .collect(),
        _ => Vec::new(),
    }
}

/// Why a selector can never match anything the engine exports.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectorProblem {
    /// No family exports a sample of that name.
    #[error("`{name}` is not a series the engine exports{hint} (series: {known})")]
    UnknownSeries {
        /// The name as written.
        name: String,
        /// `; did you mean `X`?` or empty.
        hint: String,
        /// Every exportable sample name, comma-separated.
        known: String,
    },
    /// The family has no label of that name.
    #[error("`{name}` has no label `{label}`{hint} (its labels: {known})")]
    UnknownLabel {
        /// The sample name.
        name: String,
        /// The label as written.
        label: String,
        /// `; did you mean `X`?` or empty.
        hint: String,
        /// The sample's label names, comma-separated.
        known: String,
    },
}

fn hint(word: &str, candidates: &[&str]) -> String {
    closest(word, candidates.iter().copied())
        .map(|c| format!("; did you mean `{c}`?"))
        .unwrap_or_default()
}

/// Checks that a selector's sample `name` is exported by some family and that every label it
/// requires is one that sample carries. `labels` are the selector's label names.
pub fn check_selector<'a>(
    name: &str,
    labels: impl IntoIterator<Item = &'a str>,
) -> Result<(), SelectorProblem> {
    let names = sample_names();
    let Some((_, _, known)) = names.iter().find(|(n, _, _)| n == name) else {
        let all: Vec<&str> = names.iter().map(|(n, _, _)| n.as_str()).collect();
        let histogram = FAMILIES
            .iter()
            .any(|f| f.name == name && matches!(f.kind, FamilyType::Histogram(_)));
        let hint = if histogram {
            format!("; it is a histogram: select `{name}_count`, `{name}_sum` or `{name}_bucket`")
        } else {
            hint(name, &all)
        };
        return Err(SelectorProblem::UnknownSeries {
            name: name.to_string(),
            hint,
            known: all.join(", "),
        });
    };
    for label in labels {
        if !known.contains(&label) {
            return Err(SelectorProblem::UnknownLabel {
                name: name.to_string(),
                label: label.to_string(),
                hint: hint(label, known),
                known: if known.is_empty() {
                    "none".into()
                } else {
                    known.join(", ")
                },
            });
        }
    }
    Ok(())
}
