//! `rehearse matrix FILE`: every case of a matrix file (default the catalogue) against every
//! target it names, repeated, each run its own child `rehearse run` with its own report — and
//! the scorecard over them (docs/matrix.md).
//!
//! - [`file`]: the matrix file, read and checked (exit 2 at FILE:line:col).
//! - [`class`]: one run's class from its exit code and report (pure).
//! - [`facts`]: what the scorecard reads of a report.json (reason, client turns, figures,
//!   the target's header).
//! - [`plan`]: which runs may overlap (pure): timing-judged runs alone, no shared port or
//!   gateway, up to `--jobs`.
//! - [`runner`]: the child runs, their progress lines and the stop by pid.
//! - [`scorecard`]: scorecard.json's model and the cells (K of K, ranges, meets; pure).
//! - [`render`]: scorecard.md and scorecard.html.
//! - [`textfile`]: `--textfile-dir`'s per-cell series.
//!
//! Two scorecards compared (`rehearse compare`, `rehearse history`) are the history's:
//! `history::scorecard_diff` and `history::scorecards`.
//! - [`cmd`]: the CLI edge.

pub mod class;
mod cmd;
pub mod facts;
pub mod file;
pub mod plan;
pub mod render;
pub mod runner;
pub mod scorecard;
pub mod textfile;

pub(crate) use cmd::command;
pub use cmd::catalogue_cases;
