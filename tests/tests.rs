//! The integration-test binary: one module per area, sharing `support`.

mod support;

// Module dependencies run one way: a new circle between modules or files of a folder fails here.
mod module_graph;
// No `pub` item of an internal module that nothing else names (rustc cannot see those dead).
mod unused_pub;
// No runner over 150 lines: what every arm shares is the one arm lifecycle.
mod runner_length;

// CLI contract: exit codes and usage errors.
mod cli;

// Replay: traffic CLI errors, `rehearse replay`/`record` binaries.
mod replay;

// Turns marked by the embedded engine: every attempt of a line carries its turn.
mod run_turns;
// The embedded engine's turns as its client saw them, judged by [[expect.turn]].
mod run_turns_engine;

// The run harness's real transport: typed failures from misbehaving loopback servers.
mod run_transport;

// The one request builder on the wire: run and replay send the same bytes; names encoded.
mod transport_request;

// Breaker trip/open/half-open/close rules on paused time.
mod breaker_machine;

// Breaker half-open pacing, probes and closing.
mod breaker_half_open;

// Exported breaker state at scrape time; observing a breaker changes none of its decisions.
mod breaker_scrape_time;

// Fleet mode end to end: 12 host processes, a real redis-server, coordinator faults.
mod fleet_run;

// The fleet coordinator: one behavioural suite against the in-process room and a real redis-server.
mod coordinator;
// Shared profile cooldowns through two hosts' engines on one coordinator.
mod coordinator_cooldowns;

// The breaker/timeouts/budget/health/throttle config sub-tables.
mod breaker_config;

// Budgets, idempotency, throttle and breakers wired into the executor.
mod breaker_executor;

// Adaptive tool-call deadlines through the engine: warm-up, floor, the breaker rule.
mod engine_adaptive;

// Synthetic canaries and the canary/breaker disagreement gauge.
mod breaker_health;

// The engine's /metrics: docs/metrics.md series, promtool, exporter.
mod metrics;

// Exposition parser, selectors and the prometheus-parse comparison (verdict helper).
mod scrape_parse;
// The pure expectation diff and its mutations (verdict helper).
mod verdict_diff;

// The run history: key figures, `rehearse history`, drift, `[[expect.drift]]`, `compare`.
mod history;
// Drift that sees what is new: a stand-in gateway whose breaker opens for the first time.
mod history_new;
// Bounds over what happened: latency over turn_timeout, wall-clock quantities at every speed,
// label values nothing exports, validate as the run's preflight.
mod bounds;

// The binary alone: built-ins, init, gateway installs against the scripts, the release files.
mod install;

// The catalogue of the field's failure cases: every case judged against the embedded engine,
// and stand-in gateways that try to pass it falsely by `--target`.
mod catalogue;
mod matrix;
// `--target FILE`: a target table of its own in place of the scenario's, located errors.
mod target_file;

// Time from a fault: rows anchored at a named fault's start, their mutants, validation.
mod run_anchor;
// A breaker transition's `at` counted from a named fault, at two speeds, and its mutants.
mod run_anchor_transition;

// The one judge: a run past the upstream recorder's cap says so and ends incomplete.
mod run_judge;

// Nothing judged on nothing: a gateway that never calls its provider, a stop with turns out,
// [[expect.turn]], a scenario without expectations.
mod run_nothing_judged;

// Run lock: held / stale takeover.
mod lock;

// Host and TCP fingerprint, socket options, contradiction checks.
mod host;

// The failover engine: retry gate, cooldowns, rotation, fallbacks, store, config.
mod engine_failover;

// The shipped monitoring: promtool and amtool on the rules, rule tests and Alertmanager config.
mod monitoring;

// The shipped dashboard's every query against a real Prometheus holding a rehearsal's scrapes.
mod monitoring_dashboard;

// The gauges the shipped alerts need: a breaker's open period, profiles cooling at the scrape.
mod metrics_alert_gauges;
// Breaker timeline derived from a committed scrape sequence (verdict helper).
mod scrape_timeline;
// The /metrics scraper against a loopback server (verdict helper).
mod scrape_scraper;
// The scraper's same-origin redirects and bearer token against loopback servers.
mod scrape_redirect;
// Report model, writers, `rehearse report` (verdict helper).
mod report;
// Report contracts for machines: `rehearse report` exit codes, JUnit XML, the JSON Schema.
mod report_contracts;
// The report's picture: the timeline's marks, rendered in headless Chromium and looked at.
mod report_render;
// The picture's request lanes from the upstream's record: every request drawn, or binned and said.
mod report_lanes;

// launchd schedule: plist, launchctl argv, checked-in example drift.
mod schedule;

// The engine executor: admission, probes, context fallback, tools, ws, speed.
mod engine_executor;

// Content self-correction retries and the degradation ladder in the model-call loop.
mod engine_ladder;

// The cooldown store: OpenClaw shape, restarts, atomic writes.
mod engine_store;

// Engine configuration errors and the cooldown preset tables.
mod engine_config;

// Mock upstream: healthy routes, control API, stats, records, CLI.
mod upstream;
// Timeline from the engine's real /metrics text (verdict helper).
mod scrape_engine;

// The control API over a socket: PUT /_rehearse/faults with arbitrary bodies (proptest).
mod upstream_control_fuzz;

// Mock upstream: every fault kind from the client side, windows, probability, profiles.
mod upstream_faults;
// When the upstream finished serving a request (`done_ms`, `whole`) on real sockets.
mod upstream_done;
// The field's faults through the embedded engine: a broken 200 stream fails its attempt, a wait
// in `headers` judged by until_retry_after, a prefill row and `when`.
mod run_field_faults;

// Mock upstream: OpenAI's exact stream shape, cut points, Retry-After dates, request log, Python SDK.
mod upstream_openai;

// The run harness: every fixture scenario passes at CI speed; README command; report shape.
mod run_scenarios;

// Synthetic health checks in a real run: marked canaries, probe spacing, disagreement.
mod run_health;

// No vacuous pass: misspelt series/labels, unproducible deps, empty or late traffic are exit 2.
mod scenario_validate;

// `[target]` / `[upstream]` validation and the speed rule for external targets.
mod scenario_target;

// Expectations validated against what the run can produce (nothing judged vacuously).
mod scenario_reach;

// SIGTERM early in weekly: the stop line, not_reached checks, not_run for an A/B's second policy.
mod run_interrupted;

// The run harness's failure paths: mutations, malformed input, SIGTERM, lock, suites, repeats.
mod run_failures;

// A scenario's [tcp] tuning on the harness's own sockets: read back, contradictions, report.
mod tcp_tuning;

// The mock upstream dying mid-run: exit 3, a report that says so, nothing left listening.
mod run_upstream_death;

// The machine sleeping mid-run (a fake pair of clocks that jumps): incomplete, saying so, never pass.
mod run_slept;

// Fake keys through `rehearse record` and `rehearse run`: none in any file or log.
mod secrets;

// Two real `rehearse run` processes on one report dir: exit 3 naming the holder; killed-run takeover.
mod run_concurrency;

// The weekly job's housekeeping: retention (--keep), batch-job series (a real Pushgateway and
// node_exporter), --on-fail.
mod weekly_ops;

/// The real-time suites keep a failing run's directory (support::run::kept_on_failure).
mod kept_runs;
