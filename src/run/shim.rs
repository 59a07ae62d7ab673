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
        max_tokens: u32,
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
