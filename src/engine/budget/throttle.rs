//! Per-tenant tokens-per-minute throttle and model routing (`[engine.throttle]`).
//!
//! A tenant (from the traffic's `tenant`) that has used more than its tokens-per-minute budget in
//! the last minute (sliding, speed-scaled) is routed to the cheaper fallback model
//! (`throttled_total{tenant}`). A plan pinned to a model never moves: when that model's breaker
//! is open it is *unavailable* (fail fast) rather than silently answered by another model.

use crate::util::sync::Locked;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Mutex;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::time::Instant;

use crate::util::speed::Speed;

/// `[engine.throttle]`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct ThrottleConfig {
    /// Budget of every tenant not listed in `tenants` (none = unthrottled).
    pub tokens_per_minute: Option<u64>,
    /// Per-tenant budgets.
    pub tenants: BTreeMap<String, u64>,
    /// The cheaper model an over-budget tenant is routed to.
    pub cheaper_model: Option<String>,
    /// Tenants whose plan is pinned to one model (tenant → model).
    pub pinned: BTreeMap<String, String>,
}

/// Where a model request goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// The requested (or pinned) model.
    Model(String),
    /// The cheaper model, because the tenant is over budget.
    Throttled {
        /// The cheaper model.
        to: String,
    },
    /// The pinned model's breaker is open: fail fast.
    Unavailable {
        /// The pinned model.
        model: String,
    },
}

/// The routing decision: pinned plans first (unavailable while their model is open), then the
/// throttle (only when the cheaper model is not open itself), else the requested model.
pub fn route(
    requested: &str,
    pinned: Option<&str>,
    over_budget: bool,
    cheaper: Option<&str>,
    model_open: impl Fn(&str) -> bool,
) -> Route {
    if let Some(p) = pinned {
        return if model_open(p) {
            Route::Unavailable {
                model: p.to_string(),
            }
        } else {
            Route::Model(p.to_string())
        };
    }
    match cheaper {
        Some(c) if over_budget && c != requested && !model_open(c) => {
            Route::Throttled { to: c.to_string() }
        }
        _ => Route::Model(requested.to_string()),
    }
}

/// Tokens used per tenant over the last minute.
#[derive(Debug)]
pub struct Throttle {
    cfg: ThrottleConfig,
    window: Duration,
    usage: Mutex<HashMap<String, VecDeque<(Instant, u64)>>>,
}

impl Throttle {
    /// A throttle with a one-minute window divided by `speed`.
    pub fn new(cfg: ThrottleConfig, speed: Speed) -> Self {
        Self {
            cfg,
            window: speed.scale(Duration::from_secs(60)),
            usage: Mutex::new(HashMap::new()),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &ThrottleConfig {
        &self.cfg
    }

    /// The tenant's budget, if it has one.
    pub fn limit(&self, tenant: &str) -> Option<u64> {
        self.cfg
            .tenants
            .get(tenant)
            .copied()
            .or(self.cfg.tokens_per_minute)
    }

    fn with_usage<R>(
        &self,
        f: impl FnOnce(&mut HashMap<String, VecDeque<(Instant, u64)>>) -> R,
    ) -> R {
        f(&mut self.usage.locked())
    }

    /// Tokens the tenant used in the window ending at `now`.
    pub fn used(&self, tenant: &str, now: Instant) -> u64 {
        let window = self.window;
        self.with_usage(|u| {
            let Some(q) = u.get_mut(tenant) else {
                return 0;
            };
            while q
                .front()
                .is_some_and(|(at, _)| now.saturating_duration_since(*at) >= window)
            {
                q.pop_front();
            }
            q.iter().map(|(_, t)| t).sum()
        })
    }

    /// Records tokens the tenant used at `now`.
    pub fn record(&self, tenant: &str, tokens: u64, now: Instant) {
        if tokens == 0 || self.limit(tenant).is_none() {
            return;
        }
        self.with_usage(|u| {
            u.entry(tenant.to_string())
                .or_default()
                .push_back((now, tokens))
        });
    }

    /// True when the tenant has used more than its budget in the last minute.
    pub fn over_budget(&self, tenant: &str, now: Instant) -> bool {
        self.limit(tenant)
            .is_some_and(|limit| self.used(tenant, now) > limit)
    }

    /// Routes `tenant`'s request for `requested`.
    pub fn route(
        &self,
        tenant: Option<&str>,
        requested: &str,
        now: Instant,
        model_open: impl Fn(&str) -> bool,
    ) -> Route {
        let pinned = tenant
            .and_then(|t| self.cfg.pinned.get(t))
            .map(String::as_str);
        let over = tenant.is_some_and(|t| self.over_budget(t, now));
        route(
            requested,
            pinned,
            over,
            self.cfg.cheaper_model.as_deref(),
            model_open,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> ThrottleConfig {
        ThrottleConfig {
            tokens_per_minute: Some(1000),
            tenants: BTreeMap::from([("big".to_string(), 5000)]),
            cheaper_model: Some("openai/gpt-5-mini".into()),
            pinned: BTreeMap::from([("pin".to_string(), "anthropic/claude-opus".into())]),
        }
    }

    #[test]
    fn routing_table() {
        let open = |m: &str| m == "anthropic/claude-opus";
        let none = |_: &str| false;
        let req = "openai/gpt-5.2";
        let mini = Some("openai/gpt-5-mini");
        assert_eq!(
            route(req, None, false, mini, none),
            Route::Model(req.into())
        );
        assert_eq!(
            route(req, None, true, mini, none),
            Route::Throttled {
                to: "openai/gpt-5-mini".into()
            }
        );
        assert_eq!(
            route(req, None, true, mini, |m: &str| m == "openai/gpt-5-mini"),
            Route::Model(req.into()),
            "an open cheaper model is no refuge"
        );
        assert_eq!(
            route(req, Some("anthropic/claude-opus"), true, mini, open),
            Route::Unavailable {
                model: "anthropic/claude-opus".into()
            }
        );
        assert_eq!(
            route(req, Some("anthropic/claude-opus"), true, mini, none),
            Route::Model("anthropic/claude-opus".into())
        );
    }

    #[tokio::test(start_paused = true)]
    async fn tenant_over_its_tokens_per_minute_is_throttled_until_the_minute_passes() {
        let t0 = Instant::now();
        let th = Throttle::new(cfg(), Speed::ONE);
        th.record("team-a", 600, t0);
        th.record("team-a", 400, t0 + Duration::from_secs(10));
        assert!(
            !th.over_budget("team-a", t0 + Duration::from_secs(11)),
            "1000 is not over"
        );
        th.record("team-a", 1, t0 + Duration::from_secs(12));
        let r = th.route(
            Some("team-a"),
            "openai/gpt-5.2",
            t0 + Duration::from_secs(13),
            |_| false,
        );
        assert_eq!(
            r,
            Route::Throttled {
                to: "openai/gpt-5-mini".into()
            }
        );
        assert!(!th.over_budget("big", t0), "own budget");
        assert!(
            !th.over_budget("team-a", t0 + Duration::from_secs(60)),
            "600 left the minute"
        );
        assert_eq!(th.used("team-a", t0 + Duration::from_secs(60)), 401);
        let fast = Throttle::new(cfg(), crate::util::speed::sp(10.0));
        fast.record("team-a", 2000, t0);
        assert!(
            !fast.over_budget("team-a", t0 + Duration::from_secs(6)),
            "speed-scaled minute"
        );
    }
}
