//! Writing a report directory: report.json, report.md, report.html and report.junit.xml, each
//! atomically.

use std::io;
use std::path::Path;

use super::model::Report;
use crate::util::write_atomic;

/// Writes report.json, report.md, report.html and report.junit.xml into `dir` (which must
/// exist).
pub fn write_all(dir: &Path, report: &Report) -> io::Result<()> {
    let json = serde_json::to_string_pretty(report).map_err(io::Error::other)?;
    write_atomic(&dir.join("report.json"), format!("{json}\n").as_bytes())?;
    write_rendered(dir, report)
}

/// Writes report.md, report.html and report.junit.xml (not report.json) into `dir`.
pub fn write_rendered(dir: &Path, report: &Report) -> io::Result<()> {
    write_atomic(
        &dir.join("report.md"),
        super::markdown::render(report).as_bytes(),
    )?;
    write_atomic(
        &dir.join("report.html"),
        super::html::render(report).as_bytes(),
    )?;
    write_atomic(
        &dir.join("report.junit.xml"),
        super::junit::render(report).as_bytes(),
    )
}
