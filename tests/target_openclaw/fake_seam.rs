//! A second gateway through the same seam as OpenClaw (`rehearse::gateway::Supervisor` and
//! `Supervised`): the stand-in `fake_gateway.py`, run as a supervised process — started by pid
//! in its own directory with its configuration (the upstream it proxies to and the key it sends,
//! both from the configuration the arm hands it), waited for until `/health` answers, watched,
//! stopped with SIGTERM, its console kept — put in the plan in OpenClaw's place and run by the
//! pipeline as any gateway arm: warmed up, sent its turns, judged at the upstream.

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use rehearse::gateway::openclaw::GatewayConfig;
use rehearse::gateway::{
    Effective, Ended, Facts, Found, Keep, StartError, Stop, Supervised, Supervisor, TargetError,
    TurnClient,
};
use rehearse::rehearsal::arm::RunFiles;
use rehearse::rehearsal::plan::{RunFlags, preflight};
use rehearse::rehearsal::sut::SystemUnderTest;
use rehearse::report::model::Verdict;
use rehearse::util::shutdown::Shutdown;

const SCRIPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/target_openclaw/fake_gateway.py"
);

/// The stand-in's own secret (as LiteLLM's per-arm master key is), planted in its log.
const PLANTED_MASTER_KEY: &str = "sk-seam-master-1f2e3d4c5b6a";

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The stand-in gateway, as a supervisor.
#[derive(Debug)]
struct StandIn;

impl Supervisor for StandIn {
    fn facts(&self) -> Facts {
        Facts {
            name: "stand-in".into(),
            found: Some(Found {
                version: "0.1".into(),
                executable: PathBuf::from(SCRIPT),
            }),
            url: None,
            configured: true,
        }
    }

    fn start<'a>(
        &'a self,
        config: Option<&'a GatewayConfig>,
        dir: &'a Path,
    ) -> BoxFuture<'a, Result<Box<dyn Supervised>, StartError>> {
        Box::pin(async move {
            let config = config.ok_or_else(|| StartError::new("no configuration", Vec::new()))?;
            let (Some(provider), Some(profile)) =
                (config.providers.first(), config.profiles.first())
            else {
                return Err(StartError::new("no provider or profile", Vec::new()));
            };
            let upstream = provider.base_url.trim_end_matches("/v1").to_string();
            std::fs::create_dir_all(dir).map_err(|e| StartError::new(e, Vec::new()))?;
            let console = dir.join("console.log");
            let out =
                std::fs::File::create(&console).map_err(|e| StartError::new(e, Vec::new()))?;
            let err = out
                .try_clone()
                .map_err(|e| StartError::new(e, Vec::new()))?;
            let port = free_port();
            let child = Command::new("python3")
                .arg(SCRIPT)
                .arg(port.to_string())
                .arg(&upstream)
                .arg(&profile.key)
                .arg("proxy")
                .current_dir(dir)
                .stdout(out)
                .stderr(err)
                .spawn()
                .map_err(|e| StartError::new(e, Vec::new()))?;
            let mut running = Running {
                child,
                url: format!("http://127.0.0.1:{port}"),
                console,
            };
            let client = running
                .client()
                .map_err(|e| StartError::new(e, Vec::new()))?;
            for _ in 0..200 {
                if !running.alive() {
                    return Err(
                        StartError::new("exited before healthy", running.last_lines()).exited(),
                    );
                }
                if client.healthy().await {
                    return Ok(Box::new(running) as Box<dyn Supervised>);
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(StartError::new("never healthy", running.last_lines()))
        })
    }

    fn says(&self) -> Option<String> {
        Some("0.1".into())
    }
}

/// A started stand-in.
struct Running {
    child: Child,
    url: String,
    console: PathBuf,
}

impl Supervised for Running {
    fn url(&self) -> String {
        self.url.clone()
    }

    fn client(&self) -> Result<TurnClient, TargetError> {
        TurnClient::new(&self.url, "", Duration::from_secs(20))
    }

    fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    fn last_lines(&self) -> Vec<String> {
        let text = std::fs::read_to_string(&self.console).unwrap_or_default();
        text.lines().rev().take(5).map(str::to_string).collect()
    }

    fn isolation(&self) -> Option<String> {
        Some("none".into())
    }

    fn effective(&self) -> Option<Effective> {
        None
    }

