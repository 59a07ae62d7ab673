//! `rehearse validate NAME|PATH...`: traffic and fault files checked as the run reads them, and
//! a scenario checked by the run's own preflight ([`preflight`]: the file at the run's speed,
//! `[prometheus]` with promtool, what its target needs), so `validate` refuses exactly what a
//! run with the same flags would refuse before starting, with the same located errors.

use std::path::{Path, PathBuf};

use anyhow::anyhow;

use crate::cli::ValidateArgs;
use crate::exit::{CmdError, CmdResult, Status};
use crate::rehearsal::plan::{Refused, RunFlags, preflight};
use crate::scenario::ScenarioFile;
use crate::scenario::resolve::{NotFound, is_path, resolve_in};
use crate::util::text::{count, plural};
use crate::verdict::Expectations;

/// What a file given to `validate` is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FileKind {
    Scenario,
    Traffic,
    Faults,
}

fn kind_of(path: &Path, text: &str) -> FileKind {
    match path.extension().and_then(|e| e.to_str()) {
        Some("jsonl") => FileKind::Traffic,
        Some("json") => FileKind::Faults,
        _ => {
            // A TOML file holding nothing but `[[fault]]` tables is a fault file.
            let only_faults = toml::from_str::<toml::Table>(text)
                .is_ok_and(|t| !t.is_empty() && t.keys().all(|k| k == "fault"));
            if only_faults {
                FileKind::Faults
            } else {
                FileKind::Scenario
            }
        }
    }
}

