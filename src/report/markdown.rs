//! report.md: the verdict first (a stopped run's stop line above it) and the time base, then
//! the profile table, expected vs observed with deltas (✓ pass, ✗ fail, ○ not reached), the A/B
//! table, fault windows with their scope, transitions, outcomes, latency, replay schedule lag,
//! host and TCP stack, config.

use std::collections::BTreeSet;
use std::fmt::Write;

use super::counts::Counts;
use super::lead;
use super::model::{ExpectStatus, PolicyReport, PolicyStatus, Report, Summary};
use super::table;
use crate::util::speed::RecordedSpeed;
use crate::util::text::count;
use crate::verdict::signed_secs;

/// Escapes a table cell (pipes, newlines).
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

fn opt(v: Option<u64>) -> String {
    v.map_or("n/a".into(), |v| v.to_string())
}

/// The A/B rows: label and a value per policy.
pub(crate) fn ab_rows(policies: &[PolicyReport]) -> Vec<(String, Vec<String>)> {
    let reasons: BTreeSet<&String> = policies
        .iter()
        .flat_map(|p| p.summary.cooldowns_by_reason.keys())
        .collect();
    let mut rows: Vec<(String, Vec<String>)> = Vec::new();
    let mut row = |label: String, f: &dyn Fn(&Summary) -> String| {
        rows.push((label, policies.iter().map(|p| f(&p.summary)).collect()));
    };
    if reasons.is_empty() {
        row("cooldowns written".into(), &|_| "0".into());
    }
    for r in reasons {
        row(format!("cooldowns written ({r})"), &|s| {
            s.cooldowns_by_reason
                .get(r)
                .copied()
                .unwrap_or(0)
                .to_string()
        });
    }
    row("profile rotations".into(), &|s| s.rotations.to_string());
    row("same-profile retries".into(), &|s| s.retries.to_string());
    row("model fallbacks".into(), &|s| s.fallbacks.to_string());
    row("failed requests".into(), &|s| opt(s.failed_requests));
    row(
        "user-visible errors".into(),
        &|s| opt(s.user_visible_errors),
    );
    row(
        "failed attempts (requests_total, outcome≠ok)".into(),
        &|s| s.failed_attempts.to_string(),
    );
    row("breaker rejections".into(), &|s| {
        s.breaker_rejections.to_string()
    });
    row("Retry-After skips".into(), &|s| {
        s.retry_after_skips.to_string()
    });
    row("idempotent duplicates".into(), &|s| {
        s.idempotent_duplicates.to_string()
    });
    rows
}

/// Flattens a JSON value into `a.b.c = value` pairs (for host facts).
pub(crate) fn flatten(prefix: &str, v: &serde_json::Value, out: &mut Vec<(String, String)>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, v) in m {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, v, out);
            }
        }
        serde_json::Value::String(s) => out.push((prefix.to_string(), s.clone())),
        serde_json::Value::Null => {}
        other => out.push((prefix.to_string(), other.to_string())),
    }
}

