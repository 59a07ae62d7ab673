//! Module dependencies run one way: no circle between top-level modules, none between the files of a folder.
//!
//! Every `.rs` file under `src/` is read; comments (doc comments too), string and char literals and every
//! `#[cfg(test)]` item (tests may reach anything) are blanked; then every path that starts with `crate::`,
//! `super::` or `self::` — in a `use` line, a `pub use`, a `use a::{b, c}` group or inline in an expression
//! such as `crate::rehearsal::fleet::run_fleet_scenario(…)` — is resolved to the module (file) it names. A name that a
//! module re-exports (`pub use child::Thing`) is followed to the module that defines it, so `super::Thing`
//! counts as a dependency on the file `Thing` lives in, not on the folder's `mod.rs`.
//!
//! The graph is looked at once per folder: its nodes are the folder's children (files and sub-folders),
//! and an edge `a → b` means some file under `a` names a module under `b`. The crate root's folder is the
//! graph between top-level modules. A folder's own `mod.rs` (its facade) is not a node. A circle is a
//! strongly connected component of two or more nodes. No crate on crates.io does this offline as a
//! test (`cargo-modules` needs rust-analyzer and reports rather than fails), hence this file.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Circles still on main, each removed by work under way; the list may only shrink. Each entry is
/// a folder (`crate` for the top level) and the exact members of one circle in it. Empty: the
/// tree has no circle left.
const KNOWN: &[(&str, &[&str])] = &[];

#[test]
fn no_module_circle_beyond_the_known_list() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = Graph::read(&src);
    let found = graph.circles();
    let known: BTreeSet<(String, Vec<String>)> = KNOWN
        .iter()
        .map(|(folder, members)| {
            let mut m: Vec<String> = members.iter().map(|s| s.to_string()).collect();
            m.sort();
            (folder.to_string(), m)
        })
        .collect();
    let found_keys: BTreeSet<(String, Vec<String>)> = found
        .iter()
        .map(|c| (c.folder.clone(), c.members.clone()))
        .collect();
    let new: Vec<_> = found_keys.difference(&known).collect();
    let gone: Vec<_> = known.difference(&found_keys).collect();
    if !new.is_empty() || !gone.is_empty() {
        let mut msg = String::new();
        for (folder, members) in &new {
            msg.push_str(&format!(
                "new circle in {folder}: {}\n",
                members.join(" ↔ ")
            ));
        }
        for (folder, members) in &gone {
            msg.push_str(&format!(
                "listed circle no longer exists (take it out of KNOWN): {folder}: {}\n",
                members.join(" ↔ ")
            ));
        }
        msg.push_str("\nevery circle in the tree, with one reference per edge:\n");
        for c in &found {
            msg.push_str(&c.describe());
        }
        panic!("{msg}");
    }
}

#[test]
fn the_check_sees_inline_grouped_and_reexported_paths() {
    let files = [
        ("a/mod.rs", "mod x; mod y; pub use x::Thing;"),
        ("a/x.rs", "pub struct Thing; fn f() { crate::b::go(); }"),
        (
            "a/y.rs",
            "use super::{Thing, z::Other}; /// crate::c::never\n fn g() { let s = \"crate::c::no\"; }",
        ),
        (
            "a/z.rs",
            "pub struct Other; #[cfg(test)] mod tests { use crate::c::fine; }",
        ),
        ("b.rs", "pub fn go() { crate::a::Thing; }"),
        ("c.rs", "pub fn fine() {}"),
        ("lib.rs", "mod a; mod b; mod c;"),
    ];
    let graph = Graph::from_sources(files.iter().map(|(p, s)| (PathBuf::from(p), s.to_string())));
    let circles: Vec<String> = graph
        .circles()
        .iter()
        .map(|c| format!("{}: {}", c.folder, c.members.join(",")))
        .collect();
    // a ↔ b through an inline call and a re-export; y → x through `super::Thing`; nothing to c.
    assert_eq!(circles, vec!["crate: a,b".to_string()]);
    let edges = graph.edges_in(&[]);
    assert!(!edges.keys().any(|(_, to)| to == "c"), "{edges:?}");
    let a = graph.edges_in(&["a".to_string()]);
    assert!(a.contains_key(&("y".to_string(), "x".to_string())), "{a:?}");
    assert!(a.contains_key(&("y".to_string(), "z".to_string())), "{a:?}");
}

