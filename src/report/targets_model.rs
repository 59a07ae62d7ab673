//! report.json `targets`, the data only: one scenario run against several `--target` files side
//! by side, every arm (which target file it came from, its kind, gateway and version, its
//! target's own verdict, its directory in the run's) and the rows of the side-by-side table
//! (the versions table's figures, generalised, and every expectation row's verdict per arm).
//! Built by `targets::build`, rendered by `targets::table` — both in [`super::targets`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::target::TargetReport;
use super::versions_model::DiffRow;
use crate::scenario::target_file::TargetFileUsed;

/// How a side-by-side run's verdict is decided, as the report says it.
pub const VERDICT_RULE: &str =
    "the run's verdict is the worst arm's (pass < fail < incomplete < error); each arm is judged on its own";

/// report.json `targets`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TargetsSection {
    /// How the run's verdict follows from the arms' ([`VERDICT_RULE`]).
    pub verdict_rule: String,
    /// Every arm, in run order (`policies[]` in the same order, by the same names).
    pub arms: Vec<TargetArm>,
    /// The side-by-side table, one row per figure or expectation; one cell per arm.
    pub diff: Vec<DiffRow>,
}

/// One arm of a side-by-side run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetArm {
    /// Its name (`policies[].policy`): the target file's stem, then `@VERSION` for a version
    /// side by side or `/POLICY` for one of the embedded engine's policies when its target has
    /// several arms.
    pub arm: String,
    /// The target file it came from: its path as given and the SHA-256 of its bytes.
    pub target_file: TargetFileUsed,
    /// The target's kind (`embedded`, `openclaw`, `http`, `litellm`, `portkey`).
    pub kind: String,
    /// The gateway it ran against: its URL for `http`, else the gateway's kind (`null` for
    /// the embedded engine).
    #[serde(default)]
    pub gateway: Option<String>,
    /// The gateway's version (its install's, else what it said; `null`: none or not known).
    #[serde(default)]
    pub version: Option<String>,
    /// The verdict of its target's arms judged alone (a target's versions share it): `pass`,
    /// `fail`, `incomplete` or `error`.
    pub verdict: String,
    /// Its directory in the run directory, holding its raw files (upstream.jsonl,
    /// events.jsonl, scrapes.prom.gz, the gateway's kept files).
    pub dir: String,
    /// Model requests the upstream received per profile id during the arm (warm-up left out;
    /// empty for the embedded engine, whose requests are in its own sections).
    #[serde(default)]
    pub attempts: BTreeMap<String, u64>,
    /// Its gateway's `target` block (`null` for the embedded engine, and when it never ran).
    #[serde(default)]
    pub target: Option<TargetReport>,
}
