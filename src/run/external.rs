//! One run of a scenario against an external target (`[target] kind = "openclaw" | "http"`):
//! the mock upstream (at `[upstream] listen`, else an ephemeral loopback port) recording every
//! request to upstream.jsonl and in memory; the gateway — started from a fresh state by the
//! harness (`openclaw`, in `RUN/.gateway/`, removed afterwards: its database holds the keys) or
//! the user's (`http`, by URL) — sent the scenario's model calls as turns at their recorded
//! times (speed 1); its metrics scraped when `metrics_url` is given; then stopped, its log
//! (keys scrubbed) and its auth state (no keys) kept in the run directory. A gateway that does
//! not start, crashes mid-run or never becomes healthy is a harness failure (verdict `error`,
//! exit 3) whose last log lines are in the report; nothing is left running.
//!
//! Before the run's clock starts the gateway is warmed up ([`super::warmup`]) with the
//! upstream's faults disarmed: healthy turns until one is answered with its first model request
//! at the upstream promptly (and, with `metrics_url`, its metrics answer: that scrape is the
//! baseline counters are judged from). Then the clock starts and the faults are armed at once.
//! Requests before it are the warm-up's (marked in upstream.jsonl, counted in `target.warmup`,
//! never judged or faulted); a gateway that never gets steady is not rehearsed (`error`).

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::task::JoinSet;
use tokio::time::{Instant, sleep_until, timeout};

use super::harness::RunFiles;
use super::observation::Observed;
use super::observe::FaultHits;
use super::plan::ScenarioPlan;
use super::recorder::UpstreamRecorder;
use super::sinks::EventsWriter;
use super::warmup::{Sent, warm_up};
use crate::gateway::openclaw::{Gateway, GatewayError, GatewayOptions, Install, Turn, TurnClient};
use crate::scenario::gateway::{PlannedTurn, base_config, gateway_config_with, planned_turns};
use crate::scenario::target::TargetKind;
use crate::scrape::{CompactScrapes, ScrapeLog, Scraper, ScraperConfig};
use crate::util::shutdown::Shutdown;

use super::external_gateway::{finish_gateway, turn_row};
pub(crate) use super::external_report::ExternalRun;

/// The gateway the turns go to.
enum Driven {
    Openclaw(Box<Gateway>),
    Http,
}

