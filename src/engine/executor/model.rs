//! The model-call entry point of [`Engine::handle`](super::Engine::handle): route the request
//! (throttle, pinned plans), run the failover chain (`chain.rs`), and when the chain is
//! exhausted walk the degradation ladder of docs/engine.md ([`crate::engine::budget::ladder`]):
//!
//! 1. **lighter model** — `modelFailover.lighterModel`, run through the same chain (profile
//!    rotation, retry gate, breakers), announced as a `ModelFallback` (so `model_fallbacks_total`
//!    counts it and the response says `fallback`). Passed over (a `Degraded` event with
//!    `skipped`) when already tried, when its breaker is open (`circuit_open`), when every
//!    profile of its provider is cooling (`no_available_profile`), for a tenant pinned to a plan
//!    (`pinned_plan`), after a context overflow (a lighter model has no larger window,
//!    `context_overflow`), or when the request's whole token budget is spent (`budget_spent`);
//! 2. **partial result** — when a stream delivered tokens before it was cut (or stalled): the
//!    response is `partial`, carries those tokens and no user error, its outcome stays the
//!    attempt's (`stream_cut` / `timeout`); docs/metrics.md has no series for it, so it is an event;
//! 3. **fail** — the last failure's user-visible error.
//!
//! Every rung taken emits `Degraded { rung }`, so `events.jsonl` shows how a request ended.

use tokio::time::Instant;

use super::Engine;
use super::chain::{LlmShape, ModelRun};
use crate::engine::budget::{Rung, ladder, within_budget};
use crate::engine::events::{AttemptOutcome, EventKind, LadderRung, OpClass};
use crate::engine::failover::fallback_event;
use crate::engine::outcome::Reason;
use crate::engine::request::{EngineRequest, EngineResponse};
use crate::engine::transport::Transport;
use crate::wire::dep::provider_of;

impl<T: Transport> Engine<T> {
    /// A model call, as [`Engine::handle`] routed it.
    pub(super) async fn handle_model(
        &self,
        req: &EngineRequest,
        worker: usize,
        model: &str,
        stream: bool,
        max_tokens: Option<u32>,
    ) -> EngineResponse {
        let shape = LlmShape {
            class: req.class.unwrap_or(OpClass::LlmInference),
            stream,
            max_tokens,
        };
        let model = match self.route_model(req, model) {
            Ok(m) => m,
            Err(resp) => return resp,
        };
        let mut p = ModelRun::new(&model);
        loop {
            if let Some(answer) = self.run_chain(req, worker, &shape, &mut p).await {
                self.spend(req, p.spent, Instant::now());
                let resp = EngineResponse {
                    outcome: AttemptOutcome::Ok,
                    attempts: p.attempts,
                    model: Some(p.state.model.clone()),
                    fallback: p.state.models.len() > 1,
                    profile: tried(&p),
                    user_error: None,
                    tokens: answer.tokens,
                    partial: false,
                };
                return self.finish(req, &answer.dep, resp);
            }
            let now = Instant::now();
            match self.next_rung(req, &p, now) {
                Rung::LighterModel(lighter) => {
                    let from = p.state.model.clone();
                    let reason = p.last.reason.unwrap_or(Reason::Unknown);
                    let log = format!(
                        "Degradation: lighter model {lighter} (after {} on {from})",
                        reason.as_str()
                    );
                    self.degraded(
                        now,
                        req,
                        LadderRung::LighterModel,
                        Some(&lighter),
                        None,
                        log,
                    );
                    let (kind, log) = fallback_event(&from, &lighter, reason);
                    self.emit(now, kind, log);
                    p.switch_to(&lighter);
                }
                Rung::PartialResult { tokens } => return self.partial_result(req, p, tokens, now),
                Rung::Fail => return self.fail(req, p, now),
            }
        }
    }

