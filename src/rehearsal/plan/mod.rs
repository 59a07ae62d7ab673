//! Raw `run` flags + scenario files → a validated plan: scenarios resolved and checked (traffic
//! loaded), speed, seed and policies decided, report directory chosen. Every error here is bad
//! input (exit 2) and names the file, line and column or the field.
//!
//! Every check of one scenario before a run starts anything is [`preflight`], the one function
//! `rehearse validate` calls too: a check added there is made by both.
//!
//! An external target's gateway arms are planned here once each ([`gateway::GatewayPlan`],
//! `gateway.rs`: the gateway found, its configuration with the user's as the base and checked
//! by its release in `user_config.rs`, its turns, warm-up and timeouts); the run fills in the
//! one thing a plan cannot know, its mock upstream's address. Nothing past the plan reads the
//! scenario's `[target]` table.
//!
//! Several `--target` files (`targets.rs`): each read and checked before any scenario is, then
//! every scenario planned against each, the first target's plan holding the others
//! (`ScenarioPlan::alongside`), each labelled with its file's stem.

pub(crate) mod default_dir;
mod error;
mod gateway;
mod targets;
mod user_config;

use std::path::{Path, PathBuf};

use crate::cli::{PolicyArg, RunArgs};
use crate::engine::Policy;
use crate::scenario::resolve::resolve_in;
use crate::scenario::target::{Asked, TargetKind};
use crate::scenario::target_file::TargetFile;
use crate::scenario::validate::{Checked, check_with};
use crate::util::speed::Speed;

pub use crate::rehearsal::plan::error::{PlanError, Refused, TargetFlagError};
pub use crate::rehearsal::plan::gateway::{GatewayPlan, Tokens};

/// Most model requests a run keeps in memory for the ground-truth expectations.
pub(crate) const MAX_UPSTREAM_RECORDS: usize = 200_000;

/// One scenario to run.
#[derive(Debug, Clone)]
pub struct ScenarioPlan {
    /// The checked scenario and its traffic.
    pub checked: Checked,
    /// The `--speed` divisor (checked once, where it entered).
    pub speed: Speed,
    /// The seed (`--seed`, else the scenario's).
    pub seed: u64,
    /// The policy runs, in order (`--policy`, else the scenario's `policies`).
    pub policies: Vec<Policy>,
    /// The OpenClaw versions run side by side, one arm each, in order (`--gateway-version`,
    /// else `[target] versions`); empty for one run of the one install.
    pub versions: Vec<String>,
    /// An external target's gateway arms, in order: one, or one per version of `versions`;
    /// empty for the embedded engine and a fleet.
    pub gateways: Vec<GatewayPlan>,
    /// Most model requests the upstream recorder keeps in memory for the expectations judged
    /// at the upstream ([`MAX_UPSTREAM_RECORDS`]; a test may lower it).
    pub record_cap: usize,
    /// The clocks every arm watches for the machine's sleep (the machine's; a test may give a
    /// fake that jumps).
    pub sleep_watch: crate::util::suspend::SleepWatch,
    /// Run side by side with other `--target`s: this target's label (its file's stem), which
    /// names its arms and its directory in the run's (`None`: the one target).
    pub label: Option<String>,
    /// The same scenario planned against each further `--target`, in order (empty: one
    /// target); run after this one, each into its own directory, judged into one report
    /// (`rehearsal::targets`).
    pub alongside: Vec<ScenarioPlan>,
}

impl ScenarioPlan {
    /// The scenario's name.
    pub(crate) fn name(&self) -> &str {
        &self.checked.file.name
    }

    /// Whether the system under test is a gateway outside the harness's process.
    pub(crate) fn is_external(&self) -> bool {
        !self.gateways.is_empty()
    }

    /// The kind of the system under test.
    pub(crate) fn target_kind(&self) -> TargetKind {
        self.gateways
            .first()
            .map_or(TargetKind::Embedded, |g| g.kind)
    }
}

/// The whole run.
#[derive(Debug, Clone)]
pub struct RunPlan {
    /// Scenarios in the order given (more than one = a suite).
    pub scenarios: Vec<ScenarioPlan>,
    /// Where run directories are created.
    pub report_dir: PathBuf,
    /// Plain progress lines even on a terminal.
    pub plain_progress: bool,
}

impl From<PolicyArg> for Policy {
    fn from(p: PolicyArg) -> Self {
        match p {
            PolicyArg::RetryGate => Policy::RetryGate,
            PolicyArg::Legacy => Policy::Legacy,
        }
    }
}

