//! One arm of a scenario against an external target (`[target] kind = "openclaw" | "http"`),
//! as its plan says ([`GatewayPlan`]: the gateway, its configuration, turns, warm-up, metrics
//! endpoint), the gateway driven through the seam only ([`crate::gateway::Supervised`]): the
//! mock upstream (at `[upstream] listen`, else an ephemeral loopback port) recording every
//! request to upstream.jsonl and in memory; the gateway — started from a fresh state by the
//! harness (`openclaw`, in `RUN/.gateway/`, removed afterwards: its database holds the keys),
//! its configuration the plan's with the address the upstream bound, or the user's (`http`, by
//! URL) — sent the scenario's model calls as turns at their recorded times (speed 1); its
//! metrics scraped when it has a `metrics_url`; then stopped, its log (keys scrubbed) and its
//! auth state (no keys) kept in the run directory. A gateway that does not start, crashes
//! mid-run or never becomes healthy is a harness failure (verdict `error`, exit 3) whose last
//! log lines are in the report; nothing is left running.
//!
//! Before the run's clock starts the gateway is warmed up ([`crate::rehearsal::gateway::warmup`]) with the
//! upstream's faults disarmed: healthy turns until one is answered with its first model request
//! at the upstream promptly (and, with `metrics_url`, its metrics answer: that scrape is the
//! baseline counters are judged from). Then the clock starts and the faults are armed at once.
//! Requests before it are the warm-up's (marked in upstream.jsonl, counted in `target.warmup`,
//! never judged or faulted); a gateway that never gets steady is not rehearsed (`error`).

use std::path::Path;

use tokio::time::Instant;

use crate::rehearsal::arm::{Arm, Clock, LOOPBACK, RunFiles, UpstreamSpec};
use crate::rehearsal::gateway::drive::{TurnsDone, drive, warm};
use crate::rehearsal::gateway::finish::finish_gateway;
use crate::rehearsal::observation::Observed;
use crate::rehearsal::plan::{GatewayPlan, ScenarioPlan};
use crate::scrape::{Scraper, ScraperConfig};
use crate::util::shutdown::Shutdown;
use crate::util::speed::Speed;

pub(crate) use crate::rehearsal::gateway::observe::ExternalRun;

