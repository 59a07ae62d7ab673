//! `[[expect.turn]] reported_model = "served"` / `usage = "served"`: the model and usage a
//! gateway reported in its 2xx answers against what the upstream served for each turn
//! ([`super::answers`]). Its checks and its pure evaluator over the run's answers.
//!
//! A row passes only when at least one answer was compared and none differed; a difference
//! fails naming the turn and both values; an answer with no row in the upstream's record (the
//! marker stripped) fails the row too (nothing on it is known); an answer whose usage the
//! upstream never sent is `unknown`, counted in the witness and not judged.

use super::answers::{AnswerCheck, Compared};
use super::turn::{ExpectTurn, finish, row};
use super::{ExpectationResult, Witness};
use crate::gateway::TurnEnd;

/// The one value the keys take.
const SERVED: &str = "served";

/// One turn as these rows see it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AnswerSeen<'a> {
    /// Its traffic line.
    pub line: usize,
    /// How it ended.
    pub outcome: Option<TurnEnd>,
    /// Its 2xx answer, checked against the upstream's record.
    pub answer: Option<&'a AnswerCheck>,
}

/// `reported_model` and `usage` say `"served"`, and name no outcome without an answer.
pub(crate) fn check(t: &ExpectTurn) -> Result<(), (&'static str, String)> {
    for (key, v) in [("reported_model", &t.reported_model), ("usage", &t.usage)] {
        if let Some(v) = v
            && v != SERVED
        {
            return Err((
                key,
                format!("`{key} = \"{v}\"`: the one value is \"served\" (what the upstream served for the turn)"),
            ));
        }
    }
    if t.answers()
        && let Some(o) = t.outcome.as_deref().and_then(TurnEnd::parse)
        && !matches!(o, TurnEnd::Answered | TurnEnd::Truncated)
    {
        return Err((
            "outcome",
            format!(
                "`{}` turns have no answer to compare: `reported_model` and `usage` read \
                 `answered` or `truncated` turns (all of them when no outcome is named)",
                o.as_str()
            ),
        ));
    }
    Ok(())
}

/// One aspect of an answer compared with what was served.
type Aspect = fn(&AnswerCheck) -> Compared;

/// What one aspect's comparisons came to.
#[derive(Debug, Default)]
struct Tally {
    same: u64,
    differ: Vec<String>,
    unknown: u64,
    unrecorded: Vec<usize>,
}

/// The rows of the `[[expect.turn]]` tables with `reported_model` or `usage` over `turns`;
/// `stopped`: the run was cut short.
pub(crate) fn evaluate(
    expect: &[ExpectTurn],
    turns: &[AnswerSeen<'_>],
    stopped: bool,
) -> Vec<ExpectationResult> {
    let mut out = Vec::new();
    for e in expect {
        let want = e.outcome.as_deref().and_then(TurnEnd::parse);
        let answers: Vec<(usize, &AnswerCheck)> = turns
            .iter()
            .filter(|t| want.is_none_or(|w| t.outcome == Some(w)))
            .filter_map(|t| t.answer.map(|a| (t.line, a)))
            .collect();
        let subject = e.outcome.as_deref().unwrap_or("answered or truncated");
        let aspects: [(&str, bool, Aspect); 2] = [
            ("reported model", e.reported_model.is_some(), AnswerCheck::model),
            ("usage", e.usage.is_some(), AnswerCheck::usage),
        ];
        for (what, asked, compare) in aspects {
            if !asked {
                continue;
            }
            let mut t = Tally::default();
            for (line, a) in &answers {
                match compare(a) {
                    Compared::Same => t.same += 1,
                    Compared::Differs { got, served } => {
                        t.differ.push(format!("turn {line}: {got}, served {served}"));
                    }
                    Compared::Unknown(_) => t.unknown += 1,
                    Compared::Unrecorded => t.unrecorded.push(*line),
                }
            }
            out.push(judge(what, subject, &t, stopped));
        }
    }
    out
}

fn judge(what: &str, subject: &str, t: &Tally, stopped: bool) -> ExpectationResult {
    let differ = t.differ.len() as u64;
    let compared = t.same + differ;
    let unrecorded = t.unrecorded.len() as u64;
    let mut observed = format!("{compared} answers compared, {differ} differ");
    if differ > 0 {
        observed.push_str(&format!(" ({})", t.differ.join("; ")));
    }
    if t.unknown > 0 {
        observed.push_str(&format!(", {} unknown", t.unknown));
    }
    if unrecorded > 0 {
        let lines: Vec<String> = t.unrecorded.iter().map(usize::to_string).collect();
        observed.push_str(&format!(
            ", {unrecorded} with no row in the upstream's record (turns {}: the turn marker \
             stripped?) not judged",
            lines.join(", ")
        ));
    }
    if compared == 0 {
        observed.push_str(": nothing to judge");
    }
    let mut r = row(
        format!("{what} = served"),
        observed,
        &format!("turns {subject}"),
    );
    // `turns`: the kind's evidence (the answers compared).
    r.witness = Witness::of(&[
        ("turns", compared),
        ("turns_compared", compared),
        ("turns_differ", differ),
        ("turns_unknown", t.unknown),
        ("turns_unrecorded", unrecorded),
    ]);
    let certain_fail = differ > 0 || unrecorded > 0;
    let ok = compared > 0 && !certain_fail;
    finish(r, ok, certain_fail, stopped)
}

#[cfg(test)]
mod tests;
