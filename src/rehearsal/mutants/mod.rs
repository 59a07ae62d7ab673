//! The suite's own mutants: every expectation of a finished run re-judged on the run's own
//! observation after a change that should fail it — a bound moved past what was observed, a
//! window moved off its events, `never` on an alert that fired, a dep renamed to one that cannot
//! have been watched. Pure: no second run, the one [`Observed`] the run judged (a ×1 run cannot
//! be repeated). A perturbation whose rows still all pass is a witness bug: the row passed on
//! something that does not depend on what it claims.
//!
//! Each expectation is judged alone (its kind's table holds only it; a transition keeps its
//! dep's others, which anchor `after`), once as written — its baseline, which must pass for it
//! to be perturbed — and once per perturbation. `[[expect.drift]]` (judged against the report
//! directory's history, after the report) and `[[expect.fleet]]` (judged by the fleet run from
//! its hosts' probes) are not re-judged here and are listed as such.
//!
//! Asked for with the hidden `REHEARSE_MUTANTS=1` (the test suite sets it on the runs it makes):
//! the run writes `mutants.json` beside its report.

use serde::{Deserialize, Serialize};

use crate::rehearsal::observation::Observed;
use crate::rehearsal::plan::ScenarioPlan;
use crate::rehearsal::section::{section, unapplied_faults};

mod perturb;
use perturb::perturb;
use crate::verdict::{ExpectKind, ExpectStatus, ExpectationResult, Expectations};

/// The environment variable that asks a run for its mutants.
const ENV: &str = "REHEARSE_MUTANTS";

/// One perturbation of one expectation, re-judged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Mutant {
    /// The arm it was judged in.
    pub arm: String,
    /// The expectation table and its entry (`attempts[2]`).
    pub entry: String,
    /// What was changed.
    pub change: String,
    /// The statuses of the entry's rows after the change.
    pub statuses: Vec<ExpectStatus>,
    /// True when every row still passed: a witness bug.
    pub survived: bool,
    /// The first row's detail after the change.
    pub detail: String,
}

/// An entry that was not perturbed, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Unperturbed {
    /// The arm.
    pub arm: String,
    /// The entry (`drift[0]`).
    pub entry: String,
    /// Why not.
    pub why: String,
}

/// `mutants.json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Mutants {
    /// The scenario.
    pub scenario: String,
    /// Every perturbation judged.
    pub mutants: Vec<Mutant>,
    /// Entries left alone.
    pub unperturbed: Vec<Unperturbed>,
}

impl Mutants {
    /// The perturbations that still passed.
    pub fn survivors(&self) -> Vec<&Mutant> {
        self.mutants.iter().filter(|m| m.survived).collect()
    }
}

/// One expectation entry: its table, its index there, and a way to put a changed copy of it
/// into an otherwise empty set of expectations.
struct Entry {
    name: String,
    kind: ExpectKind,
    /// The expectations that judge it alone.
    alone: Expectations,
    /// Which of the isolated rows are its own (a transition's dep-mates are judged beside it).
    nth: usize,
}

/// The mutants of a finished run: every expectation of every arm that ran, judged alone and
/// perturbed. Arms that never ran have nothing to perturb.
pub fn check(plan: &ScenarioPlan, observed: &Observed) -> Mutants {
    let file = &plan.checked.file;
    let hits: Vec<&crate::rehearsal::observation::Hits> =
        observed.observations.iter().map(|o| &o.fault_hits).collect();
    let never = unapplied_faults(&file.fault, &hits);
    let mut out = Mutants {
        scenario: file.name.clone(),
        ..Mutants::default()
    };
    for o in &observed.observations {
        let expect = file.expect_for(&o.arm);
        for (table, n) in [("drift", expect.drift.len()), ("fleet", expect.fleet.len())] {
            for i in 0..n {
                out.unperturbed.push(Unperturbed {
                    arm: o.arm.clone(),
                    entry: format!("{table}[{i}]"),
                    why: format!(
                        "{table} rows are judged outside the arm's section (drift: against the \
                         history; fleet: from every host's probes)"
                    ),
                });
            }
        }
        let judge = |e: &Expectations| -> Vec<ExpectationResult> {
            let mut p = plan.clone();
            p.checked.file.expect = e.clone();
            section(&p, o, &never)
                .expectations
                .into_iter()
                .filter(|r| r.kind != ExpectKind::FaultApplied)
                .collect()
        };
        for entry in entries(&expect) {
            let rows = own_rows(&judge(&entry.alone), &entry, &entry.alone);
            if rows.is_empty() || rows.iter().any(|r| r.status != ExpectStatus::Pass) {
                out.unperturbed.push(Unperturbed {
                    arm: o.arm.clone(),
                    entry: entry.name.clone(),
                    why: format!(
                        "judged alone it does not pass ({}), so there is nothing to perturb",
                        rows.first().map_or("no row".into(), |r| r.detail.clone())
                    ),
                });
                continue;
            }
            let changes = perturb(&entry, &rows, o, file.duration);
            if changes.is_empty() {
                out.unperturbed.push(Unperturbed {
                    arm: o.arm.clone(),
                    entry: entry.name.clone(),
                    why: "no perturbation is known for it".into(),
                });
            }
            for (change, e) in changes {
                let after = own_rows(&judge(&e), &entry, &e);
                let statuses: Vec<ExpectStatus> = after.iter().map(|r| r.status).collect();
                out.mutants.push(Mutant {
                    arm: o.arm.clone(),
                    entry: entry.name.clone(),
                    change,
                    survived: !statuses.is_empty()
                        && statuses.iter().all(|s| *s == ExpectStatus::Pass),
                    detail: after.first().map(|r| r.detail.clone()).unwrap_or_default(),
                    statuses,
                });
            }
        }
    }
    out
}