/// What a run of an external target needs beyond the file: speed 1 (a real gateway's timers
/// cannot be compressed) and no `--policy` (that picks an embedded policy); then its gateway
/// arms, planned ([`gateway::plan_gateways`]: an OpenClaw install whose release accepts the
/// user's config, a token in `token_env`).
fn plan_target_run(
    checked: &Checked,
    speed: Speed,
    policies: &[Policy],
    versions: &[String],
) -> Result<Vec<GatewayPlan>, Refused> {
    let kind = checked.file.target_kind();
    if !kind.is_external() {
        return Ok(Vec::new());
    }
    if speed != Speed::ONE {
        return Err(Refused::TargetSpeed {
            speed,
            kind: kind.as_str(),
        });
    }
    if !policies.is_empty() {
        return Err(Refused::PolicyWithTarget(kind.as_str()));
    }
    gateway::plan_gateways(checked, versions)
}

/// The gateway versions a run of `checked` runs side by side: `--gateway-version` (a gateway
/// the harness installs: `openclaw`, `litellm`, `portkey`; checked as `[target] versions` is),
/// else `[target] versions`. An
/// expectation scoped to a version the run does not run is refused: it would judge nothing.
fn run_versions(checked: &Checked, cli: &[String]) -> Result<Vec<String>, Refused> {
    let file = &checked.file;
    if cli.is_empty() {
        return Ok(file.target_versions().to_vec());
    }
    // A gateway the harness installs, found by version (OpenClaw's `command` pins one).
    match file.external().map(|e| e.gateway) {
        Some(Asked::Openclaw { command: Some(_), .. }) => return Err(Refused::VersionsWithCommand),
        Some(Asked::Openclaw { .. } | Asked::Litellm { .. } | Asked::Portkey { .. }) => {}
        _ => return Err(Refused::VersionsNotOpenclaw(file.target_kind().as_str())),
    }
    let max = crate::scenario::target::MAX_VERSIONS;
    if cli.len() > max {
        return Err(Refused::TooManyVersions(max));
    }
    for (i, v) in cli.iter().enumerate() {
        if let Some(why) = crate::scenario::target::version_problem(v) {
            return Err(Refused::BadVersion(why));
        }
        if cli[..i].contains(v) {
            return Err(Refused::VersionTwice(v.clone()));
        }
    }
    let scoped = file.expect.scoped_runs();
    if let Some(v) = scoped.iter().find(|v| !cli.contains(v)) {
        return Err(Refused::ScopedVersionNotRun {
            path: checked.path.clone(),
            version: v.clone(),
            given: cli.join(" --gateway-version "),
        });
    }
    Ok(cli.to_vec())
}

/// What a run is asked beside its scenario files, as far as a scenario's checks depend on it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunFlags {
    /// `--speed` (1 when not given).
    pub speed: Speed,
    /// `--policy`, in order (empty: the scenario's `policies`).
    pub policies: Vec<Policy>,
    /// `--gateway-version`, in order.
    pub gateway_versions: Vec<String>,
    /// `--seed`.
    pub seed: Option<u64>,
    /// `--target FILE`s, read and checked, in order: each replaces every scenario's
    /// `[target]`; more than one runs each scenario against each, side by side.
    pub targets: Vec<TargetFile>,
}

/// `--target FILE`s → the target files a run takes, in order ([`targets::target_files`]: each
/// read and checked, its errors at FILE:line:col, before anything runs).
pub fn target_flag(paths: &[PathBuf]) -> Result<Vec<TargetFile>, TargetFlagError> {
    targets::target_files(paths)
}

impl RunFlags {
    /// The flags of `run` (`--target` read and checked).
    pub fn of(args: &RunArgs) -> Result<Self, TargetFlagError> {
        Ok(Self {
            // A `Speed` was checked where it was made (clap's parser or `Speed::new`).
            speed: args.speed.unwrap_or_default(),
            policies: args.policies.iter().map(|&p| p.into()).collect(),
            gateway_versions: args.gateway_versions.clone(),
            seed: args.seed,
            targets: target_flag(&args.targets)?,
        })
    }
}

