//! `rehearse matrix FILE`: the CLI edge. The file checked (exit 2 at FILE:line:col), every
//! case × target × repeat run as its own child run ([`super::runner`]), the cells classified and
//! compared with what the file expects, the scorecard written (json, md, html; the textfile
//! series with `--textfile-dir`). Exit 0 when every cell meets what is expected, 1 when one does
//! not, 3 when the matrix was stopped (or its scorecard could not be written).

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, anyhow};

use super::file::MatrixFile;
use super::plan::{Slot, target_keys, tightest_bound, timing_judged};
use super::runner::{Job, Settings, run_all};
use super::scorecard::{self, Column, SCHEMA_VERSION, Scorecard};
use crate::cli::MatrixArgs;
use crate::exit::{CmdError, CmdResult, Status};
use crate::scenario::resolve::resolve_in;
use crate::util::shutdown::Shutdown;

/// Every case of the catalogue (`rehearse list`'s `catalogue` group), by name.
pub fn catalogue_cases() -> Vec<String> {
    crate::builtin::names()
        .into_iter()
        .filter(|n| crate::builtin::group(n) == Some("catalogue"))
        .map(String::from)
        .collect()
}

/// A case's name as a directory name.
fn dir_name(case: &str) -> String {
    let stem = Path::new(case)
        .file_stem()
        .map_or(case.to_string(), |s| s.to_string_lossy().into_owned());
    stem.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Runs `rehearse matrix`.
pub(crate) fn command(mut args: MatrixArgs) -> CmdResult {
    let dir = args.scenarios_dir.clone();
    let known = |c: &str| resolve_in(c, dir.as_deref()).map(|_| ()).map_err(|e| format!("{e:#}"));
    let m = MatrixFile::load(&args.file, &catalogue_cases(), &known).map_err(CmdError::bad_input)?;
    let started = SystemTime::now();
    let out = args.out.clone().unwrap_or_else(|| {
        let stem = args
            .file
            .file_stem()
            .map_or("matrix".into(), |s| s.to_string_lossy().into_owned());
        PathBuf::from("reports").join(format!(
            "matrix-{}-{}",
            crate::rundir::stamp(started),
            dir_name(&stem)
        ))
    });
    if out.join(scorecard::JSON).exists() {
        return Err(CmdError::bad_input(anyhow!(
            "{}: already holds a scorecard (give another --out)",
            out.display()
        )));
    }
    std::fs::create_dir_all(&out)
        .with_context(|| format!("creating {}", out.display()))
        .map_err(CmdError::harness)?;
    let jobs = plan_jobs(&m, &out, args.scenarios_dir.as_deref())?;
    let starts = args.starts.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, |n| u32::try_from(n.get()).unwrap_or(16).clamp(1, 16))
    });
    args.starts = Some(starts);
    let settings = Settings {
        exe: crate::util::proc::self_exe()
            .context("finding this executable")
            .map_err(CmdError::harness)?,
        jobs: args.jobs as usize,
        starts: starts as usize,
        cell_timeout: args.cell_timeout,
        scenarios_dir: args.scenarios_dir.clone(),
        out: out.clone(),
    };
    crate::errln!(
        "matrix {}: {} run(s) ({} case(s), {} target(s), {} repeat(s)), --jobs {} --starts {}, into {}",
        m.path.display(),
        jobs.len(),
        m.cases.len(),
        m.targets.len(),
        m.repeats,
        args.jobs,
        starts,
        out.display()
    );
    let t0 = std::time::SystemTime::now();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the runtime")
        .map_err(CmdError::harness)?;
    let (done, stopped) = rt.block_on(async {
        let stop = Shutdown::on_signals()?;
        let done = run_all(&jobs, &settings, &stop).await;
        Ok::<_, std::io::Error>((done, stop.reason()))
    })
    .context("listening for signals")
    .map_err(CmdError::harness)?;
    let card = assemble(&m, &jobs, done, stopped, &args, started, t0.elapsed().map_or(0, |d| d.as_millis()));
    let write = |name: &str, text: String| {
        crate::util::write_atomic(&out.join(name), text.as_bytes())
            .with_context(|| format!("writing {}", out.join(name).display()))
            .map_err(CmdError::harness)
    };
    write(
        scorecard::JSON,
        serde_json::to_string_pretty(&card).unwrap_or_default() + "\n",
    )?;
    write(scorecard::MD, super::render::markdown(&card))?;
    write(scorecard::HTML, super::render::html(&card))?;
    if let Some(tdir) = &args.textfile_dir {
        let name = dir_name(&m.path.file_stem().map_or("matrix".into(), |s| s.to_string_lossy().into_owned()));
        let ended = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        match super::textfile::write(tdir, &card, &name, ended) {
            Ok((p, note)) => {
                crate::errln!("batch-job series: {}", p.display());
                if let Some(n) = note {
                    crate::errln!("warning: {n}");
                }
            }
            Err(e) => crate::errln!("warning: --textfile-dir {}: {e}", tdir.display()),
        }
    }
    let met = card.cells.iter().filter(|c| c.meets).count();
    crate::outln!(
        "matrix {}: {} of {} cells as expected{}",
        m.path.display(),
        met,
        card.cells.len(),
        card.stopped
            .as_deref()
            .map(|s| format!(" (stopped: {s})"))
            .unwrap_or_default()
    );
    for c in card.cells.iter().filter(|c| !c.meets) {
        crate::outln!(
            "  {} × {}: {} {}{}",
            c.case,
            c.target,
            c.shown_class(),
            c.counts_text(),
            c.reason.as_deref().map(|r| format!(": {r}")).unwrap_or_default()
        );
    }
    crate::outln!("scorecard: {}", out.join(scorecard::MD).display());
    Ok(if card.stopped.is_some() {
        Status::Incomplete
    } else if card.ok {
        Status::Pass
    } else {
        Status::Fail
    })
}