/// One run against the external target into `dir`: the whole run of a target without
/// `versions`, one version's run with them (`external_versions` calls it) — of OpenClaw
/// `version` when given (the arm is then named after it, its kept files carry it).
pub(crate) async fn run_arm(
    plan: &ScenarioPlan,
    dir: &Path,
    files: &RunFiles,
    stop: &Shutdown,
    version: Option<&str>,
) -> Observed {
    let file = &plan.checked.file;
    let kind = file.target.kind;
    let arm = version.unwrap_or(kind.as_str()).to_string();
    let start_unix_s = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let mut run = ExternalRun::new(plan, start_unix_s);
    run.arm = arm.clone();
    run.pinned = version.map(str::to_string);
    run.target.kind = kind.as_str().to_string();

    // The mock upstream.
    let upstream =
        super::recorder::scenario_upstream(file, plan.seed, crate::util::speed::Speed::ONE);
    let fault_hits = Arc::new(FaultHits::new(crate::util::speed::Speed::ONE));
    let ground = Arc::new(
        UpstreamRecorder::new(
            EventsWriter::new(files.upstream.clone(), &arm, crate::util::speed::Speed::ONE),
            fault_hits.clone(),
            // Always kept (under the cap): the key figures read a gateway's rotations and
            // fallbacks from the sequence of profiles and models it sent.
            true,
        )
        .with_cap(plan.record_cap),
    );
    upstream.subscribe(ground.clone());
    // Until the warm-up is over, no fault applies and every request is the warm-up's.
    let warm_t0 = Instant::now();
    upstream.disarm(warm_t0);
    let listen = file
        .upstream
        .listen
        .unwrap_or_else(|| ([127, 0, 0, 1], 0).into());
    let listener = match tokio::net::TcpListener::bind(listen).await {
        Ok(l) => l,
        Err(e) => return run.failed(format!("binding the mock upstream to {listen}: {e}")),
    };
    let up_addr = listener.local_addr().unwrap_or(listen);
    run.target.upstream = Some(format!("http://{up_addr}"));
    let servers = Shutdown::new();
    let up_task = tokio::spawn(crate::upstream::serve(
        listener,
        upstream.clone(),
        servers.requested(),
    ));

    // The gateway.
    let gateway_dir = dir.join(match version {
        Some(v) => format!(".gateway-{v}"),
        None => ".gateway".to_string(),
    });
    let turn_timeout = file.target.turn_timeout();
    let (mut driven, client) = match kind {
        TargetKind::Openclaw => {
            let found = match version {
                Some(v) => Install::find_version(v),
                None => Install::find(file.target.command.as_deref()),
            };
            let install = match found {
                Ok(i) => i,
                Err(e) => {
                    return stop_upstream(run.failed(e.to_string()), &servers, up_task).await;
                }
            };
            run.target.version = Some(install.openclaw_version.clone());
            let user = plan.checked.user_config.as_ref();
            let config = match gateway_config_with(
                file,
                &plan.checked.traffic,
                &format!("http://{up_addr}"),
                user,
            ) {
                Ok(c) => c,
                Err(e) => {
                    return stop_upstream(run.failed(e.to_string()), &servers, up_task).await;
                }
            };
            let options = GatewayOptions {
                turn_timeout,
                ready_timeout: file.target.ready_timeout(),
                base: base_config(file, user),
                ..GatewayOptions::default()
            };
            if let Some(u) = user {
                crate::errln!(
                    "{}/openclaw: your config {} is the base (channels, heartbeats, cron, plugins and discovery off)",
                    file.name,
                    u.path.display()
                );
            }
            crate::errln!(
                "{}/{arm}: starting OpenClaw {} (mock upstream http://{up_addr})",
                file.name,
                install.openclaw_version
            );
            // OpenClaw 2026.9.6 can exit during its own start-up on a starved machine ("state
            // lease heartbeat did not become ready", a 5 s deadline of its own): one more try
            // from a fresh state, said in the report. A gateway that never gets healthy, or
            // fails twice, is the harness failure.
            let mut tries = 0;
            let gw = loop {
                tries += 1;
                match Gateway::start(&install, &config, &gateway_dir, options.clone()).await {
                    Ok(g) => break g,
                    Err(e) => {
                        let _ = std::fs::remove_dir_all(&gateway_dir);
                        if tries == 1 && matches!(e, GatewayError::Exited { .. }) {
                            let why = e.last_lines().last().cloned().unwrap_or_default();
                            crate::errln!(
                                "{}/{arm}: the gateway exited while starting ({why}); trying once more",
                                file.name
                            );
                            run.notes.push(format!("the first start exited before it was healthy ({why}); started again from a fresh state"));
                            continue;
                        }
                        run.target.last_lines = e.last_lines().to_vec();
                        return stop_upstream(run.failed(e.to_string()), &servers, up_task).await;
                    }
                }
            };
            super::user_config::record(
                &gw,
                dir,
                plan.checked.user_config.as_ref(),
                &mut run.target,
                &mut run.notes,
            );
            run.target.url = Some(gw.base_url());
            // The version the started gateway's executable says it is (`openclaw --version`,
            // run with the node it runs on).
            run.target.reported_version = install.says();
            if let (Some(v), Some(said)) = (version, run.target.reported_version.as_deref())
                && said != v
            {
                let why = format!(
                    "asked for OpenClaw {v}, but the gateway started from {} says it is {said}",
                    install.openclaw.display()
                );
                finish_gateway(gw, dir, &gateway_dir, plan, &mut run).await;
                return stop_upstream(run.failed(why), &servers, up_task).await;
            }
            run.target.isolation = Some(gw.isolation().as_str().to_string());
            let client = match gw.client() {
                Ok(c) => c,
                Err(e) => {
                    return stop_upstream(run.failed(e.to_string()), &servers, up_task).await;
                }
            };
            (Driven::Openclaw(Box::new(gw)), client)
        }
        TargetKind::Http | TargetKind::Embedded => {
            let url = file.target.url.clone().unwrap_or_default();
            let token = super::external_http::token(file, &mut run.target);
            super::external_http::provider_block(
                file,
                &plan.checked.traffic,
                &format!("http://{up_addr}"),
                file.upstream.listen.is_some(),
                &mut run.target,
                &mut run.notes,
            );
            run.target.url = Some(url.clone());
            let model = match &file.target.model {
                Some(m) => m.clone(),
                None => crate::scenario::gateway::primary_model(&plan.checked.traffic)
                    .unwrap_or_default(),
            };
            let client = match TurnClient::new(&url, &token, turn_timeout) {
                Ok(c) => c.with_model(&model),
                Err(e) => {
                    return stop_upstream(run.failed(e.to_string()), &servers, up_task).await;
                }
            };
            if let Some(path) = &file.target.health_path {
                run.target.health_path = Some(path.clone());
                let within = file.target.ready_timeout();
                if let Err(e) = super::external_http::wait_healthy(&client, path, within).await {
                    return stop_upstream(run.failed(e.to_string()), &servers, up_task).await;
                }
            }
            (Driven::Http, client)
        }
    };

    let duration_ms = u64::try_from(file.duration.as_millis()).unwrap_or(u64::MAX);
    let turns = planned_turns(&plan.checked.traffic, duration_ms);

    // The warm-up: healthy turns until the gateway answers as it will during the run. Its
    // start-up and its cold first turn (OpenClaw: 6–17 s before its first model request) are
    // not part of the scenario's time.
    let spec = file.target.warmup();
    let stream = turns.first().is_some_and(|t| t.stream);
    crate::errln!(
        "{}/{}: warming up (a turn's first model request within {:?}, at most {} turns)",
        file.name,
        arm,
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
                    })
                    .await;
                Sent {
                    ok: o.is_ok(),
                    error: o.error.clone(),
                }
            }
        };
        let g = ground.clone();
        tokio::select! {
            w = warm_up(&spec, warm_t0, send, move || g.warmup().llm_t_ms) => Some(w),
            _ = stop.requested() => None,
        }
    };
    let mut not_steady: Option<String> = match &warmed {
        None => Some("stopped during the warm-up, before the run's clock started".into()),
        Some(w) => w.reason.clone(),
    };
    run.target.warmup = warmed;

    // Its metrics, when it has an endpoint: answering is part of the steady state, and the
    // scrape at the clock's start is the baseline its counters are judged from.
    let scraper = file
        .target
        .metrics_url
        .as_ref()
        .and_then(|u| u.parse::<http::Uri>().ok())
        .map(|url| {
            Scraper::new(ScraperConfig {
                url,
                interval: file.scrape_interval,
                start: Instant::now(),
                timeout: Duration::from_secs(2),
            })
        });
    if not_steady.is_none()
        && let Some(s) = &scraper
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
    if let Some(why) = not_steady {
        if let Some(w) = run.target.warmup.as_mut() {
            w.steady = false;
            w.reason = Some(why.clone());
            w.upstream_requests = ground.warmup().requests;
        }
        let mut why = why;
        if let Driven::Openclaw(gw) = &mut driven
            && !gw.running()
        {
            run.target.last_lines = gw.last_lines();
            why = format!("the OpenClaw gateway exited during the warm-up ({why})");
        }
        if let Driven::Openclaw(gw) = driven {
            finish_gateway(*gw, dir, &gateway_dir, plan, &mut run).await;
        }
        // What reached the upstream (all of it the warm-up's), for the picture.
        run.records = ground.take_records();
        return stop_upstream(run.failed(why), &servers, up_task).await;
    }

    // The run's clock starts at the steady state, and the faults are armed with it.
    let start = Instant::now();
    upstream.arm(start);
    let start_unix_s = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    run.set_start(start_unix_s);
    // A [prometheus] of the run scrapes the gateway's metrics_url from the clock's start.
    let prom_targets: Vec<crate::detection::Target> = file
        .target
        .metrics_url
        .as_ref()
        .and_then(|u| u.parse::<http::Uri>().ok())
        .map(|url| crate::detection::Target {
            url,
            host: "sut".into(),
        })
        .into_iter()
        .collect();
    files.targets.publish(
        &arm,
        UNIX_EPOCH + Duration::from_secs_f64(start_unix_s),
        &prom_targets,
    );
    let scrape_stop = Shutdown::new();
    let scraper = scraper.map(|s| {
        let s = s.starting_at(start);
        let sink = (files.scrapes.clone(), CompactScrapes::new(start_unix_s));
        let stopped = scrape_stop.requested();
        tokio::spawn(async move { s.run_into(sink, stopped).await })
    });

    // The turns, at their times; the gateway watched while they run.
    crate::errln!(
        "{}/{}: {} turns to {} over {}",
        file.name,
        arm,
        turns.len(),
        run.target.url.as_deref().unwrap_or("?"),
        humantime::format_duration(file.duration)
    );
    let mut set = JoinSet::new();
    for t in turns {
        let client = client.clone();
        set.spawn(send_turn(client, t, start));
    }
    drop(client);
    let end = crate::util::speed::after(start, file.duration);
    let mut crashed: Option<String> = None;
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
                        _ = stop.requested() => break,
                        _ = tokio::time::sleep(Duration::from_millis(500)) => {}
                    }
                }
            },
            _ = stop.requested() => break,
            _ = tokio::time::sleep(Duration::from_millis(500)) => {}
        }
        if let Driven::Openclaw(gw) = &mut driven
            && !gw.running()
        {
            run.target.last_lines = gw.last_lines();
            crashed = Some("the OpenClaw gateway exited mid-run".to_string());
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
    run.target.turns = rows;
    run.elapsed_ms = u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
    files.targets.withdraw(&arm);
    run.stopped = stop_cut(stop.reason(), outstanding, run.elapsed_ms, duration_ms);

    // Stop the gateway, keep what it decided and remembers.
    if let Driven::Openclaw(gw) = driven {
        finish_gateway(*gw, dir, &gateway_dir, plan, &mut run).await;
    }
    scrape_stop.request("the run ended");
    if let Some(task) = scraper
        && let Ok((_, compact)) = task.await
    {
        run.scrapes = compact;
    }
    servers.request("the run ended");
    let _ = timeout(Duration::from_millis(500), up_task).await;
    run.records = ground.take_records();
    run.fault_hits = fault_hits.snapshot();
    if let Some(w) = run.target.warmup.as_mut() {
        w.upstream_requests = ground.warmup().requests;
    }
    if let Some(why) = crashed {
        let lines = run.target.last_lines.join("\n");
        return run.failed(format!("{why}; last log lines:\n{lines}"));
    }
    run.into_observed()
}

