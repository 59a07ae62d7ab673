//! Seeded synthetic agent-gateway load: Poisson arrivals at a mean rate with the weekday mix of
//! `fixtures/traffic/README.md`, either printed as traffic JSONL (`--print`) or sent to a target
//! (usually `rehearse record` in front of an upstream) on the absolute schedule.
//!
//! ```text
//! cargo run --release --example synth_load -- --seed 20261129 --rps 10 --duration-s 300 \
//!     --target http://127.0.0.1:PORT
//! ```
//! Requests carry a fake `Authorization` and `x-api-key` so the recording shows they are removed.

use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rehearse::engine::RequestKind;
use rehearse::replay::HttpDispatcher;
use rehearse::replay::{Pacing, ReplayOptions, TrafficLine, replay};
use rehearse::util::shutdown::Shutdown;
use serde_json::json;

/// Flags.
#[derive(Debug, Parser)]
struct Args {
    /// Seed of every random choice.
    #[arg(long, default_value_t = 20261129)]
    seed: u64,
    /// Mean requests per second.
    #[arg(long, default_value_t = 10.0)]
    rps: f64,
    /// Length of the load in seconds.
    #[arg(long, default_value_t = 300)]
    duration_s: u64,
    /// Send to this base URL.
    #[arg(long, conflicts_with = "print")]
    target: Option<String>,
    /// Print the generated traffic as JSONL instead of sending it.
    #[arg(long)]
    print: bool,
}

const COMPANIES: &[&str] = &[
    "acme", "globex", "initech", "umbrella", "hooli", "stark", "wayne",
];
const TOPICS: &[&str] = &[
    "refund policy",
    "sso setup",
    "rate limits",
    "invoice dispute",
    "api keys rotation",
];

fn pick<'a>(rng: &mut ChaCha8Rng, items: &[&'a str]) -> &'a str {
    items[rng.gen_range(0..items.len())]
}

/// The synthetic traffic: exponential inter-arrival gaps (Poisson process) of mean 1/rps.
fn generate(args: &Args) -> Vec<TrafficLine> {
    let mut rng = ChaCha8Rng::seed_from_u64(args.seed);
    let end_ms = args.duration_s as f64 * 1000.0;
    let mut t = 0.0f64;
    let mut lines = Vec::new();
    let mut tickets = 0u32;
    loop {
        let u: f64 = rng.gen_range(f64::EPSILON..1.0);
        t += -u.ln() * 1000.0 / args.rps;
        if t >= end_ms {
            break;
        }
        let r: f64 = rng.r#gen();
        let kind = if r < 0.004 {
            RequestKind::Ws {
                channel: "realtime".into(),
                messages: rng.gen_range(3..=12),
            }
        } else if r < 0.46 {
            let m: f64 = rng.r#gen();
            let model = if m < 0.55 {
                "openai-codex/gpt-5.2"
            } else if m < 0.85 {
                "anthropic/claude-opus"
            } else {
                "anthropic/claude-haiku"
            };
            RequestKind::Llm {
                model: model.into(),
                stream: rng.gen_bool(0.6),
                max_tokens: Some([64, 128, 256, 512, 1024][rng.gen_range(0..5)]),
                messages: None,
            }
        } else {
            let tool: f64 = rng.r#gen();
            let (name, body, idempotent, key) = if tool < 0.4 {
                let body = json!({"q": pick(&mut rng, COMPANIES), "limit": 5});
                ("crm_search", body, true, None)
            } else if tool < 0.7 {
                let body = json!({"query": pick(&mut rng, TOPICS), "top_k": 8});
                ("vector_search", body, true, None)
            } else if tool < 0.9 {
                let (a, b): (u32, u32) = (rng.gen_range(1..1000), rng.gen_range(1..100));
                (
                    "calculator",
                    json!({"expr": format!("{a}*{b}+7")}),
                    true,
                    None,
                )
            } else {
                tickets += 1;
                let body = json!({"title": format!("{} follow-up", pick(&mut rng, TOPICS)), "priority": "p3"});
                (
                    "ticket_create",
                    body,
                    false,
                    Some(format!("tk-{}-{tickets:05}", args.seed)),
                )
            };
            RequestKind::Tool {
                name: name.into(),
                body,
                idempotent,
                idempotency_key: key,
            }
        };
        let llm = matches!(kind, RequestKind::Llm { .. });
        lines.push(TrafficLine {
            at_ms: t.floor() as u64,
            kind,
            tenant: Some(
                if rng.gen_bool(0.6) {
                    "team-a"
                } else {
                    "team-b"
                }
                .into(),
            ),
            budget_tokens: (llm && rng.gen_bool(0.3)).then(|| [4000, 8000][rng.gen_range(0..2)]),
            session: rng
                .gen_bool(0.7)
                .then(|| format!("s-{:03}", rng.gen_range(1..=40))),
            class: None,
        });
    }
    lines
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let lines = generate(&args);
    let Some(target) = &args.target else {
        for l in &lines {
            println!("{}", l.to_json());
        }
        return Ok(());
    };
    let dispatcher = HttpDispatcher::new(target, Duration::from_secs(30))?
        .with_header(
            http::header::AUTHORIZATION,
            http::HeaderValue::from_static("Bearer sk-synth-DO-NOT-RECORD-0001"),
        )
        .with_header(
            http::HeaderName::from_static("x-api-key"),
            http::HeaderValue::from_static("xk-synth-DO-NOT-RECORD-0002"),
        );
    let rt = tokio::runtime::Runtime::new()?;
    let summary = rt.block_on(async {
        let stop = Shutdown::on_signals()?;
        let opts = ReplayOptions {
            speed: rehearse::util::speed::Speed::ONE,
            max_in_flight: 1024,
            start: tokio::time::Instant::now() + Duration::from_millis(50),
            pacing: Pacing::Precise,
            keep_records: false,
        };
        std::io::Result::Ok(replay(lines, Arc::new(dispatcher), opts, stop.requested()).await)
    })?;
    println!("{}", summary.render());
    Ok(())
}
