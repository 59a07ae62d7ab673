//! One policy run of a scenario through the same in-process harness as `rehearse run` (mock
//! upstream, engine, replayer, scraper on loopback), printing the replay summary as one JSON
//! line on stdout: sent, ok, errors, overflow, unfinished, schedule lag and latency percentiles.
//! `rehearse run`'s report keeps only the lag percentiles; the capacity benchmark also needs the
//! overflow count. Used by `scripts/bench-capacity.sh`.
//!
//! ```text
//! cargo run --release --example capacity_probe -- --scenario S.toml --dir /tmp/run
//! ```

use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::Parser;
use rehearse::cli::RunArgs;
use rehearse::rehearsal::arm::RunFiles;
use rehearse::rehearsal::embedded::run::run_policy;
use rehearse::rehearsal::plan;
use rehearse::util::shutdown::Shutdown;
use serde_json::json;

/// Flags.
#[derive(Debug, Parser)]
struct Args {
    /// The scenario file.
    #[arg(long)]
    scenario: String,
    /// An empty directory for the run's files (events.jsonl, upstream.jsonl, scrapes.prom).
    #[arg(long)]
    dir: PathBuf,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let run_plan = plan::build(&RunArgs {
        scenarios: vec![args.scenario.clone()],
        no_progress: true,
        ..RunArgs::default()
    })?;
    let Some(sp) = run_plan.scenarios.first() else {
        bail!("no scenario in the plan");
    };
    let Some(&policy) = sp.policies.first() else {
        bail!("the scenario names no policy");
    };
    std::fs::create_dir_all(&args.dir).with_context(|| format!("creating {:?}", args.dir))?;
    // The same runtime as `rehearse run`: tokio's multi-thread default, one worker per core.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let run = rt.block_on(async {
        let files = RunFiles::open(&args.dir)?;
        let stop = Shutdown::new();
        anyhow::Ok(run_policy(sp, policy, &args.dir, &files, &stop, true).await?)
    })?;
    rt.shutdown_timeout(std::time::Duration::from_millis(500));
    let s = &run.replay;
    let line = json!({
        "total": s.total, "sent": s.sent, "ok": s.ok, "errors": s.errors,
        "overflow": s.overflow, "unfinished": s.unfinished, "stopped": s.stopped,
        "lag_p50_ms": s.lag_p50_ms, "lag_p99_ms": s.lag_p99_ms, "lag_max_ms": s.lag_max_ms,
        "latency_p50_ms": s.latency_p50_ms, "latency_p99_ms": s.latency_p99_ms,
        "latency_max_ms": s.latency_max_ms, "elapsed_ms": run.elapsed_ms,
        "failed": run.failed, "pacer_thread": s.pacer_thread,
    });
    println!("{line}");
    Ok(())
}
