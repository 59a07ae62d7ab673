//! The embedded engine's turns as its client saw them: the dispatcher notes each model call of
//! the traffic when it hands it to the engine and when the engine's call returns
//! ([`TurnBook`]); after the replay every noted call becomes one report row
//! ([`super::turn_end::turn_row`]), a call with no end by then one still in flight. Kept only
//! for an arm whose scenario has `[[expect.turn]]` rows (one entry per model call, as a
//! gateway's turns are).

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

use super::turn_end::{CallEnd, TurnSent, turn_row};
use crate::engine::RequestKind;
use crate::engine::request::EngineResponse;
use crate::replay::traffic::TrafficLine;
use crate::report::model::TurnRow;
use crate::util::speed::Speed;
use crate::util::sync::Locked;

struct Entry {
    sent: TurnSent,
    at: Instant,
    end: Option<(Instant, EngineResponse)>,
}

/// The model calls handed to the engine in one arm, by sequence number (the traffic line).
pub(crate) struct TurnBook {
    start: Instant,
    speed: Speed,
    entries: Mutex<BTreeMap<u64, Entry>>,
}

impl std::fmt::Debug for TurnBook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TurnBook").finish_non_exhaustive()
    }
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

impl TurnBook {
    /// A book for a replay whose `at_ms = 0` is `start`, at `speed`.
    pub(crate) fn new(start: Instant, speed: Speed) -> Self {
        Self {
            start,
            speed,
            entries: Mutex::new(BTreeMap::new()),
        }
    }

    /// Line `seq` is handed to the engine now (only model calls are turns).
    pub(crate) fn sent(&self, seq: u64, line: &TrafficLine) {
        let RequestKind::Llm { stream, .. } = &line.kind else {
            return;
        };
        let now = Instant::now();
        let due = crate::replay::pacer::send_at(self.start, line.at_ms, self.speed);
        let lag = self.speed.scenario_ms_u(ms(now.saturating_duration_since(due)));
        let index = usize::try_from(seq).unwrap_or(usize::MAX);
        let sent = TurnSent {
            line: index,
            session: line
                .session
                .clone()
                .unwrap_or_else(|| format!("line-{index}")),
            at_ms: line.at_ms,
            lag_ms: lag,
            stream: *stream,
        };
        self.entries.locked().insert(
            seq,
            Entry {
                sent,
                at: now,
                end: None,
            },
        );
    }

    /// The engine's call for line `seq` returned `resp` now.
    pub(crate) fn ended(&self, seq: u64, resp: &EngineResponse) {
        if let Some(e) = self.entries.locked().get_mut(&seq) {
            e.end = Some((Instant::now(), resp.clone()));
        }
    }

    /// Every noted call as a report row, in traffic order, read at `now`: `bound` is the turn
    /// bound (scenario time); `stopped`: the run was cut short (calls in flight are
    /// `unfinished`, not hangs).
    pub(crate) fn rows(&self, now: Instant, bound: Duration, stopped: bool) -> Vec<TurnRow> {
        let bound_ms = ms(bound);
        let scenario = |d: Duration| self.speed.scenario_ms_u(ms(d));
        self.entries
            .locked()
            .values()
            .map(|e| {
                let end = match &e.end {
                    Some((t, resp)) => {
                        CallEnd::Returned(resp, scenario(t.saturating_duration_since(e.at)))
                    }
                    None => CallEnd::InFlight {
                        so_far_ms: scenario(now.saturating_duration_since(e.at)),
                        stopped,
                    },
                };
                turn_row(&e.sent, &end, bound_ms)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::events::AttemptOutcome;

    fn line(at_ms: u64, llm: bool) -> TrafficLine {
        let kind = if llm {
            RequestKind::Llm {
                model: "mockai/m1".into(),
                stream: false,
                max_tokens: Some(4),
                messages: None,
            }
        } else {
            RequestKind::Tool {
                name: "crm".into(),
                body: serde_json::json!({}),
                idempotent: true,
                idempotency_key: None,
            }
        };
        TrafficLine {
            at_ms,
            kind,
            tenant: None,
            budget_tokens: None,
            session: None,
            class: None,
        }
    }

    fn ok() -> EngineResponse {
        EngineResponse {
            outcome: AttemptOutcome::Ok,
            attempts: 1,
            model: Some("mockai/m1".into()),
            fallback: false,
            profile: Some("mockai:a".into()),
            user_error: None,
            tokens: 4,
            partial: false,
        }
    }

    /// Times on the paused clock at speed 2: a call sent 100 ms (wall) late that took 300 ms
    /// (wall) is 200 ms late and took 600 ms in scenario time; a tool call is no turn; a call
    /// with no end by the run's end is a hang, or unfinished when the run was stopped.
    #[tokio::test(start_paused = true)]
    async fn calls_become_rows_in_scenario_time_and_unended_ones_never_answer() {
        let start = Instant::now();
        let speed = Speed::new(2.0).unwrap();
        let book = TurnBook::new(start, speed);
        // Line 0 is due at 1000 scenario ms = 500 wall ms; it is sent at 600.
        tokio::time::sleep(Duration::from_millis(600)).await;
        book.sent(0, &line(1_000, true));
        book.sent(1, &line(1_000, false));
        tokio::time::sleep(Duration::from_millis(300)).await;
        book.ended(0, &ok());
        book.sent(2, &line(1_800, true));
        tokio::time::sleep(Duration::from_millis(50)).await;
        let rows = book.rows(Instant::now(), Duration::from_secs(10), false);
        assert_eq!(rows.len(), 2, "the tool call is no turn");
        assert_eq!((rows[0].line, rows[0].lag_ms, rows[0].elapsed_ms), (0, 200, 600));
        assert_eq!(rows[0].outcome, Some(crate::gateway::TurnEnd::Answered));
        assert_eq!(rows[0].session, "line-0");
        assert_eq!((rows[1].line, rows[1].elapsed_ms), (2, 100));
        assert_eq!(rows[1].outcome, Some(crate::gateway::TurnEnd::TimedOut));
        let stopped = book.rows(Instant::now(), Duration::from_secs(10), true);
        assert_eq!(stopped[1].outcome, Some(crate::gateway::TurnEnd::Unfinished));
        // An end reported for a line never noted changes nothing.
        book.ended(9, &ok());
        assert_eq!(book.rows(Instant::now(), Duration::from_secs(10), false).len(), 2);
    }
}