/// Renders report.md.
pub fn render(r: &Report) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "# Rehearsal `{}`: {}\n",
        r.scenario,
        r.verdict.as_str().to_uppercase()
    );
    if let Some((stop, rest)) = lead::stop_line(r) {
        let _ = writeln!(o, "**{stop}** ({rest})\n");
    }
    if let Some(reason) = &r.reason {
        let _ = writeln!(o, "**Reason:** {reason}\n");
    }
    for p in &r.policies {
        if let Some(cap) = &p.upstream_cap {
            let _ = writeln!(
                o,
                "**Upstream record cut:** [{}] {}\n",
                p.policy,
                cap.line()
            );
        }
    }
    let _ = writeln!(
        o,
        "- verdict: **{}**: {}",
        r.verdict.as_str(),
        Counts::of(r).sentence()
    );
    if let Some(d) = &r.description {
        let _ = writeln!(o, "- scenario: {d}");
    }
    if let Some(t) = lead::traffic_line(r) {
        let _ = writeln!(o, "- traffic: {t}");
    }
    let _ = writeln!(
        o,
        "- started: {} · speed ×{} · seed {}{}",
        r.started_at,
        r.speed,
        r.seed,
        lead::digest_part(r)
    );
    let pols: Vec<&str> = r.policies.iter().map(|p| p.policy.as_str()).collect();
    let _ = writeln!(o, "- policies: {}", pols.join(", "));
    let _ = writeln!(o, "- times: {}\n", table::time_base(r));
    for (p, e) in r.policies.iter().flat_map(|p| {
        p.expectations
            .iter()
            .filter(|e| e.status == ExpectStatus::Fail)
            .map(move |e| (p, e))
    }) {
        let _ = writeln!(o, "- ✗ [{}] {}", p.policy, e.detail);
    }
    // The engine's breaker timing and A/B numbers say nothing about an external gateway.
    let engine = r.target.is_none();
    for p in r.policies.iter().filter(|p| lead::engine_arm(r, p)) {
        let _ = writeln!(o, "- [{}] {}", p.policy, table::timing_note(p));
    }
    // Several targets, versions side by side, or the one target (none for the embedded engine).
    if let Some(t) = &r.targets {
        super::targets::markdown(t, &mut o);
    } else if let Some(v) = &r.versions {
        super::versions::markdown(v, &mut o);
    } else if let Some(t) = &r.target {
        super::target_section::markdown_block(t, "Target", &mut o);
    }
    super::target_section::client_turns_markdown(r, &mut o);
    o.push_str("\n## Profiles\n\n");
    table::profiles(r).markdown(&mut o);
    o.push_str("\n## Expected vs observed\n");
    for p in &r.policies {
        let _ = writeln!(o, "\n### Policy `{}`: {}\n", p.policy, p.status.as_str());
        if p.expectations.is_empty() {
            o.push_str("No expectations.\n");
            continue;
        }
        o.push_str("| ok | kind | dep | expected | observed | delta | witness | detail |\n|---|---|---|---|---|---|---|---|\n");
        for e in &p.expectations {
            let _ = writeln!(
                o,
                "| {} | {} | {} | {} | {} | {} | {} | {} |",
                lead::mark(e.status),
                e.kind.as_str(),
                cell(e.dep.as_deref().unwrap_or("")),
                cell(&e.expected),
                cell(&e.observed),
                e.delta_ms.map_or(String::new(), signed_secs),
                cell(&lead::witness(e)),
                cell(&e.detail)
            );
        }
    }
    let drift = super::drift_render::markdown(r.drift.as_ref());
    if !drift.is_empty() {
        o.push('\n');
        o.push_str(&drift);
    }
    let figures = super::drift_render::figures_markdown(r);
    if !figures.is_empty() {
        o.push('\n');
        o.push_str(&figures);
    }
    let turns = super::turns_md::markdown(&r.policies);
    if !turns.is_empty() {
        o.push('\n');
        o.push_str(&turns);
    }
    if r.policies.iter().any(|p| p.alerts.is_some()) {
        o.push_str("\n## Alerts\n");
        for p in &r.policies {
            if let Some(t) = table::alerts(p) {
                let _ = writeln!(o, "\n### Policy `{}`\n", p.policy);
                t.markdown(&mut o);
            }
        }
    }
    if engine {
        o.push_str("\n## Policies side by side\n\n");
        let _ = writeln!(
            o,
            "| | {} |",
            pols.iter()
                .map(|p| format!("`{p}`"))
                .collect::<Vec<_>>()
                .join(" | ")
        );
        let _ = writeln!(o, "|---|{}", "---|".repeat(pols.len()));
        for (label, vals) in ab_rows(&r.policies) {
            let _ = writeln!(o, "| {label} | {} |", vals.join(" | "));
        }
    }
    if let Some(f) = &r.fleet {
        super::fleet::markdown(&mut o, f);
    }
    o.push_str("\n## Fault windows\n\n");
    table::faults(r).markdown(&mut o);
    for p in r.policies.iter().filter(|p| lead::engine_arm(r, p)) {
        policy_details(&mut o, p, r.speed);
    }
    // A gateway's run has no engine details of ours; what its upstream saw, per arm.
    let drawn: Vec<&PolicyReport> = r
        .policies
        .iter()
        .filter(|p| !lead::engine_arm(r, p) && p.requests.is_some())
        .collect();
    if !drawn.is_empty() {
        o.push_str("\n## Requests at the upstream\n");
        for p in drawn {
            if r.policies.len() > 1 {
                let _ = writeln!(o, "\n### `{}`", p.policy);
            }
            requests(&mut o, p);
        }
    }
    o.push_str("\n## Replay schedule lag (wall clock)\n\n");
    let _ = writeln!(
        o,
        "{} sent; lag p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms.",
        count(r.replay.sent as usize, "request"),
        r.replay.lag_ms.p50,
        r.replay.lag_ms.p99,
        r.replay.lag_ms.max
    );
    o.push_str("\n## Host and TCP stack\n\n");
    let mut host = Vec::new();
    flatten("", &r.host, &mut host);
    if host.is_empty() {
        o.push_str("Not recorded.\n");
    } else {
        o.push_str("| fact | value |\n|---|---|\n");
        for (k, v) in host {
            let _ = writeln!(o, "| {} | {} |", cell(&k), cell(&v));
        }
    }
    if !r.contradictions.is_empty() {
        o.push_str("\n### Contradictions\n\n");
        for c in &r.contradictions {
            let text = match (c.get("severity"), c.get("check"), c.get("detail")) {
                (Some(sev), Some(check), Some(detail)) => format!(
                    "**{}** `{}`: {}",
                    sev.as_str().unwrap_or_default(),
                    check.as_str().unwrap_or_default(),
                    detail.as_str().unwrap_or_default()
                ),
                _ => c.to_string(),
            };
            let _ = writeln!(o, "- {}", text.replace('\n', " "));
        }
    }
    read_failures(&mut o, &r.config);
    if !r.notes.is_empty() {
        o.push_str("\n## Notes\n\n");
        for n in &r.notes {
            let _ = writeln!(o, "- {}", n.replace('\n', " "));
        }
    }
    super::housekeeping::markdown(r.housekeeping.as_ref(), &mut o);
    o.push_str("\n## Config\n\n```json\n");
    o.push_str(&serde_json::to_string_pretty(&r.config).unwrap_or_default());
    o.push_str("\n```\n");
    o
}

