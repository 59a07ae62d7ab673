//! The OpenClaw supervisor (`rehearse::gateway::openclaw`) against processes: a stand-in gateway
//! (a small Python script) for the lifecycle and failure paths, and the real pinned OpenClaw
//! (`$REHEARSE_OPENCLAW`, set by `.ci/test` from `scripts/install-openclaw.sh`) driven against an
//! in-process mock upstream; the `openclaw-*` fixture scenarios through the CLI (`scenarios`) and
//! the same against a gateway by URL (`http`). A missing install fails the real tests, saying how
//! to install it. The warm-up before the run's clock starts (`warmup`): a stand-in gateway by URL
//! and the real one. The user's own gateway config as the base (`user_config`), and `http`
//! targets as users run them — a bearer token, providers configured by hand, a health path
//! of their own (`http_user`). OpenClaw versions side by side (`versions` with stand-ins,
//! `real_versions` with two real releases). The quick cases from a checkout under `/tmp`
//! (`from_tmp`). A second gateway through OpenClaw's seam (`rehearse::gateway::Supervisor`): the
//! stand-in gateway as a supervised process in the plan's place, run by the pipeline
//! (`fake_seam`).

/// The integration tests' run helpers (`tests/support/run.rs`): the fixtures' mutants.
#[allow(dead_code)]
#[path = "../support/run.rs"]
mod run_support;

mod fake;
mod fake_seam;
mod from_tmp;
mod http;
mod http_answers;
mod http_side_by_side;
mod http_turns;
mod http_turns_litellm;
mod http_user;
mod real;
mod real_versions;
mod scenarios;
mod stand_in;
mod user_config;
mod versions;
mod warmup;
