//! `rehearse upstream --listen ADDR [--faults FILE] [--seed N] [--allow-non-loopback]`: serve the
//! mock upstream until Ctrl-C or SIGTERM. The first stdout line is `listening on http://HOST:PORT`.

use std::io::Write;

use anyhow::{Context, anyhow};

use super::{Upstream, UpstreamConfig, parse_fault_file, serve};
use crate::cli::UpstreamArgs;
use crate::exit::{CmdError, CmdResult, Status};

/// Runs `rehearse upstream`.
pub fn command(args: UpstreamArgs) -> CmdResult {
    if !args.allow_non_loopback && !args.listen.ip().is_loopback() {
        return Err(CmdError::bad_input(anyhow!(
            "--listen {} is not a loopback address; pass --allow-non-loopback to expose the mock \
             upstream beyond this machine",
            args.listen
        )));
    }
    let faults = match &args.faults {
        None => Vec::new(),
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading fault file {}", path.display()))
                .map_err(CmdError::bad_input)?;
            parse_fault_file(&text, &path.display().to_string()).map_err(CmdError::bad_input)?
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")
        .map_err(CmdError::harness)?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(args.listen)
            .await
            .with_context(|| format!("binding {}", args.listen))
            .map_err(CmdError::harness)?;
        let addr = listener
            .local_addr()
            .context("reading the bound address")
            .map_err(CmdError::harness)?;
        {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "listening on http://{addr}");
            let _ = out.flush();
        }
        let upstream = Upstream::new(UpstreamConfig {
            faults,
            seed: args.seed,
            ..UpstreamConfig::default()
        });
        serve(listener, upstream, crate::util::stop_signal())
            .await
            .context("serving")
            .map_err(CmdError::harness)?;
        Ok(Status::Pass)
    })
}
