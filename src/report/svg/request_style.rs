//! How the request lanes draw a request's outcome — its colour and its name in the legend — and
//! the sizes the lanes and their marks share (`requests` draws the lanes, `request_marks` the
//! turns, decisions and arrows on them).

use super::geom::text_w;
use crate::report::model::FaultWindow;

/// Height of a lane's decision strip (above the lane, when it has decisions).
pub(super) const STRIP_H: f64 = 11.0;

/// The colour of what the upstream did to a request (`ok` or a fault kind; `detail` tells a
/// 429 status from another).
pub(super) fn outcome_color(outcome: &str, detail: &str) -> &'static str {
    match outcome {
        "ok" => "#16a34a",
        "status" if detail.contains("429") => "#d97706",
        "status" => "#dc2626",
        "rate_limit" => "#d97706",
        "reset" | "reset_mid_stream" | "ws_close" | "down" | "malformed_chunk" | "error_event" => {
            "#7c3aed"
        }
        "stall" | "stall_stream" | "ws_ping_timeout" => "#334155",
        "latency" | "slow_stream" | "first_token_delay" => "#0284c7",
        _ => "#6b7280",
    }
}

/// What a request's outcome is called in the picture: `ok`, else the fault's kind and detail
/// (`503`, `429 · Retry-After 2s`, `reset`).
pub(super) fn outcome_label(outcome: &str, fault: Option<usize>, faults: &[FaultWindow]) -> String {
    if outcome == "ok" {
        return "ok".into();
    }
    let w = fault.and_then(|i| faults.iter().find(|f| f.index == i));
    let detail = w.map_or(String::new(), |w| w.detail.replace('"', ""));
    let code = detail
        .split_whitespace()
        .find_map(|p| p.strip_prefix("status="))
        .map(str::to_string);
    let retry = detail
        .split_whitespace()
        .find_map(|p| p.strip_prefix("retry_after="))
        .map(|r| format!("Retry-After {r}"));
    let name = match (outcome, code) {
        ("status", Some(c)) => c,
        ("rate_limit", _) => "429".into(),
        (k, _) => k.replace('_', " "),
    };
    let mut l = match retry {
        Some(r) => format!("{name} · {r}"),
        None => name,
    };
    if let Some(i) = fault {
        l = format!("{l} (fault #{})", i + 1);
    }
    l
}

/// Width of `text` at the legend's size (for the legend's packing).
pub(super) fn legend_w(text: &str) -> f64 {
    text_w(text, 11.0)
}
