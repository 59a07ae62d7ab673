//! The system under test in report.json (`target`): which gateway ran (kind, version, URL),
//! every turn the harness sent it with its outcome and time, what the gateway decided (its log
//! decisions counted by event), its auth-profile cooldowns after the stop, its last log lines
//! when it failed, what it left behind, and its warm-up before the run's clock started. Absent for the embedded engine. Part of the report
//! model (re-exported by [`super::model`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::gateway::TurnEnd;

/// report.json `target`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TargetReport {
    /// `openclaw` or `http`.
    pub kind: String,
    /// The gateway's version (`2026.9.6`), when known: its install's.
    #[serde(default)]
    pub version: Option<String>,
    /// The version the running gateway said it is (OpenClaw: its start-up banner, else
    /// `openclaw --version` of the executable it ran), when it said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reported_version: Option<String>,
    /// Where the turns went (`http://127.0.0.1:PORT`).
    #[serde(default)]
    pub url: Option<String>,
    /// Where the mock upstream listened.
    #[serde(default)]
    pub upstream: Option<String>,
    /// How OpenClaw's `/tmp` writes were contained (`namespace` | `none`).
    #[serde(default)]
    pub isolation: Option<String>,
    /// Every turn sent, in send order.
    #[serde(default)]
    pub turns: Vec<TurnRow>,
    /// OpenClaw's log decisions counted by event (`rotate_profile`, `same_model_retry`, ...).
    #[serde(default)]
    pub decisions: BTreeMap<String, u64>,
    /// Its auth-profile state after the stop (no keys in it).
    #[serde(default)]
    pub cooldowns: Vec<CooldownRow>,
    /// Files in the run directory: its log, its auth-state snapshot.
    #[serde(default)]
    pub files: Vec<String>,
    /// How the stop went (`SIGTERM, exited in 1.2 s` / `SIGKILL after 10 s`).
    #[serde(default)]
    pub stop: Option<String>,
    /// Its last log lines, when it failed to start, crashed or never became healthy.
    #[serde(default)]
    pub last_lines: Vec<String>,
    /// Processes of its tree still running after the stop (should be empty).
    #[serde(default)]
    pub left_running: Vec<u32>,
    /// `/tmp/openclaw*` entries it left when it ran without a private namespace.
    #[serde(default)]
    pub left_in_tmp: Vec<String>,
    /// `[target] config`: the user's configuration and what the harness changed in it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_config: Option<UserConfigReport>,
    /// `http`: the fingerprint of the bearer token sent (`token_env`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_fp: Option<String>,
    /// `http`: the fingerprint of the bearer token sent to `metrics_url` (`metrics_token_env`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics_token_fp: Option<String>,
    /// `http`: the health path waited for before the warm-up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health_path: Option<String>,
    /// `http`: how to point any OpenAI-compatible gateway at the mock upstream
    /// (`scenario::gateway_setup::block`: base URL, models, per profile its key's fingerprint).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gateway_setup: Option<serde_json::Value>,
    /// `http` with turns for OpenClaw's agent (`[target] model = "openclaw/…"`): the OpenClaw
    /// provider block to paste into the gateway's configuration (its providers at the mock
    /// upstream's address).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_block: Option<serde_json::Value>,
    /// Its warm-up before the run's clock started (absent when it never got that far).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup: Option<WarmupReport>,
    /// `portkey`: the targets of the config its turns carried, in their stated order
    /// (`mockai:a gpt-4o`), what `turns[].said.target` names.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub routing: Vec<String>,
    /// What the gateway exports for the harness to read beyond its answers, when it is known
    /// to export nothing (`portkey`: "no /metrics"): said, never judged as a pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exports: Option<String>,
}

/// report.json `target.user_config`: the user's OpenClaw configuration (`[target] config`) and
/// what the harness laid over it (docs/openclaw.md, "Your own config").
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UserConfigReport {
    /// The file.
    pub path: String,
    /// Key paths whose value the harness replaced, removed or added to, with why.
    pub overridden: Vec<String>,
    /// What it turned off (channels, heartbeats, cron, plugins, ...), with the value before.
    pub turned_off: Vec<String>,
}

