//! report.json `versions`: OpenClaw versions run side by side (`[target] versions`,
//! `--gateway-version`), one arm each — every arm's gateway (the version asked for, the version
//! the running gateway said it is, its `target` block) and the behaviour-diff table: per row one
//! figure of each version (attempts per profile at the upstream, time to first rotation and
//! first fallback, rotations and fallbacks per provider, cooldowns written, OpenClaw's decisions
//! by event, turn outcomes, the arm's status), built from the key figures
//! (`policies[].figures`) and the `target` blocks — pure, [`diff`] — and rendered as one
//! [`Table`] both writers share (the rows and the table are [`super::side_by_side`]'s, shared
//! with several targets side by side), then each version's target block ([`markdown`],
//! [`html`]).

use std::collections::BTreeSet;
use std::fmt::Write as _;

use super::model::PolicyReport;
use super::side_by_side::{self, numeric, text};
use super::table::Table;
use super::target_section::{html_block, markdown_block};
pub use super::versions_model::{DiffRow, VersionArm, VersionsSection};
use crate::verdict::secs;

/// The behaviour-diff rows of `arms` (their sections `sections`, matched by name; an arm
/// without one never ran and shows `-`).
pub fn diff(arms: &[VersionArm], sections: &[PolicyReport]) -> Vec<DiffRow> {
    let section = |a: &VersionArm| sections.iter().find(|s| s.policy == a.version);
    let ran = |a: &VersionArm| a.target.is_some();
    let mut rows = Vec::new();
    rows.push(text(
        "version the gateway reported",
        "",
        arms.iter()
            .map(|a| a.reported.clone().unwrap_or_else(|| "-".into()))
            .collect(),
    ));
    rows.push(text(
        "status",
        "",
        arms.iter()
            .map(|a| section(a).map_or("-".into(), |s| s.status.as_str().to_string()))
            .collect(),
    ));
    let profiles: BTreeSet<&String> = arms.iter().flat_map(|a| a.attempts.keys()).collect();
    for p in profiles {
        let v = arms
            .iter()
            .map(|a| ran(a).then(|| a.attempts.get(p).copied().unwrap_or(0) as f64))
            .collect();
        rows.push(numeric("attempts", p, v, false));
    }
    let figures = |a: &VersionArm| section(a).and_then(|s| s.figures.as_ref());
    let providers: BTreeSet<&String> = arms
        .iter()
        .filter_map(figures)
        .flat_map(|f| f.providers.keys())
        .collect();
    for p in providers {
        let of = |f: fn(&crate::report::figures::ProviderFigures) -> Option<f64>| {
            arms.iter()
                .map(|a| figures(a).and_then(|k| k.providers.get(p)).and_then(f))
                .collect::<Vec<_>>()
        };
        rows.push(numeric(
            "time to first rotation",
            p,
            of(|x| x.time_to_first_rotation_ms.map(|v| v as f64)),
            true,
        ));
        rows.push(numeric(
            "time to first fallback",
            p,
            of(|x| x.time_to_first_fallback_ms.map(|v| v as f64)),
            true,
        ));
        // A count of an arm that ran is 0 where its figures have no such provider, unknown
        // where it could not count it.
        let count = |f: fn(&crate::report::figures::ProviderFigures) -> Option<u64>| {
            arms.iter()
                .map(|a| {
                    figures(a).and_then(|k| match k.providers.get(p) {
                        None => Some(0.0),
                        Some(x) => f(x).map(|v| v as f64),
                    })
                })
                .collect::<Vec<_>>()
        };
        rows.push(numeric("rotations", p, count(|x| x.rotations), false));
        rows.push(numeric("fallbacks", p, count(|x| x.fallbacks), false));
    }
    let cooled: BTreeSet<&String> = arms
        .iter()
        .filter_map(|a| a.target.as_ref())
        .flat_map(|t| t.cooldowns.iter().map(|c| &c.profile))
        .collect();
    for p in cooled {
        let shown = arms
            .iter()
            .map(|a| {
                let Some(t) = &a.target else { return "-".into() };
                match t.cooldowns.iter().find(|c| &c.profile == p) {
                    Some(c) => match (c.cooldown_ms, &c.reason) {
                        (Some(ms), Some(r)) => format!("{} ({r})", secs(ms as i64)),
                        (Some(ms), None) => secs(ms as i64),
                        (None, _) => match &c.disabled_reason {
                            Some(d) => format!("disabled ({d})"),
                            None => "none".into(),
                        },
                    },
                    None => "none".into(),
                }
            })
            .collect();
        rows.push(text("cooldown written", p, shown));
    }
    let events: BTreeSet<&String> = arms
        .iter()
        .filter_map(|a| a.target.as_ref())
        .flat_map(|t| t.decisions.keys())
        .collect();
    for e in events {
        let v = arms
            .iter()
            .map(|a| {
                a.target
                    .as_ref()
                    .map(|t| t.decisions.get(e).copied().unwrap_or(0) as f64)
            })
            .collect();
        rows.push(numeric("decisions", e, v, false));
    }
    let outcome = |r: &crate::report::model::TurnRow| match r.outcome {
        Some(o) => o.as_str().to_string(),
        None if r.ok => "answered".into(),
        None => "error".into(),
    };
    let outcomes: BTreeSet<String> = arms
        .iter()
        .filter_map(|a| a.target.as_ref())
        .flat_map(|t| t.turns.iter().map(outcome))
        .collect();
    for o in outcomes {
        let v = arms
            .iter()
            .map(|a| {
                a.target
                    .as_ref()
                    .map(|t| t.turns.iter().filter(|r| outcome(r) == o).count() as f64)
            })
            .collect();
        rows.push(numeric("turns", &o, v, false));
    }
    rows
}

