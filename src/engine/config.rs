//! The engine's configuration: the `[engine]` table of a scenario. Keys are named as OpenClaw
//! names them (`timeoutSeconds`, `modelFailover.fallbacks`, `retrySameProfileOnTimeout`,
//! `retryBackoffMs`); unknown keys are rejected; every key has a default. Numbers a user could
//! get wrong in sign are read as signed integers so that `validate` can name the key instead of
//! serde reporting a bare "invalid value".

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::breaker::BreakerConfig;
use super::budget::BudgetConfig;
use super::budget::throttle::ThrottleConfig;
pub use super::errors::ConfigError;
use super::events::OpClass;
use super::failover::cooldown::{Preset, Schedule, Schedules};
use super::health::HealthConfig;
use super::health::canary::CanarySettings;
use super::outcome::Reason;
use super::timeouts::TimeoutConfig;
use super::transport::Deadlines;
use crate::util::speed::Speed;

/// The engine configuration (`[engine]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct EngineConfig {
    /// Time to first byte of a model call, in seconds (default 30): OpenClaw's provider
    /// `timeoutSeconds`, the deadline whose expiry is the weak "timeout" signal.
    pub timeout_seconds: f64,
    /// Profile retry and model fallback settings.
    pub model_failover: ModelFailover,
    /// Cooldown schedules.
    pub cooldowns: CooldownConfig,
    /// `[engine.breaker]`: per-dependency circuit breakers.
    pub breaker: BreakerConfig,
    /// `[engine.timeouts]`: deadlines by operation class.
    pub timeouts: TimeoutConfig,
    /// `[engine.budget]`: budget-bounded retries.
    pub budget: BudgetConfig,
    /// `[engine.health]`: synthetic canaries.
    pub health: HealthConfig,
    /// `[engine.throttle]`: per-tenant tokens-per-minute throttle.
    pub throttle: ThrottleConfig,
}

impl Default for EngineConfig {
    fn default() -> Self {
        Self {
            timeout_seconds: 30.0,
            model_failover: ModelFailover::default(),
            cooldowns: CooldownConfig::default(),
            breaker: BreakerConfig::default(),
            timeouts: TimeoutConfig::default(),
            budget: BudgetConfig::default(),
            health: HealthConfig::default(),
            throttle: ThrottleConfig::default(),
        }
    }
}

/// `[engine.modelFailover]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct ModelFailover {
    /// Models to fall back to, in order, when every profile of a model's provider is unavailable.
    pub fallbacks: Vec<String>,
    /// Models with a larger context window, for `context_length_exceeded`.
    pub context_fallbacks: Vec<String>,
    /// Same-profile retries after a timeout before the profile cools (default 1).
    pub retry_same_profile_on_timeout: i64,
    /// `[min, max]` ms of the uniform jitter before a same-profile retry (default [300, 1200]).
    pub retry_backoff_ms: Vec<i64>,
    /// The degradation ladder's lighter model (`PROVIDER/NAME`), tried once the failover chain
    /// and its fallbacks are exhausted (default: none, the ladder goes to partial result / fail).
    pub lighter_model: Option<String>,
}

impl Default for ModelFailover {
    fn default() -> Self {
        Self {
            fallbacks: Vec::new(),
            context_fallbacks: Vec::new(),
            retry_same_profile_on_timeout: 1,
            retry_backoff_ms: vec![300, 1200],
            lighter_model: None,
        }
    }
}

/// `[engine.cooldowns]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct CooldownConfig {
    /// The preset (`default`, `openclaw-2026.9`, `legacy`).
    pub preset: Preset,
    /// Failure counters reset when the last failure is older than this (default 24 h).
    pub failure_window_hours: f64,
    /// Per-reason overrides of the preset, keyed by reason (`timeout`, `rate_limit`, ...).
    pub schedules: BTreeMap<Reason, ScheduleSpec>,
}

impl Default for CooldownConfig {
    fn default() -> Self {
        Self {
            preset: Preset::Default,
            failure_window_hours: 24.0,
            schedules: BTreeMap::new(),
        }
    }
}

