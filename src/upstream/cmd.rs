//! `rehearse upstream --listen ADDR [--faults FILE] [--seed N] [--allow-non-loopback]
//! [--log FILE] [-v]`: serve the mock upstream until Ctrl-C or SIGTERM. The first stdout line is
//! `listening on http://HOST:PORT`. `--log` appends every request to FILE as one JSON line (an
//! [`UpstreamRecord`]: `wall_ms`, `route`, `model`, `profile_fp`, `fault`, …; tokens only as
//! fingerprints); `-v` prints one line per request on stderr.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use anyhow::Context;

use super::{RecordSink, Upstream, UpstreamConfig, UpstreamRecord, parse_fault_file, serve};
use crate::cli::UpstreamArgs;
use crate::exit::{CmdError, CmdResult, Status};
use crate::util::jsonl::JsonlFile;

/// Runs `rehearse upstream`.
pub(crate) fn command(args: UpstreamArgs) -> CmdResult {
    crate::util::listen::check_loopback(args.listen, args.allow_non_loopback, "mock upstream")?;
    let faults = match &args.faults {
        None => Vec::new(),
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading fault file {}", path.display()))
                .map_err(CmdError::bad_input)?;
            parse_fault_file(&text, &path.display().to_string()).map_err(CmdError::bad_input)?
        }
    };
    let log = match &args.log {
        None => None,
        Some(path) => Some(
            JsonlFile::open(path)
                .with_context(|| format!("opening the request log {}", path.display()))
                .map_err(CmdError::bad_input)?,
        ),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")
        .map_err(CmdError::harness)?;
    runtime.block_on(async move {
        let listener = crate::util::listen::bind_announced(args.listen).await?;
        let upstream = Upstream::new(UpstreamConfig {
            faults,
            seed: args.seed,
            ..UpstreamConfig::default()
        });
        if let Some(log) = &log {
            upstream.subscribe(Arc::new(JsonlLog(log.clone())));
        }
        if args.verbose {
            upstream.subscribe(Arc::new(Verbose));
        }
        let stop = crate::util::shutdown::Shutdown::on_signals()
            .context("installing SIGINT/SIGTERM handlers")
            .map_err(CmdError::harness)?;
        serve(listener, upstream, stop.requested())
            .await
            .context("serving")
            .map_err(CmdError::harness)?;
        if let Some(log) = log
            && log.errors() > 0
        {
            crate::errln!(
                "warning: {} request log lines could not be written to {}",
                log.errors(),
                log.path().display()
            );
        }
        Ok(Status::Pass)
    })
}

/// `--log FILE`: one JSON line per request.
struct JsonlLog(Arc<JsonlFile>);

impl RecordSink for JsonlLog {
    fn record(&self, r: &UpstreamRecord) {
        self.0.append(r);
    }
}

/// `-v`: one human line per request on stderr.
struct Verbose;

impl RecordSink for Verbose {
    fn record(&self, r: &UpstreamRecord) {
        crate::errln!("{}", verbose_line(r));
    }
}

/// `2026-09-06T10:00:00.123Z llm model=mockai/m1 profile=1a2b3c fault=status`.
fn verbose_line(r: &UpstreamRecord) -> String {
    let wall = SystemTime::UNIX_EPOCH + Duration::from_millis(r.wall_ms);
    let mut line = format!("{} {}", humantime::format_rfc3339_millis(wall), r.route);
    if let Some(m) = &r.model {
        line.push_str(&format!(" model={m}"));
    }
    line.push_str(&format!(
        " profile={}",
        r.profile_fp.as_deref().unwrap_or("none")
    ));
    line.push_str(&format!(" fault={}", r.fault.as_deref().unwrap_or("none")));
    if let Some(t) = r.turn {
        line.push_str(&format!(" turn={t}"));
    }
    if r.canary {
        line.push_str(" canary");
    } else if r.probe {
        line.push_str(" probe");
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verbose_line_names_time_route_model_profile_and_fault() {
        let r = UpstreamRecord {
            t_ms: 5,
            wall_ms: 1_788_000_000_123,
            route: crate::upstream::RequestRoute::Llm,
            dep: "mockai/default/1a2b3c".into(),
            model: Some("mockai/m1".into()),
            profile_fp: Some("1a2b3c".into()),
            probe: false,
            canary: false,
            fault: Some("status".into()),
            fault_index: Some(0),
            idempotency_key: None,
            duplicate: false,
            host: None,
            warmup: false,
            retry_after_ms: None,
            turn: None,
            tokens: None,
            usage: None,
            done_ms: None,
            whole: None,
            seq: None,
        };
        let line = verbose_line(&r);
        assert!(line.ends_with(".123Z llm model=mockai/m1 profile=1a2b3c fault=status"));
        let healthy = UpstreamRecord {
            model: None,
            profile_fp: None,
            fault: None,
            ..r
        };
        assert!(verbose_line(&healthy).ends_with(" llm profile=none fault=none"));
    }
}
