//! `rehearse` rehearses an agent gateway's failover and circuit-breaker behaviour before
//! production does: it replays recorded traffic through an embedded failover and breaker engine
//! against a fault-injecting mock upstream, scrapes the engine's Prometheus metrics, diffs them
//! against a scenario's expectations and writes a report. See `docs/` for contracts.
//!
//! # Layout
//!
//! - [`cli`]: clap structs only (raw flags); [`app`]: dispatch a parsed command to its handler.
//! - [`exit`]: the exit-code contract (0 pass, 1 expectation failed, 2 bad input, 3 harness failed).
//! - [`engine`]: the failover + breaker engine: pure decisions with `now` passed in, no hyper/clap,
//!   in rooms: `breaker/` (machine, trip rules and their reason, probes, window, registry),
//!   `failover/` (the decision, profiles, policies, cooldowns, the store, Retry-After and the
//!   other throttle headers a 429's wait is read from: `throttle`),
//!   `budget/` (retries, the degradation ladder, ledger, throttle), `executor/` (the async loop:
//!   one entry, the model chain, simple calls), `adaptive/` (learned tool-call deadlines),
//!   `health/` (canaries), `coordinator/` (fleets), `metrics/`; the seams (`request`, `transport`, `admission`) and `clock` at its root.
//! - [`exporter`]: the engine's `/metrics` HTTP endpoint (hyper), Prometheus text format 0.0.4.
//! - [`upstream`]: the fault-injecting mock upstream (HTTP JSON, SSE, WebSocket) and its control API;
//!   when it finished serving each request (`upstream::serving`: `done_ms`, `whole`).
//! - [`replay`]: the traffic format, the pure pacer, the open-model replayer (its dispatcher of
//!   `rehearse replay` in `replay/http.rs`) and the recording proxy.
//! - [`scenario`]: the scenario file format, its validation and its digest (what drift compares
//!   runs of); a `--target FILE` in place of its `[target]` (`scenario::target_file`); resolving
//!   a NAME (the user's scenario directories, then the built-ins) and `rehearse list`.
//! - [`validate`]: `rehearse validate`, the run's preflight without the run (it calls the
//!   plan's one `rehearsal::plan::preflight`).
//! - [`builtin`]: the built-in scenarios and the catalogue's cases (with their traffic, rule
//!   files and OpenClaw example)
//!   embedded in the binary, extracted to a versioned cache directory when a run needs files;
//!   named `builtin:NAME.toml` in errors.
//! - [`init`]: `rehearse init`, a starter project for a gateway.
//! - [`setup`]: `rehearse gateway install|list|remove` (OpenClaw, the OpenAI SDK, into the cache
//!   the scripts fill) and `rehearse doctor` (what a run needs from PATH).
//! - [`scrape`]: the `/metrics` scraper, the exposition-format parser, the scraped timeline
//!   (built one scrape at a time: what a run keeps of its scrapes is bounded) and the event log
//!   checked against the scrapes.
//! - [`verdict`]: the diff of expected against observed behaviour (pure); `verdict::anchor`: the
//!   one place a row's `since` (a fault's start or end) becomes an instant — for the
//!   ground-truth kinds, a transition's `at`, a turn window and an alert's `fault`; the turns in
//!   the upstream's record (`verdict::turns`: per-turn rows, rotations, fallbacks, cooldowns) and
//!   the expectations judged on them (`verdict::cooldown`, `verdict::per_turn`, over
//!   `verdict::turn_facts`); answers the client got (`verdict::answers`: a gateway's answer
//!   against what the upstream served for its turn, `truncated`; `verdict::answer_rows`: the
//!   reported model and usage).
//! - [`report`]: the report model (the fleet section's too), the one judge (`judge`: statuses,
//!   verdict, reason), Markdown, JSON, JUnit and HTML+SVG report writers; versions and target
//!   files side by side (`versions`, `targets`: one table, a column per arm, their rows and
//!   table shared in `side_by_side`).
//! - [`history`]: the run history of a report dir — the listing of its run directories (a
//!   note for foreign, unfinished, broken or other-schema entries), key figures over the runs,
//!   `rehearse history` with its index pages, drift against the previous runs of the same
//!   scenario digest, `rehearse compare`; the scorecards of `rehearse matrix` under a report
//!   dir and two of them compared.
//! - [`matrix`]: `rehearse matrix FILE`, the scorecard: every case of a matrix file against
//!   every target, repeated, each run a child `rehearse run` with its own report; the cells
//!   classified (pass, fail, clean error, not applicable, incomplete, error, not run), written
//!   as scorecard.json/md/html and per-cell batch-job series (two scorecards compared: the
//!   history's).
//! - [`rehearsal`]: `rehearse run`, the one home of the pipeline and the top of the module
//!   graph: plan (`plan/`) → system under test (`sut`: embedded | gateway | fleet, one type, one
//!   room each — `embedded/`, `gateway/`, `fleet/`, alike: `arms` the entry, `run` one arm) →
//!   every arm on the one arm lifecycle (`arm/`: the mock upstream and the one recorder,
//!   targets, scrapers, the stops) → one `Observation` per arm → one section each (`section/`)
//!   → the one report (`assemble`) with the one judge → written, finished alike (`cmd`);
//!   several `--target` files side by side (`targets`, planned by `plan/targets.rs`): each
//!   target a run of its own in `RUN/STEM/`, folded into one report, its verdict the worst arm's.
//! - [`rundir`]: run directories — their names, the ownership marker, the run lock — which the
//!   run, the history and the retention all read.
//! - [`transport`]: every client the harness has — the engine's HTTP/SSE/WebSocket transport,
//!   the one request builder and error mapping they share, the
//!   tuned connector and socket options (`[tcp]`) the run, `replay` and `record` connect
//!   through, read-failure diagnostics, and the kernel arrival stamps of the harness's servers.
//! - [`wire`]: wire names written once — headers, routes, percent-encoding of names, dep naming,
//!   which model a request is for, the turn marker (`wire::turn`) the upstream reads a request's
//!   turn by (`upstream::turn`), the throttle headers and the one parser of their values
//!   (`wire::throttle`, read by the engine's `failover::throttle` and the upstream's fault headers).
//! - [`schedule`]: launchd LaunchAgent plists and `launchctl`; the program an agent runs (a
//!   Homebrew install's stable `bin/rehearse`, never its versioned keg).
//! - [`monitoring`]: the shipped monitoring (`monitoring/`: alerting rules, example Alertmanager
//!   config, Grafana dashboard) embedded in the binary, reading a rule file's alerting and
//!   recording rules (`rules`), what a rule's PromQL reads and which labels its alerts keep
//!   (`promql`), and `rehearse monitoring` printing them.
//! - [`retention`]: `--keep N`: the ownership marker every run directory gets at its start, and
//!   the pruning of older run directories of the same scenario after the report is written.
//! - [`jobmetrics`]: the weekly job's own outputs after its report — the batch-job series
//!   (`--textfile-dir`'s `rehearse.prom`, `--pushgateway`) and `--on-fail CMD`.
//! - [`gateway`]: the supervisors of the external systems under test the harness runs — a real
//!   OpenClaw gateway (install, config, key seeding, process, log decisions, auth state), a real
//!   LiteLLM proxy (`gateway::litellm`: venv, generated or overlaid config, sandboxed process,
//!   liveness watch) and Portkey's open-source gateway (`gateway::portkey`: install, the
//!   per-turn `x-portkey-config`, its loopback bind, its process watched by its answers) — and
//!   the user's gateway by URL. What the
//!   scenario asks of it (the `[target]` table, its gateway configuration and turns) is
//!   `scenario::target` and `scenario::gateway`; the run path is `rehearsal::gateway` (its
//!   warm-up `rehearsal::gateway::warmup`), the ground-truth and OpenClaw expectations `verdict::ground*` and
//!   `verdict::gateway_eval`, the turn expectations `verdict::turn` (over how each turn ended,
//!   `gateway::TurnEnd` — a gateway's turns, and the embedded engine's as its client saw them,
//!   `rehearsal::embedded::turns`).
//! - [`detection`]: the detection path in a run (`[prometheus]`): a real Prometheus (and
//!   Alertmanager, with the harness's webhook receiver) started from PATH, the targets every
//!   kind of run publishes arm by arm, what it says while an arm runs (`detection::poll`: rule
//!   evaluation counters, the arm's targets) and what the alert judge (`verdict::alert_eval`)
//!   reads back from its HTTP API, tied to the arm's targets (`detection::read`). Whether an
//!   alert row's rule could fire at all is `verdict::alert_rules` (before the run through
//!   `scenario::validate_alerts`, exit 2; after it, a failed row).
//! - [`host`]: the host and TCP-stack fingerprint recorded in every report, and its
//!   contradictions with a scenario's timings.
//! - [`util`]: small shared helpers (the cache directory and the pinned versions of
//!   `scripts/pins.env`, atomic file writes, secret fingerprints, the `Speed` type
//!   with its bounds and the one saturating scale of speed-divided durations, the one stop
//!   mechanism (`shutdown`: a stop request and a drain), the one poison recovery (`sync`), an
//!   error's chain as report text (`text`), error positions in characters,
//!   processes by pid (`proc`) and the `watchdog` that stops a started program when the run
//!   dies, `suspend`: the run's no-sleep assertion and the arms' sleep detection).
#![forbid(unsafe_op_in_unsafe_fn)]
#![warn(rust_2018_idioms, missing_debug_implementations)]

