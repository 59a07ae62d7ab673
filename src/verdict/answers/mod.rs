//! Answers the client got (pure): a gateway's 2xx answer to a turn against what the upstream
//! served for that turn — the answering request of the turn's row in the upstream's record
//! ([`crate::verdict::turns`]). A 2xx whose content is shorter than the `t1 … tN` the upstream
//! built is [`TurnEnd::Truncated`], not answered; the model and usage the gateway reported are
//! compared with the model the upstream served and the usage it sent
//! (`[[expect.turn]] reported_model` / `usage`, [`super::answer_rows`]).
//!
//! The rules (docs/report.md "Answers the client got"):
//! - the request *served* for a turn is its answering request (`answered_by`); a turn with none
//!   whose last request a stream fault cut or broke (`reset_mid_stream`, `stall_stream`,
//!   `malformed_chunk`, `error_event`) was served
//!   that cut request: a gateway that returns 200 on it passes on fewer tokens than were built;
//!   so was one whose whole answer the client (the gateway) stopped reading before its end
//!   (`whole: false` on a request the upstream was answering whole, [`TurnRequest::abandoned`]);
//! - *truncated*: the content is the served answer cut short — its words are `t1 t2 … tk` in
//!   order (the last one possibly cut inside), `k` less than the `N` tokens of the served
//!   request's answer; content of another shape (a gateway that writes its own text) is not
//!   judged truncated, its words and the served `N` stay in the row;
//! - the usage is judged only when the served request's answer carried one (a whole answer with
//!   a usage block or chunk), else it is unknown (the gateway computes its own);
//! - a turn with no row in the record (the marker stripped, or no request for it) is
//!   *unrecorded*: none of this is judged on it, and a row over it is no pass.

use serde::{Deserialize, Serialize};

use crate::gateway::TurnEnd;
use crate::verdict::turns::{TurnRequest, TurnRow};
use crate::wire::usage::Usage;

/// What the upstream served for one turn: its served request's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Served {
    /// The index of the served request among the turn's requests (`policies[].turns.rows[]`).
    pub request: usize,
    /// The model it named.
    #[serde(default)]
    pub model: Option<String>,
    /// The `N` of the `t1 … tN` built for it (`None`: a recording without it).
    #[serde(default)]
    pub tokens: Option<u64>,
    /// The usage its answer carried (`None`: none was sent).
    #[serde(default)]
    pub usage: Option<Usage>,
    /// The stream fault that cut it, when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut: Option<String>,
}

/// A gateway's 2xx answer to one turn and what the upstream served for it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnswerCheck {
    /// The answer's content in whitespace-separated words (`t1 … tN` is `N`).
    pub content_tokens: u64,
    /// Its content is the mock's answer, maybe cut short: `t1 t2 … tk` in order, the last word
    /// possibly cut inside (what truncation is judged on).
    #[serde(default)]
    pub served_shape: bool,
    /// The `model` the gateway's answer named.
    #[serde(default)]
    pub reported_model: Option<String>,
    /// The `usage` the gateway's answer carried.
    #[serde(default)]
    pub usage: Option<Usage>,
    /// Whether the upstream's record has a row for this turn (false: the marker was stripped
    /// or no request carried it; nothing below is known).
    pub recorded: bool,
    /// The served request's answer (`None` with `recorded`: no request of the turn answered).
    #[serde(default)]
    pub served: Option<Served>,
}

/// One comparison of one turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Compared {
    /// The gateway reported what was served.
    Same,
    /// It reported `got` where `served` was served.
    Differs { got: String, served: String },
    /// Not judged: why (no usage sent, no answering request).
    Unknown(&'static str),
    /// The turn has no row in the upstream's record.
    Unrecorded,
}

/// Faults that cut an answer short after it began, or broke it inside a 200 stream (a
/// malformed chunk, an error event): a gateway that answers 200 on one passes on what came
/// before the break.
fn cuts(fault: Option<&str>) -> bool {
    matches!(
        fault,
        Some("reset_mid_stream" | "stall_stream" | "malformed_chunk" | "error_event")
    )
}

