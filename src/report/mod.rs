//! The run report (DESIGN 9): the [`model::Report`] behind report.json, builders that derive the
//! A/B numbers from scrapes, and the Markdown / HTML+SVG writers. `rehearse report RUN_DIR`
//! re-renders the Markdown and HTML from report.json.

mod cmd;
pub mod model;

pub use cmd::command;
pub use model::{PolicyReport, Report, Summary, Verdict};