    fn stop(mut self: Box<Self>) -> BoxFuture<'static, Ended> {
        Box::pin(async move {
            let started = tokio::time::Instant::now();
            let _ = Command::new("kill")
                .arg(self.child.id().to_string())
                .status();
            let mut graceful = false;
            for _ in 0..50 {
                if !self.alive() {
                    graceful = true;
                    break;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            if !graceful {
                let _ = self.child.kill();
            }
            let _ = self.child.wait();
            // A log line carrying its own key and a profile's, as a gateway's log may.
            let mut log = std::fs::read_to_string(&self.console).unwrap_or_default();
            log.push_str(&format!(
                "startup: master_key={PLANTED_MASTER_KEY} api_key=sk-seam-key-A\n"
            ));
            let _ = std::fs::write(&self.console, log);
            Ended {
                stop: Some(Stop {
                    graceful,
                    took: started.elapsed(),
                    survivors: Vec::new(),
                    left_in_tmp: Vec::new(),
                }),
                decisions: None,
                auth: None,
                keep: vec![Keep {
                    from: self.console.clone(),
                    stem: "stand-in-console",
                    ext: "log",
                }],
                secrets: vec![PLANTED_MASTER_KEY.into()],
            }
        })
    }
}

/// A two-turn scenario of a (stand-in) OpenClaw install in `dir`, judged at the upstream.
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
        "{\"at_ms\":500,\"kind\":\"llm\",\"model\":\"mockai/m1\",\"stream\":false,\"max_tokens\":16,\"session\":\"s1\"}\n\
         {\"at_ms\":1500,\"kind\":\"llm\",\"model\":\"mockai/m1\",\"stream\":false,\"max_tokens\":16,\"session\":\"s2\"}\n",
    )
    .unwrap();
    let path = dir.join("seam.toml");
    std::fs::write(
        &path,
        format!(
            "name = \"seam\"\nduration = \"3s\"\ntraffic = \"t.jsonl\"\nseed = 1\n\n\
             [target]\nkind = \"openclaw\"\ncommand = \"{}\"\nturn_timeout = \"20s\"\n\n\
             [target.warmup]\nprompt = \"5s\"\nturns = 2\ntimeout = \"30s\"\n\n\
             [[profile]]\nprovider = \"mockai\"\nid = \"mockai:a\"\ntoken = \"sk-seam-key-A\"\n\n\
             [[expect.attempts]]\nprofile = \"mockai:a\"\nequals = 2\n\
             [[expect.turn]]\noutcome = \"answered\"\nequals = 2\n",
            exe.display()
        ),
    )
    .unwrap();
    path
}

#[test]
fn a_second_gateway_runs_through_the_same_seam_as_openclaw() {
    let tmp = tempfile::tempdir().unwrap();
    let mut plan = preflight(&scenario(tmp.path()), &RunFlags::default()).unwrap();
    assert_eq!(plan.gateways.len(), 1, "one gateway arm planned");
    assert_eq!(plan.gateways[0].gateway.facts().name, "OpenClaw");
    // The plan's one slot for the implementation: the stand-in in OpenClaw's place.
    plan.gateways[0].gateway = Arc::new(StandIn);
    let dir = tmp.path().join("run");
    std::fs::create_dir_all(&dir).unwrap();
    let files = RunFiles::open(&dir).unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let report =
        rt.block_on(SystemUnderTest::Gateway.rehearse(&plan, &dir, &files, &Shutdown::new(), true));
    rt.shutdown_timeout(Duration::from_millis(500));

    let target = report.target.clone().expect("a gateway run's target block");
    let rows: Vec<String> = report.policies[0]
        .expectations
        .iter()
        .map(|e| format!("{:?} {} {}", e.status, e.expected, e.detail))
        .collect();
    assert_eq!(
        report.verdict,
        Verdict::Pass,
        "{:?}\n{rows:#?}\n{target:#?}",
        report.reason
    );
    // Its turns reached the upstream it was handed, with the key it was handed.
    assert_eq!(target.turns.len(), 2, "{target:#?}");
    assert!(target.turns.iter().all(|t| t.ok), "{target:#?}");
    let upstream = target.upstream.clone().unwrap_or_default();
    assert!(!upstream.ends_with(":1"), "{upstream}");
    assert!(
        target.warmup.as_ref().is_some_and(|w| w.steady),
        "{target:#?}"
    );
    // What the seam says of it is in the report: its version, its sandbox, its stop, its file.
    assert_eq!(target.kind, "openclaw");
    assert_eq!(target.version.as_deref(), Some("0.1"));
    assert_eq!(target.reported_version.as_deref(), Some("0.1"));
    assert_eq!(target.isolation.as_deref(), Some("none"));
    let stop = target.stop.clone().unwrap_or_default();
    assert!(stop.starts_with("SIGTERM: exited in"), "{stop}");
    assert_eq!(target.files, ["stand-in-console.log"]);
    // Kept with its own key and the profile's token fingerprinted, neither in clear.
    let kept = std::fs::read_to_string(dir.join("stand-in-console.log")).unwrap();
    let fp = |s: &str| rehearse::util::fingerprint(s);
    assert!(
        !kept.contains(PLANTED_MASTER_KEY) && !kept.contains("sk-seam-key-A"),
        "{kept}"
    );
    assert!(
        kept.contains(&fp(PLANTED_MASTER_KEY)) && kept.contains(&fp("sk-seam-key-A")),
        "{kept}"
    );
    assert!(target.decisions.is_empty() && target.cooldowns.is_empty());
    assert!(!dir.join(".gateway").exists(), "its directory is removed");
}
