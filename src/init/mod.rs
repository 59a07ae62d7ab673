//! `rehearse init [DIR] [--gateway G]`: a starter project — `scenarios/NAME.toml` for that
//! gateway, its traffic in `traffic/NAME.jsonl`, a four-line `README.md` saying how to set up,
//! run and schedule it — that validates and runs as written. It never overwrites: when any of its
//! files exists, nothing is written and the command exits 2 naming it.
//!
//! A gateway's starter is one arm of [`starter`]: a new gateway is one more arm.

use std::path::{Path, PathBuf};

use anyhow::anyhow;

use crate::cli::{InitArgs, InitGateway};
use crate::exit::{CmdError, CmdResult, Status};

/// The files of one starter project, relative to its directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Starter {
    /// The scenario's name (its file stem).
    pub name: &'static str,
    /// The scenario file's text.
    pub scenario: String,
    /// The traffic file's text.
    pub traffic: String,
    /// The README's "set up" line: what to do before the first run.
    pub setup: &'static str,
}

impl Starter {
    /// `(relative path, content)` of every file, in the order written.
    pub(crate) fn files(&self) -> Vec<(PathBuf, String)> {
        vec![
            (
                PathBuf::from(format!("scenarios/{}.toml", self.name)),
                self.scenario.clone(),
            ),
            (
                PathBuf::from(format!("traffic/{}.jsonl", self.name)),
                self.traffic.clone(),
            ),
            (PathBuf::from("README.md"), self.readme()),
        ]
    }

    /// The schedule command, run from the project's directory.
    pub(crate) fn schedule_command(&self) -> String {
        format!(
            "rehearse schedule install --scenario {} --weekday 1 --hour 3 --minute 0",
            self.name
        )
    }

    /// Four lines: what it is, how to set up, run, and schedule it.
    pub(crate) fn readme(&self) -> String {
        format!(
            "# rehearse: `{name}` (scenarios/{name}.toml, traffic in traffic/)\n\
             Set up: {setup}\n\
             Run from this directory: `rehearse --scenario {name}` (check it first: `rehearse validate {name}`).\n\
             Weekly on a Mac, from this directory: `{schedule}`\n",
            name = self.name,
            setup = self.setup,
            schedule = self.schedule_command(),
        )
    }
}

/// The HTTP starter's scenario and traffic.
const HTTP_SCENARIO: &str = include_str!("templates/http.toml");
const HTTP_TRAFFIC: &str = include_str!("templates/http.jsonl");

/// The built-in the OpenClaw starter is made from (run against a real OpenClaw by the
/// gateway suite), its traffic, and the starter's name.
const OPENCLAW_FROM: &str = "openclaw-503-window";
const OPENCLAW_TRAFFIC: &str = "openclaw-three-turns";
const OPENCLAW_NAME: &str = "my-openclaw-503";

/// The starter project of `gateway`.
pub(crate) fn starter(gateway: InitGateway) -> Result<Starter, String> {
    match gateway {
        InitGateway::Http => Ok(Starter {
            name: "my-gateway-503",
            scenario: HTTP_SCENARIO.to_string(),
            traffic: HTTP_TRAFFIC.to_string(),
            setup: "serve your gateway at http://127.0.0.1:18789 with its provider's base URL \
                    http://127.0.0.1:18790/v1 and key sk-rehearse-key-A (the scenario's comments \
                    say more).",
        }),
        InitGateway::Openclaw => openclaw_starter(),
    }
}

/// The built-in `openclaw-503-window` under the starter's name, its traffic beside it.
fn openclaw_starter() -> Result<Starter, String> {
    let text = crate::builtin::scenario_text(OPENCLAW_FROM)
        .ok_or_else(|| format!("the built-in `{OPENCLAW_FROM}` is missing"))?;
    let traffic_rel = format!("traffic/{OPENCLAW_TRAFFIC}.jsonl");
    let traffic = crate::builtin::files()
        .iter()
        .find(|f| f.rel == traffic_rel)
        .and_then(|f| std::str::from_utf8(f.bytes).ok())
        .ok_or_else(|| format!("the built-in traffic {traffic_rel} is missing"))?;
    let mut out = String::from(
        "# Made by `rehearse init --gateway openclaw` from the built-in `openclaw-503-window`.\n\
         # It runs a real OpenClaw gateway: `rehearse gateway install openclaw` installs the pinned\n\
         # one and prints the path to export as REHEARSE_OPENCLAW (or set [target] command).\n",
    );
    let mut replaced = 0;
    for line in text.lines() {
        let new = if line.starts_with("name = ") {
            format!("name = \"{OPENCLAW_NAME}\"")
        } else if line.starts_with("traffic = ") {
            format!("traffic = \"../traffic/{OPENCLAW_NAME}.jsonl\"")
        } else {
            out.push_str(line);
            out.push('\n');
            continue;
        };
        replaced += 1;
        out.push_str(&new);
        out.push('\n');
    }
    if replaced != 2 {
        return Err(format!(
            "the built-in `{OPENCLAW_FROM}` has no one `name =` and `traffic =` line each"
        ));
    }
    Ok(Starter {
        name: OPENCLAW_NAME,
        scenario: out,
        traffic: traffic.to_string(),
        setup: "`rehearse gateway install openclaw`, then `export REHEARSE_OPENCLAW=PATH` with \
                the path it prints (needs npm: `brew install node` or `apt-get install npm`).",
    })
}

/// The first of `files` that already exists under `dir`.
pub(crate) fn first_existing(dir: &Path, files: &[(PathBuf, String)]) -> Option<PathBuf> {
    files
        .iter()
        .map(|(rel, _)| dir.join(rel))
        .find(|p| p.symlink_metadata().is_ok())
}

/// Runs `rehearse init`.
pub(crate) fn command(args: InitArgs) -> CmdResult {
    let starter = starter(args.gateway).map_err(|e| CmdError::harness(anyhow!(e)))?;
    let files = starter.files();
    if args.dir.exists() && !args.dir.is_dir() {
        return Err(CmdError::bad_input(anyhow!(
            "{} is not a directory; nothing was written",
            args.dir.display()
        )));
    }
    if let Some(p) = first_existing(&args.dir, &files) {
        return Err(CmdError::bad_input(anyhow!(
            "{} already exists: `rehearse init` never overwrites a file (choose another DIR, \
             or move it away); nothing was written",
            p.display()
        )));
    }
    for (rel, text) in &files {
        let path = args.dir.join(rel);
        write_new(&path, text).map_err(|e| {
            let code = if e.kind() == std::io::ErrorKind::AlreadyExists {
                2
            } else {
                3
            };
            CmdError {
                code,
                error: anyhow!("writing {}: {e}", path.display()),
            }
        })?;
        crate::outln!("wrote {}", path.display());
    }
    let dir = args.dir.display();
    crate::outln!("next, from {dir}:");
    crate::outln!("  rehearse validate {}", starter.name);
    crate::outln!("  rehearse --scenario {}", starter.name);
    crate::outln!("  {}", starter.schedule_command());
    Ok(Status::Pass)
}

/// Creates `path` (and its directory) holding `text`; an existing file is an error, never
/// replaced (`create_new`: also when it appears between the check and the write).
fn write_new(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d)?;
    }
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    f.write_all(text.as_bytes())?;
    f.sync_all()
}

#[cfg(test)]
mod tests;
