//! The report's "Target" section for an external system under test (report.json `target`):
//! which gateway and version, the turns sent and what came back, its decisions by event, its
//! cooldowns after the run, the files kept, how it stopped and its last log lines — and the
//! embedded engine's turns in the same table (`policies[].client_turns`, "Turns") — as
//! [`Table`]s both renderers share. One target's block ([`markdown_block`], [`html_block`]) is
//! what the side-by-side sections ([`super::versions`], [`super::targets`]) repeat per arm.

use std::fmt::Write as _;

use super::model::{Report, TargetReport, TurnRow};
use super::table::Table;
use crate::gateway::TurnEnd;
use crate::verdict::answers::{AnswerCheck, Compared};
use crate::verdict::secs;

fn facts(t: &TargetReport) -> Table {
    let mut tab = Table::new(&["", ""], &[false, false]);
    let mut row = |k: &str, v: Option<String>| {
        if let Some(v) = v.filter(|v| !v.is_empty()) {
            tab.rows.push(vec![k.to_string(), v]);
        }
    };
    row("kind", Some(t.kind.clone()));
    row("version", t.version.clone());
    row("version it reported", t.reported_version.clone());
    row("gateway", t.url.clone());
    row("mock upstream", t.upstream.clone());
    row("/tmp isolation", t.isolation.clone());
    row("bearer token", t.token_fp.as_ref().map(|f| format!("fingerprint {f}")));
    row(
        "metrics token",
        t.metrics_token_fp.as_ref().map(|f| format!("fingerprint {f}")),
    );
    row("health path", t.health_path.clone());
    row("config", t.user_config.as_ref().map(|u| format!("{} (yours, with the harness's overlay)", u.path)));
    row(
        "routing",
        (!t.routing.is_empty()).then(|| format!("targets in their stated order: {}", t.routing.join(" → "))),
    );
    row("exports", t.exports.clone());
    row("stop", t.stop.clone());
    row("files", Some(t.files.join(", ")));
    row(
        "left running",
        (!t.left_running.is_empty()).then(|| format!("{:?}", t.left_running)),
    );
    row("left in /tmp", Some(t.left_in_tmp.join(", ")));
    tab
}

fn turns(t: &TargetReport) -> Table {
    turns_table(&t.turns)
}

/// The turns a client sent and what came back, one row each: a gateway's, or the embedded
/// engine's (with the model and profile its call ended on).
fn turns_table(rows: &[TurnRow]) -> Table {
    // What the gateway said of each turn (Portkey's response headers), when it said anything.
    let said = rows.iter().any(|r| r.said.is_some());
    // The embedded engine's model and profile, when known.
    let by = rows.iter().any(|r| r.model.is_some() || r.profile.is_some());
    let mut heads = vec![
        "line", "session", "due", "stream", "status", "outcome", "took", "answer",
    ];
    let mut right = vec![true, false, true, false, true, false, true, false];
    if by {
        heads.push("model / profile");
        right.push(false);
    }
    if said {
        heads.push("gateway said");
        right.push(false);
    }
    let mut tab = Table::new(&heads, &right);
    for r in rows {
        // The class `[[expect.turn]]` counts first, then what the client saw.
        let detail = match (&r.error, &r.finish_reason) {
            (Some(e), _) => format!("error: {e}"),
            (None, Some(f)) if r.ok => format!("answered ({f})"),
            (None, _) => "incomplete answer".into(),
        };
        let outcome = match r.outcome {
            Some(end) if r.ok || (end == TurnEnd::Truncated && r.error.is_none()) => {
                format!("{} ({})", end.as_str(), r.finish_reason.as_deref().unwrap_or("-"))
            }
            Some(end) => format!("{}: {detail}", end.as_str()),
            None => detail,
        };
        let mut row = vec![
            r.line.to_string(),
            r.session.clone(),
            secs(r.at_ms as i64),
            r.stream.to_string(),
            r.status.map_or("-".into(), |s| s.to_string()),
            outcome,
            secs(r.elapsed_ms as i64),
            r.answer.as_ref().map_or_else(String::new, answer_text),
        ];
        if by {
            row.push(format!(
                "{} / {}",
                r.model.as_deref().unwrap_or("-"),
                r.profile.as_deref().unwrap_or("-")
            ));
        }
        if said {
            row.push(r.said.as_ref().map_or_else(String::new, |s| s.short()));
        }
        tab.rows.push(row);
    }
    tab
}

