//! The program a LaunchAgent runs must outlive upgrades. A Homebrew install runs from a
//! versioned keg, `PREFIX/Cellar/rehearse/0.1.0/bin/rehearse` (what the running binary's path
//! resolves to), which `brew upgrade` deletes; `PREFIX/bin/rehearse` (and `PREFIX/opt/rehearse/…`)
//! are links Homebrew moves to each new version. [`stable`] maps the one to the other.

use std::path::{Component, Path, PathBuf};

/// `exe` with a Homebrew keg path (`PREFIX/Cellar/NAME/VERSION/REST`, or `PREFIX/opt/NAME/REST`)
/// replaced by `PREFIX/REST` when `usable` says that is an executable file; any other path as
/// it is.
pub(crate) fn stable(exe: &Path, usable: &dyn Fn(&Path) -> bool) -> PathBuf {
    match linked(exe) {
        Some(link) if usable(&link) => link,
        _ => exe.to_path_buf(),
    }
}

/// `PREFIX/REST` of a keg path, `None` for any other.
fn linked(exe: &Path) -> Option<PathBuf> {
    let parts: Vec<Component<'_>> = exe.components().collect();
    let program = exe.file_name()?;
    // The last `Cellar` (or `opt`) followed by a keg named as the program.
    let keg_of_program = |i: usize| matches!(parts.get(i + 1), Some(Component::Normal(n)) if *n == program);
    let (at, skip) = parts.iter().enumerate().rev().find_map(|(i, c)| match c {
        Component::Normal(n) if *n == "Cellar" && parts.len() > i + 3 && keg_of_program(i) => {
            Some((i, 3))
        }
        Component::Normal(n) if *n == "opt" && parts.len() > i + 2 && keg_of_program(i) => {
            Some((i, 2))
        }
        _ => None,
    })?;
    let prefix: PathBuf = parts[..at].iter().collect();
    let rest: PathBuf = parts[at + skip..].iter().collect();
    Some(prefix.join(rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_homebrew_keg_maps_to_the_prefix_link() {
        let all = |_: &Path| true;
        for (exe, want) in [
            (
                "/opt/homebrew/Cellar/rehearse/0.1.0/bin/rehearse",
                "/opt/homebrew/bin/rehearse",
            ),
            (
                "/usr/local/Cellar/rehearse/0.2.0_1/bin/rehearse",
                "/usr/local/bin/rehearse",
            ),
            (
                "/home/linuxbrew/.linuxbrew/Cellar/rehearse/0.1.0/bin/rehearse",
                "/home/linuxbrew/.linuxbrew/bin/rehearse",
            ),
            (
                "/opt/homebrew/opt/rehearse/bin/rehearse",
                "/opt/homebrew/bin/rehearse",
            ),
            // Not Homebrew: unchanged.
            (
                "/Users/r/.cargo/bin/rehearse",
                "/Users/r/.cargo/bin/rehearse",
            ),
            (
                "/Users/r/src/rehearse/target/release/rehearse",
                "/Users/r/src/rehearse/target/release/rehearse",
            ),
            ("/opt/rehearse", "/opt/rehearse"),
            ("/opt/foo/bin/rehearse", "/opt/foo/bin/rehearse"),
        ] {
            assert_eq!(stable(Path::new(exe), &all), Path::new(want), "{exe}");
        }
    }

    /// `schedule print|install` run by a Homebrew install's keg binary writes the prefix link.
    #[cfg(unix)]
    #[test]
    fn the_agent_of_a_homebrew_install_runs_the_prefix_link_never_the_keg() {
        use clap::Parser as _;
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let prefix = tmp.path().canonicalize().unwrap();
        let keg = prefix.join("Cellar/rehearse/0.1.0/bin");
        std::fs::create_dir_all(&keg).unwrap();
        std::fs::create_dir_all(prefix.join("bin")).unwrap();
        let exe = keg.join("rehearse");
        std::fs::write(&exe, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::os::unix::fs::symlink("../Cellar/rehearse/0.1.0/bin/rehearse", prefix.join("bin/rehearse"))
            .unwrap();
        let cli = crate::cli::Cli::try_parse_from([
            "rehearse", "schedule", "print", "--scenario", "smoke", "--weekday", "1", "--hour", "3",
            "--minute", "0",
        ])
        .unwrap();
        let Some(crate::cli::Command::Schedule(crate::cli::ScheduleArgs {
            action: crate::cli::ScheduleAction::Print(args),
        })) = cli.command
        else {
            panic!("not schedule print");
        };
        let env = super::super::Env {
            home: Some(prefix.join("home")),
            cwd: Some(prefix.clone()),
            current_exe: Some(exe.clone()),
            path: None,
        };
        let builtin = |name: &str| {
            Ok(crate::scenario::resolve::Resolved {
                path: PathBuf::from(format!("/cache/{name}.toml")),
                builtin: Some(name.to_string()),
                note: None,
            })
        };
        let spec = super::super::resolve(&args, &env, &builtin).unwrap();
        assert_eq!(spec.program, prefix.join("bin/rehearse"));
        let agent = super::super::plist::build(&spec);
        let xml = format!("{agent:?}");
        assert!(!xml.contains("Cellar"), "{xml}");
    }

    #[test]
    fn without_the_link_the_running_path_stays() {
        let exe = Path::new("/opt/homebrew/Cellar/rehearse/0.1.0/bin/rehearse");
        assert_eq!(stable(exe, &|_| false), exe);
        let only_bin = |p: &Path| p == Path::new("/opt/homebrew/bin/rehearse");
        assert_eq!(stable(exe, &only_bin), Path::new("/opt/homebrew/bin/rehearse"));
    }
}
