//! The warm-up of an external gateway before the run's clock starts (docs/openclaw.md,
//! "Warm-up"): healthy turns, one after another, with the upstream's faults disarmed, until one
//! turn is answered and its first model request reached the upstream within `prompt` of its send
//! — the steady state — at most `turns` of them, all within `timeout`. A gateway that never gets
//! there is not rehearsed. [`next`] is the decision, a pure function of the turns so far and the
//! time spent; [`warm_up`] drives it.

use std::future::Future;
use std::time::Duration;

use tokio::time::Instant;

use crate::report::model::{WarmupReport, WarmupTurnRow};
use crate::scenario::target::WarmupSpec;

/// One warm-up turn as the decision sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct WarmTurn {
    /// From its send to its first model request at the upstream (`None`: none came).
    pub first_request: Option<Duration>,
    /// It got a complete answer.
    pub ok: bool,
    /// The error the client saw.
    pub error: Option<String>,
    /// How long it took.
    pub took: Duration,
}

/// What to do after a warm-up turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Next {
    /// The last turn was answered promptly: start the run's clock.
    Steady,
    /// Send another warm-up turn.
    Again,
    /// Give up: the gateway is not rehearsed, for this reason.
    Failed(String),
}

/// The decision after `turns` (in order), `spent` since the first was sent.
pub(crate) fn next(spec: &WarmupSpec, turns: &[WarmTurn], spent: Duration) -> Next {
    let prompt = spec.prompt();
    if let Some(last) = turns.last()
        && last.ok
        && last.first_request.is_some_and(|d| d <= prompt)
    {
        return Next::Steady;
    }
    let seen = |t: &WarmTurn| match (t.first_request, &t.error) {
        (_, Some(e)) => format!("error: {e}"),
        (Some(d), None) if !t.ok => format!("first model request after {d:.1?}, incomplete answer"),
        (Some(d), None) => format!("first model request after {d:.1?}"),
        (None, None) => "answered without a model request".into(),
    };
    let what = || {
        turns
            .iter()
            .enumerate()
            .map(|(i, t)| format!("turn {}: {}", i + 1, seen(t)))
            .collect::<Vec<_>>()
            .join("; ")
    };
    let n = u32::try_from(turns.len()).unwrap_or(u32::MAX);
    if n >= spec.turns() {
        return Next::Failed(format!(
            "the gateway never reached its steady state: none of {n} warm-up turns was answered with its first model request at the upstream within {prompt:?} ({})",
            what()
        ));
    }
    if spent >= spec.timeout() {
        return Next::Failed(format!(
            "the gateway never reached its steady state within the warm-up's {:?} ({})",
            spec.timeout(),
            what()
        ));
    }
    Next::Again
}

/// What one warm-up turn's send returned: answered completely, and the error if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Sent {
    pub ok: bool,
    pub error: Option<String>,
}

