//! The model-call failover chain of [`Engine::handle`](super::Engine::handle): pick a profile →
//! admit → send → classify → record, then either a content self-correction retry (same profile,
//! budget-bounded, see `gates.rs`) or `failover::decide` (retry gate, cooldown,
//! rotation, model and context fallbacks), until an answer or nothing is left to try. What
//! follows a failed chain (the degradation ladder) is in `model.rs`.

use std::time::Duration;

use tokio::time::Instant;

use super::{Engine, MAX_ATTEMPTS, user_error};
use crate::engine::admission::Admit;
use crate::engine::budget::{ErrorClass, error_class};
use crate::engine::coordinator::CooldownWrite as FleetWrite;
use crate::engine::events::{AttemptOutcome, EventKind, OpClass};
use crate::engine::failover::classify::{classify, tokens_of};
use crate::engine::failover::store::CooldownStore;
use crate::engine::failover::{
    Choice, CooldownWrite, RequestState, decide, pick_profile, when_no_profile,
};
use crate::engine::outcome::{AttemptResult, Reason};
use crate::engine::request::{EngineRequest, RequestKind};
use crate::engine::transport::{Call, Endpoint, Origin, Transport};
use crate::wire::dep::provider_of;

/// How a failed model request ends: its last failure.
pub(super) struct Failure {
    /// The outcome label of the last attempt (`rejected` when none reached the upstream).
    pub(super) outcome: AttemptOutcome,
    /// The user-visible error.
    pub(super) error: String,
    /// The last failure's reason (none when no attempt reached the upstream).
    pub(super) reason: Option<Reason>,
}

/// What a cut stream delivered: the candidate for a partial result.
pub(super) struct Partial {
    /// Tokens received before the cut.
    pub(super) tokens: u64,
    /// The model that sent them.
    pub(super) model: String,
    /// The profile it was sent with.
    pub(super) profile: String,
    /// The attempt's outcome (`stream_cut`, or `timeout` for a stalled stream).
    pub(super) outcome: AttemptOutcome,
}

/// One model request so far (its run through the chain and the ladder), shared by both.
pub(super) struct ModelRun {
    /// Failover state (model, provider, profile, tried profiles and models).
    pub(super) state: RequestState,
    /// Attempts made (rejections included).
    pub(super) attempts: u32,
    /// Tokens received over every attempt.
    pub(super) spent: u64,
    /// The first dependency targeted (the `dep` of `RequestFinished`).
    pub(super) first_dep: Option<String>,
    /// The largest partial stream so far.
    pub(super) partial: Option<Partial>,
    /// Content self-correction retries made.
    pub(super) content_retries: u32,
    /// The last failure.
    pub(super) last: Failure,
}

impl ModelRun {
    pub(super) fn new(model: &str) -> Self {
        Self {
            state: RequestState::new(model, provider_of(model)),
            attempts: 0,
            spent: 0,
            first_dep: None,
            partial: None,
            content_retries: 0,
            last: Failure {
                outcome: AttemptOutcome::Rejected,
                error: "no attempt made".to_string(),
                reason: None,
            },
        }
    }

    /// Moves the request to another model (a fallback or the lighter model).
    pub(super) fn switch_to(&mut self, model: &str) {
        let s = &mut self.state;
        s.provider = provider_of(model).to_string();
        s.models.push(model.to_string());
        s.model = model.to_string();
        s.tried.clear();
        s.same_profile_retries = 0;
    }

    /// Keeps `result` as the partial-result candidate if a stream delivered more tokens than any
    /// earlier cut before failing.
    fn keep_partial(&mut self, result: &AttemptResult, outcome: AttemptOutcome) {
        let tokens = match result {
            AttemptResult::StreamCut { tokens_received }
            | AttemptResult::Timeout {
                tokens_received, ..
            } => u64::from(*tokens_received),
            _ => 0,
        };
        if tokens > 0 && self.partial.as_ref().is_none_or(|p| tokens > p.tokens) {
            self.partial = Some(Partial {
                tokens,
                model: self.state.model.clone(),
                profile: self.state.profile.clone(),
                outcome,
            });
        }
    }
}

