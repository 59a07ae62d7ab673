//! The run history of a report dir: the listing of its run directories ([`list`]: every entry
//! read once, a note for what is not a readable run — the API other commands reuse), one row
//! per entry ([`rows`]), `rehearse history` with its index pages ([`index`], [`cmd`]), drift
//! against the previous runs ([`drift`]) and `rehearse compare` ([`compare`]); the scorecards
//! of `rehearse matrix` under the same report dir ([`scorecards`]) and two of them compared
//! ([`scorecard_diff`]).

pub mod baseline;
mod cmd;
pub mod compare;
pub mod drift;
pub mod index;
pub mod list;
pub mod rows;
pub mod scorecard_diff;
pub mod scorecards;

pub(crate) use cmd::{compare_command, history_command};
pub use list::{EntryKind, Note, RunEntry, list_runs, parse_report, read_run, run_stamp};
