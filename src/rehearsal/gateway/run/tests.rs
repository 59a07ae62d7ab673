use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;

use super::{cut, run_arm};
use crate::gateway::openclaw::GatewayConfig;
use crate::gateway::{Facts, StartError, Supervised, Supervisor};
use crate::rehearsal::arm::RunFiles;
use crate::rehearsal::observation::KindPart;
use crate::rehearsal::plan::{RunFlags, preflight};
use crate::scenario::gateway::UPSTREAM_SLOT;
use crate::util::shutdown::Shutdown;

#[test]
fn a_stop_while_turns_are_out_is_a_stop_whatever_duration_says() {
    // 8 s into a 3 s scenario with turns still out (the external run waits for them).
    assert!(cut(2, 8_000, 3_000));
    // Every turn back, the run waiting out `duration`: a stop before it is a stop.
    assert!(cut(0, 2_000, 3_000));
    // Every turn back and `duration` passed: the run had finished.
    assert!(!cut(0, 8_000, 3_000));
}

/// A gateway that keeps the configuration it is started with, and starts nothing.
#[derive(Debug, Default)]
struct Recorder(Mutex<Vec<Option<GatewayConfig>>>);

impl Supervisor for Recorder {
    fn facts(&self) -> Facts {
        Facts {
            name: "recorder".into(),
            configured: true,
            ..Facts::default()
        }
    }

    fn start<'a>(
        &'a self,
        config: Option<&'a GatewayConfig>,
        _dir: &'a Path,
    ) -> BoxFuture<'a, Result<Box<dyn Supervised>, StartError>> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(config.cloned());
        Box::pin(async { Err(StartError::new("the recorder starts nothing", Vec::new())) })
    }

    fn says(&self) -> Option<String> {
        None
    }
}

/// A stand-in OpenClaw install in `dir` (an `openclaw` and a `node` that only say their
/// versions) and a one-turn scenario of it with two providers (a fallback); the scenario's path.
#[cfg(unix)]
fn scenario(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let exe = dir.join("openclaw");
    for (f, text) in [
        (&exe, "#!/bin/sh\necho 'OpenClaw 2026.9.6 (stand-in)'\n"),
        (&dir.join("node"), "#!/bin/sh\necho v24.22.3\n"),
    ] {
        std::fs::write(f, text).unwrap();
        std::fs::set_permissions(f, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::fs::write(
        dir.join("t.jsonl"),
        "{\"at_ms\":100,\"kind\":\"llm\",\"model\":\"mockai/m1\",\"max_tokens\":16}\n",
    )
    .unwrap();
    let path = dir.join("slot.toml");
    std::fs::write(
        &path,
        format!(
            "name = \"slot\"\nduration = \"2s\"\ntraffic = \"t.jsonl\"\n\n\
             [target]\nkind = \"openclaw\"\ncommand = \"{}\"\n\n\
             [engine.modelFailover]\nfallbacks = [\"fallback/m2\"]\n\n\
             [[profile]]\nprovider = \"mockai\"\nid = \"mockai:a\"\ntoken = \"sk-slot-A\"\n\n\
             [[profile]]\nprovider = \"fallback\"\nid = \"fallback:f\"\ntoken = \"sk-slot-F\"\n\n\
             [[expect.turn]]\noutcome = \"answered\"\nequals = 1\n",
            exe.display()
        ),
    )
    .unwrap();
    path
}

#[cfg(unix)]
#[tokio::test]
async fn the_gateway_is_planned_once_and_gets_the_upstream_its_arm_bound_never_the_slot() {
    let tmp = tempfile::tempdir().unwrap();
    let mut plan = preflight(&scenario(tmp.path()), &RunFlags::default()).unwrap();
    // Planned once, before anything runs: one arm, its install found, its configuration at
    // the upstream slot.
    assert_eq!(plan.gateways.len(), 1);
    let found = plan.gateways[0].gateway.facts().found.unwrap();
    assert_eq!(found.version, "2026.9.6");
    let planned = plan.gateways[0].planned_config().unwrap().clone();
    let urls = |c: &GatewayConfig| -> Vec<String> {
        c.providers.iter().map(|p| p.base_url.clone()).collect()
    };
    let slot = format!("{UPSTREAM_SLOT}/v1");
    assert_eq!(urls(&planned), [slot.clone(), slot.clone()]);

    // The arm binds its upstream, fills the slot, and the gateway gets that.
    let recorder = Arc::new(Recorder::default());
    plan.gateways[0].gateway = recorder.clone();
    let dir = tmp.path().join("run");
    std::fs::create_dir_all(&dir).unwrap();
    let files = RunFiles::open(&dir).unwrap();
    let observed = run_arm(&plan, &plan.gateways[0], &dir, &files, &Shutdown::new()).await;
    assert_eq!(
        observed.error.as_deref(),
        Some("the recorder starts nothing")
    );
    let KindPart::Gateway(target) = observed.part else {
        panic!("a gateway arm's part")
    };
    let upstream = target.upstream.unwrap();
    assert!(!upstream.ends_with(":1"), "{upstream}");
    let given = recorder.0.lock().unwrap().clone();
    let [Some(config)] = given.as_slice() else {
        panic!("started once, with a configuration: {given:?}")
    };
    assert_eq!(urls(config), [format!("{upstream}/v1"), format!("{upstream}/v1")]);
    assert!(!format!("{config:?}").contains(UPSTREAM_SLOT), "{config:?}");
    // Everything else is the plan's; the plan itself still holds the slot for the next arm.
    let mut filled = config.clone();
    for p in &mut filled.providers {
        p.base_url = slot.clone();
    }
    assert_eq!(filled, planned);
    assert_eq!(plan.gateways[0].planned_config().unwrap(), &planned);
}
