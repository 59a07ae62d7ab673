//! The binary alone, as a release download or a Homebrew install has it: the suite's built
//! `rehearse` copied into a temporary directory outside the checkout and run from an empty
//! working directory with a fresh `HOME` and `REHEARSE_CACHE` and nothing else of this
//! environment. The built-in scenarios list and run, `init` writes a project that validates,
//! `schedule print` names no path of a checkout (and every path a scheduled run reads exists),
//! `doctor` and `gateway list` answer; a working directory that cannot be written sends the
//! reports under `HOME`, saying so.

use std::path::{Path, PathBuf};
use std::process::Output;

use super::{checkout, clean, fixture_names, show};

/// The copied binary and the directories it runs with.
struct Alone {
    _tmp: tempfile::TempDir,
    bin: PathBuf,
    home: PathBuf,
    cache: PathBuf,
    work: PathBuf,
    path: String,
}

impl Alone {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        assert!(
            !root.starts_with(checkout()),
            "the temp dir is outside the checkout"
        );
        let bin_dir = root.join("bin");
        let (home, cache, work) = (root.join("home"), root.join("cache"), root.join("work"));
        for d in [&bin_dir, &home, &work] {
            std::fs::create_dir_all(d).unwrap();
        }
        let bin = bin_dir.join("rehearse");
        std::fs::copy(env!("CARGO_BIN_EXE_rehearse"), &bin).unwrap();
        let path = format!("{}:/usr/local/bin:/usr/bin:/bin", bin_dir.display());
        Self {
            _tmp: tmp,
            bin,
            home,
            cache,
            work,
            path,
        }
    }

    /// `rehearse ARGS` in `cwd`.
    fn run_in(&self, cwd: &Path, args: &[&str]) -> Output {
        clean(&self.bin, cwd, &self.home, &self.cache, &self.path)
            .args(args)
            .output()
            .unwrap()
    }

    /// `rehearse ARGS` in the empty working directory, which must exit 0.
    fn ok(&self, args: &[&str]) -> String {
        let out = self.run_in(&self.work, args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", show(&out));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

/// Every `<string>` of a plist that is an absolute path.
fn plist_paths(xml: &str) -> Vec<PathBuf> {
    xml.split("<string>")
        .skip(1)
        .filter_map(|s| s.split("</string>").next())
        .flat_map(|s| s.split(':'))
        .filter(|s| s.starts_with('/'))
        .map(PathBuf::from)
        .collect()
}

/// The `<string>` right after `<key>KEY</key>`.
fn plist_string(xml: &str, key: &str) -> String {
    let at = xml.find(&format!("<key>{key}</key>")).unwrap();
    let rest = &xml[at..];
    let s = rest.find("<string>").unwrap() + "<string>".len();
    rest[s..s + rest[s..].find("</string>").unwrap()].to_string()
}

#[test]
fn the_binary_alone_lists_runs_inits_schedules_and_checks_outside_any_checkout() {
    let a = Alone::new();
    // Nothing of the checkout's fixtures is compiled in as a path.
    let bytes = std::fs::read(&a.bin).unwrap();
    let needle = format!("{}/fixtures", checkout().display());
    assert!(
        !bytes.windows(needle.len()).any(|w| w == needle.as_bytes()),
        "the binary names {needle}"
    );

    let list = a.ok(&["list"]);
    for name in fixture_names() {
        let row = list
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name.as_str()))
            .unwrap_or_else(|| panic!("no row for {name}:\n{list}"));
        assert_eq!(row.split_whitespace().nth(1), Some("built-in"), "{row}");
    }
    assert!(
        list.contains(&format!("({} built-in, 0 of yours", fixture_names().len())),
        "{list}"
    );

    let out = a.ok(&["--scenario", "smoke", "--speed", "5", "--no-progress"]);
    let md = out
        .lines()
        .find_map(|l| l.strip_prefix("report: "))
        .unwrap_or_else(|| panic!("{out}"));
    let run_dir = a.work.join(md).parent().unwrap().to_path_buf();
    assert!(run_dir.starts_with(a.work.join("reports")), "{md}");
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run_dir.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["verdict"], "pass", "{report:#}");
    let text = report.to_string();
    assert!(
        text.contains("builtin:smoke.toml"),
        "the built-in is named as one"
    );
    assert!(!text.contains(&checkout().display().to_string()), "{text}");
    // Extracted once into the versioned cache directory.
    let extracted: Vec<_> = std::fs::read_dir(&a.cache)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(extracted.len(), 1, "{extracted:?}");
    assert!(
        extracted[0].starts_with(&format!("builtin-{}-", env!("CARGO_PKG_VERSION"))),
        "{extracted:?}"
    );

    // A starter project validates as written, by path and by name from its directory.
    a.ok(&["init", "X", "--gateway", "http"]);
    let out = a.ok(&["validate", "X/scenarios/my-gateway-503.toml"]);
    assert!(out.starts_with("ok: "), "{out}");
    let project = a.work.join("X");
    let out = a.run_in(&project, &["validate", "my-gateway-503"]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    // ... and its file now takes the place of nothing: `list` from there says it is the user's.
    let out = a.run_in(&project, &["list"]);
    let list = String::from_utf8_lossy(&out.stdout);
    let row = list
        .lines()
        .find(|l| l.starts_with("my-gateway-503"))
        .unwrap_or_else(|| panic!("{list}"));
    assert!(row.contains("scenarios/my-gateway-503.toml"), "{row}");

    // The LaunchAgent: the copied binary, the built-in by name, every path outside a checkout,
    // every path the run reads present.
    for (cwd, scenario) in [(&a.work, "smoke"), (&project, "my-gateway-503")] {
        let out = a.run_in(
            cwd,
            &[
                "schedule",
                "print",
                "--scenario",
                scenario,
                "--weekday",
                "1",
                "--hour",
                "3",
                "--minute",
                "0",
            ],
        );
        assert_eq!(out.status.code(), Some(0), "{}", show(&out));
        let xml = String::from_utf8_lossy(&out.stdout);
        for p in plist_paths(&xml) {
            assert!(!p.starts_with(checkout()), "{} in\n{xml}", p.display());
            assert!(
                !p.components().any(|c| c.as_os_str() == "fixtures"),
                "{} in\n{xml}",
                p.display()
            );
        }
        let args: Vec<&str> = xml
            .split("<key>ProgramArguments</key>")
            .nth(1)
            .and_then(|s| s.split("</array>").next())
            .unwrap()
            .split("<string>")
            .skip(1)
            .filter_map(|s| s.split("</string>").next())
            .collect();
        assert_eq!(Path::new(args[0]), a.bin, "{xml}");
        let given = args
            .iter()
            .position(|s| *s == "--scenario")
            .map(|i| args[i + 1])
            .unwrap();
        if scenario == "smoke" {
            assert_eq!(given, "builtin:smoke", "{xml}");
        } else {
            assert_eq!(
                Path::new(given),
                project.join("scenarios/my-gateway-503.toml")
            );
        }
        for p in args.iter().filter(|s| s.starts_with('/')) {
            let p = Path::new(p);
            // The report directory is created by the run, under the working directory.
            assert!(
                p.exists() || p.parent().is_some_and(|d| d == cwd.as_path()),
                "{} does not exist:\n{xml}",
                p.display()
            );
        }
        assert_eq!(
            Path::new(&plist_string(&xml, "WorkingDirectory")),
            cwd.as_path()
        );
        for key in ["StandardOutPath", "StandardErrorPath"] {
            assert!(
                Path::new(&plist_string(&xml, key)).starts_with(&a.home),
                "{xml}"
            );
        }
    }

    let out = a.ok(&["doctor"]);
    for tool in [
        "prometheus",
        "promtool",
        "alertmanager",
        "redis-server",
        "node",
        "npm",
        "python3",
    ] {
        assert!(
            out.lines().any(|l| l.starts_with(tool)),
            "{tool} not listed:\n{out}"
        );
    }
    let fleet = out.lines().find(|l| l.starts_with("redis-server")).unwrap();
    assert!(fleet.contains("fleet-probe-storm"), "{fleet}");
    let out = a.ok(&["gateway", "list"]);
    assert!(
        out.lines()
            .any(|l| l.starts_with("built-in scenarios") && l.contains(env!("CARGO_PKG_VERSION"))),
        "{out}"
    );
    assert!(out.contains("pinned: openclaw "), "{out}");
}

/// `/proc` cannot be written, not even by root: the run's reports go to `HOME/rehearse/reports`
/// and stderr says so.
#[cfg(target_os = "linux")]
#[test]
fn a_working_directory_that_cannot_be_written_sends_the_reports_home_and_says_where() {
    let a = Alone::new();
    let out = a.run_in(
        Path::new("/proc"),
        &["--scenario", "smoke", "--speed", "5", "--no-progress"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let reports = a.home.join("rehearse/reports");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("reports go to {}", reports.display())),
        "{err}"
    );
    let runs: Vec<_> = std::fs::read_dir(&reports)
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.path().join("report.json").is_file())
        .collect();
    assert_eq!(
        runs.len(),
        1,
        "one run directory under {}",
        reports.display()
    );
}
