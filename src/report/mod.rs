//! The run report: the [`model::Report`] behind report.json (its JSON Schema is
//! `docs/report.schema.json`), builders that derive the A/B numbers and the whole per-policy
//! section from scrapes ([`build`]), the Markdown ([`markdown`]) and self-contained HTML + SVG
//! ([`html`], [`svg`]) renderers (the per-policy tables shared via [`table`], the opening lines —
//! stop, verdict, traffic cut — via [`lead`]) and the JUnit XML for CI ([`junit`]), written
//! atomically by [`write_all`]; [`judge`] is the one judge of every kind of run (statuses,
//! verdict, reason); [`counts`] tallies checks the same way for every output.
//! `rehearse report RUN_DIR` re-renders md, html and JUnit from report.json and exits with its
//! verdict. [`housekeeping`]: what the run did after its report (retention, batch-job metrics,
//! `--on-fail`), said in the report. [`versions`]: OpenClaw versions side by side and their
//! behaviour-diff table; [`targets`]: several `--target` files side by side, the same table
//! generalised (the rows and the table both share: `side_by_side`); `target_section`: one
//! target's block, which both repeat per arm. [`gateway_setup`]: how an `http` target's gateway is pointed at the
//! mock upstream. [`requests`]: the picture's request lanes, built from the one upstream
//! recorder's record for every kind of run (`policies[].requests`). [`turns_md`]: report.md's
//! "Turns" section (the rows are `verdict::turns`, `policies[].turns`).

pub mod build;
mod cmd;
pub mod counts;
pub mod drift;
pub(crate) mod drift_render;
pub mod figures;
pub(crate) mod fault_window;
pub(crate) mod gateway_setup;
pub(crate) mod fleet;
pub(crate) mod fleet_model;
pub mod housekeeping;
pub mod html;
pub(crate) mod judge;
pub(crate) mod junit;
pub(crate) mod lead;
pub mod markdown;
pub mod marks;
pub mod model;
pub mod requests;
pub(crate) mod request_summary;
pub(crate) mod status;
pub mod svg;
pub mod table;
pub(crate) mod target;
mod side_by_side;
pub(crate) mod summary;
pub(crate) mod target_section;
pub mod targets;
pub mod targets_model;
pub(crate) mod turns_md;
pub mod versions;
pub mod versions_model;
pub(crate) mod write;

pub use build::{PolicyInput, build_policy, summary_from};
pub(crate) use build::rfc3339;
pub(crate) use cmd::command;
pub use model::{
    FaultWindow, PolicyReport, PolicyStatus, ProfileInfo, ReplayInfo, Report, SCHEMA_VERSION,
    Stopped, Summary, TimeBase, UpstreamCap, Verdict,
};
pub use write::{write_all, write_rendered};