/// Sends warm-up turns (`send(i)`, the i-th from 0) until [`next`] says steady or failed.
/// `t0` is the instant the upstream's warm-up `t_ms` count from; `arrivals()` gives the warm-up
/// model requests' `t_ms` so far. Each turn is cut at the warm-up's remaining time. Returns the
/// report block (its `upstream_requests` left for the caller) and whether it got steady.
pub(crate) async fn warm_up<S, F, A>(
    spec: &WarmupSpec,
    t0: Instant,
    mut send: S,
    arrivals: A,
) -> WarmupReport
where
    S: FnMut(usize) -> F,
    F: Future<Output = Sent>,
    A: Fn() -> Vec<u64>,
{
    let began = Instant::now();
    let mut turns: Vec<WarmTurn> = Vec::new();
    let outcome = loop {
        let sent_at = Instant::now();
        let sent_ms = ms(sent_at.saturating_duration_since(t0));
        let left = spec.timeout().saturating_sub(began.elapsed());
        let answer = tokio::time::timeout(left, send(turns.len()))
            .await
            .unwrap_or_else(|_| Sent {
                ok: false,
                error: Some(format!("no answer within the warm-up's {:?}", spec.timeout())),
            });
        let took = sent_at.elapsed();
        let first_request = arrivals()
            .into_iter()
            .filter(|t| *t >= sent_ms)
            .min()
            .map(|t| Duration::from_millis(t - sent_ms));
        turns.push(WarmTurn {
            first_request,
            ok: answer.ok,
            error: answer.error,
            took,
        });
        match next(spec, &turns, began.elapsed()) {
            Next::Again => continue,
            Next::Steady => break None,
            Next::Failed(why) => break Some(why),
        }
    };
    WarmupReport {
        steady: outcome.is_none(),
        prompt_ms: ms(spec.prompt()),
        duration_ms: ms(began.elapsed()),
        upstream_requests: 0,
        turns: turns
            .into_iter()
            .map(|t| WarmupTurnRow {
                first_request_ms: t.first_request.map(ms),
                ok: t.ok,
                error: t.error,
                elapsed_ms: ms(t.took),
            })
            .collect(),
        reason: outcome,
        decisions: Default::default(),
    }
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    fn turn(first_ms: Option<u64>, ok: bool) -> WarmTurn {
        WarmTurn {
            first_request: first_ms.map(Duration::from_millis),
            ok,
            error: None,
            took: Duration::from_secs(1),
        }
    }

    fn spec(prompt_s: u64, turns: u32, timeout_s: u64) -> WarmupSpec {
        WarmupSpec {
            prompt: Some(Duration::from_secs(prompt_s)),
            turns: Some(turns),
            timeout: Some(Duration::from_secs(timeout_s)),
        }
    }

    #[test]
    fn a_cold_turn_is_followed_by_another_and_a_prompt_answered_one_is_steady() {
        let s = spec(3, 5, 300);
        let cold = turn(Some(17_670), true);
        assert_eq!(next(&s, std::slice::from_ref(&cold), Duration::from_secs(18)), Next::Again);
        let warm = turn(Some(700), true);
        assert_eq!(
            next(&s, &[cold.clone(), warm], Duration::from_secs(19)),
            Next::Steady
        );
        // Exactly on the bound is prompt; a prompt request with a failed answer is not steady.
        assert_eq!(next(&s, &[turn(Some(3_000), true)], Duration::ZERO), Next::Steady);
        assert_eq!(next(&s, &[turn(Some(3_001), true)], Duration::ZERO), Next::Again);
        assert_eq!(next(&s, &[turn(Some(10), false)], Duration::ZERO), Next::Again);
    }

    #[test]
    fn a_gateway_that_never_asks_the_upstream_fails_after_its_turns_or_its_time() {
        let s = spec(3, 2, 300);
        let silent = turn(None, true);
        assert_eq!(next(&s, std::slice::from_ref(&silent), Duration::ZERO), Next::Again);
        let Next::Failed(why) = next(&s, &[silent.clone(), silent.clone()], Duration::ZERO) else {
            panic!("two turns were the limit")
        };
        assert!(why.contains("none of 2 warm-up turns"), "{why}");
        assert!(why.contains("turn 2: answered without a model request"), "{why}");
        let s = spec(3, 5, 60);
        let Next::Failed(why) = next(&s, &[turn(Some(9_000), true)], Duration::from_secs(60))
        else {
            panic!("the time was up")
        };
        assert!(why.contains("within the warm-up's 60s"), "{why}");
    }

    #[tokio::test(start_paused = true)]
    async fn the_driver_times_each_turns_first_request_from_its_send() {
        let t0 = Instant::now();
        let arrivals: Arc<Mutex<Vec<u64>>> = Arc::default();
        let a = arrivals.clone();
        // The first turn asks the upstream 8 s after its send, the second after 0.5 s.
        let send = move |i: usize| {
            let a = a.clone();
            async move {
                let delay = if i == 0 { 8_000 } else { 500 };
                tokio::time::sleep(Duration::from_millis(delay)).await;
                let at = u64::try_from(t0.elapsed().as_millis()).unwrap_or(0);
                a.lock().unwrap_or_else(|p| p.into_inner()).push(at);
                tokio::time::sleep(Duration::from_millis(200)).await;
                Sent { ok: true, error: None }
            }
        };
        let get = move || arrivals.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let r = warm_up(&spec(3, 5, 300), t0, send, get).await;
        assert!(r.steady, "{r:?}");
        let firsts: Vec<Option<u64>> = r.turns.iter().map(|t| t.first_request_ms).collect();
        assert_eq!(firsts, vec![Some(8_000), Some(500)]);
        assert_eq!(r.duration_ms, 8_200 + 700);
        assert_eq!(r.prompt_ms, 3_000);
    }

    #[tokio::test(start_paused = true)]
    async fn a_turn_that_hangs_is_cut_at_the_warm_ups_time() {
        let send = |_: usize| async {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            Sent { ok: true, error: None }
        };
        let r = warm_up(&spec(3, 5, 30), Instant::now(), send, Vec::new).await;
        assert!(!r.steady);
        assert_eq!(r.turns.len(), 1);
        assert_eq!(r.duration_ms, 30_000);
        assert!(r.reason.unwrap_or_default().contains("within the warm-up's 30s"));
    }
}
