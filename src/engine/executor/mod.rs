//! The async executor around the pure core. For a model call it runs the failover loop: pick a
//! profile → `Admission::admit` on the model endpoint → `Transport::send` with the configured
//! deadlines (`X-Breaker-Probe` when admission says probe) → classify → `Admission::record` →
//! `failover::decide` → apply the cooldown, emit the events, sleep or rotate or fall back; a
//! content failure gets a budget-bounded self-correction retry instead; once the chain is
//! exhausted, the degradation ladder (lighter model → partial result → fail). Tool and
//! WebSocket requests are admit → send → record. Every engine duration is divided by
//! `EngineOptions::speed`; events carry nominal durations (what production would show).
//!
//! The shared state (cooldown store and RNG) sits behind one `std::sync::Mutex`, never held across
//! an `.await`; the store file is rewritten only when a cooldown is written or cleared.

use crate::util::sync::Locked;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use tokio::time::Instant;

mod chain;
mod deadlines;
use deadlines::Given;
mod gates;
mod model;
mod profile_gauge;
mod simple;

use simple::SimpleCall;

use crate::engine::adaptive::AdaptiveDeadlines;
use crate::engine::admission::Admission;
use crate::engine::budget::Ledger;
use crate::engine::budget::throttle::Throttle;
use crate::engine::clock::Clock;
use crate::engine::config::{ConfigError, EngineConfig};
use crate::engine::events::{AttemptOutcome, Event, EventKind, EventSink, OpClass, expired_log};
use crate::engine::failover::classify::Classified;
use crate::engine::failover::cooldown::Schedules;
use crate::engine::failover::policy::Policy;
use crate::engine::failover::profiles::{Profile, ProfileBook, ProfileEntry};
use crate::engine::failover::store::CooldownStore;
use crate::engine::failover::{FailoverCtx, ProfileView};
use crate::engine::outcome::Reason;
use crate::engine::request::{EngineRequest, EngineResponse, RequestKind};
use crate::engine::transport::Transport;
use crate::util::speed::Speed;

/// Attempts one request may make at most (rotations, retries and fallbacks included).
pub const MAX_ATTEMPTS: u32 = 32;

/// How the engine runs.
#[derive(Debug, Clone, PartialEq)]
pub struct EngineOptions {
    /// The failover policy.
    pub policy: Policy,
    /// Seed of every random choice (jitter).
    pub seed: u64,
    /// Divides every engine duration (cooldowns, backoff, deadlines).
    pub speed: Speed,
    /// The engine's start (events' `t_ms` count from it).
    pub start: Instant,
    /// The cooldown store file (`auth-profiles.json` shape), if persisted.
    pub store_path: Option<PathBuf>,
}

impl EngineOptions {
    /// Defaults: retry-gate, seed 0, speed 1, starting `start`, no store file.
    pub fn new(start: Instant) -> Self {
        Self {
            policy: Policy::RetryGate,
            seed: 0,
            speed: Speed::ONE,
            start,
            store_path: None,
        }
    }
}

struct Core {
    store: CooldownStore,
    rng: ChaCha8Rng,
    store_error: Option<String>,
}

/// The failover engine over a transport. Share it across workers with `Arc`.
pub struct Engine<T: Transport> {
    config: EngineConfig,
    schedules: Schedules,
    backoff_ms: (u64, u64),
    book: ProfileBook,
    opts: EngineOptions,
    /// The engine's clock (event times and store timestamps).
    clock: Clock,
    transport: T,
    admission: Arc<dyn Admission>,
    sink: Arc<dyn EventSink>,
    core: Mutex<Core>,
    /// Tokens spent per session (budget-bounded retries).
    ledger: Ledger,
    /// Per-tenant tokens-per-minute throttle and pinned plans.
    throttle: Throttle,
    /// Tool-call deadlines from each dependency's observed p99 (`[engine.timeouts] adaptive`).
    adaptive: AdaptiveDeadlines,
}

impl<T: Transport> std::fmt::Debug for Engine<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("policy", &self.opts.policy)
            .field("speed", &self.opts.speed)
            .finish_non_exhaustive()
    }
}

