//! Real gateways the harness supervises besides OpenClaw (`[target] kind = "litellm"`), driven
//! through the CLI against the mock upstream: the pinned LiteLLM proxy (`$REHEARSE_LITELLM`, else
//! the pinned venv in the cache that `rehearse gateway install litellm` and
//! `scripts/install-litellm.sh` make; a missing install FAILS the tests, saying how to install
//! it). Slow (a real proxy starts in 8–11 s; each case runs 42 s of turns): a target of its own,
//! its tests one at a time (`support::one_at_a_time`).
//!
//! - `litellm_cases`: the three LiteLLM cases of issue 37 with no hand-written LiteLLM config —
//!   the true rows pass, a mutant row each fails; one case with the user's own config overlaid.
//! - `litellm_catalogue`: two catalogue cases through `--target fixtures/targets/litellm.toml`,
//!   judged, with what LiteLLM did.
//! - `litellm_config`: a user config with a key the release does not take: exit 2 at its
//!   `file:line:col`, before anything starts.
//! - `matrix_ci`: the scorecard CI runs (`fixtures/matrix/ci.toml`: three catalogue cases × the
//!   embedded engine, LiteLLM and Portkey, one × OpenClaw), every cell as the file expects.
//! - `litellm_failures`: a proxy killed mid-run, and one stopped (SIGSTOP) so that its process
//!   lives but nothing answers: each exit 3 with its last log lines, nothing left running.

mod litellm_cases;
mod litellm_catalogue;
mod litellm_config;
mod litellm_failures;
mod matrix_ci;
mod support;