/// The policies that kept the embedded engine's turns (`policies[].client_turns`).
fn with_client_turns(r: &Report) -> impl Iterator<Item = &super::model::PolicyReport> {
    r.policies.iter().filter(|p| !p.client_turns.is_empty())
}

/// What the "Turns" section of the embedded engine says before its tables.
const CLIENT_TURNS: &str = "Each model call of the traffic as the engine's client saw it end: \
    the outcome `[[expect.turn]]` counts, from handing the call to the engine to its end \
    (scenario time); the answer against what the upstream served for the turn";

/// `## Turns` for the embedded engine in Markdown: one table per policy that kept its turns
/// (nothing otherwise).
pub(crate) fn client_turns_markdown(r: &Report, o: &mut String) {
    let mut first = true;
    for p in with_client_turns(r) {
        if first {
            let _ = write!(o, "\n## Turns\n\n{CLIENT_TURNS}.\n");
            first = false;
        }
        let _ = write!(o, "\n### Policy `{}`\n\n", p.policy);
        turns_table(&p.client_turns).markdown(o);
    }
}

/// `<h2>Turns</h2>` for the embedded engine in HTML, as [`client_turns_markdown`].
pub(crate) fn client_turns_html(r: &Report, o: &mut String) {
    let mut first = true;
    for p in with_client_turns(r) {
        if first {
            let _ = writeln!(o, "<h2>Turns</h2>\n<p>{}.</p>", super::svg::esc(CLIENT_TURNS));
            first = false;
        }
        let _ = writeln!(o, "<h3>Policy <code>{}</code></h3>", super::svg::esc(&p.policy));
        turns_table(&p.client_turns).html(o);
    }
}

/// A 2xx answer against what the upstream served for its turn: `3 of 8 tokens; model gpt-4o ≠
/// served gpt-4o-mini; usage (none) ≠ served 48+8=56`.
fn answer_text(a: &AnswerCheck) -> String {
    if !a.recorded {
        return format!(
            "{} tokens; no row in the upstream's record (not judged)",
            a.content_tokens
        );
    }
    let Some(s) = &a.served else {
        return format!("{} tokens; no request of the turn answered", a.content_tokens);
    };
    let tokens = match (s.tokens, &s.cut) {
        (Some(n), Some(f)) => format!("{} of {n} tokens (cut by {f})", a.content_tokens),
        (Some(n), None) => format!("{} of {n} tokens", a.content_tokens),
        (None, _) => format!("{} tokens", a.content_tokens),
    };
    let model = a.reported_model.as_deref().unwrap_or("(none)");
    let model = match a.model() {
        Compared::Differs { served, .. } => format!("model {model} ≠ served {served}"),
        _ => format!("model {model}"),
    };
    let usage = match a.usage() {
        Compared::Same => format!("usage {}", a.usage.map(|u| u.to_string()).unwrap_or_default()),
        Compared::Differs { got, served } => format!("usage {got} ≠ served {served}"),
        Compared::Unknown(_) | Compared::Unrecorded => "usage unknown".to_string(),
    };
    format!("{tokens}; {model}; {usage}")
}

/// The warm-up's facts (one line) and its turns.
fn warmup(t: &TargetReport) -> Option<(String, Table)> {
    let w = t.warmup.as_ref()?;
    let state = if w.steady {
        "steady".to_string()
    } else {
        format!(
            "never steady: {}",
            w.reason.as_deref().unwrap_or("no prompt turn")
        )
    };
    let line = format!(
        "{} warm-up turns in {} ({state}; prompt = first model request within {}); {} upstream requests before the clock started, not judged",
        w.turns.len(),
        secs(w.duration_ms as i64),
        secs(w.prompt_ms as i64),
        w.upstream_requests
    );
    let mut tab = Table::new(
        &["turn", "first model request after", "outcome", "took"],
        &[true, true, false, true],
    );
    for (i, r) in w.turns.iter().enumerate() {
        tab.rows.push(vec![
            (i + 1).to_string(),
            r.first_request_ms
                .map_or("none".into(), |m| secs(m as i64)),
            match &r.error {
                Some(e) => format!("error: {e}"),
                None if r.ok => "answered".into(),
                None => "incomplete answer".into(),
            },
            secs(r.elapsed_ms as i64),
        ]);
    }
    Some((line, tab))
}