/// One job per case × repeat × target (case-major; the targets of one repeat side by side, so
/// runs of different gateways may overlap).
fn plan_jobs(m: &MatrixFile, out: &Path, scenarios_dir: Option<&Path>) -> Result<Vec<Job>, CmdError> {
    let mut jobs = Vec::new();
    for case in &m.cases {
        let resolved = resolve_in(case, scenarios_dir).map_err(CmdError::bad_input)?;
        let bound = std::fs::read_to_string(&resolved.path)
            .ok()
            .and_then(|t| tightest_bound(&t));
        for repeat in 1..=m.repeats {
            for (ti, t) in m.targets.iter().enumerate() {
                if !t.runs(case) {
                    continue;
                }
                let file_text = t.file.as_ref().and_then(|f| std::fs::read_to_string(f).ok());
                let index = jobs.len();
                jobs.push(Job {
                    case: case.clone(),
                    target: ti,
                    target_name: t.name.clone(),
                    target_file: t.file.clone(),
                    speed: t.speed.get(),
                    repeat,
                    dir: out
                        .join("cells")
                        .join(dir_name(case))
                        .join(&t.name)
                        .join(format!("r{repeat}")),
                    slot: Slot {
                        alone: timing_judged(bound, t.speed.get()),
                        keys: target_keys(&t.name, file_text.as_deref()),
                    },
                    index,
                });
            }
        }
    }
    Ok(jobs)
}

fn assemble(
    m: &MatrixFile,
    jobs: &[Job],
    done: Vec<super::runner::Done>,
    stopped: Option<String>,
    args: &MatrixArgs,
    started: SystemTime,
    elapsed_ms: u128,
) -> Scorecard {
    let mut targets: Vec<Column> = m
        .targets
        .iter()
        .map(|t| Column {
            name: t.name.clone(),
            file: t.file.as_ref().map(|f| f.display().to_string()),
            speed: t.speed.get(),
            header: Default::default(),
        })
        .collect();
    let mut cells = Vec::new();
    let mut by_cell: Vec<((String, usize), Vec<scorecard::Run>)> = Vec::new();
    for (job, (run, header)) in jobs.iter().zip(done) {
        if let Some(h) = header {
            let col = &mut targets[job.target].header;
            if col.kind.is_none() {
                *col = h;
            }
        }
        let key = (job.case.clone(), job.target);
        match by_cell.iter_mut().find(|(k, _)| *k == key) {
            Some((_, runs)) => runs.push(run),
            None => by_cell.push((key, vec![run])),
        }
    }
    // Rows case-major, columns in the file's order.
    for case in &m.cases {
        for (ti, t) in m.targets.iter().enumerate() {
            if let Some((_, runs)) = by_cell.iter_mut().find(|((c, i), _)| c == case && *i == ti) {
                let mut runs = std::mem::take(runs);
                runs.sort_by_key(|r| r.repeat);
                cells.push(scorecard::cell(case, &t.name, runs, &m.expected(case, &t.name)));
            }
        }
    }
    Scorecard {
        schema_version: SCHEMA_VERSION,
        matrix: m.path.display().to_string(),
        description: m.description.clone(),
        started_at: crate::rundir::rfc3339(started),
        duration_ms: u64::try_from(elapsed_ms).unwrap_or(u64::MAX),
        rehearse_version: Some(crate::cli::VERSION.to_string()),
        repeats: m.repeats,
        jobs: args.jobs,
        starts: args.starts,
        ok: stopped.is_none() && cells.iter().all(|c| c.meets),
        stopped,
        cases: m.cases.clone(),
        targets,
        cells,
    }
}
