//! The detection path of one scenario run: the Prometheus the harness starts (or the user's, by
//! `url`), with an Alertmanager and the harness's webhook receiver when asked; watched while the
//! run goes (a program dying is the run's harness failure, with its last log lines); read arm by
//! arm into what the judge needs ([`AlertsSeen`]); stopped by pid at the end.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::api::Api;
use super::binaries::{Program, find};
use super::config::{PromConfig, alertmanager_yml, prometheus_yml};
use super::error::DetectionError;
use super::poll::PollLog;
use super::process::Supervised;
use super::read::{arm_targets, counters, exclusive_jobs, per_target, rules_seen, split_alerts};
use super::receiver::Receiver;
use super::targets::{ArmWindow, Targets, unix_ms};
use crate::scenario::prometheus::PrometheusSpec;
use crate::util::shutdown::Shutdown;
use crate::util::sync::Locked;
use crate::verdict::alert_eval::{AlertsSeen, Notification};

/// How long a started program has to answer `/-/ready`.
const READY_WITHIN: Duration = Duration::from_secs(30);
/// How many log lines a failure quotes.
const LAST_LINES: usize = 12;

fn free_port() -> Result<u16, DetectionError> {
    let bound = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr());
    bound.map(|a| a.port()).map_err(DetectionError::Port)
}

fn create_dir(path: PathBuf) -> Result<(), DetectionError> {
    std::fs::create_dir_all(&path).map_err(|source| DetectionError::File {
        what: "creating",
        path,
        source,
    })
}

fn write(path: &Path, text: impl AsRef<[u8]>) -> Result<(), DetectionError> {
    std::fs::write(path, text).map_err(|source| DetectionError::File {
        what: "writing",
        path: path.to_path_buf(),
        source,
    })
}

fn spawn(name: &'static str, exe: &Path, args: &[String], log: &Path) -> Result<Arc<Mutex<Supervised>>, DetectionError> {
    let p = Supervised::spawn(name, exe, args, log).map_err(|source| DetectionError::Spawn {
        exe: exe.to_path_buf(),
        source,
    })?;
    Ok(Arc::new(Mutex::new(p)))
}