fn decisions(t: &TargetReport) -> Table {
    let mut tab = Table::new(&["decision", "count"], &[false, true]);
    for (k, v) in &t.decisions {
        tab.rows.push(vec![k.clone(), v.to_string()]);
    }
    tab
}

fn cooldowns(t: &TargetReport) -> Table {
    let mut tab = Table::new(
        &["profile", "cooldown", "reason", "errors", "disabled"],
        &[false, true, false, true, false],
    );
    for c in &t.cooldowns {
        tab.rows.push(vec![
            c.profile.clone(),
            c.cooldown_ms.map_or("none".into(), |m| secs(m as i64)),
            c.reason.clone().unwrap_or_else(|| "-".into()),
            c.error_count.to_string(),
            c.disabled_reason.clone().unwrap_or_else(|| "-".into()),
        ]);
    }
    tab
}

/// The user's configuration: what the harness overrode and turned off (one table).
fn user_config(t: &TargetReport) -> Option<Table> {
    let u = t.user_config.as_ref()?;
    let mut tab = Table::new(&["", "key"], &[false, false]);
    for k in &u.overridden {
        tab.rows.push(vec!["overridden".into(), k.clone()]);
    }
    for k in &u.turned_off {
        tab.rows.push(vec!["turned off".into(), k.clone()]);
    }
    Some(tab)
}

/// The OpenClaw provider block an `http` target's user pastes (an OpenClaw gateway by URL),
/// pretty JSON.
fn provider_block(t: &TargetReport) -> Option<String> {
    t.provider_block
        .as_ref()
        .map(|b| serde_json::to_string_pretty(b).unwrap_or_default())
}

/// One target's section in Markdown, under `## {title}`: what the gateway is, your config, the
/// gateway's setup, the warm-up, the turns, its decisions and auth state, its last log lines.
pub(super) fn markdown_block(t: &TargetReport, title: &str, o: &mut String) {
    let _ = write!(o, "\n## {title}\n\n");
    facts(t).markdown(o);
    if let Some(tab) = user_config(t) {
        o.push_str("\n### Your config: what the harness changed\n\n");
        tab.markdown(o);
    }
    if let Some((line, tab)) = t.gateway_setup.as_ref().and_then(super::gateway_setup::render) {
        let _ = write!(o, "\n### Point your gateway at the mock upstream\n\n{line}\n\n");
        tab.markdown(o);
    }
    if let Some(block) = provider_block(t) {
        let _ = write!(
            o,
            "\n### OpenClaw providers to paste into your gateway's config\n\n```json\n{}\n```\n",
            block.replace("```", "'''")
        );
    }
    if let Some((line, tab)) = warmup(t) {
        let _ = write!(o, "\n### Warm-up\n\n{line}.\n\n");
        tab.markdown(o);
    }
    o.push_str("\n### Turns\n\n");
    turns(t).markdown(o);
    if t.kind == "openclaw" {
        o.push_str("\n### Decisions (its log)\n\n");
        decisions(t).markdown(o);
        o.push_str("\n### Auth state after the run\n\n");
        cooldowns(t).markdown(o);
    }
    if !t.last_lines.is_empty() {
        o.push_str("\n### Last log lines\n\n```text\n");
        for l in &t.last_lines {
            let _ = writeln!(o, "{}", l.replace("```", "'''"));
        }
        o.push_str("```\n");
    }
}

