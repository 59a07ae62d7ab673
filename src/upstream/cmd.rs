//! `rehearse upstream --listen ADDR [--faults FILE] [--seed N] [--allow-non-loopback]`: serve the
//! mock upstream until Ctrl-C or SIGTERM. The first stdout line is `listening on http://HOST:PORT`.

use anyhow::Context;

use super::{Upstream, UpstreamConfig, parse_fault_file, serve};
use crate::cli::UpstreamArgs;
use crate::exit::{CmdError, CmdResult, Status};

/// Runs `rehearse upstream`.
pub fn command(args: UpstreamArgs) -> CmdResult {
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
        serve(listener, upstream, crate::util::stop_signal())
            .await
            .context("serving")
            .map_err(CmdError::harness)?;
        Ok(Status::Pass)
    })
}
