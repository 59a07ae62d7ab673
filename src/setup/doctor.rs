//! `rehearse doctor`: every program a run (or an install) may need from PATH, where it is and its
//! version, and which scenarios need it; the OpenClaw install the `openclaw` scenarios run. With
//! `--scenario`, only those scenarios, and exit 2 when one of their needs is missing (naming the
//! package to install); without, a report that exits 0.

use std::collections::BTreeMap;

use anyhow::anyhow;

use super::tools::{self, ALERTMANAGER, PROMETHEUS, PROMTOOL, REDIS, Tool};
use crate::cli::DoctorArgs;
use crate::exit::{CmdError, CmdResult, Status};
use crate::scenario::ScenarioFile;
use crate::scenario::target::TargetKind;

/// What a scenario needs beyond the binary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Need {
    /// A program from PATH (by its name in [`tools::TOOLS`]).
    Tool(&'static str),
    /// An OpenClaw install.
    Openclaw,
    /// A LiteLLM install.
    Litellm,
}

/// The needs of one scenario, from its tables.
pub(crate) fn needs(file: &ScenarioFile) -> Vec<Need> {
    let mut out = Vec::new();
    if let Some(p) = &file.prometheus
        && p.spawn
    {
        out.push(Need::Tool(PROMETHEUS.name));
        if !p.rules.is_empty() {
            out.push(Need::Tool(PROMTOOL.name));
        }
        if p.alertmanager {
            out.push(Need::Tool(ALERTMANAGER.name));
        }
    }
    if file.fleet.is_fleet() && file.coordinator.as_ref().is_some_and(|c| c.spawn) {
        out.push(Need::Tool(REDIS.name));
    }
    if file.target_kind() == TargetKind::Openclaw {
        out.push(Need::Openclaw);
    }
    if file.target_kind() == TargetKind::Litellm {
        out.push(Need::Litellm);
    }
    out
}

/// What needs a program besides scenarios.
fn also_for(tool: &Tool) -> Option<&'static str> {
    match tool.name {
        "npm" => Some("`gateway install openclaw`"),
        "python3" => Some("`gateway install openai-sdk`"),
        "node" => Some("an OpenClaw without a node beside it"),
        "promtool" => Some("checking rule files"),
        _ => None,
    }
}

/// The scenarios to look at: `--scenario` ones, else every one `rehearse list` shows.
fn scenarios(args: &DoctorArgs) -> Result<Vec<(String, ScenarioFile)>, CmdError> {
    let dir = args.scenarios_dir.as_deref();
    let mut out = Vec::new();
    if !args.scenarios.is_empty() {
        for arg in &args.scenarios {
            let found =
                crate::scenario::resolve::resolve_in(arg, dir).map_err(CmdError::bad_input)?;
            let file = ScenarioFile::load(&found.path).map_err(CmdError::bad_input)?;
            out.push((arg.clone(), file));
        }
        return Ok(out);
    }
    let dirs = crate::scenario::resolve::user_dirs(dir).map_err(CmdError::bad_input)?;
    let builtins = crate::builtin::names();
    let all = crate::scenario::list::sources(
        &dirs,
        &builtins,
        &crate::scenario::resolve::differs_from_builtin,
    );
    for (name, source) in all {
        let parsed = match source {
            crate::scenario::list::Source::Builtin => crate::builtin::scenario_text(&name)
                .map(|t| ScenarioFile::parse(t, &format!("builtin:{name}.toml"))),
            crate::scenario::list::Source::User { path, .. } => Some(ScenarioFile::load(&path)),
        };
        match parsed {
            Some(Ok(f)) => out.push((name, f)),
            Some(Err(e)) => crate::errln!("warning: {e} (left out)"),
            None => {}
        }
    }
    Ok(out)
}

