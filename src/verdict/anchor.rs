//! Time from a fault: `since = { fault = "outage", edge = "start" }` on an expectation moves the
//! zero of every time bound of its row from the run start to a fault's start or end (a `[[fault]]`
//! by its `name`, or by its 0-based index as the report's `fault[N]`). The table as written
//! ([`Since`]) and the one place its instant is computed ([`resolve`]), pure.
//!
//! - A fault's **start** is its configured `from` (0 without one), scenario time: the harness
//!   divides it by `--speed` like every time, and the record's times are multiplied back.
//! - Its **end** is its configured `until`, unless it has `first = N` or no `until`: then its
//!   last application, the scenario time of the last request the upstream's record says it
//!   applied to (`fault_index`; canaries and the warm-up's requests left out).
//! - A fault that applied to no request anchors nothing ([`Unanchored`]): a row anchored at it
//!   is `fail` (or `not_reached` in a run cut short) saying so, never anchored at 0.
//!
//! Which faults an anchor may name is checked before the run (`validate_anchors`, exit 2 at the
//! `since`'s `file:line:col` with the nearest name).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{ExpectStatus, ExpectationResult, secs};
use crate::upstream::FaultSpec;

/// `since = { fault = …, edge = … }`: where a row's times count from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Since {
    /// The fault: its `name`, or its 0-based index.
    pub fault: FaultRef,
    /// Its start (default) or its end.
    #[serde(default)]
    pub edge: Edge,
}

/// A `[[fault]]` as an expectation names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum FaultRef {
    /// `fault = 1`: 0-based, in file order (the report's `fault[1]`).
    Index(usize),
    /// `fault = "outage"`: its `name`.
    Name(String),
}

/// Which instant of a fault.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Edge {
    /// Its configured `from`.
    #[default]
    Start,
    /// Its `until`, or its last application (with `first = N` or no `until`).
    End,
}

impl Edge {
    fn as_str(self) -> &'static str {
        match self {
            Self::Start => "start",
            Self::End => "end",
        }
    }
}

impl FaultRef {
    /// The index of the fault this names among `faults`, if any.
    pub(crate) fn index_in(&self, faults: &[FaultSpec]) -> Option<usize> {
        match self {
            Self::Index(i) => (*i < faults.len()).then_some(*i),
            Self::Name(n) => faults.iter().position(|f| f.name.as_deref() == Some(n)),
        }
    }
}

impl Since {
    /// How a row says it: ``fault `outage` start`` or `fault[1] end`.
    pub(crate) fn label(&self) -> String {
        let fault = match &self.fault {
            FaultRef::Index(i) => format!("fault[{i}]"),
            FaultRef::Name(n) => format!("fault `{n}`"),
        };
        format!("{fault} {}", self.edge.as_str())
    }
}

/// How often one fault applied and when last: what the upstream's record says of it, scenario
/// ms.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Applied {
    /// Requests it applied to (canaries and the warm-up's left out).
    pub count: u64,
    /// The last of them, scenario ms since the run start.
    pub last_ms: Option<u64>,
}

/// What anchors are resolved against: the scenario's faults and what the record says of each.
#[derive(Debug, Clone, Copy)]
pub struct FaultsSeen<'a> {
    /// The `[[fault]]` tables, in file order.
    pub faults: &'a [FaultSpec],
    /// By fault index; a fault that never applied is absent (or counted 0).
    pub applied: &'a BTreeMap<usize, Applied>,
}

/// An anchor's instant, with what its witness and detail say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Anchored {
    /// Scenario ms since the run start.
    pub at_ms: u64,
    /// How many requests the fault applied to.
    pub applications: u64,
    /// ``fault `outage` start (5.000s)``.
    pub text: String,
}

/// An anchor with no instant: the fault never applied (or is not one of the scenario's).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct Unanchored(pub String);

