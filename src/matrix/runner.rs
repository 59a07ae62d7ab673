//! The runs of a matrix, each a child process of this executable (`rehearse run --scenario CASE
//! [--target FILE] --speed F --report-dir DIR --no-progress`) in a process group of its own:
//! a gateway that hangs, a panic or an abort costs one run, never the matrix. Up to `--jobs` at
//! once as [`super::plan::next`] allows, of which at most `--starts` still starting (launched,
//! its clock not started: [`CLOCK_MARK`]); a progress line per run on stderr. A stop (SIGINT,
//! SIGTERM) sends each running child SIGTERM by its pid — its own stop then stops its gateway
//! and writes its report — and SIGKILL after [`GRACE`]; runs not started are `not_run`.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::time::Instant;

use futures_util::stream::{FuturesUnordered, StreamExt};

use super::class::{Class, NOT_APPLICABLE, RunEnd, classify};
use super::facts;
use super::plan::Slot;
use super::scorecard::Run;
use crate::util::shutdown::Shutdown;

/// How long a stopped child has to write its report and stop its gateway before SIGKILL.
pub const GRACE: Duration = Duration::from_secs(60);

/// The file in a run's cell directory its clock's start is marked in
/// ([`crate::rundir::started`]): until it exists the run is *starting*.
const CLOCK_MARK: &str = ".clock-started";

/// How often the marks of starting runs are looked for.
const MARK_POLL: Duration = Duration::from_millis(250);

/// One run to do.
#[derive(Debug, Clone)]
pub struct Job {
    /// The case as the matrix file names it (`--scenario`).
    pub case: String,
    /// The target's index in the matrix.
    pub target: usize,
    /// The target's name.
    pub target_name: String,
    /// Its target file (`None`: the embedded engine).
    pub target_file: Option<PathBuf>,
    /// The speed.
    pub speed: f64,
    /// 1-based repeat.
    pub repeat: u32,
    /// Its report dir (`--report-dir`), where its stdout and stderr go too.
    pub dir: PathBuf,
    /// What it holds while it runs.
    pub slot: Slot,
    /// Its place among the matrix's runs.
    pub index: usize,
}

/// How the runs are made.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The executable (this one).
    pub exe: PathBuf,
    /// Most runs at once.
    pub jobs: usize,
    /// Most runs starting at once (launched, clock not yet started: a gateway's boot and
    /// warm-up).
    pub starts: usize,
    /// A run still going after this is stopped (its class from what it left).
    pub cell_timeout: Duration,
    /// `--scenarios-dir`, passed on.
    pub scenarios_dir: Option<PathBuf>,
    /// The scorecard's directory: report dirs are written relative to it.
    pub out: PathBuf,
}

/// What one job gave: its run, and its target's header when it wrote a report.
pub type Done = (Run, Option<facts::Header>);

/// Runs `jobs` (in order, as the plan lets them start) until done or stopped; one [`Done`] per
/// job in the same order, `not_run` for the ones a stop kept from starting.
pub async fn run_all(jobs: &[Job], settings: &Settings, stop: &Shutdown) -> Vec<Done> {
    let mut results: Vec<Option<Done>> = vec![None; jobs.len()];
    let mut pending: Vec<usize> = (0..jobs.len()).collect();
    let mut running: Vec<usize> = Vec::new();
    let mut futs = FuturesUnordered::new();
    let mut stopping = false;
    let total = jobs.len();
    let mut poll = tokio::time::interval(MARK_POLL);
    loop {
        // Start what the plan lets start; after a stop request, nothing.
        while !stopping && !stop.is_requested() {
            let starting = running.iter().filter(|&&i| !clock_started(&jobs[i])).count();
            if starting >= settings.starts.max(1) {
                break;
            }
            let slots: Vec<Slot> = pending.iter().map(|&i| jobs[i].slot.clone()).collect();
            let busy: Vec<&Slot> = running.iter().map(|i| &jobs[*i].slot).collect();
            let Some(p) = super::plan::next(&slots, &busy, settings.jobs) else {
                break;
            };
            let i = pending.remove(p);
            match start(&jobs[i], settings) {
                Ok(child) => {
                    let pid = child.id().unwrap_or(0);
                    running.push(i);
                    let (timeout, stop) = (settings.cell_timeout, stop.clone());
                    futs.push(async move { (i, wait(child, pid, timeout, stop).await) });
                }
                Err(e) => {
                    let run = Run {
                        reason: Some(format!("could not start the run: {e}")),
                        ..not_run(&jobs[i], Class::Error)
                    };
                    progress(&jobs[i], &run, total);
                    results[i] = Some((run, None));
                }
            }
        }
        if futs.is_empty() {
            break;
        }
        let waiting_on_a_start = !stopping && !pending.is_empty();
        let next = tokio::select! {
            done = futs.next() => done,
            // Each running run stops itself on the same request (`wait`); none starts after it.
            _ = stop.requested(), if !stopping => {
                stopping = true;
                continue;
            }
            // A run whose clock started frees a start.
            _ = poll.tick(), if waiting_on_a_start => continue,
        };
        let Some((i, waited)) = next else { break };
        running.retain(|j| *j != i);
        let (run, header) = finish(&jobs[i], waited, stopping, settings);
        progress(&jobs[i], &run, total);
        results[i] = Some((run, header));
    }
    results
        .into_iter()
        .zip(jobs)
        .map(|(r, j)| r.unwrap_or_else(|| (not_run(j, Class::NotRun), None)))
        .collect()
}

