//! An external run's phases after its gateway started: the warm-up before the run's clock
//! ([`warm`]: healthy turns until the gateway answers as it will during the run, then the
//! baseline scrape of its metrics) and the turns at their recorded times ([`drive`], the
//! gateway watched through the seam, [`Supervised::down`] — exited, or for Portkey no longer
//! answering — while they run). The warm-up and
//! the turns are the arm's plan ([`crate::rehearsal::plan::GatewayPlan`]).

use std::time::Duration;

use tokio::task::JoinSet;
use tokio::time::{Instant, sleep_until};

use crate::gateway::{Supervised, Turn, TurnClient};
use crate::rehearsal::arm::Arm;
use crate::rehearsal::gateway::finish::turn_row;
use crate::rehearsal::gateway::observe::ExternalRun;
use crate::rehearsal::gateway::warmup::{Sent, warm_up};
use crate::report::model::TurnRow;
use crate::scenario::gateway::PlannedTurn;
use crate::scrape::{ScrapeLog, Scraper};

/// The warm-up from `warm_t0`, then (with a metrics endpoint) the baseline scrape: why the
/// gateway is not steady, if it is not (the run is then not rehearsed).
pub(super) async fn warm(
    run: &mut ExternalRun<'_>,
    arm: &Arm<'_>,
    client: &TurnClient,
    stream: bool,
    warm_t0: Instant,
    scraper: Option<&Scraper>,
) -> Option<String> {
    let file = &run.plan.checked.file;
    let spec = run.gw.warmup.clone();
    crate::errln!(
        "{}/{}: warming up (a turn's first model request within {:?}, at most {} turns)",
        file.name,
        arm.name(),
        spec.prompt(),
        spec.turns()
    );
    let warmed = {
        let c = client.clone();
        let send = move |i: usize| {
            let c = c.clone();
            async move {
                let o = c
                    .send(&Turn {
                        session: format!("rehearse-warmup-{}", i + 1),
                        stream,
                        message: format!("rehearse warm-up turn {}", i + 1),
                        messages: None,
                    })
                    .await;
                Sent {
                    ok: o.is_ok(),
                    error: o.error.clone(),
                }
            }
        };
        let g = arm.recorder().clone();
        tokio::select! {
            w = warm_up(&spec, warm_t0, send, move || g.warmup().llm_t_ms) => Some(w),
            _ = arm.stop().requested() => None,
        }
    };
    let mut not_steady: Option<String> = match &warmed {
        None => Some("stopped during the warm-up, before the run's clock started".into()),
        Some(w) => w.reason.clone(),
    };
    run.target.warmup = warmed;
    // Its metrics, when it has an endpoint: answering is part of the steady state, and the
    // scrape at the clock's start is the baseline its counters are judged from.
    if not_steady.is_none()
        && let Some(s) = scraper
    {
        let mut base = ScrapeLog::default();
        s.scrape_into(&mut base).await;
        match base.last_parsed() {
            Some(e) => run.baseline = Some(e.clone()),
            None => {
                not_steady = Some(format!(
                    "the gateway's metrics did not answer at its steady state: {}",
                    base.last_error.as_deref().unwrap_or("no exposition")
                ));
            }
        }
    }
    not_steady
}

/// What the turns did: their rows (in send order), how many were still out when the run
/// ended, and why the gateway failed mid-run (it exited or stopped answering), if it did (with
/// its last lines).
pub(super) struct TurnsDone {
    pub rows: Vec<TurnRow>,
    pub outstanding: usize,
    pub crashed: Option<String>,
    pub last_lines: Vec<String>,
}

/// Sends `turns` at their times from `start` until every one is back and `end` has come, a
/// stop (or the machine's sleep: [`Arm::cut_short`]), or the exit of the gateway `gw` (named
/// `name` in the reason).
pub(super) async fn drive(
    arm: &Arm<'_>,
    gw: &mut dyn Supervised,
    name: &str,
    client: TurnClient,
    turns: Vec<PlannedTurn>,
    start: Instant,
    end: Instant,
) -> TurnsDone {
    let mut set = JoinSet::new();
    for t in turns {
        set.spawn(send_turn(client.clone(), t, start));
    }
    drop(client);
    let mut crashed: Option<String> = None;
    let mut last_lines = Vec::new();
    let mut rows = Vec::new();
    loop {
        tokio::select! {
            next = set.join_next() => match next {
                Some(Ok(row)) => rows.push(row),
                Some(Err(_)) => {}
                None => {
                    // Every turn answered: wait out `duration` (windows after the last turn).
                    if Instant::now() >= end { break; }
                    tokio::select! {
                        _ = sleep_until(end) => break,
                        _ = arm.cut_short() => break,
                        _ = tokio::time::sleep(Duration::from_millis(500)) => {}
                    }
                }
            },
            _ = arm.cut_short() => break,
            _ = tokio::time::sleep(Duration::from_millis(500)) => {}
        }
        if let Some(why) = gw.down() {
            last_lines = gw.last_lines();
            crashed = Some(format!("the {name} gateway {why}"));
            break;
        }
    }
    // Turns still out when the loop ended: a stop (or a crash) came before they returned.
    let outstanding = set.len();
    set.abort_all();
    while let Some(r) = set.join_next().await {
        if let Ok(row) = r {
            rows.push(row);
        }
    }
    rows.sort_by_key(|r| (r.at_ms, r.line));
    TurnsDone {
        rows,
        outstanding,
        crashed,
        last_lines,
    }
}

async fn send_turn(client: TurnClient, t: PlannedTurn, start: Instant) -> TurnRow {
    let due = start + Duration::from_millis(t.at_ms);
    sleep_until(due).await;
    let lag_ms = u64::try_from(Instant::now().saturating_duration_since(due).as_millis())
        .unwrap_or(u64::MAX);
    let turn = Turn {
        session: t.session.clone(),
        stream: t.stream,
        // The turn's marker (`wire::turn`) ends its user message: the upstream reads every
        // request the gateway sends for this turn by it.
        message: format!(
            "rehearse turn {} of session {} {}",
            t.line,
            t.session,
            crate::wire::turn::marker(t.line as u64)
        ),
        messages: t.messages.clone(),
    };
    let outcome = client.send(&turn).await;
    let mut row = turn_row(&t, lag_ms, &outcome);
    row.said = client.said(&outcome);
    row
}