type ModPath = Vec<String>;

/// One reference: the file and line it was written at.
#[derive(Clone, Debug)]
struct At {
    file: String,
    line: usize,
}

struct Graph {
    /// Every file module (`[]` for lib.rs), with its file.
    files: BTreeMap<ModPath, String>,
    /// Every resolved reference: from a file module to a file module.
    edges: Vec<(ModPath, ModPath, At)>,
}

struct Circle {
    folder: String,
    members: Vec<String>,
    edges: Vec<(String, String, At)>,
}

impl Circle {
    fn describe(&self) -> String {
        let mut s = format!("  {}: {}\n", self.folder, self.members.join(" ↔ "));
        for (a, b, at) in &self.edges {
            s.push_str(&format!("    {a} → {b}   ({}:{})\n", at.file, at.line));
        }
        s
    }
}

impl Graph {
    fn read(src: &Path) -> Graph {
        let mut sources = Vec::new();
        collect(src, src, &mut sources);
        Graph::from_sources(sources.into_iter())
    }

    fn from_sources(sources: impl Iterator<Item = (PathBuf, String)>) -> Graph {
        let mut parsed = Vec::new();
        let mut files = BTreeMap::new();
        for (rel, text) in sources {
            let Some(module) = module_of(&rel) else {
                continue;
            };
            files.insert(module.clone(), rel.display().to_string());
            parsed.push((module, rel.display().to_string(), parse(&text)));
        }
        // Modules declared `#[cfg(test)] mod x;` in another file: test-only files, left out.
        let mut test_only: BTreeSet<ModPath> = BTreeSet::new();
        for (module, _, p) in &parsed {
            for name in &p.test_mods {
                let mut m = module.clone();
                m.push(name.clone());
                test_only.insert(m);
            }
        }
        let in_test = |m: &ModPath| test_only.iter().any(|t| m.starts_with(t));
        // Names a module imports (`use`, `pub use`): module → name → absolute path. A child sees its parent's
        // private imports too (`super::Name`), so every top-level `use` counts.
        let mut reexports: BTreeMap<ModPath, BTreeMap<String, ModPath>> = BTreeMap::new();
        let known: BTreeSet<ModPath> = files.keys().cloned().collect();
        for (module, _, p) in &parsed {
            for r in &p.refs {
                if let (Some(binding), true) = (&r.binding, r.in_use && r.inline.is_empty())
                    && let Some(abs) = absolute(module, &r.inline, &r.segments, r.in_use, &known)
                {
                    reexports
                        .entry(module.clone())
                        .or_default()
                        .insert(binding.clone(), abs);
                }
            }
        }
        let mut edges = Vec::new();
        for (module, file, p) in &parsed {
            if in_test(module) {
                continue;
            }
            for r in &p.refs {
                let Some(abs) = absolute(module, &r.inline, &r.segments, r.in_use, &known) else {
                    continue;
                };
                let target = resolve(&abs, &known, &reexports);
                edges.push((
                    module.clone(),
                    target,
                    At {
                        file: file.clone(),
                        line: r.line,
                    },
                ));
            }
        }
        Graph { files, edges }
    }

    /// Edges between the children of `folder`, each with its first reference.
    fn edges_in(&self, folder: &[String]) -> BTreeMap<(String, String), At> {
        let mut out = BTreeMap::new();
        for (from, to, at) in &self.edges {
            if from.len() > folder.len()
                && to.len() > folder.len()
                && from.starts_with(folder)
                && to.starts_with(folder)
                && from[folder.len()] != to[folder.len()]
            {
                out.entry((from[folder.len()].clone(), to[folder.len()].clone()))
                    .or_insert_with(|| at.clone());
            }
        }
        out
    }

    fn circles(&self) -> Vec<Circle> {
        let mut folders: BTreeSet<ModPath> = BTreeSet::new();
        for m in self.files.keys() {
            for i in 0..m.len() {
                folders.insert(m[..i].to_vec());
            }
        }
        let mut out = Vec::new();
        for folder in folders {
            let edges = self.edges_in(&folder);
            let mut adj: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
            for (a, b) in edges.keys() {
                adj.entry(a.clone()).or_default().insert(b.clone());
                adj.entry(b.clone()).or_default();
            }
            for scc in tarjan(&adj) {
                if scc.len() < 2 {
                    continue;
                }
                let set: BTreeSet<&String> = scc.iter().collect();
                let inner = edges
                    .iter()
                    .filter(|((a, b), _)| set.contains(a) && set.contains(b))
                    .map(|((a, b), at)| (a.clone(), b.clone(), at.clone()))
                    .collect();
                let name = if folder.is_empty() {
                    "crate".to_string()
                } else {
                    folder.join("/")
                };
                out.push(Circle {
                    folder: name,
                    members: scc,
                    edges: inner,
                });
            }
        }
        out
    }
}