/// Read-failure diagnostics per policy and dep (`config.read_failures`: policy → dep → class →
/// count), as the transports classified them from typed errors.
fn read_failures(o: &mut String, config: &serde_json::Value) {
    let Some(by_policy) = config.get("read_failures").and_then(|v| v.as_object()) else {
        return;
    };
    o.push_str("\n## Read failures by dep\n\n");
    let mut any = false;
    for (policy, deps) in by_policy {
        let Some(deps) = deps.as_object() else {
            continue;
        };
        for (dep, classes) in deps {
            let Some(classes) = classes.as_object() else {
                continue;
            };
            if !any {
                o.push_str("| policy | dep | class | count |\n|---|---|---|---|\n");
                any = true;
            }
            for (class, n) in classes {
                let _ = writeln!(
                    o,
                    "| {} | {} | {} | {} |",
                    cell(policy),
                    cell(dep),
                    cell(class),
                    n
                );
            }
        }
    }
    if !any {
        o.push_str("None.\n");
    }
}

/// What the upstream saw of policy run `p` (its request lanes in words), when it has them.
fn requests(o: &mut String, p: &PolicyReport) {
    if let Some(q) = &p.requests {
        let _ = writeln!(o, "\n{}\n", super::request_summary::line(q));
        super::request_summary::lanes(q).markdown(o);
    }
}

fn policy_details(o: &mut String, p: &PolicyReport, speed: RecordedSpeed) {
    if p.status == PolicyStatus::NotRun {
        let _ = writeln!(o, "\n## Policy `{}`\n\nNot run.", p.policy);
        return;
    }
    let _ = writeln!(o, "\n## Policy `{}`\n\n### Transitions\n", p.policy);
    let _ = writeln!(o, "{}\n", table::timing_note(p));
    table::transitions(p).markdown(o);
    o.push_str("\n### Event log vs scrapes\n\n");
    table::agreement(p).markdown(o);
    o.push_str("\n### Outcomes by dep\n\n");
    table::outcomes(p).markdown(o);
    o.push_str("\n### Latency\n\n");
    table::latency(p, speed).markdown(o);
    if !p.summary.deadlines_by_dep.is_empty() {
        o.push_str("\n### Deadlines\n\n");
        table::deadlines(p).markdown(o);
    }
    if p.requests.is_some() {
        o.push_str("\n### Requests at the upstream\n");
        requests(o, p);
    }
    o.push_str("\n### Health checks\n\n");
    table::health(p).markdown(o);
    let s = &p.scrapes;
    let _ = writeln!(
        o,
        "\nScrapes: {} ok, {} failed{}.",
        s.ok,
        s.failures,
        s.last_error
            .as_ref()
            .map_or(String::new(), |e| format!(" (last: {e})"))
    );
}