/// No applications of any fault: what a judge is given when the run's record is not at hand
/// (an arm that never ran, a test) — every anchor then resolves to [`Unanchored`].
static NOTHING_APPLIED: BTreeMap<usize, Applied> = BTreeMap::new();

impl FaultsSeen<'_> {
    /// No fault and no application: every `since` is unanchored, never anchored at 0.
    pub(crate) fn none() -> FaultsSeen<'static> {
        FaultsSeen {
            faults: &[],
            applied: &NOTHING_APPLIED,
        }
    }

    /// Where a row's times count from: `Ok(None)` the run start (no `since`), else its `since`
    /// resolved ([`resolve`]).
    pub(crate) fn anchor(&self, since: Option<&Since>) -> Result<Option<Anchored>, Unanchored> {
        since.map(|s| resolve(s, self)).transpose()
    }
}

impl Anchored {
    /// An anchored row says where its anchor fell: its witness (`anchor_ms`, and how often the
    /// fault applied, `fault_applications`) and the end of its detail ("; times from fault
    /// `outage` start (5.000s)"). Every kind that takes `since` marks its rows so.
    pub(crate) fn mark(&self, r: &mut ExpectationResult) {
        r.witness.set("anchor_ms", self.at_ms);
        r.witness.set("fault_applications", self.applications);
        r.detail = format!("{}; times from {}", r.detail, self.text);
    }
}

/// Settles the row of an expectation whose anchor has no instant (its fault never applied): never
/// a pass — `fail` once the run was seen to its end, `not_reached` when it was `cut` short (the
/// fault might still have applied) — its observed "no anchor", its witness `fault_applications
/// 0`, its detail the reason. `subject` opens the detail (the dep, the alert, the turns).
pub(crate) fn unanchored_row(r: &mut ExpectationResult, subject: &str, why: &Unanchored, cut: bool) {
    r.ok = false;
    r.observed = "no anchor".into();
    r.observed_ms = None;
    r.delta_ms = None;
    r.witness.set("fault_applications", 0);
    let expected = &r.expected;
    if cut {
        r.status = ExpectStatus::NotReached;
        r.detail = format!("{subject} {expected}: not reached ({why}; the run was cut short)");
    } else {
        r.status = ExpectStatus::Fail;
        r.detail = format!("{subject} {expected}: {why}");
    }
}

/// ` since fault `outage` start` of an anchored row's `expected` (empty without `since`).
pub(crate) fn since_text(since: Option<&Since>) -> String {
    since.map_or(String::new(), |s| format!(" since {}", s.label()))
}

fn ms(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// The one place an anchor's instant is computed (see the module's opening).
pub(crate) fn resolve(since: &Since, seen: &FaultsSeen<'_>) -> Result<Anchored, Unanchored> {
    let label = since.label();
    let Some(i) = since.fault.index_in(seen.faults) else {
        return Err(Unanchored(format!(
            "{label}: the scenario has no such fault ({} [[fault]] tables)",
            seen.faults.len()
        )));
    };
    let spec = &seen.faults[i];
    let applied = seen.applied.get(&i).copied().unwrap_or_default();
    let shown = match &since.fault {
        FaultRef::Index(_) => format!("fault[{i}]"),
        FaultRef::Name(n) => format!("fault '{n}'"),
    };
    let Some(last) = applied.last_ms.filter(|_| applied.count > 0) else {
        return Err(Unanchored(format!(
            "{shown} never applied: the times of this row count from its {}, which never came",
            since.edge.as_str()
        )));
    };
    let at_ms = match since.edge {
        Edge::Start => spec.from.map_or(0, ms),
        Edge::End => match spec.until {
            Some(u) if spec.first.is_none() => ms(u),
            _ => last,
        },
    };
    Ok(Anchored {
        at_ms,
        applications: applied.count,
        text: format!("{label} ({})", secs(i64::try_from(at_ms).unwrap_or(i64::MAX))),
    })
}

#[cfg(test)]
mod tests;
