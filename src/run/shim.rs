//! TEMPORARY: the engine helper's planned `engine::transport` types (HELPERS-API.md), so the
//! transports compile before the engine lands. Deleted once `crate::engine::transport` exists.
#![allow(missing_docs, dead_code)]

use std::future::Future;
use std::time::Duration;

use crate::engine::{AttemptResult, OpClass};

#[derive(Debug, Clone)]
pub enum CallTarget {
    Llm {
        model: String,
        stream: bool,
        max_tokens: Option<u32>,
    },
    Tool {
        name: String,
        body: serde_json::Value,
    },
    Ws {
        channel: String,
        messages: u32,
    },
}

#[derive(Debug, Clone, Copy)]
pub struct Deadlines {
    pub ttfb: Option<Duration>,
    pub inter_token: Option<Duration>,
    pub total: Duration,
}

#[derive(Debug, Clone)]
pub struct Call {
    pub dep: String,
    pub class: OpClass,
    pub target: CallTarget,
    pub bearer: Option<String>,
    pub idempotency_key: Option<String>,
    pub probe: Option<String>,
    pub worker: usize,
    pub attempt: u32,
    pub deadlines: Deadlines,
}

pub trait Transport: Send + Sync + 'static {
    fn send(&self, call: Call) -> impl Future<Output = AttemptResult> + Send;
}

// ---- engine::config / profiles / policy
pub type EngineConfig = toml::Table;

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    pub provider: String,
    pub id: String,
    #[serde(default)]
    pub token: Option<String>,
    #[serde(default)]
    pub region: Option<String>,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
pub enum Policy {
    #[default]
    #[serde(rename = "retry-gate")]
    RetryGate,
    #[serde(rename = "legacy")]
    Legacy,
}
impl Policy {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::RetryGate => "retry-gate",
            Self::Legacy => "legacy",
        }
    }
}
impl std::str::FromStr for Policy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "retry-gate" => Ok(Self::RetryGate),
            "legacy" => Ok(Self::Legacy),
            o => Err(format!(
                "unknown policy `{o}` (expected `retry-gate` or `legacy`)"
            )),
        }
    }
}

// ---- upstream::FaultSpec
pub type FaultSpec = toml::Table;

// ---- verdict::expect::Expectations
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expectations {
    #[serde(default)]
    pub transition: Vec<toml::Table>,
    #[serde(default)]
    pub metric: Vec<toml::Table>,
    #[serde(default)]
    pub no_transition: Vec<toml::Table>,
    #[serde(default)]
    pub probe_spacing: Vec<toml::Table>,
}