fn ms_of(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn user_error(reason: Reason) -> String {
    match reason {
        Reason::Timeout => "LLM request timed out.".to_string(),
        Reason::RateLimit => "API rate limit reached. Please try again later.".to_string(),
        r => format!("request failed ({})", r.as_str()),
    }
}

impl<T: Transport> Engine<T> {
    /// Builds an engine; validates the configuration and the profiles (a [`Speed`] is valid by
    /// construction), and loads the
    /// cooldown store if a path is given.
    pub fn new(
        config: EngineConfig,
        profiles: Vec<Profile>,
        opts: EngineOptions,
        transport: T,
        admission: Arc<dyn Admission>,
        sink: Arc<dyn EventSink>,
    ) -> Result<Self, ConfigError> {
        config.validate()?;
        let store = match &opts.store_path {
            Some(p) => CooldownStore::load(p)?,
            None => CooldownStore::in_memory(),
        };
        let book = ProfileBook::new(profiles)?;
        let ids: Vec<String> = book.all().map(|e| e.profile.id.clone()).collect();
        admission.follow_profiles(&ids);
        Ok(Self {
            schedules: config.schedules()?,
            backoff_ms: config.backoff_range()?,
            book,
            clock: Clock::new(opts.start, SystemTime::now()),
            core: Mutex::new(Core {
                store,
                rng: ChaCha8Rng::seed_from_u64(opts.seed),
                store_error: None,
            }),
            ledger: Ledger::default(),
            throttle: Throttle::new(config.throttle.clone(), opts.speed),
            adaptive: AdaptiveDeadlines::new(&config.timeouts, opts.policy.as_str()),
            config,
            opts,
            transport,
            admission,
            sink,
        })
    }

    /// Sets the wall-clock time that corresponds to `opts.start` (store timestamps are unix ms).
    pub fn with_wall_start(mut self, wall: SystemTime) -> Self {
        self.clock = Clock::new(self.opts.start, wall);
        self
    }

    /// The configuration.
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// The options.
    pub fn options(&self) -> &EngineOptions {
        &self.opts
    }

    /// A copy of the cooldown store as it stands.
    pub fn store_snapshot(&self) -> CooldownStore {
        self.core().store.clone()
    }

    /// The last error writing the store file, if any (the engine keeps running without it).
    pub fn store_error(&self) -> Option<String> {
        self.core().store_error.clone()
    }

    /// Writes the store file now (last-used times included; cooldown changes are written as
    /// they happen). Call it when a run ends.
    pub fn persist(&self) -> Result<(), crate::engine::failover::store::StoreError> {
        let mut core = self.core();
        let result = core.store.save();
        core.store_error = result.as_ref().err().map(|e| e.to_string());
        result
    }

    fn core(&self) -> MutexGuard<'_, Core> {
        self.core.locked()
    }

    /// Wall-clock time at `now` (tokio clock).
    pub fn wall(&self, now: Instant) -> SystemTime {
        self.clock.wall(now)
    }

    /// Unix ms at `now`.
    pub fn unix_ms(&self, now: Instant) -> u64 {
        let d = self
            .wall(now)
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default();
        ms_of(d)
    }

    fn scale(&self, nominal: Duration) -> Duration {
        self.opts.speed.scale(nominal)
    }

    /// A wall duration of this run in nominal time (× the speed).
    fn nominal(&self, wall: Duration) -> Duration {
        self.opts.speed.nominal(wall)
    }

    fn emit(&self, now: Instant, kind: EventKind, log: Option<String>) {
        let t_ms = ms_of(now.saturating_duration_since(self.opts.start));
        self.sink.emit(&Event { t_ms, kind, log });
    }

    fn views(
        &self,
        store: &CooldownStore,
        entries: &[ProfileEntry],
        now: Instant,
    ) -> Vec<ProfileView> {
        let now_ms = self.unix_ms(now);
        entries
            .iter()
            .map(|e| {
                let stats = store.stats(&e.profile.id);
                let until = stats
                    .and_then(|s| s.unavailable_until())
                    .filter(|&u| u > now_ms);
                let local = until.map(|u| now + Duration::from_millis(u - now_ms));
                // A cooldown another fleet host wrote counts like this host's own (the later wins).
                let fleet = self.admission.fleet_cooldown(&e.profile.id, now);
                let (cooling_until, cooldown_reason) = match (local, fleet) {
                    (l, Some(f)) if l.is_none_or(|l| f.until > l) => (Some(f.until), f.reason),
                    _ => (local, stats.and_then(|s| s.cooldown_reason)),
                };
                ProfileView {
                    id: e.profile.id.clone(),
                    cooling_until,
                    cooldown_reason,
                    open: self.admission.is_open(&e.dep, now),
                    last_used_ms: stats.and_then(|s| s.last_used).unwrap_or(0),
                }
            })
            .collect()
    }

    fn ctx<'a>(&'a self, views: &'a [ProfileView], counts: (u32, u32)) -> FailoverCtx<'a> {
        FailoverCtx {
            policy: self.opts.policy,
            same_profile_retries: self.config.same_profile_retries(),
            backoff_ms: self.backoff_ms,
            schedules: &self.schedules,
            fallbacks: &self.config.model_failover.fallbacks,
            context_fallbacks: &self.config.model_failover.context_fallbacks,
            profiles: views,
            counts,
        }
    }

    fn save(&self, core: &mut Core) {
        core.store_error = core.store.save().err().map(|e| e.to_string());
    }

    /// Handles one request to the end (all retries, rotations and fallbacks): the engine's one
    /// entry. A model call goes through the failover chain and the degradation ladder
    /// (`model.rs`), a tool call or WebSocket session through admit → send → record (`simple.rs`).
    pub async fn handle(&self, req: EngineRequest, worker: usize) -> EngineResponse {
        match &req.kind {
            RequestKind::Llm {
                model,
                stream,
                max_tokens,
                ..
            } => {
                self.handle_model(&req, worker, model, *stream, *max_tokens)
                    .await
            }
            RequestKind::Tool {
                name,
                idempotency_key,
                idempotent,
                ..
            } => {
                let endpoint = req.kind.endpoint();
                let plan = SimpleCall::tool(name, endpoint, idempotency_key.as_ref(), *idempotent);
                self.handle_simple(&req, worker, plan).await
            }
            RequestKind::Ws { channel, .. } => {
                let plan = SimpleCall::ws(channel, req.kind.endpoint());
                self.handle_simple(&req, worker, plan).await
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn attempt_event(
        &self,
        now: Instant,
        dep: &str,
        worker: usize,
        class: OpClass,
        c: &Classified,
        latency: Duration,
        probe: bool,
        model: Option<(&str, &str)>,
        given: Option<&Given>,
    ) {
        let deadline = match (c.outcome, c.phase, given) {
            (AttemptOutcome::Timeout, Some(phase), Some(g)) => self.expired(g, phase),
            _ => None,
        };
        let log = match (deadline, c.phase) {
            (Some(e), Some(phase)) => Some(expired_log(dep, class, phase, e)),
            _ => None,
        };
        let kind = EventKind::AttemptFinished {
            dep: dep.to_string(),
            worker,
            class,
            outcome: c.outcome,
            phase: c.phase,
            latency_ms: latency.as_secs_f64() * 1000.0,
            probe,
            profile: model.map(|(p, _)| p.to_string()),
            model: model.map(|(_, m)| m.to_string()),
            deadline,
        };
        self.emit(now, kind, log);
    }

    fn rejected() -> Classified {
        Classified {
            reason: None,
            phase: None,
            retry_after: None,
            outcome: AttemptOutcome::Rejected,
        }
    }

    fn finish(&self, req: &EngineRequest, dep: &str, resp: EngineResponse) -> EngineResponse {
        let kind = EventKind::RequestFinished {
            request: req.id,
            dep: dep.to_string(),
            outcome: resp.outcome,
            attempts: resp.attempts,
            model: resp.model.clone(),
            fallback: resp.fallback,
            user_error: resp.user_error.clone(),
            partial: resp.partial,
        };
        self.emit(Instant::now(), kind, None);
        resp
    }
}
