//! No `pub` function, constant or static of an internal module that nothing else names.
//!
//! The internal modules are compiled `pub` under the `testing` feature (`internal!` in
//! `src/lib.rs`), so rustc's dead-code lint cannot see a `pub` item nobody calls: `Breakers::run_ticker`
//! stayed dead that way. This test reads every `.rs` file of `src/`, `tests/`, `benches/` and
//! `examples/` and fails on a `pub` (any `pub(…)` too) `fn`, `const` or `static` of an internal
//! module whose name no other file holds and its own file never names through a path
//! (`route::WS_CHANNEL`, an inline module's item used beside it). Such an item is private at most
//! (then rustc judges it), or dead. Types are left out: a type named only in its own file is still
//! `pub` when another file reaches it through a function's signature.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The identifiers of a file's text (comments and strings included: a name in a doc link or a
/// `serde(default = "…")` attribute is a use).
fn words(text: &str) -> BTreeSet<&str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| {
            w.chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        })
        .collect()
}

/// The `pub` fns, consts and statics a file defines: (line, kind, name).
fn pub_items(text: &str) -> Vec<(usize, &'static str, String)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let Some(rest) = line.trim_start().strip_prefix("pub") else {
            continue;
        };
        let rest = match rest.strip_prefix('(') {
            Some(r) => match r.find(')') {
                Some(end) => &r[end + 1..],
                None => continue,
            },
            None => rest,
        };
        if !rest.starts_with(char::is_whitespace) {
            continue;
        }
        let mut rest = rest.trim_start();
        for q in ["async ", "unsafe ", "extern \"C\" "] {
            rest = rest.strip_prefix(q).unwrap_or(rest).trim_start();
        }
        let (kind, after) = if let Some(r) = rest.strip_prefix("const fn ") {
            ("fn", r)
        } else if let Some(r) = rest.strip_prefix("fn ") {
            ("fn", r)
        } else if let Some(r) = rest.strip_prefix("const ") {
            ("const", r)
        } else if let Some(r) = rest.strip_prefix("static ") {
            ("static", r.strip_prefix("mut ").unwrap_or(r))
        } else {
            continue;
        };
        let name: String = after
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() && name != "_" {
            out.push((i + 1, kind, name));
        }
    }
    out
}

/// The top-level modules `src/lib.rs` declares through `internal!`, and `util` (spelt out).
fn internal_modules(lib: &str) -> BTreeSet<String> {
    let start = lib
        .find("internal!(\n")
        .expect("src/lib.rs invokes internal!(…)");
    let body = &lib[start + "internal!(".len()..];
    let end = body.find(");").expect("internal!(…);");
    body[..end]
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .chain(std::iter::once("util".to_string()))
        .collect()
}

/// Every `pub` item of an internal module's file in `files` (path relative to the root, text)
/// that no other file names: `path:line: kind name`.
fn unused(files: &BTreeMap<PathBuf, String>, internal: &BTreeSet<String>) -> Vec<String> {
    let vocab: BTreeMap<&PathBuf, BTreeSet<&str>> =
        files.iter().map(|(p, t)| (p, words(t))).collect();
    let mut found = Vec::new();
    for (path, text) in files {
        let mut parts = path.components().map(|c| c.as_os_str().to_string_lossy());
        if parts.next().as_deref() != Some("src") {
            continue;
        }
        let Some(top) = parts.next() else { continue };
        let top = top.trim_end_matches(".rs");
        if !internal.contains(top) {
            continue;
        }
        for (line, kind, name) in pub_items(text) {
            let elsewhere = vocab
                .iter()
                .any(|(p, w)| *p != path && w.contains(name.as_str()));
            let by_path = text.contains(&format!("::{name}"));
            if !elsewhere && !by_path {
                found.push(format!("{}:{line}: {kind} {name}", path.display()));
            }
        }
    }
    found
}

fn read_tree(root: &Path, dir: &str, out: &mut BTreeMap<PathBuf, String>) {
    let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let rel = p.strip_prefix(root).unwrap().to_path_buf();
        if p.is_dir() {
            read_tree(root, rel.to_str().unwrap(), out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.insert(rel, std::fs::read_to_string(&p).unwrap());
        }
    }
}

#[test]
fn no_pub_item_of_an_internal_module_is_named_by_nothing_else() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = BTreeMap::new();
    for dir in ["src", "tests", "benches", "examples"] {
        read_tree(root, dir, &mut files);
    }
    let internal = internal_modules(&files[Path::new("src/lib.rs")]);
    assert!(
        internal.contains("rehearsal") && internal.contains("util"),
        "{internal:?}"
    );
    let found = unused(&files, &internal);
    assert!(
        found.is_empty(),
        "`pub` items of internal modules that no other file names (make them private, or \
         delete them if rustc then says they are dead):\n{}",
        found.join("\n")
    );
}

/// The check itself, on a planted tree: a dead `pub fn`, a `pub(crate) const` used only in its
/// own file, an item used by a sibling, by a test, through a path in its own file, and one of a
/// public (not internal) module.
#[test]
fn a_planted_unused_pub_item_is_found() {
    let tree: BTreeMap<PathBuf, String> = [
        (
            "src/run/a.rs",
            "pub fn planted_dead() {}\npub(crate) const ONLY_HERE: u8 = 1;\nfn f() -> u8 { ONLY_HERE }\n\
             pub async fn used_by_b() {}\npub fn used_by_a_test() {}\n\
             mod route { pub const CH: &str = \"c\"; }\nfn g() -> &'static str { route::CH }\n\
             pub struct NamedNowhere;\n",
        ),
        ("src/run/b.rs", "use super::a::used_by_b;\n"),
        ("src/engine/x.rs", "pub fn public_api_item() {}\n"),
        ("tests/t.rs", "// calls used_by_a_test()\n"),
    ]
    .into_iter()
    .map(|(p, t)| (PathBuf::from(p), t.to_string()))
    .collect();
    let internal = ["run".to_string()].into();
    assert_eq!(
        unused(&tree, &internal),
        [
            "src/run/a.rs:1: fn planted_dead",
            "src/run/a.rs:2: const ONLY_HERE"
        ]
    );
}
