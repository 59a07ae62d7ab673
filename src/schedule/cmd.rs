//! `rehearse schedule print|install|uninstall|status` (the CLI edge). `print` and `install` resolve
//! and check everything the run at the scheduled time needs first (exit 2 otherwise); `install`
//! creates the log directory every time, with or without `--no-load`.

use std::path::{Path, PathBuf};

use anyhow::{Context, anyhow};

use super::calendar::{self, CalendarEntry, WeekMinute};
use super::{Env, check_paths, launchctl, plist, plist_path, resolve};
use crate::cli::{
    ScheduleAction, ScheduleArgs, ScheduleFileArgs, ScheduleInstallArgs, SchedulePlanArgs,
};
use crate::exit::{CmdError, CmdResult, Status};

/// Runs `rehearse schedule`.
pub(crate) fn command(args: ScheduleArgs) -> CmdResult {
    let env = Env::from_process();
    match &args.action {
        ScheduleAction::Print(a) => print(a, &env),
        ScheduleAction::Install(a) => install(a, &env),
        ScheduleAction::Uninstall(a) => uninstall(a, &env),
        ScheduleAction::Status(a) => status(a, &env),
    }
}

/// The job and its XML, after every check a scheduled run depends on.
fn render(args: &SchedulePlanArgs, env: &Env) -> Result<(plist::LaunchAgent, String), CmdError> {
    let dir = args.scenarios_dir.as_deref();
    let spec = resolve(args, env, &|s| crate::scenario::resolve::resolve_in(s, dir))
        .map_err(CmdError::bad_input)?;
    check_paths(&spec).map_err(CmdError::bad_input)?;
    let agent = plist::build(&spec);
    let xml = plist::to_xml(&agent)
        .context("serialising the plist")
        .map_err(CmdError::harness)?;
    Ok((agent, xml))
}

fn print(args: &SchedulePlanArgs, env: &Env) -> CmdResult {
    let xml = render(args, env)?.1;
    {
        use std::io::Write as _;
        let _ = std::io::stdout().lock().write_all(xml.as_bytes());
    }
    Ok(Status::Pass)
}

/// `launchctl` when the action needs it; `None` with `--no-load`. Exit 2 when it is missing,
/// unless both `--dir` and `--no-load` are given.
fn need_launchctl(
    args: &ScheduleFileArgs,
    env: &Env,
    action: &str,
) -> Result<Option<PathBuf>, CmdError> {
    let found = launchctl::find(env.path.as_deref());
    if found.is_none() && !(args.no_load && args.dir.is_some()) {
        return Err(CmdError::bad_input(anyhow!(
            "launchctl not found: `rehearse schedule {action}` manages a macOS LaunchAgent. On this \
             system use `rehearse schedule print ...` to see the plist, or give `--dir DIR \
             --no-load` to only write or remove the file"
        )));
    }
    Ok(if args.no_load { None } else { found })
}