    /// The first rung left for a request whose chain is exhausted.
    fn next_rung(&self, req: &EngineRequest, p: &ModelRun, now: Instant) -> Rung {
        let lighter = self
            .config
            .model_failover
            .lighter_model
            .as_deref()
            .filter(|m| !p.state.models.iter().any(|x| x == m))
            .filter(|m| match self.lighter_skip(req, p, m, now) {
                None => true,
                Some(why) => {
                    let log = format!("Degradation: lighter model {m} skipped ({why})");
                    let kind = EventKind::Degraded {
                        request: req.id,
                        rung: LadderRung::LighterModel,
                        model: Some(m.to_string()),
                        tokens: None,
                        skipped: Some(why.to_string()),
                    };
                    self.emit(now, kind, Some(log));
                    false
                }
            });
        let partial = p.partial.as_ref().map_or(0, |x| x.tokens);
        ladder(lighter, Some(&p.state.model), partial)
            .into_iter()
            .next()
            .unwrap_or(Rung::Fail)
    }

    /// Why the lighter model `m` cannot be tried now, if it cannot.
    fn lighter_skip(
        &self,
        req: &EngineRequest,
        p: &ModelRun,
        m: &str,
        now: Instant,
    ) -> Option<&'static str> {
        let pinned = &self.throttle.config().pinned;
        if req.tenant.as_ref().is_some_and(|t| pinned.contains_key(t)) {
            return Some("pinned_plan");
        }
        if p.last.reason == Some(Reason::ContextOverflow) {
            return Some("context_overflow");
        }
        if !within_budget(self.spent_total(req, p.spent), req.budget_tokens, 1.0) {
            return Some("budget_spent");
        }
        if self.model_open(m, now) {
            return Some("circuit_open");
        }
        let entries = self.book.for_provider(provider_of(m));
        let core = self.core();
        let views = self.views(&core.store, &entries, now);
        drop(core);
        if !views.iter().any(|v| v.available(now)) {
            return Some("no_available_profile");
        }
        None
    }

    fn degraded(
        &self,
        now: Instant,
        req: &EngineRequest,
        rung: LadderRung,
        model: Option<&str>,
        tokens: Option<u64>,
        log: String,
    ) {
        let kind = EventKind::Degraded {
            request: req.id,
            rung,
            model: model.map(str::to_string),
            tokens,
            skipped: None,
        };
        self.emit(now, kind, (!log.is_empty()).then_some(log));
    }

    /// The partial-result rung: the tokens a cut stream delivered, no user error.
    fn partial_result(
        &self,
        req: &EngineRequest,
        p: ModelRun,
        tokens: u64,
        now: Instant,
    ) -> EngineResponse {
        let (model, profile, outcome) = p.partial.as_ref().map_or_else(
            || (p.state.model.clone(), tried(&p), p.last.outcome),
            |x| (x.model.clone(), Some(x.profile.clone()), x.outcome),
        );
        let log = format!("Degradation: partial result of {tokens} tokens from {model}");
        let rung = LadderRung::PartialResult;
        self.degraded(now, req, rung, Some(&model), Some(tokens), log);
        self.spend(req, p.spent, now);
        let resp = EngineResponse {
            outcome,
            attempts: p.attempts,
            model: Some(model),
            fallback: p.state.models.len() > 1,
            profile,
            user_error: None,
            tokens,
            partial: true,
        };
        let dep = p.first_dep.unwrap_or_else(|| p.state.provider.clone());
        self.finish(req, &dep, resp)
    }

    /// The last rung: fail with the last failure's user-visible error.
    fn fail(&self, req: &EngineRequest, p: ModelRun, now: Instant) -> EngineResponse {
        self.degraded(now, req, LadderRung::Fail, None, None, String::new());
        self.spend(req, p.spent, now);
        let resp = EngineResponse {
            outcome: p.last.outcome,
            attempts: p.attempts,
            model: Some(p.state.model.clone()),
            fallback: p.state.models.len() > 1,
            profile: tried(&p),
            user_error: Some(p.last.error),
            tokens: 0,
            partial: false,
        };
        let dep = p.first_dep.unwrap_or_else(|| p.state.provider.clone());
        self.finish(req, &dep, resp)
    }
}

/// The profile `p` last tried (`None` before any attempt).
fn tried(p: &ModelRun) -> Option<String> {
    Some(p.state.profile.clone()).filter(|id| !id.is_empty())
}
