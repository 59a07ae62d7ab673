//! The run report (DESIGN 9): the [`model::Report`] behind report.json, builders that derive the
//! A/B numbers and the whole per-policy section from scrapes ([`build`]), and the Markdown
//! ([`markdown`]) and self-contained HTML + SVG ([`html`], [`svg`]) renderers (the per-policy tables shared via [`table`],
//! the opening lines — stop, tally, traffic cut — via [`lead`]), written
//! atomically by [`write_all`]. `rehearse report RUN_DIR` re-renders md/html from report.json.

pub mod build;
mod cmd;
pub mod fault_window;
pub mod html;
pub mod lead;
pub mod markdown;
pub mod marks;
pub mod model;
pub mod status;
pub mod svg;
pub mod table;
pub mod write;

pub use build::{PolicyRun, build_policy, rfc3339, summary_from};
pub use cmd::command;
pub use model::{
    FaultWindow, PolicyReport, PolicyStatus, ProfileInfo, ReplayInfo, Report, SCHEMA_VERSION,
    Stopped, Summary, TimeBase, Verdict,
};
pub use write::{write_all, write_rendered};
