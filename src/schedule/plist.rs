//! The LaunchAgent plist (launchd.plist(5)) as a serde struct with launchd's PascalCase keys,
//! written and read with the `plist` crate, and built from a resolved [`AgentSpec`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::calendar::CalendarEntry;

/// launchd's default PATH is `/usr/bin:/bin:/usr/sbin:/sbin` (`sysctl user.cs_path`), without
/// Homebrew; the scheduled run gets these, Apple-silicon Homebrew first.
const SANE_PATH: &str = "/opt/homebrew/bin:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin";

/// `StartCalendarInterval`: one dict, or an array for several entries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum CalendarInterval {
    /// A single entry, written as a dict.
    One(CalendarEntry),
    /// Several entries, written as an array of dicts.
    Many(Vec<CalendarEntry>),
}

impl CalendarInterval {
    /// A dict for one entry, an array for several.
    fn from_entries(mut entries: Vec<CalendarEntry>) -> Self {
        if entries.len() == 1 {
            Self::One(entries.remove(0))
        } else {
            Self::Many(entries)
        }
    }

    /// The entries, whichever shape.
    pub fn entries(&self) -> Vec<CalendarEntry> {
        match self {
            Self::One(e) => vec![*e],
            Self::Many(v) => v.clone(),
        }
    }
}

/// A LaunchAgent job. Field order is the order of keys in the written file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct LaunchAgent {
    /// Unique job label; the file is `<Label>.plist`.
    pub label: String,
    /// argv for execvp: the absolute binary path, `run`, `--scenario X`…, `--report-dir DIR`.
    pub program_arguments: Vec<String>,
    /// When to run.
    pub start_calendar_interval: CalendarInterval,
    /// stdout log, under `~/Library/Logs/rehearse/`.
    pub standard_out_path: String,
    /// stderr log, under `~/Library/Logs/rehearse/`.
    pub standard_error_path: String,
    /// launchd does not inherit the login shell's environment; PATH is set here.
    pub environment_variables: BTreeMap<String, String>,
    /// The run resolves scenario NAMEs relative to this directory.
    pub working_directory: String,
    /// `Interactive`: no CPU / I/O throttling; unspecified means "light resource limits".
    pub process_type: String,
    /// `true`: the job's timers are not coalesced ("less efficient but more precise"), which the
    /// replayer's absolute send schedule and ms transition tolerances need; the man page says
    /// it may have no effect unless ProcessType is Interactive, hence both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub legacy_timers: Option<bool>,
}

/// Everything the plist is built from, resolved to absolute paths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentSpec {
    /// Job label.
    pub label: String,
    /// Absolute path of the `rehearse` binary.
    pub program: PathBuf,
    /// Absolute scenario files, in order (resolved when the plist is written, so the run at
    /// 03:00 does not depend on its working directory to find them).
    pub scenarios: Vec<PathBuf>,
    /// Absolute report directory.
    pub report_dir: PathBuf,
    /// Absolute working directory.
    pub working_dir: PathBuf,
    /// The user's home (from `$HOME`), for the log paths.
    pub home: PathBuf,
    /// Calendar entries (at least one).
    pub calendar: Vec<CalendarEntry>,
    /// `--keep N` for the run (`None`: keep every run).
    pub keep: Option<u32>,
    /// `--textfile-dir` for the run (absolute).
    pub textfile_dir: Option<PathBuf>,
    /// `--pushgateway` for the run.
    pub pushgateway: Option<String>,
    /// `--on-fail` for the run.
    pub on_fail: Option<String>,
}

/// Where launchd writes the job's logs: `HOME/Library/Logs/rehearse`.
fn log_dir(home: &Path) -> PathBuf {
    home.join("Library/Logs/rehearse")
}

/// The directory the job's logs go to: the parent of `StandardOutPath` (launchd opens the
/// files but never creates their directory).
pub(crate) fn logs_of(agent: &LaunchAgent) -> Option<PathBuf> {
    Path::new(&agent.standard_out_path)
        .parent()
        .map(Path::to_path_buf)
}

/// Builds the job from a resolved spec.
pub fn build(spec: &AgentSpec) -> LaunchAgent {
    let mut args = vec![spec.program.display().to_string(), "run".to_string()];
    for s in &spec.scenarios {
        args.push("--scenario".into());
        args.push(s.display().to_string());
    }
    args.push("--report-dir".into());
    args.push(spec.report_dir.display().to_string());
    if let Some(k) = spec.keep {
        args.push("--keep".into());
        args.push(k.to_string());
    }
    if let Some(d) = &spec.textfile_dir {
        args.push("--textfile-dir".into());
        args.push(d.display().to_string());
    }
    if let Some(u) = &spec.pushgateway {
        args.push("--pushgateway".into());
        args.push(u.clone());
    }
    if let Some(c) = &spec.on_fail {
        args.push("--on-fail".into());
        args.push(c.clone());
    }
    let logs = log_dir(&spec.home);
    let mut env = BTreeMap::new();
    env.insert("PATH".to_string(), path_for(&spec.program));
    LaunchAgent {
        label: spec.label.clone(),
        program_arguments: args,
        start_calendar_interval: CalendarInterval::from_entries(spec.calendar.clone()),
        standard_out_path: logs
            .join(format!("{}.out.log", spec.label))
            .display()
            .to_string(),
        standard_error_path: logs
            .join(format!("{}.err.log", spec.label))
            .display()
            .to_string(),
        environment_variables: env,
        working_directory: spec.working_dir.display().to_string(),
        process_type: "Interactive".to_string(),
        legacy_timers: Some(true),
    }
}

