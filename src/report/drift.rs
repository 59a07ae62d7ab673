//! report.json `drift`: the "Since the last runs" section — this run's key figures against the
//! median of the previous runs of the same scenario and kind of system (`history::drift`
//! computes it when the report is finished). A leaf of the model; its Markdown and HTML are
//! [`super::drift_render`].

use serde::{Deserialize, Serialize};

use crate::util::round::ser3;
use crate::verdict::drift::change_text;

/// The default number of earlier runs compared against.
pub const DEFAULT_WINDOW: usize = 4;
/// The default threshold: a figure that moved more than this fraction of its median is
/// flagged.
pub const DEFAULT_THRESHOLD: f64 = 0.25;

/// report.json `drift`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DriftSection {
    /// The system under test of this run (`rehearse engine 0.9.0`, `OpenClaw 2026.9.6`).
    pub system: String,
    /// The change of system or version since the previous run (`OpenClaw 2026.9.2 →
    /// 2026.9.6`), compared against the runs before it.
    #[serde(default)]
    pub change: Option<String>,
    /// The earlier runs compared against (their directories, relative to the report dir),
    /// oldest first.
    #[serde(default)]
    pub baseline: Vec<String>,
    /// At most this many earlier runs are compared against.
    pub window: usize,
    /// A figure that moved more than this fraction of its median is flagged.
    #[serde(serialize_with = "ser3")]
    pub threshold: f64,
    /// One row per figure of each arm.
    #[serde(default)]
    pub rows: Vec<DriftRow>,
    /// Why nothing was compared, when nothing was (no earlier run, a run that did not finish).
    #[serde(default)]
    pub note: Option<String>,
}

/// One figure of one arm against its median.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DriftRow {
    /// The arm (policy, target kind, coordination).
    pub policy: String,
    /// The figure's flat name (`open_ms{crm_search}`).
    pub figure: String,
    /// This run's value (null: not observed).
    #[serde(default, serialize_with = "crate::report::figures::ser3_opt")]
    pub value: Option<f64>,
    /// The median of the earlier runs that had it (null: none had it).
    #[serde(default, serialize_with = "crate::report::figures::ser3_opt")]
    pub median: Option<f64>,
    /// How many earlier runs had it.
    pub runs: usize,
    /// Moved more than the threshold (and more than the figure's noise floor).
    pub flagged: bool,
}

impl DriftRow {
    /// `+42%`, `from 0`, `new`, `gone`, or `–`.
    pub fn change(&self) -> String {
        match (self.median, self.value) {
            (Some(m), Some(v)) => change_text(m, v),
            (None, Some(_)) => "new".into(),
            (Some(_), None) => "gone".into(),
            (None, None) => "–".into(),
        }
    }
}