/// Runs `rehearse doctor`.
pub(crate) fn command(args: DoctorArgs) -> CmdResult {
    let chosen = !args.scenarios.is_empty();
    let scenarios = scenarios(&args)?;
    let mut by_need: BTreeMap<Need, Vec<&str>> = BTreeMap::new();
    for (name, file) in &scenarios {
        for n in needs(file) {
            by_need.entry(n).or_default().push(name);
        }
    }
    match crate::util::cache::root() {
        Some(c) => crate::outln!("cache: {}", c.display()),
        None => crate::outln!("cache: none ({})", crate::util::cache::NO_ROOT),
    }
    let mut missing: Vec<String> = Vec::new();
    let mut rows: Vec<[String; 4]> = vec![[
        "program".into(),
        "found".into(),
        "version".into(),
        "needed by".into(),
    ]];
    for tool in &tools::TOOLS {
        let users = by_need.get(&Need::Tool(tool.name));
        let mut why: Vec<String> = users.map_or_else(Vec::new, |u| vec![u.join(", ")]);
        if !chosen && let Some(a) = also_for(tool) {
            why.push(a.to_string());
        }
        let (found, version) = match tools::find(tool) {
            Some(p) => {
                let v = tools::version_of(&p, tool.version_flag).unwrap_or_else(|| "?".into());
                (p.display().to_string(), v)
            }
            None => {
                if chosen && users.is_some() {
                    missing.push(
                        tools::Missing {
                            tool: *tool,
                            why: None,
                        }
                        .to_string(),
                    );
                }
                (format!("missing ({})", tool.install_hint()), "-".into())
            }
        };
        rows.push([tool.name.into(), found, version, why.join("; ")]);
    }
    if !chosen || by_need.contains_key(&Need::Openclaw) {
        let (found, version) = match crate::gateway::openclaw::Install::find(None) {
            Ok(i) => (i.openclaw.display().to_string(), i.openclaw_version),
            Err(e) => {
                if by_need.contains_key(&Need::Openclaw) && chosen {
                    missing.push(e.to_string());
                }
                (
                    "missing ($REHEARSE_OPENCLAW, PATH; `rehearse gateway install openclaw`)".into(),
                    "-".into(),
                )
            }
        };
        let users = by_need
            .get(&Need::Openclaw)
            .map_or_else(String::new, |u| u.join(", "));
        rows.push(["openclaw".into(), found, version, users]);
    }
    if !chosen || by_need.contains_key(&Need::Litellm) {
        let (found, version) = match crate::gateway::litellm::Install::find() {
            Ok(i) => (i.litellm.display().to_string(), i.version),
            Err(e) => {
                if by_need.contains_key(&Need::Litellm) && chosen {
                    missing.push(e.to_string());
                }
                (
                    "missing ($REHEARSE_LITELLM; `rehearse gateway install litellm`)".into(),
                    "-".into(),
                )
            }
        };
        let users = by_need
            .get(&Need::Litellm)
            .map_or_else(String::new, |u| u.join(", "));
        rows.push(["litellm".into(), found, version, users]);
    }
    let w: Vec<usize> = (0..3)
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    for r in &rows {
        let line = format!(
            "{:w0$}  {:w1$}  {:w2$}  {}",
            r[0],
            r[1],
            r[2],
            r[3],
            w0 = w[0],
            w1 = w[1],
            w2 = w[2]
        );
        crate::outln!("{}", line.trim_end());
    }
    if let Some(c) = crate::util::cache::root() {
        let installed: Vec<String> = super::inventory::scan(&c)
            .iter()
            .filter(|e| e.kind != super::inventory::Kind::Builtin)
            .map(|e| format!("{} {}", e.kind.as_str(), e.version))
            .collect();
        if !installed.is_empty() {
            crate::outln!("in the cache: {} (`rehearse gateway list`)", installed.join(", "));
        }
    }
    if missing.is_empty() {
        return Ok(Status::Pass);
    }
    Err(CmdError::bad_input(anyhow!(
        "the scenarios given need what is missing:\n  {}",
        missing.join("\n  ")
    )))
}

/// For tests: the needs of every built-in, by name.
#[cfg(test)]
fn builtin_needs() -> BTreeMap<String, Vec<Need>> {
    crate::builtin::names()
        .into_iter()
        .filter_map(|n| {
            let f = ScenarioFile::parse(crate::builtin::scenario_text(n)?, n).ok()?;
            Some((n.to_string(), needs(&f)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn needs_come_from_the_scenarios_tables() {
        let all = builtin_needs();
        assert_eq!(all["smoke"], []);
        assert_eq!(
            all["weekly"],
            [Need::Tool("prometheus"), Need::Tool("alertmanager")]
        );
        assert!(all["fleet-probe-storm"].contains(&Need::Tool("redis-server")));
        assert_eq!(all["openclaw-503-window"], [Need::Openclaw]);
        assert_eq!(all["litellm-503-key-a"], [Need::Litellm]);
        let text = "name = \"x\"\nduration = \"10s\"\ntraffic = \"t.jsonl\"\n\
                    [prometheus]\nspawn = true\nrules = [\"r.yml\"]\n";
        let f = ScenarioFile::parse(text, "x").unwrap();
        assert_eq!(needs(&f), [Need::Tool("prometheus"), Need::Tool("promtool")]);
    }
}