fn collect(root: &Path, dir: &Path, out: &mut Vec<(PathBuf, String)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("src/ is readable")
        .flatten()
        .collect();
    entries.sort_by_key(|e| e.path());
    for e in entries {
        let p = e.path();
        if p.is_dir() {
            collect(root, &p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            let text = std::fs::read_to_string(&p).expect("a source file is UTF-8");
            out.push((p.strip_prefix(root).expect("under src").to_path_buf(), text));
        }
    }
}

/// `lib.rs` → `[]`, `a/mod.rs` and `a.rs` → `[a]`, `a/b.rs` → `[a, b]`; `main.rs` and `bin/` are not the library.
fn module_of(rel: &Path) -> Option<ModPath> {
    let parts: Vec<String> = rel
        .iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    let (last, dirs) = parts.split_last()?;
    if dirs.is_empty() && (last == "main.rs" || last == "lib.rs") {
        return (last == "lib.rs").then(Vec::new);
    }
    if dirs.first().is_some_and(|d| d == "bin") {
        return None;
    }
    let mut m: ModPath = dirs.to_vec();
    let stem = last.strip_suffix(".rs")?;
    if stem != "mod" {
        m.push(stem.to_string());
    }
    Some(m)
}

/// The absolute path a written path stands for, from the file module `module` inside its inline modules.
fn absolute(
    module: &ModPath,
    inline: &[String],
    segs: &[String],
    in_use: bool,
    known: &BTreeSet<ModPath>,
) -> Option<ModPath> {
    let mut here: ModPath = module.iter().chain(inline).cloned().collect();
    let mut rest = segs;
    match rest.first().map(String::as_str) {
        Some("crate") => {
            here.clear();
            rest = &rest[1..];
        }
        Some("self") => rest = &rest[1..],
        Some("super") => {
            while rest.first().is_some_and(|s| s == "super") {
                here.pop()?;
                rest = &rest[1..];
            }
        }
        Some(first) if in_use && inline.is_empty() => {
            // A `use child::…` naming a child module of this file.
            let mut child = here.clone();
            child.push(first.to_string());
            if !known.contains(&child) {
                return None;
            }
        }
        _ => return None,
    }
    here.extend(rest.iter().cloned());
    Some(here)
}

/// The file module an absolute path lands in, following re-exports of the item it names.
fn resolve(
    abs: &ModPath,
    known: &BTreeSet<ModPath>,
    reexports: &BTreeMap<ModPath, BTreeMap<String, ModPath>>,
) -> ModPath {
    let mut path = abs.clone();
    for _ in 0..8 {
        let mut n = 0;
        while n < path.len() && known.contains(&path[..n + 1].to_vec()) {
            n += 1;
        }
        let module = path[..n].to_vec();
        let Some(item) = path.get(n) else {
            return module;
        };
        match reexports.get(&module).and_then(|r| r.get(item)) {
            Some(target) if target != &path[..n + 1] => {
                let mut next = target.clone();
                next.extend(path[n + 1..].iter().cloned());
                path = next;
            }
            _ => return module,
        }
    }
    path
}

fn tarjan(adj: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct St<'a> {
        adj: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        next: usize,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut St<'a>, v: &'a str) {
        s.index.insert(v, s.next);
        s.low.insert(v, s.next);
        s.next += 1;
        s.stack.push(v);
        s.on.insert(v);
        for w in &s.adj[v] {
            if !s.index.contains_key(w.as_str()) {
                visit(s, w);
                let lw = s.low[w.as_str()];
                let lv = s.low[v];
                s.low.insert(v, lv.min(lw));
            } else if s.on.contains(w.as_str()) {
                let iw = s.index[w.as_str()];
                let lv = s.low[v];
                s.low.insert(v, lv.min(iw));
            }
        }
        if s.low[v] == s.index[v] {
            let mut scc = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(w);
                scc.push(w.to_string());
                if w == v {
                    break;
                }
            }
            scc.sort();
            s.out.push(scc);
        }
    }
    let mut s = St {
        adj,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in adj.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out
}