/// One reason's schedule override: `baseMs` × `factor`ⁿ⁻¹ capped at `capMs`, or fixed `stepsMs`,
/// or `never = true` (that reason never cools).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct ScheduleSpec {
    /// The first cooldown, ms.
    pub base_ms: Option<i64>,
    /// Growth per failure (default 2).
    pub factor: Option<i64>,
    /// The cap, ms (default: no cap).
    pub cap_ms: Option<i64>,
    /// Fixed steps, ms.
    pub steps_ms: Option<Vec<i64>>,
    /// This reason never cools.
    pub never: bool,
}

fn non_negative(key: &str, v: i64) -> Result<u64, ConfigError> {
    u64::try_from(v)
        .map_err(|_| ConfigError::invalid(key, format!("must not be negative (got {v})")))
}

impl ScheduleSpec {
    fn to_schedule(&self, key: &str) -> Result<Option<Schedule>, ConfigError> {
        if self.never {
            return Ok(None);
        }
        if let Some(steps) = &self.steps_ms {
            if self.base_ms.is_some() || self.factor.is_some() || self.cap_ms.is_some() {
                return Err(ConfigError::invalid(
                    key,
                    "give either stepsMs or baseMs/factor/capMs, not both",
                ));
            }
            let k = format!("{key}.stepsMs");
            if steps.is_empty() {
                return Err(ConfigError::invalid(k, "must list at least one step"));
            }
            let steps = steps
                .iter()
                .map(|&v| non_negative(&k, v))
                .collect::<Result<Vec<_>, _>>()?;
            return Ok(Some(Schedule::Steps(steps)));
        }
        let base_ms = match self.base_ms {
            Some(v) => non_negative(&format!("{key}.baseMs"), v)?,
            None => return Err(ConfigError::invalid(key, "needs baseMs, stepsMs or never")),
        };
        let factor = non_negative(&format!("{key}.factor"), self.factor.unwrap_or(2))?;
        if factor == 0 {
            return Err(ConfigError::invalid(
                format!("{key}.factor"),
                "must be at least 1",
            ));
        }
        let cap_ms = match self.cap_ms {
            Some(v) => non_negative(&format!("{key}.capMs"), v)?,
            None => u64::MAX,
        };
        if cap_ms < base_ms {
            return Err(ConfigError::invalid(
                format!("{key}.capMs"),
                format!("cap {cap_ms} is below baseMs {base_ms}"),
            ));
        }
        Ok(Some(Schedule::Exponential {
            base_ms,
            factor,
            cap_ms,
        }))
    }
}

fn positive_seconds(key: &str, v: f64) -> Result<(), ConfigError> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(ConfigError::invalid(
            key,
            format!("must be a positive number (got {v})"),
        ))
    }
}

impl EngineConfig {
    /// Parses TOML text (an `[engine]` table's content) and validates it.
    pub fn from_toml(text: &str, origin: &str) -> Result<Self, ConfigError> {
        let cfg: Self = toml::from_str(text).map_err(|e| ConfigError::Parse {
            origin: origin.to_string(),
            message: e.to_string(),
        })?;
        cfg.validate()?;
        Ok(cfg)
    }

    /// Parses JSON text and validates it.
    pub fn from_json(text: &str, origin: &str) -> Result<Self, ConfigError> {
        let cfg: Self = serde_json::from_str(text).map_err(|e| ConfigError::Parse {
            origin: origin.to_string(),
            message: e.to_string(),
        })?;
        cfg.validate()?;
        Ok(cfg)
    }

