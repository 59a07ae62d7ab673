//! The benchmark receiver: a loopback server (`rehearse::replay::receiver`) that timestamps each
//! arrival; on SIGTERM/Ctrl-C it writes one line per arrival, `NANOS_SINCE_FIRST ROUTE`, to
//! `--out` (or stdout) and exits. Used by `scripts/bench-replay.sh`.
//!
//! ```text
//! cargo run --release --example replay_receiver -- --listen 127.0.0.1:0 --out arrivals.txt
//! ```

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use clap::Parser;
use rehearse::replay::receiver::{Arrivals, serve_receiver};
use rehearse::util::shutdown::Shutdown;

/// Flags.
#[derive(Debug, Parser)]
struct Args {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:0")]
    listen: SocketAddr,
    /// Where to write arrivals on exit.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Worker threads of the receiver's runtime.
    #[arg(long, default_value_t = 1)]
    threads: usize,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(args.threads.max(1))
        .enable_all()
        .build()?;
    let arrivals = Arc::new(Arrivals::default());
    rt.block_on(async {
        let listener = tokio::net::TcpListener::bind(args.listen).await?;
        println!("listening on http://{}", listener.local_addr()?);
        std::io::stdout().flush()?;
        let stop = Shutdown::on_signals()?;
        serve_receiver(listener, arrivals.clone(), stop.requested()).await
    })?;
    let all = arrivals.snapshot();
    let mut text = String::new();
    if let Some(first) = all.iter().map(|a| a.at).min() {
        for a in &all {
            text.push_str(&format!("{} {}\n", (a.at - first).as_nanos(), a.route));
        }
    }
    match &args.out {
        Some(p) => std::fs::write(p, text)?,
        None => print!("{text}"),
    }
    Ok(())
}
