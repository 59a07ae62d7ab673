//! The model-call failover loop of [`Engine::handle`](super::Engine::handle).

use std::time::Duration;

use tokio::time::Instant;

use super::{Engine, MAX_ATTEMPTS, user_error};
use crate::engine::admission::Admit;
use crate::engine::classify::classify;
use crate::engine::classify::tokens_of;
use crate::engine::dep::provider_of;
use crate::engine::events::{AttemptOutcome, OpClass};
use crate::engine::failover::{Decision, RequestState, decide, pick_profile, when_no_profile};
use crate::engine::request::{EngineRequest, EngineResponse, RequestKind};
use crate::engine::transport::{Call, CallTarget, Transport};

/// How a failed request ends.
struct Failure {
    outcome: AttemptOutcome,
    error: String,
}

impl<T: Transport> Engine<T> {
    pub(super) async fn handle_llm(&self, req: &EngineRequest, worker: usize) -> EngineResponse {
        let RequestKind::Llm {
            model,
            stream,
            max_tokens,
        } = &req.kind
        else {
            return self.handle_simple(req, worker).await;
        };
        let class = req.class.unwrap_or(OpClass::LlmInference);
        let model = match self.route_model(req, model) {
            Ok(m) => m,
            Err(resp) => return resp,
        };
        let model = model.as_str();
        let mut spent = 0u64;
        let mut state = RequestState::new(model, provider_of(model));
        let mut attempts = 0u32;
        let mut next: Option<String> = None;
        let mut first_dep: Option<String> = None;
        let mut last = Failure {
            outcome: AttemptOutcome::Rejected,
            error: "no attempt made".to_string(),
        };
        let failure = loop {
            if attempts >= MAX_ATTEMPTS {
                break last;
            }
            let now = Instant::now();
            let entries = self.book.for_provider(&state.provider);
            let id = match next.take() {
                Some(id) => id,
                None => {
                    let core = self.core();
                    let views = self.views(&core.store, &entries, now);
                    drop(core);
                    match pick_profile(&views, &state.tried, now) {
                        Some(id) => id,
                        None => {
                            let step =
                                when_no_profile(&self.ctx(&views, (0, 0)), &state, None, now);
                            let no_profile = step.events.first().and_then(|(_, log)| log.clone());
                            for (kind, log) in step.events {
                                self.emit(now, kind, log);
                            }
                            match step.decision {
                                Decision::Fallback { model } => {
                                    state.provider = provider_of(&model).to_string();
                                    state.models.push(model.clone());
                                    state.model = model;
                                    state.tried.clear();
                                    state.same_profile_retries = 0;
                                    continue;
                                }
                                _ => {
                                    if let Some(line) = no_profile {
                                        last.error = line;
                                    }
                                    break last;
                                }
                            }
                        }
                    }
                }
            };
            let Some(entry) = entries.iter().find(|e| e.profile.id == id) else {
                break last;
            };
            let dep = entry.dep.clone();
            first_dep.get_or_insert_with(|| dep.clone());
            if state.profile != id {
                state.same_profile_retries = 0;
            }
            state.profile = id.clone();
            if !state.tried.contains(&id) {
                state.tried.push(id.clone());
            }
            attempts += 1;
            let (probe, timeout) = match self.admission.admit(&dep, worker, now) {
                Admit::Allow { probe, timeout } => (probe, timeout),
                Admit::Reject { .. } => {
                    let c = Self::rejected();
                    let m = Some((id.as_str(), state.model.as_str()));
                    self.attempt_event(now, &dep, worker, class, &c, Duration::ZERO, false, m);
                    last = Failure {
                        outcome: AttemptOutcome::Rejected,
                        error: format!("circuit open for {dep}"),
                    };
                    continue;
                }
            };
            self.core().store.mark_used(&id, self.unix_ms(now));
            let call = Call {
                dep: dep.clone(),
                class,
                target: CallTarget::Llm {
                    model: state.model.clone(),
                    stream: *stream,
                    max_tokens: *max_tokens,
                },
                bearer: Some(entry.profile.credential().to_string()),
                idempotency_key: None,
                probe: probe.then(|| dep.clone()),
                worker,
                attempt: attempts,
                deadlines: self.deadlines(class, timeout),
            };
            let result = self.transport.send(call).await;
            let end = Instant::now();
            self.admission.record(&dep, worker, probe, &result, end);
            let c = classify(&result, self.wall(end));
            let m = Some((id.as_str(), state.model.as_str()));
            self.attempt_event(end, &dep, worker, class, &c, end - now, probe, m);
            spent = spent.saturating_add(tokens_of(&result));
            let end_ms = self.unix_ms(end);
            let Some(reason) = c.reason else {
                self.spend(req, spent, end);
                let mut core = self.core();
                if core.store.mark_success(&id, end_ms) {
                    self.save(&mut core);
                }
                drop(core);
                let resp = EngineResponse {
                    outcome: AttemptOutcome::Ok,
                    attempts,
                    model: Some(state.model.clone()),
                    fallback: state.models.len() > 1,
                    user_error: None,
                    tokens: tokens_of(&result),
                };
                return self.finish(req, &dep, resp);
            };
            last = Failure {
                outcome: c.outcome,
                error: user_error(reason),
            };
            let step = {
                let mut core = self.core();
                let window_ms = super::ms_of(self.scale(self.config.failure_window()));
                let counts = core
                    .store
                    .stats(&id)
                    .map_or((0, 0), |s| s.counts(reason, end_ms, window_ms));
                let views = self.views(&core.store, &entries, end);
                let step = decide(&self.ctx(&views, counts), &state, &c, end, &mut core.rng);
                if let Some(cd) = &step.cooldown {
                    let until = end_ms.saturating_add(super::ms_of(self.scale(cd.duration)));
                    core.store
                        .mark_failure(&cd.profile, cd.reason, until, end_ms, window_ms);
                    self.save(&mut core);
                }
                step
            };
            let mut no_profile = None;
            for (kind, log) in step.events {
                if matches!(
                    kind,
                    crate::engine::events::EventKind::NoProfileAvailable { .. }
                ) {
                    no_profile = log.clone();
                }
                self.emit(end, kind, log);
            }
            if !matches!(step.decision, Decision::Done | Decision::Fail)
                && self.budget_exhausted(req, reason, spent, class, end)
            {
                break last;
            }
            match step.decision {
                Decision::Done => break last,
                Decision::RetrySame { delay } => {
                    state.same_profile_retries += 1;
                    next = Some(id);
                    tokio::time::sleep(self.scale(delay)).await;
                }
                Decision::Rotate { to } => {
                    state.same_profile_retries = 0;
                    next = Some(to);
                }
                Decision::Fallback { model } => {
                    state.provider = provider_of(&model).to_string();
                    state.models.push(model.clone());
                    state.model = model;
                    state.tried.clear();
                    state.same_profile_retries = 0;
                }
                Decision::Fail => {
                    if let Some(line) = no_profile {
                        last.error = line;
                    }
                    break last;
                }
            }
        };
        self.spend(req, spent, Instant::now());
        let resp = EngineResponse {
            outcome: failure.outcome,
            attempts,
            model: Some(state.model.clone()),
            fallback: state.models.len() > 1,
            user_error: Some(failure.error),
            tokens: 0,
        };
        let dep = first_dep.unwrap_or_else(|| state.provider.clone());
        self.finish(req, &dep, resp)
    }
}
