//! The one scripted fake `Transport` of the tests. A script answers every call from the call
//! and `n`, the 1-based count of calls so far under the same key (profile, model or dep: see
//! [`CountBy`]); the answer says when the result arrives, on tokio's (usually paused) clock.
//! Every call is recorded with the instant it was sent. Cheap to clone; clones share the record.
//!
//! The engine tests' `Reply` vocabulary (`support::engine`), the ladder rig (`support::ladder`),
//! the executor and canary tests all build on this one.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rehearse::engine::{AttemptResult, Call, Endpoint, TimeoutPhase, Transport};
use tokio::sync::watch;
use tokio::time::Instant;

/// When and what a scripted call answers.
#[derive(Debug, Clone)]
pub enum Answer {
    /// This result at once.
    Now(AttemptResult),
    /// This result after this long.
    After(Duration, AttemptResult),
    /// Nothing until the call's own TTFB deadline (its total deadline without one), then a TTFB
    /// timeout, as the real transport reports it.
    Stall,
    /// This result once the flag turns true (an upstream that goes away with the run).
    When(watch::Receiver<bool>, AttemptResult),
}

impl Answer {
    /// `result` after `ms` milliseconds.
    pub fn after_ms(ms: u64, result: AttemptResult) -> Self {
        Self::After(Duration::from_millis(ms), result)
    }
}

/// What `n` counts calls by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CountBy {
    /// The bearer (the profile), or the dep for calls without one.
    ProfileOrDep,
    /// The model of a model call, or the dep for other calls.
    Model,
    /// The dep.
    Dep,
}

type Script = dyn Fn(&Call, u32) -> Answer + Send + Sync;

/// The scripted transport.
#[derive(Clone)]
pub struct FakeTransport {
    script: Arc<Script>,
    count_by: CountBy,
    calls: Arc<Mutex<Vec<(Instant, Call)>>>,
    counts: Arc<Mutex<HashMap<String, u32>>>,
}

impl FakeTransport {
    /// Answers `script(call, n)`, `n` counted by `count_by`.
    pub fn new(
        count_by: CountBy,
        script: impl Fn(&Call, u32) -> Answer + Send + Sync + 'static,
    ) -> Self {
        Self {
            script: Arc::new(script),
            count_by,
            calls: Arc::default(),
            counts: Arc::default(),
        }
    }

    /// Every call so far with the instant it was sent, in order.
    pub fn calls(&self) -> Vec<(Instant, Call)> {
        self.calls.lock().unwrap().clone()
    }

    /// How many calls so far.
    pub fn count(&self) -> usize {
        self.calls.lock().unwrap().len()
    }

    fn key(&self, call: &Call) -> String {
        match (self.count_by, &call.endpoint) {
            (CountBy::ProfileOrDep, _) => call.bearer.clone().unwrap_or_else(|| call.dep.clone()),
            (CountBy::Model, Endpoint::Llm { model, .. }) => model.clone(),
            _ => call.dep.clone(),
        }
    }
}

/// The model of a model call.
pub fn model_of(call: &Call) -> Option<&str> {
    match &call.endpoint {
        Endpoint::Llm { model, .. } => Some(model),
        _ => None,
    }
}

impl Transport for FakeTransport {
    fn send(&self, call: Call) -> impl std::future::Future<Output = AttemptResult> + Send {
        let n = {
            let mut counts = self.counts.lock().unwrap();
            let n = counts.entry(self.key(&call)).or_insert(0);
            *n += 1;
            *n
        };
        let answer = (self.script)(&call, n);
        let stall = call.deadlines.ttfb.unwrap_or(call.deadlines.total);
        self.calls.lock().unwrap().push((Instant::now(), call));
        async move {
            match answer {
                Answer::Now(result) => result,
                Answer::After(wait, result) => {
                    tokio::time::sleep(wait).await;
                    result
                }
                Answer::Stall => {
                    tokio::time::sleep(stall).await;
                    AttemptResult::Timeout {
                        phase: TimeoutPhase::Ttfb,
                        tokens_received: 0,
                    }
                }
                Answer::When(mut flag, result) => {
                    let _ = flag.wait_for(|f| *f).await;
                    result
                }
            }
        }
    }
}