/// The rows of `entry` among the rows judged for it alone (`judged`: the expectations they were
/// judged from): all of them, but for a transition only its own — the diff gives each dep's
/// expected transitions one row each, in table order per dep.
fn own_rows(
    rows: &[ExpectationResult],
    entry: &Entry,
    judged: &Expectations,
) -> Vec<ExpectationResult> {
    if entry.kind != ExpectKind::Transition {
        return rows.to_vec();
    }
    let Some(me) = judged.transition.get(entry.nth) else {
        return Vec::new();
    };
    let pos = judged.transition[..entry.nth]
        .iter()
        .filter(|t| t.dep == me.dep)
        .count();
    rows.iter()
        .filter(|r| r.kind == ExpectKind::Transition && !r.is_unexpected())
        .filter(|r| r.dep.as_deref() == Some(me.dep.as_str()))
        .nth(pos)
        .cloned()
        .into_iter()
        .collect()
}

/// Every entry of `e`, each with the expectations that judge it alone.
fn entries(e: &Expectations) -> Vec<Entry> {
    let mut out = Vec::new();
    macro_rules! alone {
        ($table:ident, $kind:expr) => {
            for (i, x) in e.$table.iter().enumerate() {
                out.push(Entry {
                    name: format!("{}[{i}]", stringify!($table)),
                    kind: $kind,
                    alone: Expectations {
                        $table: vec![x.clone()],
                        ..Default::default()
                    },
                    nth: 0,
                });
            }
        };
    }
    for (i, t) in e.transition.iter().enumerate() {
        let mates: Vec<_> = e.transition.iter().filter(|x| x.dep == t.dep).cloned().collect();
        let nth = e.transition[..i].iter().filter(|x| x.dep == t.dep).count();
        out.push(Entry {
            name: format!("transition[{i}]"),
            kind: ExpectKind::Transition,
            alone: Expectations {
                transition: mates,
                ..Default::default()
            },
            nth,
        });
    }
    alone!(metric, ExpectKind::Metric);
    alone!(no_transition, ExpectKind::NoTransition);
    alone!(probe_spacing, ExpectKind::ProbeSpacing);
    alone!(attempts, ExpectKind::Attempts);
    alone!(first_request, ExpectKind::FirstRequest);
    alone!(no_request, ExpectKind::NoRequest);
    alone!(retry_gaps, ExpectKind::RetryGaps);
    alone!(recovered, ExpectKind::Recovered);
    alone!(openclaw_decision, ExpectKind::GatewayDecision);
    alone!(openclaw_cooldown, ExpectKind::GatewayCooldown);
    alone!(turn, ExpectKind::Turn);
    alone!(cooldown, ExpectKind::Cooldown);
    alone!(per_turn, ExpectKind::PerTurn);
    alone!(alert, ExpectKind::Alert);
    alone!(dashboard, ExpectKind::Dashboard);
    out
}

/// Writes `mutants.json` into `dir` when the environment asks for it (see the module's opening).
pub(crate) fn write_if_asked(dir: &std::path::Path, plan: &ScenarioPlan, observed: &Observed) {
    if std::env::var_os(ENV).is_none() {
        return;
    }
    let m = check(plan, observed);
    let text = serde_json::to_string_pretty(&m).unwrap_or_default();
    if let Err(e) = crate::util::atomic::write_atomic(&dir.join("mutants.json"), text.as_bytes()) {
        crate::errln!("writing mutants.json in {}: {e}", dir.display());
    }
}

