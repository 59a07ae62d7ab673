//! report.json `versions`, the data only: OpenClaw versions run side by side, every version's
//! arm (its gateway's `target` block) and the rows of the behaviour-diff table. Built by
//! `versions::diff` from the key figures, rendered by `versions::table` — both in [`super::versions`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::target::TargetReport;

/// report.json `versions`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct VersionsSection {
    /// Every version asked for, in run order (those never run included, `ran = false`).
    pub arms: Vec<VersionArm>,
    /// The behaviour-diff table, one row per figure.
    pub diff: Vec<DiffRow>,
}

/// One version's arm.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct VersionArm {
    /// The version asked for (the arm's name, `policies[].policy`).
    pub version: String,
    /// The version the running gateway said it is (`null`: it never said, or never ran).
    #[serde(default)]
    pub reported: Option<String>,
    /// Model requests the upstream received per profile id during the run (warm-up left out).
    #[serde(default)]
    pub attempts: BTreeMap<String, u64>,
    /// Its gateway's `target` block (`null` when the arm never ran).
    #[serde(default)]
    pub target: Option<TargetReport>,
}

/// One row of the behaviour-diff table.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DiffRow {
    /// What the row is (`attempts`, `time to first rotation`, `cooldown`, `decision`, `turns`,
    /// `status`, ...).
    pub figure: String,
    /// Of what (a profile, a provider, an event, an outcome; empty for the arm).
    pub of: String,
    /// One cell per arm, in `arms` order, as shown (`-`: none or not run).
    pub shown: Vec<String>,
    /// The numbers behind `shown` where the row is numeric (`null`: none).
    pub values: Vec<Option<f64>>,
    /// The versions disagree: a number moved past 25 % and its noise floor (100 ms for times,
    /// 1 for counts), or the text differs.
    pub changed: bool,
}