/// One target's section in HTML, as [`markdown_block`].
pub(super) fn html_block(t: &TargetReport, title: &str, o: &mut String) {
    let _ = writeln!(o, "<h2>{}</h2>", super::svg::esc(title));
    facts(t).html(o);
    if let Some(tab) = user_config(t) {
        o.push_str("<h3>Your config: what the harness changed</h3>\n");
        tab.html(o);
    }
    if let Some((line, tab)) = t.gateway_setup.as_ref().and_then(super::gateway_setup::render) {
        let _ = writeln!(
            o,
            "<h3>Point your gateway at the mock upstream</h3>\n<p>{}</p>",
            super::svg::esc(&line)
        );
        tab.html(o);
    }
    if let Some(block) = provider_block(t) {
        let _ = writeln!(
            o,
            "<h3>OpenClaw providers to paste into your gateway's config</h3><pre>{}</pre>",
            super::svg::esc(&block)
        );
    }
    if let Some((line, tab)) = warmup(t) {
        let _ = writeln!(o, "<h3>Warm-up</h3>\n<p>{}.</p>", super::svg::esc(&line));
        tab.html(o);
    }
    o.push_str("<h3>Turns</h3>\n");
    turns(t).html(o);
    if t.kind == "openclaw" {
        o.push_str("<h3>Decisions (its log)</h3>\n");
        decisions(t).html(o);
        o.push_str("<h3>Auth state after the run</h3>\n");
        cooldowns(t).html(o);
    }
    if !t.last_lines.is_empty() {
        let _ = writeln!(
            o,
            "<h3>Last log lines</h3><pre>{}</pre>",
            super::svg::esc(&t.last_lines.join("\n"))
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_user_config_and_the_provider_block_are_shown_in_both_renderers() {
        let t = TargetReport {
            kind: "openclaw".into(),
            token_fp: Some("a1b2c3".into()),
            user_config: Some(crate::report::target::UserConfigReport {
                path: "gw.json5".into(),
                overridden: vec!["gateway.port: the harness's loopback gateway".into()],
                turned_off: vec!["channels.telegram removed (messaging channel)".into()],
            }),
            provider_block: Some(serde_json::json!({"models": {"providers": {"mockai": {"baseUrl": "http://127.0.0.1:18081/v1"}}}})),
            ..TargetReport::default()
        };
        let mut o = String::new();
        facts(&t).markdown(&mut o);
        assert!(o.contains("| bearer token | fingerprint a1b2c3 |"), "{o}");
        assert!(o.contains("gw.json5 (yours"), "{o}");
        let mut o = String::new();
        user_config(&t).unwrap().markdown(&mut o);
        assert!(o.contains("| overridden | gateway.port: the harness's loopback gateway |"), "{o}");
        assert!(o.contains("| turned off | channels.telegram removed (messaging channel) |"), "{o}");
        assert!(provider_block(&t).unwrap().contains("\"baseUrl\": \"http://127.0.0.1:18081/v1\""));
        assert!(user_config(&TargetReport::default()).is_none());
    }

    #[test]
    fn the_turns_table_leads_each_outcome_with_the_class_expect_turn_counts() {
        let t = TargetReport {
            turns: vec![
                TurnRow {
                    status: Some(200),
                    ok: true,
                    finish_reason: Some("stop".into()),
                    outcome: Some(TurnEnd::Answered),
                    ..TurnRow::default()
                },
                TurnRow {
                    line: 1,
                    status: Some(503),
                    error: Some("upstream 503".into()),
                    outcome: Some(TurnEnd::HttpError),
                    ..TurnRow::default()
                },
                // A report from before the outcome was recorded reads as it did.
                TurnRow {
                    line: 2,
                    error: Some("timed out".into()),
                    ..TurnRow::default()
                },
            ],
            ..TargetReport::default()
        };
        let mut o = String::new();
        turns(&t).markdown(&mut o);
        assert!(o.contains("| answered (stop) |"), "{o}");
        assert!(o.contains("| http_error: error: upstream 503 |"), "{o}");
        assert!(o.contains("| error: timed out |"), "{o}");
        // A truncated answer and a misreported model, each against what was served.
        let served = crate::verdict::answers::Served {
            request: 1,
            model: Some("gpt-4o-mini".into()),
            tokens: Some(8),
            usage: None,
            cut: None,
        };
        let t = TargetReport {
            turns: vec![TurnRow {
                status: Some(200),
                finish_reason: Some("stop".into()),
                outcome: Some(TurnEnd::Truncated),
                answer: Some(AnswerCheck {
                    content_tokens: 3,
                    served_shape: true,
                    reported_model: Some("gpt-4o".into()),
                    usage: None,
                    recorded: true,
                    served: Some(served),
                }),
                ..TurnRow::default()
            }],
            ..TargetReport::default()
        };
        let mut o = String::new();
        turns(&t).markdown(&mut o);
        assert!(
            o.contains("| truncated (stop) |")
                && o.contains("| 3 of 8 tokens; model gpt-4o ≠ served gpt-4o-mini; usage unknown |"),
            "{o}"
        );
    }
}