/// The diff as a table: one column per version, a last column marking what changed.
pub(crate) fn table(v: &VersionsSection) -> Table {
    side_by_side::table(v.arms.iter().map(|a| a.version.as_str()), "changed", &v.diff)
}

/// How many rows changed, said in one line.
pub(crate) fn summary(v: &VersionsSection) -> String {
    let n = v.diff.iter().filter(|r| r.changed).count();
    let names: Vec<&str> = v.arms.iter().map(|a| a.version.as_str()).collect();
    format!(
        "OpenClaw {} run side by side on the same traffic and faults: {n} of {} figures differ",
        names.join(" and "),
        v.diff.len()
    )
}

/// `## Versions side by side` in Markdown: the sentence, the diff table, then one target
/// section per version.
pub(crate) fn markdown(v: &VersionsSection, o: &mut String) {
    let _ = write!(o, "\n## Versions side by side\n\n{}.\n\n", summary(v));
    table(v).markdown(o);
    for a in &v.arms {
        match &a.target {
            Some(t) => markdown_block(t, &format!("Target: OpenClaw {}", a.version), o),
            None => {
                let _ = write!(o, "\n## Target: OpenClaw {}\n\nNot run.\n", a.version);
            }
        }
    }
}

/// `<h2>Versions side by side</h2>` in HTML, as [`markdown`].
pub(crate) fn html(v: &VersionsSection, o: &mut String) {
    let _ = writeln!(
        o,
        "<h2>Versions side by side</h2>\n<p>{}.</p>",
        super::svg::esc(&summary(v))
    );
    table(v).html(o);
    for a in &v.arms {
        let title = format!("Target: OpenClaw {}", a.version);
        match &a.target {
            Some(t) => html_block(t, &title, o),
            None => {
                let _ = writeln!(o, "<h2>{}</h2><p>Not run.</p>", super::svg::esc(&title));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::target::TargetReport;
    use crate::report::figures::{KeyFigures, ProviderFigures};
    use crate::report::model::{CooldownRow, PolicyStatus};

    fn arm(version: &str, attempts: u64, cooldown: Option<u64>) -> VersionArm {
        VersionArm {
            version: version.into(),
            reported: Some(version.into()),
            attempts: [("mockai:a".to_string(), attempts)].into(),
            target: Some(TargetReport {
                cooldowns: vec![CooldownRow {
                    profile: "mockai:a".into(),
                    reason: cooldown.map(|_| "timeout".into()),
                    cooldown_ms: cooldown,
                    ..CooldownRow::default()
                }],
                ..TargetReport::default()
            }),
        }
    }

    fn section(version: &str, rotation_ms: Option<u64>) -> PolicyReport {
        let mut figures = KeyFigures::default();
        if let Some(ms) = rotation_ms {
            figures.providers.insert(
                "mockai".into(),
                ProviderFigures {
                    rotations: Some(1),
                    time_to_first_rotation_ms: Some(ms),
                    ..ProviderFigures::default()
                },
            );
        }
        let mut s = PolicyReport::empty(version, Vec::new());
        s.status = PolicyStatus::Pass;
        s.figures = Some(figures);
        s
    }

    fn find<'a>(rows: &'a [DiffRow], figure: &str, of: &str) -> &'a DiffRow {
        rows.iter()
            .find(|r| r.figure == figure && r.of == of)
            .unwrap_or_else(|| panic!("no {figure} {of}: {rows:#?}"))
    }

    #[test]
    fn the_diff_marks_what_moved_past_noise_and_what_one_version_lacks() {
        let arms = [arm("2026.9.2", 4, Some(30_000)), arm("2026.9.6", 8, None)];
        let sections = [section("2026.9.2", Some(13_407)), section("2026.9.6", None)];
        let rows = diff(&arms, &sections);
        let a = find(&rows, "attempts", "mockai:a");
        assert_eq!(a.values, [Some(4.0), Some(8.0)]);
        assert!(a.changed);
        let c = find(&rows, "cooldown written", "mockai:a");
        assert_eq!(c.shown, ["30.000s (timeout)", "none"]);
        assert!(c.changed);
        // A rotation in one version only; its count is 0 (not unknown) in the other.
        let t = find(&rows, "time to first rotation", "mockai");
        assert_eq!(t.values, [Some(13_407.0), None]);
        assert!(t.changed);
        assert_eq!(find(&rows, "rotations", "mockai").values, [Some(1.0), Some(0.0)]);
        assert!(!find(&rows, "status", "").changed);
        assert!(find(&rows, "version the gateway reported", "").changed);

        // Within noise: 9 vs 10 attempts, 30.0 s vs 30.05 s to the first rotation.
        let arms = [arm("a", 9, None), arm("b", 10, None)];
        let sections = [section("a", Some(30_000)), section("b", Some(30_050))];
        let rows = diff(&arms, &sections);
        assert!(!find(&rows, "attempts", "mockai:a").changed);
        assert!(!find(&rows, "time to first rotation", "mockai").changed);

        // A version that never ran shows `-` and counts as changed, never as equal.
        let mut never = arm("2026.9.6", 0, None);
        never.target = None;
        never.reported = None;
        let rows = diff(&[arm("2026.9.2", 4, None), never], &[section("2026.9.2", None)]);
        let a = find(&rows, "attempts", "mockai:a");
        assert_eq!(a.shown, ["4", "-"]);
        assert!(a.changed);
        assert_eq!(find(&rows, "status", "").shown, ["pass", "-"]);
    }
}