    /// Checks every value; the error names the key.
    pub fn validate(&self) -> Result<(), ConfigError> {
        positive_seconds("timeoutSeconds", self.timeout_seconds)?;
        let mf = &self.model_failover;
        let retries = non_negative(
            "modelFailover.retrySameProfileOnTimeout",
            mf.retry_same_profile_on_timeout,
        )?;
        if retries > 10 {
            return Err(ConfigError::invalid(
                "modelFailover.retrySameProfileOnTimeout",
                format!("at most 10 retries (got {retries})"),
            ));
        }
        self.backoff_range()?;
        for (key, list) in [
            ("modelFailover.fallbacks", &mf.fallbacks),
            ("modelFailover.contextFallbacks", &mf.context_fallbacks),
        ] {
            if let Some(i) = list.iter().position(|m| m.trim().is_empty()) {
                return Err(ConfigError::invalid(
                    format!("{key}[{i}]"),
                    "empty model name",
                ));
            }
        }
        if let Some(m) = &mf.lighter_model
            && (m.trim().is_empty() || m.trim() != m)
        {
            return Err(ConfigError::invalid(
                "modelFailover.lighterModel",
                format!("must be a model name without surrounding spaces (got {m:?})"),
            ));
        }
        let window = self.cooldowns.failure_window_hours;
        positive_seconds("cooldowns.failureWindowHours", window)?;
        self.schedules()?;
        self.validate_breaker_tables()
    }

    /// Validates `breaker`, `timeouts`, `budget`, `health`; the error names `table.key`.
    fn validate_breaker_tables(&self) -> Result<(), ConfigError> {
        if let Err(e) = self.breaker.validate() {
            return Err(ConfigError::invalid(
                format!("breaker.{}", e.key),
                e.problem,
            ));
        }
        if let Err(e) = self.timeouts.validate() {
            return Err(ConfigError::invalid(
                format!("timeouts.{}", e.key),
                e.problem,
            ));
        }
        if let Err(e) = self.budget.validate() {
            return Err(ConfigError::invalid(format!("budget.{}", e.key), e.problem));
        }
        if self.health.interval.is_zero() {
            return Err(ConfigError::invalid(
                "health.interval",
                "must be longer than 0s",
            ));
        }
        Ok(())
    }

    /// `retryBackoffMs` as a validated `(min, max)` in ms.
    pub fn backoff_range(&self) -> Result<(u64, u64), ConfigError> {
        let key = "modelFailover.retryBackoffMs";
        let v = &self.model_failover.retry_backoff_ms;
        let [min, max] = v.as_slice() else {
            return Err(ConfigError::invalid(
                key,
                format!("must be [min, max] (got {} values)", v.len()),
            ));
        };
        let (min, max) = (non_negative(key, *min)?, non_negative(key, *max)?);
        if min > max {
            return Err(ConfigError::invalid(key, format!("min {min} > max {max}")));
        }
        Ok((min, max))
    }

    /// `retrySameProfileOnTimeout`, clamped to its valid range.
    pub fn same_profile_retries(&self) -> u32 {
        self.model_failover
            .retry_same_profile_on_timeout
            .clamp(0, 10) as u32
    }

    /// The preset's schedules with the configured overrides applied.
    pub fn schedules(&self) -> Result<Schedules, ConfigError> {
        let mut s = Schedules::preset(self.cooldowns.preset);
        for (reason, spec) in &self.cooldowns.schedules {
            let key = format!("cooldowns.schedules.{}", reason.as_str());
            s.set(*reason, spec.to_schedule(&key)?);
        }
        Ok(s)
    }

    /// The failure window (nominal).
    pub fn failure_window(&self) -> Duration {
        Duration::try_from_secs_f64(self.cooldowns.failure_window_hours * 3600.0)
            .unwrap_or(Duration::from_secs(24 * 3600))
    }

    /// The deadlines of one attempt of `class`, divided by `speed` (docs/engine.md: tool_call 30 s
    /// total; llm_inference TTFB `timeoutSeconds` (30 s), inter-token 10 s, total 120 s;
    /// session 1800 s).
    pub fn deadlines(&self, class: OpClass, speed: Speed) -> Deadlines {
        let ttfb =
            Duration::try_from_secs_f64(self.timeout_seconds).unwrap_or(Duration::from_secs(30));
        self.timeouts.deadlines(class, speed, ttfb)
    }
}

impl CanarySettings for EngineConfig {
    fn health(&self) -> &HealthConfig {
        &self.health
    }

    fn deadlines(&self, class: OpClass, speed: Speed) -> Deadlines {
        EngineConfig::deadlines(self, class, speed)
    }
}
