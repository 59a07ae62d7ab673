//! Installing and running from the binary alone: the binary copied out of the checkout (built-in
//! scenarios, `init`, `schedule print`, `doctor`, `gateway list`), the gateway installs against
//! `scripts/install-*.sh` (the same pins, the same npm and pip calls), the `http` starter run as
//! written, and the release files (formula, workflow, package list).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod gateways;
mod isolated;
mod release;
mod starter;

/// stdout and stderr of a finished command, for assertion messages.
pub(crate) fn show(out: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Writes an executable script.
pub(crate) fn script(path: &Path, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, body).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// The checkout this test was built from.
pub(crate) fn checkout() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A command with nothing of the caller's environment but `PATH` (given), `HOME` and
/// `REHEARSE_CACHE` (given), run in `cwd`.
pub(crate) fn clean(program: &Path, cwd: &Path, home: &Path, cache: &Path, path: &str) -> Command {
    let mut cmd = Command::new(program);
    cmd.current_dir(cwd)
        .env_clear()
        .env("PATH", path)
        .env("HOME", home)
        .env("REHEARSE_CACHE", cache)
        .env("LANG", "C.UTF-8");
    cmd
}

/// The built-in names, from the checkout's fixtures (read by the test, never by the binary).
pub(crate) fn fixture_names() -> Vec<String> {
    let mut names: Vec<String> = ["fixtures/scenarios", "fixtures/catalogue"]
        .iter()
        .flat_map(|d| std::fs::read_dir(checkout().join(d)).unwrap())
        .filter_map(|e| {
            let p = e.unwrap().path();
            (p.extension()? == "toml").then(|| p.file_stem().unwrap().to_string_lossy().into())
        })
        .collect();
    names.sort();
    names
}