fn not_run(job: &Job, class: Class) -> Run {
    Run {
        repeat: job.repeat,
        class,
        exit: None,
        seconds: 0.0,
        report_dir: None,
        verdict: None,
        reason: None,
        stopped: false,
        figures: facts::Figures::default(),
    }
}

/// Whether `job`'s clock has started (its mark is written).
fn clock_started(job: &Job) -> bool {
    job.dir.join(CLOCK_MARK).exists()
}

fn start(job: &Job, s: &Settings) -> std::io::Result<tokio::process::Child> {
    std::fs::create_dir_all(&job.dir)?;
    match std::fs::remove_file(job.dir.join(CLOCK_MARK)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let stdout = std::fs::File::create(job.dir.join("stdout.log"))?;
    let stderr = std::fs::File::create(job.dir.join("stderr.log"))?;
    let mut cmd = tokio::process::Command::new(&s.exe);
    cmd.arg("run")
        .arg("--scenario")
        .arg(&job.case)
        .arg("--speed")
        .arg(job.speed.to_string())
        .arg("--report-dir")
        .arg(&job.dir)
        .arg("--no-progress");
    if let Some(f) = &job.target_file {
        cmd.arg("--target").arg(f);
    }
    if let Some(d) = &s.scenarios_dir {
        cmd.arg("--scenarios-dir").arg(d);
    }
    cmd.env(crate::rundir::started::ENV, job.dir.join(CLOCK_MARK))
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        // Its own process group: a terminal's Ctrl-C reaches the matrix, which stops each run
        // by its pid; a run's own stop then stops what it started.
        .process_group(0)
        .kill_on_drop(true);
    cmd.spawn()
}

/// How a child ended.
#[derive(Debug)]
struct Waited {
    exit: Option<i32>,
    seconds: f64,
    timed_out: bool,
}

/// Waits for `child`; at the cell timeout or the matrix's stop, SIGTERM by its pid, then
/// [`GRACE`] to finish, then SIGKILL.
async fn wait(mut child: tokio::process::Child, pid: u32, timeout: Duration, stop: Shutdown) -> Waited {
    let t0 = Instant::now();
    let mut timed_out = false;
    let status = tokio::select! {
        s = child.wait() => s.ok(),
        _ = tokio::time::sleep(timeout) => {
            timed_out = true;
            None
        }
        _ = stop.requested() => None,
    };
    let status = match status {
        Some(s) => Some(s),
        None => {
            crate::util::proc::signal_pid(pid, libc::SIGTERM);
            match tokio::time::timeout(GRACE, child.wait()).await {
                Ok(s) => s.ok(),
                Err(_) => {
                    let _ = child.kill().await;
                    child.wait().await.ok()
                }
            }
        }
    };
    Waited {
        exit: status.and_then(|s| s.code()),
        seconds: t0.elapsed().as_secs_f64(),
        timed_out,
    }
}

fn finish(job: &Job, w: Waited, stopped: bool, s: &Settings) -> (Run, Option<facts::Header>) {
    let stderr = std::fs::read_to_string(job.dir.join("stderr.log")).unwrap_or_default();
    let run_dir = run_dir_under(&job.dir);
    let report = run_dir.as_ref().and_then(|d| {
        let text = std::fs::read_to_string(d.join("report.json")).ok()?;
        serde_json::from_str::<serde_json::Value>(&text).ok()
    });
    let f = report.as_ref().map(facts::read).unwrap_or_default();
    let end = RunEnd {
        exit: w.exit,
        not_applicable: stderr.lines().any(|l| l.contains(NOT_APPLICABLE)),
        verdict: f.verdict.clone(),
        turns: f.turns.clone(),
        only_answered_failed: f.only_answered_failed,
    };
    let (class, why) = classify(&end);
    let said = stderr
        .lines()
        .rev()
        .find(|l| l.starts_with("error: "))
        .map(|l| l.trim_start_matches("error: ").to_string());
    let reason = if w.timed_out {
        Some(format!(
            "stopped at the cell timeout ({} s)",
            s.cell_timeout.as_secs()
        ))
    } else {
        why.or_else(|| f.reason.clone()).or(said)
    };
    let rel = |p: &Path| {
        p.strip_prefix(&s.out)
            .unwrap_or(p)
            .to_string_lossy()
            .replace('\\', "/")
    };
    let run = Run {
        repeat: job.repeat,
        class,
        exit: w.exit,
        seconds: (w.seconds * 10.0).round() / 10.0,
        report_dir: run_dir.as_deref().map(rel),
        verdict: f.verdict,
        reason,
        stopped,
        figures: f.figures,
    };
    (run, report.is_some().then_some(f.header))
}

/// The run directory a run wrote under its report dir (the newest holding report.json, else
/// any).
fn run_dir_under(dir: &Path) -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs.iter()
        .rev()
        .find(|p| p.join("report.json").is_file())
        .or_else(|| dirs.last())
        .cloned()
}

fn progress(job: &Job, run: &Run, total: usize) {
    crate::errln!(
        "[matrix {}/{total}] {} × {} r{}: {} ({:.1}s){}",
        job.index + 1,
        job.case,
        job.target_name,
        job.repeat,
        run.class.as_str(),
        run.seconds,
        run.reason
            .as_deref()
            .filter(|_| run.class != Class::Pass)
            .map(|r| format!(": {r}"))
            .unwrap_or_default()
    );
}