// ===== the reader: comments and literals out, then paths =====

#[derive(Debug, PartialEq)]
enum Tok {
    Ident(String),
    Path, // `::`
    Punct(char),
}

/// One path as written, with where it was written.
struct Ref {
    segments: Vec<String>,
    /// The inline (non-test) modules it sits in, inside its file.
    inline: Vec<String>,
    line: usize,
    in_use: bool,
    /// A `use`: the name it binds in this module.
    binding: Option<String>,
}

struct Parsed {
    refs: Vec<Ref>,
    /// `#[cfg(test)] mod name;` declarations.
    test_mods: Vec<String>,
}

fn lex(text: &str) -> Vec<(Tok, usize)> {
    let c: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    let count = |from: usize, to: usize| {
        c[from..to.min(c.len())]
            .iter()
            .filter(|&&x| x == '\n')
            .count()
    };
    while i < c.len() {
        let ch = c[i];
        if ch == '\n' {
            line += 1;
            i += 1;
        } else if ch.is_whitespace() {
            i += 1;
        } else if ch == '/' && c.get(i + 1) == Some(&'/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && c.get(i + 1) == Some(&'*') {
            let (start, mut depth) = (i, 0);
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            line += count(start, i);
        } else if ch == '"'
            || ((ch == 'b' || ch == 'r' || ch == 'c') && is_raw_or_byte_string(&c, i))
        {
            let start = i;
            i = skip_string(&c, i);
            line += count(start, i);
        } else if ch == '\'' {
            if c.get(i + 1) == Some(&'\\') {
                i += 3;
                while i < c.len() && c[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if c.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                i += 1; // a lifetime: its name lexes as an identifier
            }
        } else if ch.is_alphabetic() || ch == '_' {
            let start = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            let mut word: String = c[start..i].iter().collect();
            if word == "r" && c.get(i) == Some(&'#') {
                i += 1;
                let s = i;
                while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                    i += 1;
                }
                word = c[s..i].iter().collect();
            }
            out.push((Tok::Ident(word), line));
        } else if ch == ':' && c.get(i + 1) == Some(&':') {
            out.push((Tok::Path, line));
            i += 2;
        } else {
            out.push((Tok::Punct(ch), line));
            i += 1;
        }
    }
    out
}

fn is_raw_or_byte_string(c: &[char], i: usize) -> bool {
    if i > 0 && (c[i - 1].is_alphanumeric() || c[i - 1] == '_') {
        return false;
    }
    let mut j = i;
    if c[j] == 'b' || c[j] == 'c' {
        j += 1;
    }
    if c.get(j) == Some(&'r') {
        j += 1;
        while c.get(j) == Some(&'#') {
            j += 1;
        }
    }
    j > i && c.get(j) == Some(&'"')
}

fn skip_string(c: &[char], mut i: usize) -> usize {
    let mut hashes = 0;
    let mut raw = false;
    while c[i] != '"' {
        if c[i] == 'r' {
            raw = true;
        }
        if c[i] == '#' {
            hashes += 1;
        }
        i += 1;
    }
    i += 1;
    while i < c.len() {
        if !raw && c[i] == '\\' {
            i += 2;
            continue;
        }
        if c[i] == '"' && (0..hashes).all(|k| c.get(i + 1 + k) == Some(&'#')) {
            return i + 1 + hashes;
        }
        i += 1;
    }
    i
}

