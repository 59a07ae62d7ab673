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
    /// Earlier finished runs of this scenario and kind of system not compared, because their
    /// scenario digest differs (the file or one it names was edited since; `digest` null: a
    /// report written before digests), newest digest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<LeftOut>,
}

/// Earlier runs of another scenario digest, left out of the baseline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeftOut {
    /// Their digest (null: reports written before digests).
    pub digest: Option<String>,
    /// How many.
    pub runs: usize,
}

impl DriftSection {
    /// "Left out: 3 earlier runs of another scenario digest (1a2b3c4d5e6f), ..." (None when
    /// none was).
    pub fn left_out_text(&self) -> Option<String> {
        if self.left_out.is_empty() {
            return None;
        }
        let parts: Vec<String> = self
            .left_out
            .iter()
            .map(|l| {
                let runs = format!("{} run{}", l.runs, if l.runs == 1 { "" } else { "s" });
                match &l.digest {
                    Some(d) => format!(
                        "{runs} of scenario digest {}",
                        crate::scenario::digest::short(d)
                    ),
                    None => format!("{runs} written before reports recorded the scenario digest"),
                }
            })
            .collect();
        Some(format!(
            "Left out of the baseline (another version of the scenario or of the files it \
             names): {}.",
            parts.join(", ")
        ))
    }
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
    /// How many earlier runs could count it: had it, or watched its subject and saw it not
    /// happen (absent in reports written before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub known_runs: Option<usize>,
    /// False when this run could not count it (absent: it could; reports written before).
    #[serde(default = "counted", skip_serializing_if = "is_counted")]
    pub counted: bool,
    /// Flagged: moved more than the threshold (and more than the figure's noise floor), new
    /// (none of the runs before had it, though they watched for it) or gone.
    pub flagged: bool,
}

fn counted() -> bool {
    true
}

fn is_counted(c: &bool) -> bool {
    *c
}

impl DriftRow {
    /// `+42%`, `from 0`, `new`, `gone`, `not counted`, or `–`.
    pub fn change(&self) -> String {
        if !self.counted {
            return "not counted".into();
        }
        match (self.median, self.value) {
            (Some(m), Some(v)) => change_text(m, v),
            (None, Some(_)) => "new".into(),
            (Some(_), None) => "gone".into(),
            (None, None) => "–".into(),
        }
    }
}