/// Whether a stop request (`reason`) cut the run short: an external run waits past `duration`
/// for its turns, so a stop while any turn is still out is a stop whatever the clock says; with
/// every turn back, a stop before `duration` is one too.
fn stop_cut(
    reason: Option<String>,
    outstanding: usize,
    elapsed_ms: u64,
    duration_ms: u64,
) -> Option<String> {
    reason.filter(|_| outstanding > 0 || elapsed_ms < duration_ms)
}

async fn stop_upstream(
    report: Observed,
    servers: &Shutdown,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
) -> Observed {
    servers.request("the run ended");
    let _ = timeout(Duration::from_millis(500), task).await;
    report
}

async fn send_turn(
    client: TurnClient,
    t: PlannedTurn,
    start: Instant,
) -> crate::report::model::TurnRow {
    let due = start + Duration::from_millis(t.at_ms);
    sleep_until(due).await;
    let lag_ms = u64::try_from(Instant::now().saturating_duration_since(due).as_millis())
        .unwrap_or(u64::MAX);
    let turn = crate::gateway::openclaw::Turn {
        session: t.session.clone(),
        stream: t.stream,
        message: format!("rehearse turn {} of session {}", t.line, t.session),
    };
    let outcome = client.send(&turn).await;
    turn_row(&t, lag_ms, &outcome)
}

#[cfg(test)]
mod tests;