/// The fixed shape of a model request.
pub(super) struct LlmShape {
    pub(super) class: OpClass,
    pub(super) stream: bool,
    pub(super) max_tokens: Option<u32>,
}

/// The attempt that answered.
pub(super) struct Answer {
    pub(super) dep: String,
    pub(super) tokens: u64,
}

impl<T: Transport> Engine<T> {
    /// Runs the failover chain from `p.state.model` until an answer (`Some`) or until nothing is
    /// left to try (`None`, with `p.last` set).
    pub(super) async fn run_chain(
        &self,
        req: &EngineRequest,
        worker: usize,
        shape: &LlmShape,
        p: &mut ModelRun,
    ) -> Option<Answer> {
        let class = shape.class;
        let mut next: Option<String> = None;
        loop {
            if p.attempts >= MAX_ATTEMPTS {
                return None;
            }
            let now = Instant::now();
            let entries = self.book.for_provider(&p.state.provider);
            let id = match next.take() {
                Some(id) => id,
                None => {
                    let core = self.core();
                    let views = self.views(&core.store, &entries, now);
                    drop(core);
                    match pick_profile(&views, &p.state.tried, now) {
                        Some(id) => id,
                        None => {
                            let step =
                                when_no_profile(&self.ctx(&views, (0, 0)), &p.state, None, now);
                            let no_profile = step.events.first().and_then(|(_, log)| log.clone());
                            for (kind, log) in step.events {
                                self.emit(now, kind, log);
                            }
                            if let Choice::Fallback { model } = step.choice {
                                p.switch_to(&model);
                                continue;
                            }
                            if let Some(line) = no_profile {
                                p.last.error = line;
                            }
                            return None;
                        }
                    }
                }
            };
            let entry = entries.iter().find(|e| e.profile.id == id)?;
            let dep = entry.dep.clone();
            p.first_dep.get_or_insert_with(|| dep.clone());
            let state = &mut p.state;
            if state.profile != id {
                state.same_profile_retries = 0;
            }
            state.profile = id.clone();
            if !state.tried.contains(&id) {
                state.tried.push(id.clone());
            }
            p.attempts += 1;
            let (probe, timeout) = match self.admission.admit_async(&dep, worker, now).await {
                Admit::Allow { probe, timeout } => (probe, timeout),
                Admit::Reject { .. } => {
                    let c = Self::rejected();
                    let m = Some((id.as_str(), p.state.model.as_str()));
                    self.attempt_event(
                        now,
                        &dep,
                        worker,
                        class,
                        &c,
                        Duration::ZERO,
                        false,
                        m,
                        None,
                    );
                    p.last = Failure {
                        outcome: AttemptOutcome::Rejected,
                        error: format!("circuit open for {dep}"),
                        reason: None,
                    };
                    continue;
                }
            };
            self.core().store.mark_used(&id, self.unix_ms(now));
            let given = self.model_deadlines(&dep, class, timeout, now);
            let call = Call {
                dep: dep.clone(),
                class,
                endpoint: Endpoint::Llm {
                    model: p.state.model.clone(),
                    stream: shape.stream,
                    max_tokens: shape.max_tokens,
                    messages: match &req.kind {
                        RequestKind::Llm { messages, .. } => messages.clone(),
                        _ => None,
                    },
                },
                bearer: Some(entry.profile.credential().to_string()),
                idempotency_key: None,
                probe: probe.then(|| dep.clone()),
                origin: Origin::Worker(worker),
                attempt: p.attempts,
                request: Some(req.id),
                deadlines: given.deadlines,
            };
            let result = self.transport.send(call).await;
            let end = Instant::now();
            // One instant on both clocks: the breaker and the classification read the same
            // Retry-After against it.
            let ended = self.clock.at(end);
            self.observe_model(&dep, &result, end);
            self.admission
                .record_async(&dep, worker, probe, &result, ended)
                .await;
            let mut c = classify(&result, ended.wall);
            // The wait a response announced is wall time at this speed (a scaled upstream
            // divided it already); the policy's cooldowns are nominal and scaled once below.
            c.retry_after = c.retry_after.map(|ra| self.nominal(ra));
            let m = Some((id.as_str(), p.state.model.as_str()));
            self.attempt_event(
                end,
                &dep,
                worker,
                class,
                &c,
                end - now,
                probe,
                m,
                Some(&given),
            );
            p.spent = p.spent.saturating_add(tokens_of(&result));
            let end_ms = self.unix_ms(end);
            let Some(reason) = c.reason else {
                let mut core = self.core();
                if core.store.mark_success(&id, end_ms) {
                    self.save(&mut core);
                }
                let tokens = tokens_of(&result);
                return Some(Answer { dep, tokens });
            };
            p.keep_partial(&result, c.outcome);
            p.last = Failure {
                outcome: c.outcome,
                error: user_error(reason),
                reason: Some(reason),
            };
            if error_class(reason) == ErrorClass::Content {
                // Self-correction: the same profile again, or the chain ends (content failures
                // neither cool a profile nor move to another model).
                let delay = self.content_retry(req, p, reason, class, end)?;
                next = Some(id);
                tokio::time::sleep(self.scale(delay)).await;
                continue;
            }
            let (step, shared) = {
                let mut core = self.core();
                let window_ms = super::ms_of(self.scale(self.config.failure_window()));
                let counts = core
                    .store
                    .stats(&id)
                    .map_or((0, 0), |s| s.counts(reason, end_ms, window_ms));
                let views = self.views(&core.store, &entries, end);
                let step = decide(&self.ctx(&views, counts), &p.state, &c, end, &mut core.rng);
                let mut shared = None;
                if let Some(cd) = &step.cooldown {
                    let cool_for = self.scale(cd.duration);
                    let until = end_ms.saturating_add(super::ms_of(cool_for));
                    core.store
                        .mark_failure(&cd.profile, cd.reason, until, end_ms, window_ms);
                    self.save(&mut core);
                    shared = Some((cd.profile.clone(), fleet_write(&core.store, cd, cool_for)));
                }
                (step, shared)
            };
            if let Some((profile, write)) = &shared {
                // The fleet's copy (OpenClaw's usageStats shape); nothing alone.
                self.admission.publish_cooldown(profile, write).await;
            }
            let mut no_profile = None;
            for (kind, log) in step.events {
                if matches!(kind, EventKind::NoProfileAvailable { .. }) {
                    no_profile = log.clone();
                }
                self.emit(end, kind, log);
            }
            if !matches!(step.choice, Choice::Done | Choice::Fail)
                && self.budget_exhausted(req, reason, p.spent, class, end)
            {
                return None;
            }
            match step.choice {
                Choice::Done => return None,
                Choice::RetrySame { delay } => {
                    p.state.same_profile_retries += 1;
                    next = Some(id);
                    tokio::time::sleep(self.scale(delay)).await;
                }
                Choice::Rotate { to } => {
                    p.state.same_profile_retries = 0;
                    next = Some(to);
                }
                Choice::Fallback { model } => p.switch_to(&model),
                Choice::Fail => {
                    if let Some(line) = no_profile {
                        p.last.error = line;
                    }
                    return None;
                }
            }
        }
    }
}

/// The fleet's copy of a cooldown just written to `store`: its length and the profile's counts.
fn fleet_write(store: &CooldownStore, cd: &CooldownWrite, cool_for: Duration) -> FleetWrite {
    let stats = store.stats(&cd.profile);
    FleetWrite {
        cool_for,
        reason: Some(cd.reason),
        error_count: stats.and_then(|s| s.error_count).unwrap_or(1),
        failure_counts: stats.map(|s| s.failure_counts.clone()).unwrap_or_default(),
    }
}
