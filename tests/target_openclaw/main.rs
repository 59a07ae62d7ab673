//! The OpenClaw supervisor (`rehearse::gateway::openclaw`) against processes: a stand-in gateway
//! (a small Python script) for the lifecycle and failure paths, and the real pinned OpenClaw
//! (`$REHEARSE_OPENCLAW`, set by `.ci/test` from `scripts/install-openclaw.sh`) driven against an
//! in-process mock upstream; the `openclaw-*` fixture scenarios through the CLI (`scenarios`) and
//! the same against a gateway by URL (`http`). A missing install fails the real tests, saying how
//! to install it. The warm-up before the run's clock starts (`warmup`): a stand-in gateway by URL
//! and the real one. The quick cases from a checkout under `/tmp` (`from_tmp`).

mod fake;
mod from_tmp;
mod http;
mod real;
mod scenarios;
mod warmup;
