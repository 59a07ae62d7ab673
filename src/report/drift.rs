//! report.json `drift`: the "Since the last runs" section — this run's key figures against the
//! median of the previous runs of the same scenario and kind of system (`history::drift`
//! computes it when the report is finished), and its Markdown.

use serde::{Deserialize, Serialize};

use crate::util::round::ser3;
use crate::verdict::drift::{change_text, show};

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

/// The section in Markdown (empty when the report has none).
pub fn markdown(d: Option<&DriftSection>) -> String {
    let Some(d) = d else {
        return String::new();
    };
    let mut md = String::from("## Since the last runs\n\n");
    md.push_str(&format!("System under test: {}", d.system));
    if let Some(c) = &d.change {
        md.push_str(&format!(" — changed: **{c}**, compared against the runs before it"));
    }
    md.push_str("\n\n");
    if let Some(n) = &d.note {
        md.push_str(&format!("{n}\n\n"));
        return md;
    }
    let flagged = d.rows.iter().filter(|r| r.flagged).count();
    md.push_str(&format!(
        "Against the median of the last {} run(s) of this scenario and kind of system; a figure \
         that moved more than {:.0}% is flagged ({flagged} flagged).\n\n",
        d.baseline.len(),
        d.threshold * 100.0
    ));
    md.push_str("| policy | figure | this run | median | runs | change | |\n|---|---|---|---|---|---|---|\n");
    for r in &d.rows {
        let v = |x: Option<f64>| x.map_or("–".into(), |x| show(&r.figure, x));
        md.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} |\n",
            r.policy,
            r.figure,
            v(r.value),
            v(r.median),
            r.runs,
            r.change(),
            if r.flagged { "⚠ moved" } else { "" }
        ));
    }
    md.push('\n');
    md
}

/// The key figures of every arm, one Markdown table (empty when no arm has them).
pub fn figures_markdown(r: &crate::report::model::Report) -> String {
    let rows: Vec<(String, String, String)> = r
        .policies
        .iter()
        .filter_map(|p| p.figures.as_ref().map(|f| (p, f)))
        .flat_map(|(p, f)| {
            f.flat()
                .into_iter()
                .map(move |(n, v)| (p.policy.clone(), show(&n, v), n))
        })
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    let mut md = String::from("## Key figures\n\n| policy | figure | value |\n|---|---|---|\n");
    for (p, v, n) in rows {
        md.push_str(&format!("| {p} | {n} | {v} |\n"));
    }
    md.push('\n');
    md
}

/// The section in HTML (empty when the report has none).
pub fn html(d: Option<&DriftSection>) -> String {
    use crate::report::svg::esc;
    let Some(d) = d else {
        return String::new();
    };
    let mut o = String::from("<h2>Since the last runs</h2>\n");
    o.push_str(&format!("<p>System under test: {}", esc(&d.system)));
    if let Some(c) = &d.change {
        o.push_str(&format!(
            " — changed: <b>{}</b>, compared against the runs before it",
            esc(c)
        ));
    }
    o.push_str("</p>\n");
    if let Some(n) = &d.note {
        o.push_str(&format!("<p>{}</p>\n", esc(n)));
        return o;
    }
    o.push_str(&format!(
        "<p>Against the median of the last {} run(s); moved more than {:.0}% is flagged.</p>\n",
        d.baseline.len(),
        d.threshold * 100.0
    ));
    o.push_str("<table><tr><th>policy</th><th>figure</th><th>this run</th><th>median</th><th>runs</th><th>change</th></tr>\n");
    for r in &d.rows {
        let v = |x: Option<f64>| x.map_or("–".into(), |x| show(&r.figure, x));
        o.push_str(&format!(
            "<tr{}><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>\n",
            if r.flagged { " class=\"bad\"" } else { "" },
            esc(&r.policy),
            esc(&r.figure),
            v(r.value),
            v(r.median),
            r.runs,
            esc(&r.change())
        ));
    }
    o.push_str("</table>\n");
    o
}
