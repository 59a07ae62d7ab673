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
use super::process::Supervised;
use super::receiver::Receiver;
use super::targets::{ArmWindow, Targets, unix_ms};
use crate::scenario::prometheus::PrometheusSpec;
use crate::util::shutdown::Shutdown;
use crate::util::sync::Locked;
use crate::verdict::alert_eval::{AlertSeries, AlertsSeen, CounterSeries, Notification};

/// How long a started program has to answer `/-/ready`.
const READY_WITHIN: Duration = Duration::from_secs(30);
/// How many log lines a failure quotes.
const LAST_LINES: usize = 12;
/// How far before an arm's start its alerts are read (to tell a spell left over from the
/// previous arm from one of its own).
const LOOKBEHIND: Duration = Duration::from_secs(60);

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
            return Ok(me);
        }
        let pdir = dir.join("prometheus");
        create_dir(pdir.join("data"))?;
        let rules: Vec<PathBuf> = if spec.rules.is_empty() {
            let f = pdir.join("rules-shipped.yml");
            write(&f, crate::monitoring::rehearsal_rules())?;
            vec![f]
        } else {
            spec.rule_paths(scenario)
                .into_iter()
                .map(|p| std::path::absolute(&p).unwrap_or(p))
                .collect()
        };
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

    /// What Prometheus and the receiver hold about the arm of `window` (until `next_start`,
    /// the next arm's start, for the notifications), in the arm's scenario ms.
    pub async fn read(
        &self,
        window: &ArmWindow,
        next_start: Option<i64>,
    ) -> Result<AlertsSeen, DetectionError> {
        let start = window.start_unix_ms;
        let end = window
            .end_unix_ms
            .unwrap_or_else(|| unix_ms(std::time::SystemTime::now()));
        let range = Duration::from_millis(u64::try_from(end - start).unwrap_or(0)) + LOOKBEHIND;
        let rel = |t: i64| t - start;
        let arm = &window.arm;
        let mine =
            |l: &std::collections::BTreeMap<String, String>| l.get("arm").is_none_or(|a| a == arm);
        let tr_arm = format!("breaker_transitions_total{{arm=\"{arm}\",host=~\"sut|h0\"}}");
        let (up_sel, tr_sel) = if self.spawned {
            (format!("up{{job=\"rehearse\",arm=\"{arm}\"}}"), tr_arm)
        } else if self.spec.targets_file.is_some() {
            // The user's Prometheus, its job named as it likes: the targets file's labels.
            (format!("up{{arm=\"{arm}\"}}"), tr_arm)
        } else {
            ("up".to_string(), "breaker_transitions_total".to_string())
        };
        let alerts = self.api.samples("ALERTS", range, end).await?;
        let up = self.api.samples(&up_sel, range, end).await?;
        let tr = self.api.samples(&tr_sel, range, end).await?;
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
        Ok(AlertsSeen {
            eval_ms: ms(self.spec.evaluation_interval),
            scrape_ms: ms(self.spec.scrape_interval),
            end_ms: rel(end),
            alerts: alerts
                .into_iter()
                .filter(|(l, _)| mine(l))
                .map(|(labels, pts)| AlertSeries {
                    labels,
                    t_ms: pts.iter().map(|p| rel(p.0)).collect(),
                })
                .collect(),
            up: up
                .into_iter()
                .flat_map(|(_, pts)| pts)
                .filter(|p| p.0 >= start)
                .map(|(t, v)| (rel(t), v))
                .collect(),
            notifications,
            transitions_total: tr
                .into_iter()
                .filter(|(l, _)| mine(l))
                .map(|(labels, pts)| CounterSeries {
                    labels,
                    points: pts
                        .into_iter()
                        .filter(|p| p.0 >= start)
                        .map(|(t, v)| (rel(t), v))
                        .collect(),
                })
                .collect(),
        })
    }

    /// Stops everything it started, by pid (Prometheus first, then Alertmanager).
    pub fn stop(&mut self) {
        if let Some(w) = self.watcher.take() {
            w.abort();
        }
        for p in self.programs.drain(..).rev() {
            p.locked().stop();
        }
        self.receiver = None;
    }

    /// The pids of the programs it started (for the tests).
    pub fn pids(&self) -> Vec<u32> {
        self.programs
            .iter()
            .filter_map(|p| p.locked().pid())
            .collect()
    }
}

impl Drop for Detection {
    fn drop(&mut self) {
        self.stop();
    }
}