/// Why one file of `rehearse validate` is bad; printed as its `error:` line.
#[derive(Debug, thiserror::Error)]
enum FileError {
    #[error(transparent)]
    NotFound(#[from] NotFound),
    #[error("{origin}: {source}")]
    Read {
        origin: String,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Traffic(#[from] crate::replay::traffic::TrafficError),
    #[error("{0}: the traffic file has no requests (a run would send nothing)")]
    NoTraffic(String),
    #[error(transparent)]
    FaultFile(#[from] crate::upstream::faults::FaultFileError),
    #[error("{origin}: fault[{index}]: {source}")]
    Fault {
        origin: String,
        index: usize,
        #[source]
        source: crate::upstream::faults::FaultError,
    },
    /// What the run would refuse before starting (the scenario file first).
    #[error(transparent)]
    Refused(#[from] Refused),
}

/// Checks one file (a scenario as a run with `flags` would, by [`preflight`]); Ok(summary
/// line). Warnings are printed as found.
fn validate_one(path: &Path, flags: &RunFlags) -> Result<String, FileError> {
    let origin = crate::builtin::shown(path);
    let text = std::fs::read_to_string(path).map_err(|source| FileError::Read {
        origin: origin.clone(),
        source,
    })?;
    match kind_of(path, &text) {
        FileKind::Traffic => {
            let lines = crate::replay::traffic::parse_traffic(&text, &origin)?;
            if lines.is_empty() {
                return Err(FileError::NoTraffic(origin));
            }
            Ok(format!(
                "{origin}: traffic, {}",
                count(lines.len(), "request")
            ))
        }
        FileKind::Faults => {
            let faults = crate::upstream::parse_fault_file(&text, &origin)?;
            for (index, f) in faults.iter().enumerate() {
                f.validate().map_err(|source| FileError::Fault {
                    origin: origin.clone(),
                    index,
                    source,
                })?;
            }
            Ok(format!("{origin}: {}", count(faults.len(), "fault")))
        }
        FileKind::Scenario => {
            let plan = preflight(path, flags)?;
            let checked = &plan.checked;
            for w in &checked.warnings {
                crate::errln!("warning: {origin}: {w}");
            }
            let cut = match checked.beyond_duration {
                0 => String::new(),
                n => format!(" ({n} after `duration`, left out)"),
            };
            let f = &checked.file;
            Ok(format!(
                "{origin}: scenario `{}`, {}{cut}, {}, {}{}",
                f.name,
                count(checked.traffic.len(), "request"),
                count(f.fault.len(), "fault"),
                if !f.target_versions().is_empty() {
                    // OpenClaw versions side by side: one run per version, as the report counts.
                    checks_line(f, f.target_versions())
                } else if f.is_external() {
                    format!(
                        "{} in the {} run",
                        count(f.expect.len(), "expectation"),
                        f.target_kind().as_str()
                    )
                } else {
                    checks_line(f, &run_names(f))
                },
                match (&checked.target_file, plan.alongside.as_slice()) {
                    (Some(t), []) => format!(", target from {}", t.path),
                    (_, []) => String::new(),
                    _ => format!(
                        ", side by side against {}",
                        plan.each_target()
                            .filter_map(|p| p.checked.target_file.as_ref().map(|t| t.path.as_str()))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                }
            ))
        }
    }
}

/// `7 expectations, 8 checks over 2 policy runs (legacy 4, retry-gate 4)`: a check is one
/// expectation in one policy run, what the report counts (it adds a row for each unexpected
/// transition it observes).
fn checks_line(file: &ScenarioFile, runs: &[String]) -> String {
    let expect = &file.expect;
    let per: Vec<(&String, usize)> = runs
        .iter()
        .map(|p| (p, checks_of(&file.expect_for(p))))
        .collect();
    let total: usize = per.iter().map(|(_, n)| n).sum();
    let runs = match per.as_slice() {
        [(p, _)] => format!("in the {p} run"),
        _ => format!(
            "over {} ({})",
            plural(per.len(), "policy run", "policy runs"),
            per.iter()
                .map(|(p, n)| format!("{p} {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    format!(
        "{}, {} {runs}",
        count(expect.len(), "expectation"),
        count(total, "check")
    )
}

/// The runs a scenario makes: its policies, or a fleet's coordination runs.
fn run_names(f: &ScenarioFile) -> Vec<String> {
    if f.fleet.is_fleet() {
        f.fleet
            .coordination
            .iter()
            .map(|c| c.as_str().to_string())
            .collect()
    } else {
        f.policies.iter().map(|p| p.as_str().to_string()).collect()
    }
}

/// Report rows `e` makes: one per table, but one per bound of an `[[expect.fleet]]`, and two for
/// an `[[expect.attempts]]` with both count and host bounds.
fn checks_of(e: &Expectations) -> usize {
    let bounds: usize = e
        .fleet
        .iter()
        .map(|f| {
            [
                f.max_probes_per_interval.is_some(),
                f.max_probes_per_host_per_interval.is_some(),
                f.min_probes_per_interval.is_some(),
                f.min_close_hosts.is_some(),
                f.agree_within.is_some(),
                f.max_probes_per_spell.is_some(),
                f.rejoin_within.is_some(),
            ]
            .iter()
            .filter(|b| **b)
            .count()
        })
        .sum();
    let both = e
        .attempts
        .iter()
        .filter(|a| {
            a.equals.or(a.at_least).or(a.at_most).is_some()
                && a.hosts_at_least.or(a.hosts_at_most).is_some()
        })
        .count();
    e.len() - e.fleet.len() + bounds + both
}

/// `validate`'s argument → a file: an existing file, or anything with a separator or an
/// extension, is a path; a bare word (or `builtin:NAME`) is a scenario NAME resolved as
/// `--scenario NAME` is, in `dir` (`--scenarios-dir`) then the built-ins.
fn locate(arg: &Path, dir: Option<&Path>) -> Result<PathBuf, FileError> {
    let name = arg.to_str().filter(|s| {
        s.starts_with(crate::builtin::PREFIX)
            || (!arg.exists() && !is_path(s) && arg.extension().is_none())
    });
    match name {
        Some(name) => {
            let found = resolve_in(name, dir)?;
            if let Some(note) = &found.note {
                crate::errln!("note: {note}");
            }
            Ok(found.path)
        }
        None => Ok(arg.to_path_buf()),
    }
}

/// Runs `rehearse validate`: every file checked, one `ok:` or `error:` line each; exit 2 if
/// any failed.
pub(crate) fn command(args: ValidateArgs) -> CmdResult {
    let targets = crate::rehearsal::plan::target_flag(&args.targets).map_err(|e| {
        crate::errln!("error: {e}");
        CmdError::bad_input(anyhow!("the target file failed validation"))
    })?;
    let flags = RunFlags {
        speed: args.speed.unwrap_or_default(),
        policies: args.policies.iter().map(|&p| p.into()).collect(),
        gateway_versions: args.gateway_versions.clone(),
        seed: None,
        targets,
    };
    let mut bad = 0usize;
    for arg in &args.paths {
        match locate(arg, args.scenarios_dir.as_deref()).and_then(|path| validate_one(&path, &flags)) {
            Ok(line) => crate::outln!("ok: {line}"),
            Err(line) => {
                bad += 1;
                crate::errln!("error: {line}");
            }
        }
    }
    if bad > 0 {
        return Err(CmdError::bad_input(anyhow!(
            "{bad} of {} failed validation",
            count(args.paths.len(), "file")
        )));
    }
    Ok(Status::Pass)
}
