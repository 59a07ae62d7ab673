//! The built-in scenarios: `fixtures/scenarios` and the catalogue of the field's failure cases
//! (`fixtures/catalogue`, the `catalogue` group of `rehearse list`), their traffic, rule files
//! and the OpenClaw user-config example, embedded in the binary so a binary alone (a release download, a Homebrew
//! install, `cargo install`) runs `--scenario smoke` from any directory. A run needs real files
//! (the traffic is read relative to the scenario, rule files are handed to promtool and
//! Prometheus), so [`extract`] writes the whole tree once into a directory of the cache named
//! after this binary's version and the tree's hash; every file is checked against its embedded
//! bytes on each use and rewritten (atomically) when it differs. Errors in a built-in name it
//! `builtin:NAME.toml` ([`shown`]), not by its place in the cache.

use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

use include_dir::{Dir, include_dir};
use sha2::{Digest, Sha256};

mod extract;

pub(crate) use extract::{ExtractError, extract};

/// The prefix of a built-in in errors and on the command line (`--scenario builtin:smoke`).
pub(crate) const PREFIX: &str = "builtin:";

static SCENARIOS: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/fixtures/scenarios");
static CATALOGUE: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/fixtures/catalogue");
static TRAFFIC: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/fixtures/traffic");
static RULES: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/fixtures/rules");
static OPENCLAW: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/fixtures/openclaw");

/// The embedded trees: (directory under the extraction root, the tree, the extension its files
/// have). Other files of those directories (the traffic generator script, a README) are not
/// part of a scenario and are left out.
const TREES: [(&str, &Dir<'static>, &str); 5] = [
    ("scenarios", &SCENARIOS, "toml"),
    ("catalogue", &CATALOGUE, "toml"),
    ("traffic", &TRAFFIC, "jsonl"),
    ("rules", &RULES, "yml"),
    ("openclaw", &OPENCLAW, "json5"),
];

/// One embedded file: its path under the extraction root and its bytes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct File {
    /// `scenarios/smoke.toml`, `traffic/smoke.jsonl`.
    pub rel: &'static str,
    /// Its content.
    pub bytes: &'static [u8],
}

/// Every embedded file a scenario may use, sorted by path.
pub(crate) fn files() -> &'static [File] {
    static FILES: OnceLock<Vec<File>> = OnceLock::new();
    FILES.get_or_init(|| {
        let mut out = Vec::new();
        for (dir, tree, ext) in TREES {
            for f in tree.files() {
                if f.path().extension().is_some_and(|e| e == ext)
                    && let Some(name) = f.path().file_name().and_then(|n| n.to_str())
                {
                    // Leaked once per process: a handful of short static strings.
                    let rel: &'static str = Box::leak(format!("{dir}/{name}").into_boxed_str());
                    out.push(File {
                        rel,
                        bytes: f.contents(),
                    });
                }
            }
        }
        out.sort_by_key(|f| f.rel);
        out
    })
}

/// The directories built-in scenarios live in under the extraction root, each a group of
/// `rehearse list`: the scenarios, then the catalogue.
pub(crate) const GROUPS: [&str; 2] = ["scenarios", "catalogue"];

/// The built-in scenarios' names (file stems) of every group, sorted. A name is unique across
/// the groups (`tests.rs`), so a NAME finds one file.
pub(crate) fn names() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = files().iter().filter_map(|f| scenario_of(f.rel)).collect();
    out.sort_unstable();
    out
}

/// `scenarios/smoke.toml` → `smoke`; `catalogue/silence.toml` → `silence`; else `None`.
fn scenario_of(rel: &'static str) -> Option<&'static str> {
    let (dir, file) = rel.split_once('/')?;
    GROUPS.contains(&dir).then_some(())?;
    file.strip_suffix(".toml")
}

/// The group of the built-in scenario `name` (`scenarios`, `catalogue`).
pub(crate) fn group(name: &str) -> Option<&'static str> {
    scenario_rel(name)?.split_once('/').map(|(d, _)| d)
}

/// Where the built-in scenario `name` lives under the extraction root (`catalogue/silence.toml`).
pub(crate) fn scenario_rel(name: &str) -> Option<&'static str> {
    files()
        .iter()
        .map(|f| f.rel)
        .find(|rel| scenario_of(rel) == Some(name))
}

/// The text of the built-in scenario `name`.
pub(crate) fn scenario_text(name: &str) -> Option<&'static str> {
    let rel = scenario_rel(name)?;
    files()
        .iter()
        .find(|f| f.rel == rel)
        .and_then(|f| std::str::from_utf8(f.bytes).ok())
}

/// The first 12 hex digits of the SHA-256 of every embedded path and its bytes: two binaries
/// with the same version but other fixtures (a development build) extract to different places.
pub(crate) fn tree_hash() -> &'static str {
    static HASH: OnceLock<String> = OnceLock::new();
    HASH.get_or_init(|| {
        let mut h = Sha256::new();
        for f in files() {
            h.update(f.rel.as_bytes());
            h.update([0]);
            h.update((f.bytes.len() as u64).to_le_bytes());
            h.update(f.bytes);
        }
        let mut hex = hex::encode(h.finalize());
        hex.truncate(12);
        hex
    })
}

/// The extraction directory's name: `builtin-0.1.0-3f9a…`.
pub(crate) fn dir_name() -> String {
    format!("builtin-{}-{}", env!("CARGO_PKG_VERSION"), tree_hash())
}

/// Where this binary's built-ins are extracted, under `cache` (the cache root).
pub(crate) fn root_in(cache: &Path) -> PathBuf {
    cache.join(dir_name())
}

/// The extraction root this process uses, once [`extract`] has chosen it.
static CHOSEN: OnceLock<PathBuf> = OnceLock::new();

/// `builtin:smoke.toml` for a file under the extraction root (a scenario group's directory —
/// `scenarios/`, `catalogue/` — left out, other directories kept: `builtin:traffic/smoke.jsonl`),
/// else the path as given.
pub(crate) fn shown(path: &Path) -> String {
    CHOSEN
        .get()
        .and_then(|root| shown_under(root, path))
        .unwrap_or_else(|| path.display().to_string())
}

/// [`shown`] against an explicit extraction root.
pub(crate) fn shown_under(root: &Path, path: &Path) -> Option<String> {
    let rel = lexical(path.strip_prefix(root).ok()?)?;
    let rel = GROUPS
        .iter()
        .find_map(|g| rel.strip_prefix(g).ok())
        .unwrap_or(&rel);
    Some(format!("{PREFIX}{}", rel.display()))
}

/// `a/../b/./c` → `b/c`; `None` when it climbs above its start.
fn lexical(p: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::Normal(n) => out.push(n),
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests;
