//! Fleet mode (docs/coordinator.md): a scenario with `[fleet] hosts = N > 1` runs N gateway
//! hosts as separate OS processes — each its own engine, breakers and `/metrics`, its share of
//! the traffic split by session — against one mock upstream, once per `coordination`
//! (`none`: each host decides alone; `redis`: they share probe leases, breaker state and
//! cooldowns through Redis), and reports them side by side like `policies`.
//!
//! # Layout (the same roles as `embedded/` and `gateway/`)
//! - `arms`: the entry — every coordination run of a scenario → one `Observation` each (h0's
//!   scrapes and transitions, the other hosts' transitions, every final scrape merged, the
//!   `[[expect.fleet]]` rows) and the `fleet` section as its report part.
//! - `run`: one coordination run on the arm lifecycle ([`crate::rehearsal::arm`]): the
//!   coordinator, the hosts, their scrapers, the coordinator faults; `error`: its harness
//!   failure.
//! - `spec`: what a host process is told, its stdio protocol, the traffic split; `host`: the
//!   host process (`rehearse __fleet-host`, hidden); `launch`: starting one.
//! - `redis_server`: the redis-server a run starts itself; `coordinator_check`: the
//!   `[coordinator] url` Redis answers `PING` before the run, or the run is refused; `faults`:
//!   coordinator faults (`route = "coordinator"`: `down`, `latency`).
//! - `checks`: the fleet checks, pure; `report`: the report's `fleet` section; `expect`:
//!   `[[expect.fleet]]` against them.

pub(crate) mod arms;
pub(crate) mod checks;
pub(crate) mod coordinator_check;
mod error;
pub(crate) mod expect;
pub(crate) mod faults;
pub(crate) mod host;
mod launch;
pub(crate) mod redis_server;
pub(crate) mod report;
pub(crate) mod run;
pub(crate) mod spec;

pub(crate) use arms::run_fleet_scenario;