fn ms(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// The running detection path.
#[derive(Debug)]
pub struct Detection {
    spec: PrometheusSpec,
    api: Api,
    spawned: bool,
    programs: Vec<Arc<Mutex<Supervised>>>,
    receiver: Option<Receiver>,
    died: Arc<Mutex<Option<String>>>,
    watcher: Option<tokio::task::JoinHandle<()>>,
    poller: Option<tokio::task::JoinHandle<()>>,
    polls: PollLog,
}

/// The harness's copy of a rule file: every alerting rule in a group of its own, so that
/// Prometheus's evaluation counters (per group) are each rule's.
fn copy_rules(text: &str, from: &Path, to: &Path) -> Result<(), DetectionError> {
    let (copy, _) =
        crate::monitoring::one_group_per_alert(text).map_err(|source| DetectionError::RulesCopy {
            path: from.to_path_buf(),
            source,
        })?;
    write(to, copy)
}

async fn wait_ready(p: &Arc<Mutex<Supervised>>, api: &Api) -> Result<(), DetectionError> {
    let until = tokio::time::Instant::now() + READY_WITHIN;
    loop {
        if api.ready().await {
            return Ok(());
        }
        let exited = p.locked().exited();
        if let Some(status) = exited {
            let s = p.locked();
            return Err(DetectionError::ExitedAtStart {
                name: s.name(),
                status,
                log: s.log().to_path_buf(),
                lines: s.last_lines(LAST_LINES),
            });
        }
        if tokio::time::Instant::now() >= until {
            let s = p.locked();
            return Err(DetectionError::NotReady {
                name: s.name(),
                base: api.base().to_string(),
                secs: READY_WITHIN.as_secs(),
                lines: s.last_lines(LAST_LINES),
            });
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

impl Detection {
    /// Starts what `spec` asks for, its files under `dir` (the run directory), and turns
    /// `targets` on. `scenario`: the scenario file (its rule files are relative to it).
    pub async fn start(
        spec: &PrometheusSpec,
        scenario: &Path,
        dir: &Path,
        targets: &Targets,
    ) -> Result<Self, DetectionError> {
        let mut me = Self {
            spec: spec.clone(),
            api: Api::new(spec.url.as_deref().unwrap_or("http://127.0.0.1:9")),
            spawned: spec.spawn,
            programs: Vec::new(),
            receiver: None,
            died: Arc::new(Mutex::new(None)),
            watcher: None,
            poller: None,
            polls: PollLog::default(),
        };
        if !spec.spawn {
            if !me.api.ready().await {
                return Err(DetectionError::UrlNotReady(me.api.base().to_string()));
            }
            // The user's Prometheus finds the run's endpoints through the targets file.
            targets.enable(spec.targets_path(scenario));
            if let Some(e) = targets.take_write_error() {
                return Err(e);
            }
            me.start_polling(targets);
            return Ok(me);
        }
        let pdir = dir.join("prometheus");
        create_dir(pdir.join("data"))?;
        let mut rules: Vec<PathBuf> = Vec::new();
        if spec.rules.is_empty() {
            let f = pdir.join("rules-shipped.yml");
            let shipped = crate::monitoring::rehearsal_rules();
            copy_rules(&shipped, Path::new("the shipped rules"), &f)?;
            rules.push(std::path::absolute(&f).unwrap_or(f));
        }
        for (i, from) in spec.rule_paths(scenario).iter().enumerate() {
            let text = std::fs::read_to_string(from).map_err(|source| DetectionError::File {
                what: "reading",
                path: from.clone(),
                source,
            })?;
            let name = from.file_name().map_or_else(
                || format!("{i}.yml"),
                |n| format!("{i}-{}", n.to_string_lossy()),
            );
            let f = pdir.join(format!("rules-{name}"));
            copy_rules(&text, from, &f)?;
            rules.push(std::path::absolute(&f).unwrap_or(f));
        }
        let alertmanager = if spec.alertmanager {
            let recv = Receiver::start(&dir.join("alertmanager-notifications.jsonl"))
                .await
                .map_err(DetectionError::Receiver)?;
            let port = me.start_alertmanager(dir, recv.port).await?;
            me.receiver = Some(recv);
            Some(port)
        } else {
            None
        };
        let targets_file = pdir.join("targets.json");
        targets.enable(Some(targets_file.clone()));
        let config = pdir.join("prometheus.yml");
        write(
            &config,
            prometheus_yml(&PromConfig {
                scrape_interval: spec.scrape_interval,
                evaluation_interval: spec.evaluation_interval,
                rules,
                targets_file,
                alertmanager,
            }),
        )?;
        let exe = find(Program::Prometheus)?;
        let port = free_port()?;
        let args = vec![
            format!("--config.file={}", config.display()),
            format!("--storage.tsdb.path={}", pdir.join("data").display()),
            format!("--web.listen-address=127.0.0.1:{port}"),
            "--storage.tsdb.retention.time=1d".into(),
        ];
        let p = spawn("prometheus", &exe, &args, &pdir.join("prometheus.log"))?;
        me.programs.push(p.clone());
        me.api = Api::new(&format!("http://127.0.0.1:{port}"));
        wait_ready(&p, &me.api).await?;
        me.start_polling(targets);
        crate::errln!(
            "prometheus http://127.0.0.1:{port} (pid {}), data in {}",
            p.locked().pid().unwrap_or(0),
            pdir.display()
        );
        Ok(me)
    }

    async fn start_alertmanager(
        &mut self,
        dir: &Path,
        receiver: u16,
    ) -> Result<u16, DetectionError> {
        let adir = dir.join("alertmanager");
        create_dir(adir.join("data"))?;
        let config = adir.join("alertmanager.yml");
        write(&config, alertmanager_yml(receiver))?;
        let exe = find(Program::Alertmanager)?;
        let port = free_port()?;
        let args = vec![
            format!("--config.file={}", config.display()),
            format!("--storage.path={}", adir.join("data").display()),
            format!("--web.listen-address=127.0.0.1:{port}"),
            "--cluster.listen-address=".into(),
        ];
        let p = spawn("alertmanager", &exe, &args, &adir.join("alertmanager.log"))?;
        self.programs.push(p.clone());
        wait_ready(&p, &Api::new(&format!("http://127.0.0.1:{port}"))).await?;
        Ok(port)
    }

    fn start_polling(&mut self, targets: &Targets) {
        let (task, log) = super::poll::start(self.api.clone(), targets.clone());
        self.poller = Some(task);
        self.polls = log;
    }

    /// Watches every started program: the first to die requests `stop` and is recorded
    /// ([`Detection::died`]).
    pub fn watch(&mut self, stop: &Shutdown) {
        let programs = self.programs.clone();
        let died = self.died.clone();
        let stop = stop.clone();
        self.watcher = Some(tokio::spawn(async move {
            loop {
                for p in &programs {
                    let mut s = p.locked();
                    if let Some(status) = s.exited() {
                        let why = format!(
                            "{} exited mid-run ({status}); its last log lines ({}):\n{}",
                            s.name(),
                            s.log().display(),
                            s.last_lines(LAST_LINES)
                        );
                        *died.locked() = Some(why);
                        stop.request(&format!("{} exited mid-run", s.name()));
                        return;
                    }
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }));
    }

    /// Why a program died mid-run, if one did.
    pub fn died(&self) -> Option<String> {
        self.died.locked().clone()
    }

    /// What Prometheus and the receiver hold about the arm of `window` (the `index`-th window;
    /// until `next_start`, the next arm's start, for the notifications), in the arm's scenario
    /// ms: only what is tied to the targets the arm published ([`super::read`]).
    pub async fn read(
        &self,
        index: usize,
        window: &ArmWindow,
        next_start: Option<i64>,
    ) -> Result<AlertsSeen, DetectionError> {
        let start = window.start_unix_ms;
        let end = window
            .end_unix_ms
            .unwrap_or_else(|| unix_ms(std::time::SystemTime::now()));
        let range = Duration::from_millis(u64::try_from(end - start).unwrap_or(0).max(1));
        let rel = |t: i64| t - start;
        let polls = self.polls.locked().get(&index).cloned().unwrap_or_default();
        let targets = arm_targets(window, &polls, self.spawned);
        let exclusive = exclusive_jobs(&targets, &polls, self.spawned);
        // The engine whose events the arm has: the one system under test, a fleet's h0.
        let engine: Vec<_> = targets
            .iter()
            .filter(|t| t.get("host").is_none_or(|h| h == "sut" || h == "h0"))
            .cloned()
            .collect();
        let alerts = self.api.samples("ALERTS", range, end).await?;
        let up = per_target(&self.api, "up", &targets, range, end).await?;
        let tr = per_target(&self.api, "breaker_transitions_total", &engine, range, end).await?;
        let rules = self.api.data("/api/v1/rules").await?;
        let (rules, records) = rules_seen(&rules, &polls);
        let (alerts, untied) = split_alerts(alerts, &targets, &exclusive, start);
        let notifications = self.receiver.as_ref().map(|r| {
            r.arrivals()
                .into_iter()
                .filter(|a| a.t_unix_ms >= start && next_start.is_none_or(|n| a.t_unix_ms < n))
                .map(|a| Notification {
                    t_ms: rel(a.t_unix_ms),
                    status: a.status,
                    labels: a.labels,
                })
                .collect()
        });
        // A Prometheus the user runs scrapes at its own interval.
        let scrape_ms = polls
            .targets
            .iter()
            .filter_map(|t| t.scrape_ms)
            .max()
            .filter(|_| !self.spawned)
            .unwrap_or_else(|| ms(self.spec.scrape_interval));
        Ok(AlertsSeen {
            eval_ms: ms(self.spec.evaluation_interval),
            scrape_ms,
            end_ms: rel(end),
            alerts,
            untied,
            run_targets: targets.len() as u64,
            up: up
                .into_iter()
                .flat_map(|(_, pts)| pts)
                .filter(|p| p.0 >= start)
                .map(|(t, v)| (rel(t), v))
                .collect(),
            notifications,
            transitions_total: counters(tr, start),
            rules,
            records,
            target_labels_known: self.spawned,
        })
    }

    /// Stops everything it started, by pid (Prometheus first, then Alertmanager).
    pub fn stop(&mut self) {
        if let Some(w) = self.watcher.take() {
            w.abort();
        }
        if let Some(p) = self.poller.take() {
            p.abort();
        }
        for p in self.programs.drain(..).rev() {
            p.locked().stop();
        }
        self.receiver = None;
    }
}

impl Drop for Detection {
    fn drop(&mut self) {
        self.stop();
    }
}
