//! `rehearse list` (`rehearse validate`, the run's preflight, is [`crate::validate`]).

use std::path::PathBuf;

use anyhow::anyhow;

use super::format::ScenarioFile;
use super::resolve::scenario_dirs;
use crate::cli::ListArgs;
use crate::exit::{CmdError, CmdResult, Status};

/// Runs `rehearse list`: every scenario of the directory with its description.
pub(crate) fn list_command(args: ListArgs) -> CmdResult {
    let dir = match args.dir {
        Some(d) => d,
        None => scenario_dirs()
            .into_iter()
            .find(|d| d.is_dir())
            .ok_or_else(|| CmdError::bad_input(anyhow!("no fixtures/scenarios directory found")))?,
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| CmdError::bad_input(anyhow!("{}: {e}", dir.display())))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    let rows: Vec<(String, String)> = files
        .iter()
        .map(|p| {
            let stem = p
                .file_stem()
                .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
            match ScenarioFile::load(p) {
                Ok(s) => (stem, s.description),
                Err(e) => (stem, format!("(invalid: {e})")),
            }
        })
        .collect();
    let width = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
    for (name, desc) in rows {
        crate::outln!("{name:width$}  {desc}");
    }
    Ok(Status::Pass)
}
