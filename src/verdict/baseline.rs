//! The key figures' names ([`FIGURES`], flat names [`split_name`]) and one key figure across
//! runs, for drift: what a run holds of it ([`seen`]: a value, known
//! not to have happened, or not counted), the runs before as one [`Baseline`], and how this run
//! compares with them ([`change`]). "Not counted" is never 0 and never "did not happen": a time
//! of a dep is known absent only where the run watched that dep's breaker (`openings{dep}` is
//! among its figures), a time of a provider only where it counted that provider; a count is
//! present wherever the run could count it.

use std::collections::BTreeMap;

/// Earlier runs needed before a drift row is judged.
pub const MIN_BASELINE: usize = 2;

/// The figure names, for validation and did-you-mean: (name, scope), scope `dep`, `provider`
/// or `` (run-wide).
pub const FIGURES: &[(&str, &str)] = &[
    ("openings", "dep"),
    ("time_to_open_ms", "dep"),
    ("open_ms", "dep"),
    ("probes_per_half_open", "dep"),
    ("half_open_to_closed_ms", "dep"),
    ("rotations", "provider"),
    ("cooldowns", "provider"),
    ("fallbacks", "provider"),
    ("time_to_first_rotation_ms", "provider"),
    ("time_to_first_fallback_ms", "provider"),
    ("replay_lag_p99_ms", ""),
    ("expectations_passed", ""),
    ("expectations_failed", ""),
    ("expectations_not_reached", ""),
];

/// A flat name's figure and scope: `open_ms{crm_search}` → (`open_ms`, Some(`crm_search`)).
pub fn split_name(flat: &str) -> (&str, Option<&str>) {
    match flat.split_once('{') {
        Some((n, rest)) => (n, Some(rest.trim_end_matches('}'))),
        None => (flat, None),
    }
}

/// The median of some values (`None` when empty).
pub fn median(values: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// What one run holds of a figure (a flat name).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Seen {
    /// Its value (a count is a value, 0 included, wherever the run could count it).
    Value(f64),
    /// Known not to have happened: the run watched the figure's subject (a dep's breaker, a
    /// provider) and it never got there (a breaker that never opened has no open time).
    Absent,
    /// The run could not count it: its subject was not watched, or it has no key figures.
    Unknown,
}

/// The counts among the figures: present wherever the run could count them, so their absence
/// is always "unknown", never "did not happen".
const COUNTS: &[&str] = &[
    "openings",
    "rotations",
    "cooldowns",
    "fallbacks",
    "replay_lag_p99_ms",
    "expectations_passed",
    "expectations_failed",
    "expectations_not_reached",
];

/// The figure `name` in one run's flat figures (`None`: the run has no figures for the arm).
/// A time of a dep is `Absent` when the run watched that dep's breaker (`openings{dep}` is
/// there), a time of a provider when the run counted that provider (`rotations{provider}`).
pub fn seen(flat: Option<&BTreeMap<String, f64>>, name: &str) -> Seen {
    let Some(f) = flat else {
        return Seen::Unknown;
    };
    if let Some(v) = f.get(name) {
        return Seen::Value(*v);
    }
    let (base, scope) = split_name(name);
    let Some(subject) = scope.filter(|_| !COUNTS.contains(&base)) else {
        return Seen::Unknown;
    };
    let witness = match FIGURES.iter().find(|(n, _)| *n == base).map(|(_, s)| *s) {
        Some("dep") => "openings",
        Some("provider") => "rotations",
        _ => return Seen::Unknown,
    };
    if f.contains_key(&format!("{witness}{{{subject}}}")) {
        Seen::Absent
    } else {
        Seen::Unknown
    }
}

/// One figure over the runs before: their values, and how many watched for it and saw it not
/// happen, or could not count it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Baseline {
    /// The values of the runs that had it.
    pub values: Vec<f64>,
    /// Runs that watched its subject and saw it not happen.
    pub absent: usize,
    /// Runs that could not count it.
    pub unknown: usize,
}

impl Baseline {
    /// The baseline of some runs' states of one figure.
    pub fn of(states: impl IntoIterator<Item = Seen>) -> Self {
        let mut b = Self::default();
        for s in states {
            match s {
                Seen::Value(v) => b.values.push(v),
                Seen::Absent => b.absent += 1,
                Seen::Unknown => b.unknown += 1,
            }
        }
        b
    }

    /// Runs that could count it (had it, or saw it not happen).
    pub fn known(&self) -> usize {
        self.values.len() + self.absent
    }

    /// The median of its values.
    pub fn median(&self) -> Option<f64> {
        median(&self.values)
    }
}

/// How a figure of this run compares with the runs before ([`change`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Change {
    /// This run could not count it.
    NotCounted,
    /// Fewer than [`MIN_BASELINE`] runs before could count it.
    NoBaseline,
    /// Both have values: this run's against the median of theirs.
    Compared {
        /// This run's.
        value: f64,
        /// The median of the runs before that had it.
        median: f64,
    },
    /// This run has it and none of the runs before did, though each watched for it: what is
    /// new (a breaker opening for the first time, a first fallback).
    New {
        /// This run's.
        value: f64,
    },
    /// The runs before had it, this one watched for it and it did not happen.
    Gone {
        /// The median of the runs before that had it.
        median: f64,
    },
    /// Neither this run nor any run before had it, and each watched for it.
    StillAbsent,
}

/// How `now` compares with `before`.
pub fn change(now: Seen, before: &Baseline) -> Change {
    if now == Seen::Unknown {
        return Change::NotCounted;
    }
    if before.known() < MIN_BASELINE {
        return Change::NoBaseline;
    }
    match (now, before.median()) {
        (Seen::Value(value), Some(median)) => Change::Compared { value, median },
        (Seen::Value(value), None) => Change::New { value },
        (_, Some(median)) => Change::Gone { median },
        (_, None) => Change::StillAbsent,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_is_absent_only_where_its_subject_was_watched() {
        let f: BTreeMap<String, f64> = [
            ("openings{crm}".to_string(), 0.0),
            ("open_ms{calc}".to_string(), 900.0),
            ("rotations{openai}".to_string(), 0.0),
        ]
        .into();
        assert_eq!(seen(Some(&f), "open_ms{crm}"), Seen::Absent);
        assert_eq!(seen(Some(&f), "open_ms{calc}"), Seen::Value(900.0));
        // calc has a value but no openings count: a report written before `openings` was a
        // figure; its other times are unknown, not absent.
        assert_eq!(seen(Some(&f), "time_to_open_ms{calc}"), Seen::Unknown);
        assert_eq!(seen(Some(&f), "time_to_first_fallback_ms{openai}"), Seen::Absent);
        // A count missing is never "did not happen".
        assert_eq!(seen(Some(&f), "cooldowns{openai}"), Seen::Unknown);
        assert_eq!(seen(Some(&f), "openings{other}"), Seen::Unknown);
        assert_eq!(seen(None, "openings{crm}"), Seen::Unknown);
    }
}