/// Every check a run makes of the scenario file at `path` before it starts anything, in order:
/// the file itself for a run at `flags.speed` (its values, traffic, expectations against what
/// the run can produce, located at `file:line:col`); `[prometheus]` (speed 1, its programs on
/// PATH, `promtool check rules` on its rule files); the OpenClaw versions side by side; what an
/// external target's run needs (speed 1, no `--policy`, an install whose release accepts the
/// user's config, a token). Its plan when every one passes. `rehearse validate` calls this same
/// function: a check added here is one `validate` makes too.
/// With several `--target`s the scenario is planned against each ([`targets::plan_each`]):
/// the first target's plan, the others `alongside` it.
pub fn preflight(path: &Path, flags: &RunFlags) -> Result<ScenarioPlan, Refused> {
    match flags.targets.as_slice() {
        [] => preflight_one(path, flags, None),
        [one] => preflight_one(path, flags, Some(one)),
        several => targets::plan_each(path, flags, several),
    }
}

/// [`preflight`] of `path` with `target` in place of its `[target]` (none: its own).
fn preflight_one(
    path: &Path,
    flags: &RunFlags,
    target: Option<&TargetFile>,
) -> Result<ScenarioPlan, Refused> {
    let speed = flags.speed;
    let checked = check_with(path, speed, target)?;
    if let Some(p) = &checked.file.prometheus {
        crate::detection::preflight(p, &checked.path, speed)?;
    }
    let policies = if flags.policies.is_empty() {
        checked.file.policies.clone()
    } else {
        flags.policies.clone()
    };
    let versions = run_versions(&checked, &flags.gateway_versions)?;
    let gateways = plan_target_run(&checked, speed, &flags.policies, &versions)?;
    Ok(ScenarioPlan {
        versions,
        gateways,
        seed: flags.seed.unwrap_or(checked.file.seed),
        checked,
        speed,
        policies,
        record_cap: MAX_UPSTREAM_RECORDS,
        sleep_watch: Default::default(),
        label: None,
        alongside: Vec::new(),
    })
}