// The public API (docs/architecture.md, "Public API"): the binary's entry and the embeddable engine.
pub mod app;
pub mod cli;
pub mod engine;
pub mod exit;
pub mod exporter;

/// The harness's internals: `pub` only with the `testing` feature, which the tests, benches and
/// examples turn on (Cargo.toml); otherwise private to the crate and free to change. Without the
/// feature, what only the tests reach (their helpers, the re-exports they import through) is dead:
/// dead code is linted in the feature's build, the one `clippy --all-targets` checks.
macro_rules! internal {
    ($($name:ident),* $(,)?) => {$(
        #[cfg(feature = "testing")]
        #[doc(hidden)]
        pub mod $name;
        #[cfg(not(feature = "testing"))]
        #[allow(dead_code, unused_imports, reason = "the tests' own items; see `internal!`")]
        mod $name;
    )*};
}

internal!(
    builtin, detection, gateway, history, host, init, jobmetrics, matrix, monitoring, rehearsal,
    replay, report, retention, rundir, scenario, schedule, scrape, setup, transport, upstream,
    validate, verdict, wire,
);

// Spelt out, not through `internal!`: `util::out` defines the `#[macro_export]` `errln!` and
// `outln!`, which the crate calls as `crate::errln!`, and such a path cannot name a macro defined
// inside a macro-expanded module.
#[cfg(feature = "testing")]
#[doc(hidden)]
pub mod util;
#[cfg(not(feature = "testing"))]
#[allow(
    dead_code,
    unused_imports,
    reason = "the tests' own items; see `internal!`"
)]
mod util;