fn install(args: &ScheduleInstallArgs, env: &Env) -> CmdResult {
    let (agent, xml) = render(&args.plan, env)?;
    let file = args.file();
    let launchctl = need_launchctl(&file, env, "install")?;
    let path = plist_path(&file.label, file.dir.as_deref(), env).map_err(CmdError::bad_input)?;
    // launchd opens the log files but does not create their directory: make it on every
    // install, also with --no-load (the plist may be loaded later by hand).
    let mut dirs: Vec<PathBuf> = path.parent().map(Path::to_path_buf).into_iter().collect();
    dirs.extend(plist::logs_of(&agent));
    for dir in &dirs {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("creating {}", dir.display()))
            .map_err(CmdError::harness)?;
    }
    crate::util::write_atomic(&path, xml.as_bytes())
        .with_context(|| format!("writing {}", path.display()))
        .map_err(CmdError::harness)?;
    crate::outln!("wrote {}", path.display());
    if let Some(logs) = plist::logs_of(&agent) {
        crate::outln!("logs: {}", logs.display());
    }
    print_wake(&agent.start_calendar_interval.entries());
    if let Some(old) = super::migrate::old_label(&file.label)
        && let Some(dir) = path.parent()
    {
        let uid = launchctl::current_uid();
        // Loaded under the old label (launchctl print answers): boot it out.
        let bootout = |l: &str| {
            launchctl.as_ref().is_some_and(|lc| {
                let ok = |argv: &[std::ffi::OsString]| {
                    launchctl::run(argv).is_ok_and(|o| o.status.success())
                };
                ok(&launchctl::print_argv(lc, uid, l)) && ok(&launchctl::bootout_argv(lc, uid, l))
            })
        };
        let r = super::migrate::replace(
            &old,
            dir,
            launchctl.as_ref().map(|_| &bootout as &dyn Fn(&str) -> bool),
        );
        for l in r.lines {
            crate::outln!("{l}");
        }
        if let Some(e) = r.error {
            return Err(CmdError::harness(anyhow!(
                "{e}: remove it by hand, or the old agent runs the job a second time"
            )));
        }
    }
    let Some(launchctl) = launchctl else {
        crate::outln!("not loaded (--no-load)");
        return Ok(Status::Pass);
    };
    let uid = launchctl::current_uid();
    // Re-installing: unload the old definition first; "not loaded" is fine.
    let _ = launchctl::run(&launchctl::bootout_argv(&launchctl, uid, &file.label));
    let out = launchctl::run(&launchctl::bootstrap_argv(&launchctl, uid, &path))
        .with_context(|| format!("running {}", launchctl.display()))
        .map_err(CmdError::harness)?;
    if !out.status.success() {
        return Err(CmdError::harness(anyhow!(
            "launchctl bootstrap {} {} failed ({}): {} — the gui/UID domain exists only while \
             the user is logged in at the GUI (enable auto-login on a headless Mac mini)",
            launchctl::gui_domain(uid),
            path.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    crate::outln!("loaded {}/{}", launchctl::gui_domain(uid), file.label);
    Ok(Status::Pass)
}

/// The `pmset` line that wakes the Mac before the run (printed, never run: it needs root and
/// replaces the machine's repeating power schedule).
fn print_wake(entries: &[CalendarEntry]) {
    let Some(wake) = calendar::pmset_wake(entries, calendar::WAKE_LEAD_MIN) else {
        return;
    };
    crate::outln!(
        "to wake the Mac {} minutes before each run, run this once (not run here: it needs root, \
         and it replaces any repeat schedule already set; `pmset -g sched` shows that one):",
        calendar::WAKE_LEAD_MIN
    );
    crate::outln!("  sudo {}", wake.line);
    if !wake.uncovered.is_empty() {
        let when: Vec<String> = wake.uncovered.iter().map(CalendarEntry::describe).collect();
        crate::outln!(
            "  (pmset keeps one repeating wake time: not woken for {})",
            when.join(", ")
        );
    }
}

fn uninstall(args: &ScheduleFileArgs, env: &Env) -> CmdResult {
    let launchctl = need_launchctl(args, env, "uninstall")?;
    let path = plist_path(&args.label, args.dir.as_deref(), env).map_err(CmdError::bad_input)?;
    if let Some(launchctl) = launchctl {
        let uid = launchctl::current_uid();
        let out = launchctl::run(&launchctl::bootout_argv(&launchctl, uid, &args.label))
            .with_context(|| format!("running {}", launchctl.display()))
            .map_err(CmdError::harness)?;
        if out.status.success() {
            crate::outln!("unloaded {}/{}", launchctl::gui_domain(uid), args.label);
        } else {
            crate::outln!(
                "not loaded ({}/{}: {})",
                launchctl::gui_domain(uid),
                args.label,
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
    }
    match std::fs::remove_file(&path) {
        Ok(()) => crate::outln!("removed {}", path.display()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            crate::outln!("no plist at {}", path.display())
        }
        Err(e) => {
            return Err(CmdError::harness(
                anyhow::Error::new(e).context(format!("removing {}", path.display())),
            ));
        }
    }
    Ok(Status::Pass)
}

fn status(args: &ScheduleFileArgs, env: &Env) -> CmdResult {
    let launchctl = need_launchctl(args, env, "status")?;
    let path = plist_path(&args.label, args.dir.as_deref(), env).map_err(CmdError::bad_input)?;
    crate::outln!("label: {}", args.label);
    let installed = read_installed(&path);
    match &installed {
        Ok(_) => crate::outln!("plist: {}", path.display()),
        Err(why) => crate::outln!("plist: {} ({why})", path.display()),
    }
    match launchctl {
        None => crate::outln!("loaded: unknown (--no-load)"),
        Some(launchctl) => {
            let uid = launchctl::current_uid();
            let out = launchctl::run(&launchctl::print_argv(&launchctl, uid, &args.label))
                .with_context(|| format!("running {}", launchctl.display()))
                .map_err(CmdError::harness)?;
            if out.status.success() {
                let s = launchctl::summarise_print(&String::from_utf8_lossy(&out.stdout));
                let na = || "-".to_string();
                crate::outln!(
                    "loaded: yes ({}/{})",
                    launchctl::gui_domain(uid),
                    args.label
                );
                crate::outln!("state: {}", s.state.unwrap_or_else(na));
                if let Some(pid) = s.pid {
                    crate::outln!("pid: {pid}");
                }
                crate::outln!("runs: {}", s.runs.unwrap_or_else(na));
                crate::outln!("last exit code: {}", s.last_exit_code.unwrap_or_else(na));
            } else {
                crate::outln!("loaded: no");
            }
        }
    }
    let entries = match &installed {
        Ok(a) => a.start_calendar_interval.entries(),
        Err(_) => Vec::new(),
    };
    if !entries.is_empty() {
        let when: Vec<String> = entries.iter().map(CalendarEntry::describe).collect();
        crate::outln!("schedule: {}", when.join(", "));
    }
    crate::outln!("next run: {}", next_run_text(&entries));
    if let Some(report_dir) = installed.as_ref().ok().and_then(report_dir_of) {
        last_runs(&report_dir);
    }
    crate::outln!(
        "(summary of `launchctl print`, informational only; a run's verdict is in its report)"
    );
    Ok(Status::Pass)
}

/// The `--report-dir` of the agent's run (its ProgramArguments read as `rehearse` would).
fn report_dir_of(agent: &plist::LaunchAgent) -> Option<PathBuf> {
    use clap::Parser as _;
    let argv = std::iter::once("rehearse".to_string())
        .chain(agent.program_arguments.iter().skip(1).cloned());
    match crate::cli::Cli::try_parse_from(argv).ok()?.command {
        Some(crate::cli::Command::Run(r)) => Some(
            r.report_dir
                .unwrap_or_else(|| Path::new(&agent.working_directory).join("reports")),
        ),
        _ => None,
    }
}

/// How many runs `status` shows.
const LAST_RUNS: usize = 5;

fn last_runs(report_dir: &Path) {
    // The history's listing, oldest first: the last LAST_RUNS runs (foreign entries left out).
    let runs: Vec<crate::history::RunEntry> = crate::history::list_runs(report_dir)
        .into_iter()
        .filter(|e| e.stamp.is_some())
        .collect();
    if runs.is_empty() {
        crate::outln!("last runs: none in {}", report_dir.display());
        return;
    }
    crate::outln!("last runs ({}):", report_dir.display());
    for e in runs.iter().rev().take(LAST_RUNS) {
        let what = match (e.report(), e.note()) {
            (Some(r), _) => format!("{}  {}  {}", r.started_at, r.scenario, r.verdict.as_str()),
            (None, Some(n)) => n.text(),
            (None, None) => String::new(),
        };
        crate::outln!("  {}  {what}", e.rel);
    }
}

/// Why the installed plist could not be read (shown beside its path).
#[derive(Debug, thiserror::Error)]
enum Unreadable {
    #[error("{0}")]
    Read(#[source] std::io::Error),
    #[error("unreadable: {0}")]
    Parse(#[source] ::plist::Error),
}

fn read_installed(path: &Path) -> Result<plist::LaunchAgent, Unreadable> {
    let bytes = std::fs::read(path).map_err(Unreadable::Read)?;
    plist::from_bytes(&bytes).map_err(Unreadable::Parse)
}

fn next_run_text(entries: &[CalendarEntry]) -> String {
    let Some(now) = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()
        .map(|d| d.as_secs() as i64)
    else {
        return "unknown".into();
    };
    let Some(tm) = local_tm(now) else {
        return "unknown (no local time)".into();
    };
    let wm = WeekMinute {
        weekday: tm.tm_wday as u8,
        hour: tm.tm_hour as u8,
        minute: tm.tm_min as u8,
    };
    let Some(mins) = calendar::minutes_until_next(entries, wm) else {
        return "unknown (no schedule)".into();
    };
    let at = now - now % 60 + i64::from(mins) * 60;
    let Some(t) = local_tm(at) else {
        return format!("in {mins} min");
    };
    const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
    format!(
        "{} {:04}-{:02}-{:02} {:02}:{:02} local (in {}d {}h {}m; launchd runs a missed time once on wake)",
        DAYS[(t.tm_wday.rem_euclid(7)) as usize],
        t.tm_year + 1900,
        t.tm_mon + 1,
        t.tm_mday,
        t.tm_hour,
        t.tm_min,
        mins / 1440,
        (mins % 1440) / 60,
        mins % 60
    )
}

fn local_tm(secs: i64) -> Option<libc::tm> {
    let t = libc::time_t::try_from(secs).ok()?;
    // SAFETY: `tm` is plain old data; all-zero is valid and localtime_r fills it.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointers to a time_t and a writable tm; localtime_r is thread-safe.
    let r = unsafe { libc::localtime_r(&t, &mut tm) };
    (!r.is_null()).then_some(tm)
}