/// The arm `gw` of `plan` into `dir`: the whole run of a target without `versions`, one
/// version's run with them (`arms.rs` calls it; the arm is then named after its version, its
/// kept files carry it).
pub(crate) async fn run_arm(
    plan: &ScenarioPlan,
    gw: &GatewayPlan,
    dir: &Path,
    files: &RunFiles,
    stop: &Shutdown,
) -> Observed {
    let file = &plan.checked.file;
    let arm_name = gw.arm.clone();
    let mut run = ExternalRun::new(plan, gw, Clock::now().unix_s());

    // The mock upstream; until the warm-up is over, no fault applies and every request is the
    // warm-up's.
    let spec = UpstreamSpec {
        plan,
        arm: &arm_name,
        listen: file.upstream.listen.unwrap_or(LOOPBACK),
        speed: Speed::ONE,
        // Always kept (under the cap): the key figures read a gateway's rotations and
        // fallbacks from the sequence of profiles and models it sent.
        keep_records: true,
        duplicates: None,
    };
    let mut arm = match Arm::open(spec, files, stop).await {
        Ok(a) => a,
        Err(e) => return run.failed(e.to_string()),
    };
    let warm_t0 = Instant::now();
    arm.upstream().disarm(warm_t0);
    let up_addr = arm.upstream_addr();
    run.target.upstream = Some(format!("http://{up_addr}"));

    // The gateway, its configuration naming the upstream just bound.
    let gateway_dir = dir.join(match &gw.pinned {
        Some(v) => format!(".gateway-{v}"),
        None => ".gateway".to_string(),
    });
    let started =
        crate::rehearsal::gateway::start::start(&mut run, up_addr, (dir, &gateway_dir)).await;
    let (mut started, client) = match started {
        Ok(s) => s,
        Err(why) => return fail(arm, run, why).await,
    };
    let name = gw.gateway.facts().name;

    // The warm-up: its start-up and its cold first turn (OpenClaw: 6–17 s before its first
    // model request) are not part of the scenario's time.
    let duration_ms = u64::try_from(file.duration.as_millis()).unwrap_or(u64::MAX);
    let turns = gw.turns.clone();
    let stream = turns.first().is_some_and(|t| t.stream);
    let scraper = metrics_scraper(
        started.metrics_url().or_else(|| gw.metrics_url.clone()),
        gw,
        file.scrape_interval,
    );
    let not_steady = warm(&mut run, &arm, &client, stream, warm_t0, scraper.as_ref()).await;
    if let Some(mut why) = not_steady {
        if let Some(w) = run.target.warmup.as_mut() {
            w.steady = false;
            w.reason = Some(why.clone());
            w.upstream_requests = arm.recorder().warmup().requests;
        }
        if !started.alive() {
            run.target.last_lines = started.last_lines();
            why = format!("the {name} gateway exited during the warm-up ({why})");
        }
        drop(client);
        finish_gateway(started, dir, &gateway_dir, &mut run).await;
        // What reached the upstream (all of it the warm-up's), for the picture.
        run.records = arm.recorder().take_records();
        return fail(arm, run, why).await;
    }

    // The run's clock starts at the steady state, and the faults are armed with it; a
    // [prometheus] of the run scrapes the gateway's metrics_url from there.
    let clock = Clock::now();
    arm.upstream().arm(clock.start);
    let start_unix_s = clock.unix_s();
    run.set_start(start_unix_s);
    let targets: Vec<crate::detection::Target> = scraper
        .as_ref()
        .map(|s| crate::detection::Target {
            url: s.url().clone(),
            host: "sut".into(),
        })
        .into_iter()
        .collect();
    arm.go(clock, &targets, Vec::new());
    if let Some(s) = scraper {
        arm.scraper(s.starting_at(clock.start), files.scrapes.clone(), start_unix_s);
    }

    // The turns, at their times; the gateway watched while they run.
    crate::errln!(
        "{}/{}: {} turns to {} over {}",
        file.name,
        arm_name,
        turns.len(),
        run.target.url.as_deref().unwrap_or("?"),
        humantime::format_duration(file.duration)
    );
    let end = crate::util::speed::after(clock.start, file.duration);
    let done = drive(&arm, started.as_mut(), &name, client, turns, clock.start, end).await;
    let TurnsDone {
        rows,
        outstanding,
        crashed,
        last_lines,
    } = done;
    if crashed.is_some() {
        run.target.last_lines = last_lines;
    }
    run.target.turns = rows;
    let ending = arm.end(|ms| cut(outstanding, ms, duration_ms));
    run.elapsed_ms = ending.elapsed_ms;
    run.stopped = ending.stopped;

    // Stop the gateway, keep what it decided and remembers.
    finish_gateway(started, dir, &gateway_dir, &mut run).await;
    if let Some(compact) = arm.final_scrapes().await.pop() {
        run.scrapes = compact;
    }
    let closed = arm.close().await;
    run.records = closed.records;
    crate::rehearsal::client_answers::check(&mut run.target.turns, &run.records.turns.records);
    run.fault_hits = closed.fault_hits.snapshot();
    if let Some(w) = run.target.warmup.as_mut() {
        w.upstream_requests = closed.warmup.requests;
    }
    if let Some(why) = crashed {
        let lines = run.target.last_lines.join("\n");
        return run.failed(format!("{why}; last log lines:\n{lines}"));
    }
    run.into_observed()
}

/// The scraper of the gateway's metrics endpoint `url` every `interval`, when it has one (the
/// one the harness configured, else `metrics_url`; with its `metrics_token_env` token).
fn metrics_scraper(
    url: Option<http::Uri>,
    gw: &GatewayPlan,
    interval: std::time::Duration,
) -> Option<Scraper> {
    let url = url?;
    Some(Scraper::new(ScraperConfig {
        url,
        interval,
        start: Instant::now(),
        timeout: crate::rehearsal::arm::SCRAPE_TIMEOUT,
    })
    .with_bearer(gw.metrics_token.clone()))
}

/// Whether a stop request cut the run short: an external run waits past `duration` for its
/// turns, so a stop while any turn is still out is a stop whatever the clock says; with every
/// turn back, a stop before `duration` is one too.
fn cut(outstanding: usize, elapsed_ms: u64, duration_ms: u64) -> bool {
    outstanding > 0 || elapsed_ms < duration_ms
}

/// The run failed before its clock started: the upstream stopped, the failure said.
async fn fail(arm: Arm<'_>, run: ExternalRun<'_>, why: String) -> Observed {
    arm.close().await;
    run.failed(why)
}

#[cfg(test)]
mod tests;