fn parse(text: &str) -> Parsed {
    let toks = lex(text);
    let mut refs = Vec::new();
    let mut test_mods = Vec::new();
    // Inline modules: (name, brace depth at which their body closes).
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    let ident = |k: usize| match toks.get(k) {
        Some((Tok::Ident(s), _)) => Some(s.as_str()),
        _ => None,
    };
    let punct = |k: usize, p: char| matches!(toks.get(k), Some((Tok::Punct(q), _)) if *q == p);
    while i < toks.len() {
        // `#[cfg(test)]`: skip the item it guards.
        if punct(i, '#')
            && punct(i + 1, '[')
            && ident(i + 2) == Some("cfg")
            && punct(i + 3, '(')
            && ident(i + 4) == Some("test")
            && punct(i + 5, ')')
            && punct(i + 6, ']')
        {
            i += 7;
            while punct(i, '#') {
                i = skip_group(&toks, i + 1);
            }
            let mut k = i;
            while k < toks.len() && !punct(k, ';') && !punct(k, '{') {
                k += 1;
            }
            if punct(k, ';') {
                if let (Some("mod"), Some(name)) = (ident(k - 2), ident(k - 1)) {
                    test_mods.push(name.to_string());
                }
                i = k + 1;
            } else {
                i = skip_group(&toks, k);
            }
            continue;
        }
        match &toks[i].0 {
            Tok::Punct('{') => {
                depth += 1;
                i += 1;
                continue;
            }
            Tok::Punct('}') => {
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
                i += 1;
                continue;
            }
            Tok::Ident(w) if w == "mod" => {
                if let (Some(name), true) = (ident(i + 1), punct(i + 2, '{')) {
                    inline.push((name.to_string(), depth + 1));
                }
                i += 1;
                continue;
            }
            _ => {}
        }
        let starts_path = matches!(ident(i), Some("crate" | "super" | "self"))
            && matches!(toks.get(i + 1), Some((Tok::Path, _)));
        let after_path = i > 0 && matches!(toks[i - 1].0, Tok::Path);
        let is_use = ident(i) == Some("use");
        if is_use || (starts_path && !after_path && ident(i.wrapping_sub(1)) != Some("in")) {
            let start = if is_use { i + 1 } else { i };
            let line = toks[start.min(toks.len() - 1)].1;
            let mut trees = Vec::new();
            let end = use_tree(&toks, start, Vec::new(), &mut trees);
            for (segments, binding) in trees {
                refs.push(Ref {
                    segments,
                    inline: inline.iter().map(|(n, _)| n.clone()).collect(),
                    line,
                    in_use: is_use,
                    binding,
                });
            }
            i = end.max(i + 1);
            continue;
        }
        i += 1;
    }
    Parsed { refs, test_mods }
}

/// Skips a bracketed group starting at `i` (`[`, `(` or `{`); returns the index after its close.
fn skip_group(toks: &[(Tok, usize)], i: usize) -> usize {
    let mut depth = 0i32;
    let mut k = i;
    while k < toks.len() {
        match toks[k].0 {
            Tok::Punct('[' | '(' | '{') => depth += 1,
            Tok::Punct(']' | ')' | '}') => {
                depth -= 1;
                if depth <= 0 {
                    return k + 1;
                }
            }
            _ => {}
        }
        k += 1;
    }
    k
}

/// Reads a path or use tree at `i` under `prefix`; pushes each leaf (segments, bound name); returns the end.
fn use_tree(
    toks: &[(Tok, usize)],
    mut i: usize,
    prefix: Vec<String>,
    out: &mut Vec<(Vec<String>, Option<String>)>,
) -> usize {
    let mut segs = prefix;
    if matches!(toks.get(i), Some((Tok::Path, _))) {
        i += 1; // a leading `::`: an extern crate path
        segs.push("::".to_string());
    }
    loop {
        match toks.get(i) {
            Some((Tok::Ident(w), _)) => {
                segs.push(w.clone());
                i += 1;
            }
            Some((Tok::Punct('*'), _)) => {
                out.push((segs, None));
                return i + 1;
            }
            Some((Tok::Punct('{'), _)) => {
                i += 1;
                loop {
                    match toks.get(i) {
                        Some((Tok::Punct('}'), _)) | None => return i + 1,
                        Some((Tok::Punct(','), _)) => i += 1,
                        _ => i = use_tree(toks, i, segs.clone(), out),
                    }
                }
            }
            _ => break,
        }
        if matches!(toks.get(i), Some((Tok::Path, _))) {
            i += 1;
        } else {
            break;
        }
    }
    if segs.last().is_some_and(|s| s == "self") {
        segs.pop();
    }
    let mut binding = segs.last().cloned();
    if matches!(toks.get(i), Some((Tok::Ident(w), _)) if w == "as") {
        binding = match toks.get(i + 1) {
            Some((Tok::Ident(a), _)) => Some(a.clone()),
            _ => None,
        };
        i += 2;
    }
    if segs.first().is_some_and(|s| s == "::") || segs.is_empty() {
        return i;
    }
    out.push((segs, binding));
    i
}
