//! Build-time facts the binary reports: the commit it was built from (`rehearse --version`), and
//! a rebuild whenever an embedded fixture directory changes (the built-in scenarios,
//! `src/builtin/`: `include_dir!` sees edited files, not added or removed ones).
//!
//! The commit, first found of: `$REHEARSE_COMMIT` (a release build sets it), the
//! `.cargo_vcs_info.json` `cargo package` writes into a packaged crate, `git rev-parse HEAD` in
//! the source tree (a checkout, or the clone `cargo install --git` builds from); else `unknown`.

use std::path::Path;
use std::process::Command;

fn main() {
    for dir in [
        "fixtures/scenarios",
        "fixtures/catalogue",
        "fixtures/traffic",
        "fixtures/rules",
        "fixtures/openclaw",
    ] {
        println!("cargo:rerun-if-changed={dir}");
    }
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=REHEARSE_COMMIT");
    let root = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    let root = Path::new(&root);
    let commit = std::env::var("REHEARSE_COMMIT")
        .ok()
        .filter(|c| !c.trim().is_empty())
        .or_else(|| from_vcs_info(root))
        .or_else(|| from_git(root))
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=REHEARSE_COMMIT={}", short(commit.trim()));
}

/// At most 12 characters of a hash; anything else as is.
fn short(commit: &str) -> &str {
    if commit.len() > 12 && commit.chars().all(|c| c.is_ascii_hexdigit()) {
        &commit[..12]
    } else {
        commit
    }
}

/// `{"git": {"sha1": "…"}}` of a packaged crate.
fn from_vcs_info(root: &Path) -> Option<String> {
    let path = root.join(".cargo_vcs_info.json");
    let text = std::fs::read_to_string(&path).ok()?;
    watch(&path);
    // A one-key lookup: no JSON parser in the build script's dependencies for it.
    let at = text.find("\"sha1\"")?;
    let rest = &text[at + 6..];
    let start = rest.find('"')? + 1;
    let end = start + rest[start..].find('"')?;
    Some(rest[start..end].to_string())
}

/// `git rev-parse HEAD` in the source tree, when it is a git work tree (and git is installed);
/// the build reruns when HEAD moves.
fn from_git(root: &Path) -> Option<String> {
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(args)
            .current_dir(root)
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    // Only the tree this crate is the top of: a crate unpacked inside another repository
    // (a registry download under a checkout) must not take that repository's commit.
    let top = git(&["rev-parse", "--show-toplevel"])?;
    let same = |a: &Path, b: &Path| a.canonicalize().ok() == b.canonicalize().ok();
    if !same(Path::new(&top), root) {
        return None;
    }
    // HEAD's reflog moves on every commit, checkout, merge and reset of this work tree (a
    // branch's own file is missing once packed); HEAD and packed-refs for a tree without logs.
    for name in ["logs/HEAD", "HEAD", "packed-refs"] {
        if let Some(p) = git(&["rev-parse", "--git-path", name]) {
            watch(&root.join(p));
        }
    }
    if let Some(r) = git(&["symbolic-ref", "-q", "HEAD"])
        && let Some(p) = git(&["rev-parse", "--git-path", &r])
    {
        watch(&root.join(p));
    }
    git(&["rev-parse", "HEAD"])
}

/// Reruns the build when `path` changes; only for a file that exists (cargo reruns a build
/// script on every build for a missing one).
fn watch(path: &Path) {
    if path.exists() {
        println!("cargo:rerun-if-changed={}", path.display());
    }
}