/// Words of `text` (what `t1 … tN` counts as `N`).
pub fn content_tokens(text: &str) -> u64 {
    text.split_whitespace().count() as u64
}

/// Whether `text` is `t1 t2 … tk` (k ≥ 0), the last word possibly a prefix of `tk`: the
/// upstream's answer, maybe cut short.
pub fn served_shape(text: &str) -> bool {
    let words: Vec<&str> = text.split_whitespace().collect();
    words.iter().enumerate().all(|(i, w)| {
        let whole = format!("t{}", i + 1);
        *w == whole || (i + 1 == words.len() && whole.starts_with(w))
    })
}

/// What the upstream served for the turn of `row`: its answering request, else its last
/// request when a stream fault cut it; `None` when neither.
pub fn served_of(row: &TurnRow) -> Option<Served> {
    let (i, r): (usize, &TurnRequest) = match row.answer() {
        Some(r) => (row.answered_by?, r),
        None => {
            let i = row.requests.len().checked_sub(1)?;
            let last = row.requests.get(i)?;
            if !cuts(last.fault.as_deref()) && !last.abandoned() {
                return None;
            }
            (i, last)
        }
    };
    let cut = cuts(r.fault.as_deref()).then(|| r.fault.clone()).flatten();
    Some(Served {
        request: i,
        model: r.model.clone(),
        tokens: r.tokens,
        // A cut answer never reached its usage.
        usage: if cut.is_some() { None } else { r.usage },
        cut,
    })
}

impl AnswerCheck {
    /// Its content is the answer served for the turn cut short (false when that is not
    /// known: no record, no served request, a recording without tokens; or when its content is
    /// not of the served answer's shape).
    pub fn truncated(&self) -> bool {
        self.served
            .as_ref()
            .and_then(|s| s.tokens)
            .is_some_and(|n| self.recorded && self.served_shape && self.content_tokens < n)
    }

    /// The reported model against the served one; a `PROVIDER/` prefix on either side is no
    /// difference (`mockai/m1` served, `m1` reported).
    pub fn model(&self) -> Compared {
        if !self.recorded {
            return Compared::Unrecorded;
        }
        let Some(served) = self.served.as_ref() else {
            return Compared::Unknown("no request of the turn answered");
        };
        let Some(want) = served.model.as_deref() else {
            return Compared::Unknown("the served request named no model");
        };
        match self.reported_model.as_deref() {
            Some(got) if same_model(got, want) => Compared::Same,
            got => Compared::Differs {
                got: got.unwrap_or("(none)").to_string(),
                served: want.to_string(),
            },
        }
    }

    /// The reported usage against the one the upstream sent; unknown when it sent none.
    pub fn usage(&self) -> Compared {
        if !self.recorded {
            return Compared::Unrecorded;
        }
        let Some(served) = self.served.as_ref() else {
            return Compared::Unknown("no request of the turn answered");
        };
        let Some(want) = served.usage else {
            return Compared::Unknown("the upstream sent no usage (the gateway computes its own)");
        };
        match self.usage {
            Some(got) if got == want => Compared::Same,
            got => Compared::Differs {
                got: got.map_or_else(|| "(none)".to_string(), |u| u.to_string()),
                served: want.to_string(),
            },
        }
    }
}

fn same_model(a: &str, b: &str) -> bool {
    let tail = |s: &str| s.rsplit_once('/').map_or(s, |(_, t)| t).to_string();
    a == b || (tail(a) == tail(b) && (a.ends_with(b) || b.ends_with(a)))
}

/// How a turn the client read as `end` ended once its answer is checked: an answered turn
/// whose content was truncated is [`TurnEnd::Truncated`].
pub fn outcome(end: TurnEnd, check: Option<&AnswerCheck>) -> TurnEnd {
    match (end, check) {
        (TurnEnd::Answered, Some(c)) if c.truncated() => TurnEnd::Truncated,
        _ => end,
    }
}

#[cfg(test)]
mod tests;