/// Builds the plan from the flags.
pub fn build(args: &RunArgs) -> Result<RunPlan, PlanError> {
    if args.scenarios.is_empty() {
        return Err(PlanError::NoScenario);
    }
    let flags = RunFlags::of(args)?;
    let mut scenarios = Vec::new();
    for arg in &args.scenarios {
        let found = resolve_in(arg, args.scenarios_dir.as_deref())?;
        if let Some(note) = &found.note {
            crate::errln!("note: {note}");
        }
        let plan = preflight(&found.path, &flags).map_err(|source| PlanError::Scenario {
            arg: arg.clone(),
            source: Box::new(source),
        })?;
        scenarios.push(plan);
    }
    Ok(RunPlan {
        scenarios,
        report_dir: match &args.report_dir {
            Some(d) => d.clone(),
            None => crate::rehearsal::plan::default_dir::report_dir(),
        },
        plain_progress: args.no_progress,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speed_must_be_positive_and_finite() {
        assert_eq!(Speed::new(4.0).map(Speed::get), Ok(4.0));
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, 1e-20, 1e9, 100.5, 0.005] {
            assert!(Speed::new(bad).is_err());
        }
        // Without --speed a plan runs in real time.
        assert_eq!(RunArgs::default().speed.unwrap_or_default(), Speed::ONE);
    }

    /// The catalogue's 500-once against a target file of `kind` (written in `dir`).
    fn against(dir: &Path, kind: &str, versions: &[&str]) -> Result<ScenarioPlan, Refused> {
        let t = dir.join(format!("{kind}.toml"));
        let extra = match kind {
            "http" => "url = \"http://127.0.0.1:4000\"\n\n[upstream]\nlisten = \"127.0.0.1:18081\"\n",
            _ => "",
        };
        std::fs::write(&t, format!("[target]\nkind = \"{kind}\"\n{extra}")).unwrap();
        let flags = RunFlags {
            gateway_versions: versions.iter().map(|v| v.to_string()).collect(),
            targets: vec![TargetFile::load(&t).unwrap()],
            ..RunFlags::default()
        };
        let case = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/catalogue/500-once.toml");
        preflight(&case, &flags)
    }

    #[test]
    fn gateway_versions_are_taken_by_every_kind_the_harness_installs_and_refused_by_the_rest() {
        let d = tempfile::tempdir().unwrap();
        // Accepted: the run looks for that version's install (none here: refused by how to
        // install it, never by the kind).
        for (kind, install) in [("litellm", "install-litellm.sh"), ("portkey", "install-portkey")] {
            let e = against(d.path(), kind, &["0.0.1-none"]).unwrap_err().to_string();
            assert!(!e.contains("--gateway-version runs"), "{kind}: {e}");
            assert!(e.contains("0.0.1-none") && e.contains(install), "{kind}: {e}");
            let file = crate::scenario::validate::check_with(
                &Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/catalogue/500-once.toml"),
                Speed::ONE,
                Some(&TargetFile::load(&d.path().join(format!("{kind}.toml"))).unwrap()),
            )
            .unwrap();
            let asked = ["1.0.0".to_string(), "1.0.1".to_string()];
            assert_eq!(run_versions(&file, &asked).unwrap(), asked, "{kind}");
            // Checked as `[target] versions` is: twice is refused.
            let twice = ["1.0.0".to_string(), "1.0.0".to_string()];
            assert!(matches!(run_versions(&file, &twice), Err(Refused::VersionTwice(_))), "{kind}");
        }
        // Refused: a gateway by URL and the embedded engine are not installed by the harness.
        for kind in ["http", "embedded"] {
            let e = against(d.path(), kind, &["1.0.0"]).unwrap_err();
            assert!(matches!(e, Refused::VersionsNotOpenclaw(k) if k == kind), "{kind}: {e}");
            assert!(e.to_string().contains("openclaw, litellm, portkey"), "{e}");
        }
    }

    /// The catalogue's shape (primary `mockai/m1` on two keys, fallback `fallback/m2` on its
    /// own) makes a whole generated config for Portkey and for LiteLLM, with no file of the
    /// user's: every model of `[models]` on every profile of its provider, in the stated order.
    #[test]
    fn the_catalogues_shape_needs_no_user_config_for_portkey_or_litellm() {
        let case = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/catalogue/503-persistent.toml");
        let checked = crate::scenario::validate::check(&case).unwrap();
        let host = "http://127.0.0.1:18081";
        let config =
            crate::scenario::gateway::gateway_config(&checked.file, &checked.traffic, host).unwrap();
        let r = crate::gateway::portkey::config::generated(&config, 1).unwrap();
        let leaves: Vec<String> = r.leaves.iter().map(|l| format!("{} {}", l.path, l.label())).collect();
        assert_eq!(
            leaves,
            [
                "config.targets[0] mockai:a m1",
                "config.targets[1] mockai:b m1",
                "config.targets[2] fallback:f m2"
            ]
        );
        let targets = r.config["targets"].as_array().unwrap();
        assert_eq!(r.config["strategy"]["mode"], "fallback");
        for (t, (key, model)) in targets.iter().zip([
            ("sk-rehearse-key-A", "m1"),
            ("sk-rehearse-key-B", "m1"),
            ("sk-rehearse-key-F", "m2"),
        ]) {
            assert_eq!(t["provider"], "openai", "{t}");
            assert_eq!(t["api_key"], key, "{t}");
            assert_eq!(t["custom_host"], format!("{host}/v1"), "{t}");
            assert_eq!(t["override_params"]["model"], model, "{t}");
            assert_eq!(t["retry"]["attempts"], 1, "{t}");
        }
        let router = crate::gateway::litellm::RouterSettings::default();
        let v = crate::gateway::litellm::config::generate(&config, &router, "sk-master");
        let deployments: Vec<(String, String, u64)> = v["model_list"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| {
                let p = &d["litellm_params"];
                (
                    d["model_name"].as_str().unwrap().to_string(),
                    p["api_key"].as_str().unwrap().to_string(),
                    p["order"].as_u64().unwrap(),
                )
            })
            .collect();
        let d = |m: &str, k: &str, o| (m.to_string(), k.to_string(), o);
        assert_eq!(
            deployments,
            [
                d("mockai/m1", "sk-rehearse-key-A", 1),
                d("mockai/m1", "sk-rehearse-key-B", 2),
                d("fallback/m2", "sk-rehearse-key-F", 1)
            ]
        );
        assert_eq!(
            v["router_settings"]["fallbacks"],
            serde_json::json!([{"mockai/m1": ["fallback/m2"]}])
        );
    }

    #[test]
    fn missing_scenario_is_an_error_and_policy_flags_map_to_engine_policies() {
        assert!(build(&RunArgs::default()).is_err());
        assert_eq!(Policy::from(PolicyArg::Legacy), Policy::Legacy);
        assert_eq!(Policy::from(PolicyArg::RetryGate), Policy::RetryGate);
    }
}
