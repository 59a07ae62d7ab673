//! report.json `targets`: one scenario against several `--target` files side by side (docs/
//! scenario.md, "Several targets side by side"), one column per arm — the versions table
//! generalised. [`diff`] builds its rows (pure): what each arm is (target file, kind, gateway,
//! version, its target's verdict), the versions table's figures ([`super::versions::diff`]:
//! attempts per profile, times to the first rotation and fallback, cooldowns, decisions, turn
//! outcomes, status) and every expectation row's verdict per arm; [`table`] renders it for both
//! writers (rows and table shared with the versions', [`super::side_by_side`]); [`markdown`] and
//! [`html`] write the section with each arm's target block ([`super::target_section`]).

use std::collections::BTreeSet;
use std::fmt::Write as _;

use super::model::{PolicyReport, PolicyStatus};
use super::side_by_side::{self, numeric, text};
use super::table::Table;
use super::target_section::{html_block, markdown_block};
pub use super::targets_model::{TargetArm, TargetsSection, VERDICT_RULE};
use super::versions_model::{DiffRow, VersionArm};

/// The side-by-side rows of `arms` (their sections `sections`, matched by name): what each arm
/// is, the versions table's figures, then one row per expectation (kind, dep, expected) in the
/// order first met, each arm's verdict of it (`-`: the arm has no such row).
pub fn diff(arms: &[TargetArm], sections: &[PolicyReport]) -> Vec<DiffRow> {
    let col = |f: &dyn Fn(&TargetArm) -> String| arms.iter().map(f).collect::<Vec<_>>();
    let dash = |o: &Option<String>| o.clone().unwrap_or_else(|| "-".into());
    let mut rows = vec![
        text(
            "target file",
            "",
            col(&|a| format!("{} ({})", a.target_file.path, crate::scenario::digest::short(&a.target_file.digest))),
        ),
        text("kind", "", col(&|a| a.kind.clone())),
        text("gateway", "", col(&|a| dash(&a.gateway))),
        text("version", "", col(&|a| dash(&a.version))),
        text("verdict of its target", "", col(&|a| a.verdict.clone())),
    ];
    let as_versions: Vec<VersionArm> = arms
        .iter()
        .map(|a| VersionArm {
            version: a.arm.clone(),
            reported: a.target.as_ref().and_then(|t| t.reported_version.clone()),
            attempts: a.attempts.clone(),
            target: a.target.clone(),
        })
        .collect();
    let section = |a: &TargetArm| sections.iter().find(|s| s.policy == a.arm);
    // Attempts of every arm that ran (the versions table counts a gateway's only).
    let ran = |a: &TargetArm| section(a).is_some_and(|s| s.status != PolicyStatus::NotRun);
    let profiles: BTreeSet<&String> = arms.iter().flat_map(|a| a.attempts.keys()).collect();
    for p in profiles {
        let v = arms
            .iter()
            .map(|a| ran(a).then(|| a.attempts.get(p).copied().unwrap_or(0) as f64))
            .collect();
        rows.push(numeric("attempts", p, v, false));
    }
    rows.extend(
        super::versions::diff(&as_versions, sections)
            .into_iter()
            // An arm's kind says it better for the embedded engine (no gateway to report one).
            .filter(|r| r.figure != "version the gateway reported" && r.figure != "attempts"),
    );
    let mut keys: Vec<(String, String)> = Vec::new();
    for s in arms.iter().filter_map(section) {
        for e in &s.expectations {
            let key = expectation_key(e);
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
    }
    for (figure, of) in keys {
        let shown = arms
            .iter()
            .map(|a| {
                section(a)
                    .and_then(|s| {
                        s.expectations
                            .iter()
                            .find(|e| expectation_key(e) == (figure.clone(), of.clone()))
                    })
                    .map_or("-".into(), |e| e.status.as_str().to_string())
            })
            .collect();
        rows.push(text(&figure, &of, shown));
    }
    rows
}

/// An expectation row's place in the table: `expect KIND` and `DEP EXPECTED`.
fn expectation_key(e: &crate::verdict::ExpectationResult) -> (String, String) {
    let of = match e.dep.as_deref() {
        Some(d) if !d.is_empty() => format!("{d} {}", e.expected),
        _ => e.expected.clone(),
    };
    (format!("expect {}", e.kind.as_str()), of)
}

/// The side-by-side table: one column per arm, a last column marking rows that differ.
pub(crate) fn table(t: &TargetsSection) -> Table {
    side_by_side::table(t.arms.iter().map(|a| a.arm.as_str()), "differs", &t.diff)
}

/// The section's opening sentence: the arms, what differs, how the verdict is decided.
pub(crate) fn summary(t: &TargetsSection) -> String {
    let names: Vec<&str> = t.arms.iter().map(|a| a.arm.as_str()).collect();
    let n = t.diff.iter().filter(|r| r.changed).count();
    format!(
        "{} run side by side on the same traffic and faults, each its own fresh upstream and recorder: {n} of {} rows differ; {}",
        names.join(", "),
        t.diff.len(),
        t.verdict_rule
    )
}

/// `## Targets side by side` in Markdown: the sentence, the table, then each arm's target
/// block (its directory for the embedded engine).
pub(crate) fn markdown(t: &TargetsSection, o: &mut String) {
    let _ = write!(o, "\n## Targets side by side\n\n{}.\n\n", summary(t));
    table(t).markdown(o);
    for a in &t.arms {
        let title = format!("Target `{}` ({}, {})", a.arm, a.kind, a.target_file.path);
        match &a.target {
            Some(block) => markdown_block(block, &title, o),
            None => {
                let _ = write!(o, "\n## {title}\n\nIts raw files: `{}/`.\n", a.dir);
            }
        }
    }
}

/// `<h2>Targets side by side</h2>` in HTML, as [`markdown`].
pub(crate) fn html(t: &TargetsSection, o: &mut String) {
    let esc = super::svg::esc;
    let _ = writeln!(o, "<h2>Targets side by side</h2>\n<p>{}.</p>", esc(&summary(t)));
    table(t).html(o);
    for a in &t.arms {
        let title = format!("Target {} ({}, {})", a.arm, a.kind, a.target_file.path);
        match &a.target {
            Some(block) => html_block(block, &title, o),
            None => {
                let _ = writeln!(
                    o,
                    "<h2>{}</h2><p>Its raw files: <code>{}/</code>.</p>",
                    esc(&title),
                    esc(&a.dir)
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::{PolicyStatus, Verdict};
    use crate::scenario::target_file::TargetFileUsed;
    use crate::verdict::{ExpectKind, ExpectStatus, ExpectationResult};

    fn arm(name: &str, kind: &str, verdict: Verdict) -> TargetArm {
        TargetArm {
            arm: name.into(),
            target_file: TargetFileUsed {
                path: format!("t/{name}.toml"),
                digest: format!("sha256:{}", "ab".repeat(32)),
            },
            kind: kind.into(),
            gateway: (kind != "embedded").then(|| "http://127.0.0.1:4000".into()),
            version: None,
            verdict: verdict.as_str().to_string(),
            dir: name.into(),
            attempts: Default::default(),
            target: None,
        }
    }

    fn section(name: &str, rows: &[(&str, ExpectStatus)]) -> PolicyReport {
        let mut s = PolicyReport::empty(name, Vec::new());
        s.expectations = rows
            .iter()
            .map(|(expected, status)| ExpectationResult {
                kind: ExpectKind::Attempts,
                dep: Some("mockai:a".into()),
                series: None,
                expected: (*expected).into(),
                observed: "3".into(),
                expected_ms: None,
                observed_ms: None,
                delta_ms: None,
                tolerance_ms: None,
                ok: *status == ExpectStatus::Pass,
                status: *status,
                detail: String::new(),
                witness: Default::default(),
            })
            .collect();
        s.status = PolicyStatus::of(&s.expectations, false);
        s
    }

    #[test]
    fn every_expectation_row_gets_each_arms_verdict_and_what_one_arm_lacks_is_a_dash() {
        let mut engine = arm("embedded", "embedded", Verdict::Pass);
        engine.attempts = [("mockai:a".to_string(), 3)].into();
        let arms = [engine, arm("http", "http", Verdict::Fail)];
        let sections = [
            section("embedded", &[("≥ 1", ExpectStatus::Pass)]),
            section("http", &[("≥ 1", ExpectStatus::Fail), ("≤ 3", ExpectStatus::Pass)]),
        ];
        let rows = diff(&arms, &sections);
        let find = |figure: &str, of: &str| {
            rows.iter()
                .find(|r| r.figure == figure && r.of == of)
                .unwrap_or_else(|| panic!("no {figure} {of}: {rows:#?}"))
        };
        let a = find("expect attempts", "mockai:a ≥ 1");
        assert_eq!(a.shown, ["pass", "fail"]);
        assert!(a.changed);
        assert_eq!(find("expect attempts", "mockai:a ≤ 3").shown, ["-", "pass"]);
        assert_eq!(find("kind", "").shown, ["embedded", "http"]);
        // The embedded engine's requests are counted (it has no gateway block), 0 where an arm
        // that ran sent none.
        assert_eq!(find("attempts", "mockai:a").shown, ["3", "0"]);
        assert_eq!(find("verdict of its target", "").shown, ["pass", "fail"]);
        assert_eq!(find("status", "").shown, ["pass", "fail"]);
        assert_eq!(find("target file", "").shown[0], "t/embedded.toml (abababababab)");
        let t = TargetsSection {
            verdict_rule: VERDICT_RULE.into(),
            arms: arms.to_vec(),
            diff: rows.clone(),
        };
        let tab = table(&t);
        assert_eq!(tab.head, ["figure", "of", "embedded", "http", "differs"]);
        assert!(summary(&t).contains("worst arm's"), "{}", summary(&t));
        // The section: its sentence, the table with the rows that differ marked, then each
        // arm's block (here its raw files: neither arm has a target block).
        let mut md = String::new();
        markdown(&t, &mut md);
        assert!(md.starts_with("\n## Targets side by side\n\nembedded, http run side by side"), "{md}");
        assert!(md.contains("| expect attempts | mockai:a ≥ 1 | pass | fail | differs |"), "{md}");
        assert!(md.contains("| kind |  | embedded | http | differs |"), "{md}");
        assert!(md.contains("\n## Target `http` (http, t/http.toml)\n\nIts raw files: `http/`.\n"), "{md}");
        let mut html = String::new();
        super::html(&t, &mut html);
        assert!(html.starts_with("<h2>Targets side by side</h2>\n<p>embedded, http run"), "{html}");
        assert!(html.contains("<h2>Target embedded (embedded, t/embedded.toml)</h2><p>Its raw files: <code>embedded/</code>.</p>"), "{html}");
    }
}
