//! The run's synthetic health checks: one canary per dependency the run will use (every idempotent
//! tool and WebSocket channel of the traffic, and every profile's model endpoint of every provider the
//! traffic or a configured fallback reaches — deps `scenario::validate::exercised_deps` also counts),
//! and a tally of their `HealthCheck` events for the report.

use crate::util::sync::Locked;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::engine::RequestKind;
use crate::engine::failover::profiles::ProfileBook;
use crate::engine::health::canary::Canary;
use crate::engine::{Event, EventKind, EventSink};
use crate::replay::traffic::TrafficLine;
use crate::scenario::ScenarioFile;
use crate::wire::dep::provider_of;

/// One canary per dep, in dep order, except tools the traffic calls as non-idempotent. A model endpoint's canary asks for the first model of its
/// provider the traffic uses (else the fallback that brought the provider in).
pub(crate) fn canaries(file: &ScenarioFile, traffic: &[TrafficLine]) -> Vec<Canary> {
    let mut tools = BTreeSet::new();
    let mut side_effects = BTreeSet::new();
    let mut channels = BTreeSet::new();
    let mut models: BTreeMap<String, String> = BTreeMap::new();
    let mut model = |m: &str| {
        models
            .entry(provider_of(m).to_string())
            .or_insert_with(|| m.to_string());
    };
    for line in traffic {
        match &line.kind {
            RequestKind::Llm { model: m, .. } => model(m),
            RequestKind::Tool {
                name: tool,
                idempotent,
                ..
            } => {
                if *idempotent {
                    tools.insert(tool.clone());
                } else {
                    side_effects.insert(tool.clone());
                }
            }
            RequestKind::Ws { channel, .. } => {
                channels.insert(channel.clone());
            }
        }
    }
    let mf = &file.engine.model_failover;
    for m in file.engine_fallbacks().iter().chain(mf.context_fallbacks.iter()) {
        model(m);
    }
    // A tool any line calls as non-idempotent has side effects (ticket_create): an empty canary
    // call every interval would create something each time, so it gets none.
    for t in &side_effects {
        tools.remove(t);
    }
    let book = ProfileBook::new(file.profile.clone()).unwrap_or_default();
    let mut out: Vec<Canary> = tools.iter().map(|t| Canary::tool(t)).collect();
    out.extend(channels.iter().map(|c| Canary::ws(c)));
    for (provider, m) in &models {
        out.extend(
            book.for_provider(provider)
                .iter()
                .map(|e| Canary::model(m, &e.profile)),
        );
    }
    out.sort_by(|a, b| a.dep.cmp(&b.dep));
    out.dedup_by(|a, b| a.dep == b.dep);
    out
}

/// Canary calls and failures of one dep.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CanaryCount {
    /// Canary calls that finished.
    pub calls: u64,
    /// Of those, failed ones.
    pub failures: u64,
}

/// Counts `HealthCheck` events per dep.
#[derive(Debug, Default)]
pub(crate) struct HealthTally(Mutex<BTreeMap<String, CanaryCount>>);

impl HealthTally {
    /// The counts so far.
    pub(crate) fn counts(&self) -> BTreeMap<String, CanaryCount> {
        self.0.locked().clone()
    }
}

impl EventSink for HealthTally {
    fn emit(&self, event: &Event) {
        if let EventKind::HealthCheck { dep, ok } = &event.kind {
            let mut g = self.0.locked();
            let c = g.entry(dep.clone()).or_default();
            c.calls += 1;
            c.failures += u64::from(!ok);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(kind: RequestKind) -> TrafficLine {
        TrafficLine {
            at_ms: 0,
            kind,
            tenant: None,
            budget_tokens: None,
            session: None,
            class: None,
        }
    }

    #[test]
    fn one_canary_per_tool_channel_and_profile_endpoint() {
        let file: ScenarioFile = toml::from_str(
            "name='t'\nduration='10s'\ntraffic='x.jsonl'\n\
             [[profile]]\nprovider='openai'\nid='a'\n[[profile]]\nprovider='openai'\nid='b'\n",
        )
        .unwrap();
        let traffic = vec![
            line(RequestKind::Llm {
                model: "openai/gpt".into(),
                stream: true,
                max_tokens: Some(5),
                messages: None,
            }),
            line(RequestKind::Ws {
                channel: "rt".into(),
                messages: 2,
            }),
        ];
        let mut traffic = traffic;
        traffic.push(traffic[0].clone());
        traffic.insert(
            0,
            line(RequestKind::Tool {
                name: "crm".into(),
                body: serde_json::json!({}),
                idempotent: true,
                idempotency_key: None,
            }),
        );
        for idempotent in [true, false] {
            traffic.push(line(RequestKind::Tool {
                name: "ticket_create".into(),
                body: serde_json::json!({}),
                idempotent,
                idempotency_key: Some("k".into()),
            }));
        }
        let c = canaries(&file, &traffic);
        let deps: Vec<&str> = c.iter().map(|c| c.dep.as_str()).collect();
        let a = crate::engine::failover::profiles::Profile::new("openai", "a").dep();
        let b = crate::engine::failover::profiles::Profile::new("openai", "b").dep();
        let mut want = vec!["crm", "rt", a.as_str(), b.as_str()];
        want.sort();
        assert_eq!(deps, want);
        let tally = HealthTally::default();
        for ok in [true, false, false] {
            tally.emit(&Event {
                t_ms: 0,
                kind: EventKind::HealthCheck {
                    dep: "crm".into(),
                    ok,
                },
                log: None,
            });
        }
        assert_eq!(
            tally.counts()["crm"],
            CanaryCount {
                calls: 3,
                failures: 2
            }
        );
    }
}
