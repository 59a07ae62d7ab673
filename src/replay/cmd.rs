//! `rehearse replay` and `rehearse record` (the CLI edge: flags → plan → runtime → exit code).

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, anyhow};
use tokio::time::Instant;

use super::http::HttpDispatcher;
use super::precise::Pacing;
use super::record::{RecordError, RecordStats, Recorder, serve_recorder};
use super::replayer::ReplayOptions;
use super::threaded::replay_on_own_thread;
use super::traffic::load_traffic;
use crate::cli::{RecordArgs, ReplayArgs};
use crate::exit::{CmdError, CmdResult, Status};

/// Per-request deadline of `rehearse replay` (a WebSocket session included).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(120);

/// Delay between reading the file and the first send, so the runtime is warm at `at_ms = 0`.
const LEAD_IN: Duration = Duration::from_millis(50);

/// Runs `rehearse replay`.
pub(crate) fn replay_command(args: ReplayArgs) -> CmdResult {
    if args.max_in_flight == 0 {
        return Err(CmdError::bad_input(anyhow!(
            "--max-in-flight must be at least 1"
        )));
    }
    let lines = load_traffic(&args.traffic).map_err(CmdError::bad_input)?;
    let dispatcher =
        HttpDispatcher::new(&args.target, REQUEST_TIMEOUT).map_err(CmdError::bad_input)?;
    // The pacer, the HTTP client and its connections run on one thread of their own, so a send
    // leaves at its instant without a cross-thread hand-off (see `precise`).
    let opts = ReplayOptions {
        speed: args.speed,
        max_in_flight: args.max_in_flight,
        start: Instant::now() + LEAD_IN,
        pacing: Pacing::Precise,
        keep_records: args.out.is_some(),
    };
    let summary = replay_on_own_thread(lines, Arc::new(dispatcher), opts, signalled)
        .context("starting the pacer thread")
        .map_err(CmdError::harness)?
        .join()
        .map_err(|_| CmdError::harness(anyhow!("the pacer thread panicked")))?;
    crate::outln!("{}", summary.render());
    if let Some(out) = &args.out {
        let mut text = String::new();
        for r in &summary.records {
            // ok: a struct of numbers, bools and strings always serialises.
            text.push_str(&serde_json::to_string(r).unwrap_or_default());
            text.push('\n');
        }
        crate::util::write_atomic(out, text.as_bytes())
            .with_context(|| format!("writing {}", out.display()))
            .map_err(CmdError::harness)?;
        crate::outln!("per-request results: {}", out.display());
    }
    Ok(if summary.stopped {
        Status::Incomplete
    } else {
        Status::Pass
    })
}

/// A stop on SIGINT/SIGTERM, made on the pacer thread's own runtime; without signal handlers
/// the replay runs to its end.
async fn signalled() {
    match crate::util::shutdown::Shutdown::on_signals() {
        Ok(stop) => stop.requested().await,
        Err(_) => std::future::pending().await,
    }
}

/// Runs `rehearse record`.
pub(crate) fn record_command(args: RecordArgs) -> CmdResult {
    crate::util::listen::check_loopback(args.listen, args.allow_non_loopback, "recording proxy")?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the tokio runtime")
        .map_err(CmdError::harness)?;
    let stats: RecordStats = runtime.block_on(async {
        let recorder = Recorder::create(&args.upstream, &args.out).map_err(|e| match e {
            RecordError::Target(_) => CmdError::bad_input(e),
            RecordError::Create { .. } => CmdError::harness(e),
        })?;
        let listener = crate::util::listen::bind_announced(args.listen).await?;
        let stop = crate::util::shutdown::Shutdown::on_signals()
            .context("installing SIGINT/SIGTERM handlers")
            .map_err(CmdError::harness)?;
        serve_recorder(listener, Arc::new(recorder), stop.requested())
            .await
            .context("recording proxy")
            .map_err(CmdError::harness)
    })?;
    crate::errln!(
        "recorded {} to {} ({} not recordable, forwarded only)",
        crate::util::text::count(stats.recorded as usize, "request"),
        args.out.display(),
        stats.skipped
    );
    Ok(Status::Pass)
}
