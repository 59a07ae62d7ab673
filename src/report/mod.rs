//! Report writers: Markdown, JSON, HTML+SVG (DESIGN section 9). Not built yet.

mod cmd;
pub use cmd::command;