/// report.json `target.warmup`: the healthy turns sent before the run's clock started, until one
/// turn's first model request reached the upstream within `prompt_ms` of sending (the steady
/// state; docs/openclaw.md, "Warm-up"). Nothing in it is judged.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WarmupReport {
    /// True when the gateway reached its steady state (else the run is `error`).
    pub steady: bool,
    /// The bound: a warm-up turn is prompt when its first model request reached the upstream
    /// within this many ms of sending.
    pub prompt_ms: u64,
    /// From the first warm-up turn sent to the steady state (or to giving up), ms.
    pub duration_ms: u64,
    /// Requests the upstream received before the run's clock started (the gateway's start-up
    /// calls and the warm-up turns'): never judged, never faulted.
    pub upstream_requests: u64,
    /// Every warm-up turn, in order.
    pub turns: Vec<WarmupTurnRow>,
    /// Why it never reached its steady state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// OpenClaw's log decisions before the run's clock started (not judged).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub decisions: BTreeMap<String, u64>,
}

/// One warm-up turn.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WarmupTurnRow {
    /// From the turn's send to its first model request at the upstream, ms (`None`: none came).
    #[serde(default)]
    pub first_request_ms: Option<u64>,
    /// It got a complete answer.
    pub ok: bool,
    /// The error the client saw, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// How long the turn took, ms.
    pub elapsed_ms: u64,
}

/// One turn (one model call of the traffic) and what came back: a gateway's in
/// `target.turns`, the embedded engine's in `policies[].client_turns`. Its times are scenario
/// ms (an external target runs at speed 1, where they are wall ms).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TurnRow {
    /// The traffic line (0-based).
    pub line: usize,
    /// The conversation (`user` = `conv:SESSION`).
    pub session: String,
    /// When it was due, ms since the run start.
    pub at_ms: u64,
    /// How late it was sent, ms.
    pub lag_ms: u64,
    /// Streamed.
    pub stream: bool,
    /// HTTP status, when an answer came.
    #[serde(default)]
    pub status: Option<u16>,
    /// A complete answer (2xx, a finish_reason, no error event).
    pub ok: bool,
    /// The answer's finish_reason.
    #[serde(default)]
    pub finish_reason: Option<String>,
    /// The error the client saw (an error body or event, a transport failure, a timeout).
    #[serde(default)]
    pub error: Option<String>,
    /// How the turn ended (`answered`, `error_body`, `http_error`, `timed_out`, `error_event`,
    /// `transport_error`, `unfinished`, `truncated`): what `[[expect.turn]]` counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<TurnEnd>,
    /// How long the turn took, ms.
    pub elapsed_ms: u64,
    /// A complete 2xx answer against what the upstream served for the turn: its content
    /// tokens, the model and usage the gateway reported, the served request's (absent for
    /// other turns and in older reports).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<crate::verdict::answers::AnswerCheck>,
    /// What the gateway said of the turn in its response headers (LiteLLM's attempted retries
    /// and fallbacks and the deployment that answered; Portkey's target that answered and its
    /// retries): its own account, beside the upstream's ground truth (`policies[].turns.rows`),
    /// never instead of it; absent when it said nothing, and in older reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub said: Option<GatewaySaid>,
    /// The turn its requests' marker carried (`X-Rehearse-Turn` / the body marker): its row in
    /// `policies[].turns.rows` (absent in older reports).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<u64>,
    /// The embedded engine: the model its call ended on (the one that answered, or the last
    /// one tried); absent for a gateway (its answer's own `model` is `answer.reported_model`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The embedded engine: the auth profile of the attempt that answered (or was last tried).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
}

pub use crate::wire::said::GatewaySaid;

/// One profile's state in the gateway's auth store after the run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CooldownRow {
    /// The profile id.
    pub profile: String,
    /// `cooldownReason`.
    #[serde(default)]
    pub reason: Option<String>,
    /// `cooldownUntil − lastFailureAt`, ms.
    #[serde(default)]
    pub cooldown_ms: Option<u64>,
    /// `errorCount`.
    pub error_count: u64,
    /// `disabledReason`, when disabled.
    #[serde(default)]
    pub disabled_reason: Option<String>,
}