/// [`SANE_PATH`], with the program's own directory first when it is not already on it.
fn path_for(program: &Path) -> String {
    match program.parent().map(|p| p.display().to_string()) {
        Some(dir) if !dir.is_empty() && !SANE_PATH.split(':').any(|d| d == dir) => {
            format!("{dir}:{SANE_PATH}")
        }
        _ => SANE_PATH.to_string(),
    }
}

/// The job as plist XML (with a trailing newline).
pub fn to_xml(agent: &LaunchAgent) -> Result<String, plist::Error> {
    let mut buf = Vec::new();
    plist::to_writer_xml(&mut buf, agent)?;
    if buf.last() != Some(&b'\n') {
        buf.push(b'\n');
    }
    // ok: the plist writer emits UTF-8 only; lossy conversion never replaces anything here.
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

/// Reads a job back from plist bytes (XML or binary).
pub fn from_bytes(bytes: &[u8]) -> Result<LaunchAgent, plist::Error> {
    plist::from_bytes(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> AgentSpec {
        AgentSpec {
            label: "dev.rehearse.weekly".into(),
            program: "/usr/local/bin/rehearse".into(),
            scenarios: vec![
                "/Users/r/rehearse/fixtures/scenarios/weekly.toml".into(),
                "/Users/r/a b & <c> \"d\".toml".into(),
            ],
            report_dir: "/Users/r/rehearse/reports".into(),
            working_dir: "/Users/r/rehearse".into(),
            home: "/Users/r".into(),
            calendar: vec![CalendarEntry {
                weekday: Some(1),
                hour: Some(3),
                minute: Some(0),
            }],
            keep: Some(12),
            textfile_dir: None,
            pushgateway: None,
            on_fail: None,
        }
    }

    #[test]
    fn round_trips_through_the_plist_crate() {
        let a = build(&spec());
        let xml = to_xml(&a).unwrap();
        assert!(
            xml.contains("<key>StartCalendarInterval</key>\n\t<dict>"),
            "{xml}"
        );
        assert!(xml.contains("a b &amp; &lt;c&gt;"), "{xml}");
        assert_eq!(from_bytes(xml.as_bytes()).unwrap(), a);
        let mut two = spec();
        two.calendar.push(CalendarEntry {
            weekday: Some(4),
            hour: Some(3),
            minute: Some(30),
        });
        let b = build(&two);
        let xml = to_xml(&b).unwrap();
        assert!(
            xml.contains("<key>StartCalendarInterval</key>\n\t<array>"),
            "{xml}"
        );
        assert_eq!(from_bytes(xml.as_bytes()).unwrap(), b);
    }

    #[test]
    fn argv_paths_and_environment() {
        let a = build(&spec());
        assert_eq!(
            a.program_arguments,
            [
                "/usr/local/bin/rehearse",
                "run",
                "--scenario",
                "/Users/r/rehearse/fixtures/scenarios/weekly.toml",
                "--scenario",
                "/Users/r/a b & <c> \"d\".toml",
                "--report-dir",
                "/Users/r/rehearse/reports",
                "--keep",
                "12"
            ]
        );
        let mut s = spec();
        s.keep = None;
        s.textfile_dir = Some("/var/lib/node_exporter/textfile".into());
        s.pushgateway = Some("http://pg:9091".into());
        s.on_fail = Some("curl -d @\"$1\" http://hook".into());
        assert_eq!(
            build(&s).program_arguments[8..],
            [
                "--textfile-dir",
                "/var/lib/node_exporter/textfile",
                "--pushgateway",
                "http://pg:9091",
                "--on-fail",
                "curl -d @\"$1\" http://hook"
            ]
        );
        assert_eq!(
            a.standard_out_path,
            "/Users/r/Library/Logs/rehearse/dev.rehearse.weekly.out.log"
        );
        assert_eq!(a.environment_variables["PATH"], SANE_PATH);
        assert_eq!(
            logs_of(&a).as_deref(),
            Some(Path::new("/Users/r/Library/Logs/rehearse"))
        );
        let mut s = spec();
        s.program = "/Users/r/.cargo/bin/rehearse".into();
        assert_eq!(
            build(&s).environment_variables["PATH"],
            format!("/Users/r/.cargo/bin:{SANE_PATH}")
        );
    }
}
