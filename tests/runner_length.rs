//! Every kind's runner stays short: the steps every arm shares live once in the arm lifecycle
//! (`src/rehearsal/arm/`), so no function of a room's `arms.rs` or `run.rs` (nor the arm
//! lifecycle itself, nor the fleet's host process) runs over 150 lines. A function's length is
//! counted from its `fn` line to the `}` at its own indentation (what `cargo fmt` writes).

use std::path::Path;

const LIMIT: usize = 150;

/// Every `fn` of `text` with its length in lines.
fn functions(text: &str) -> Vec<(String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        let indent = &line[..line.len() - trimmed.len()];
        let rest = ["pub(crate) ", "pub(super) ", "pub "]
            .iter()
            .find_map(|p| trimmed.strip_prefix(p))
            .unwrap_or(trimmed);
        let rest = rest.strip_prefix("async ").unwrap_or(rest);
        let Some(sig) = rest.strip_prefix("fn ") else {
            continue;
        };
        let name: String = sig
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if trimmed.ends_with('}') || trimmed.ends_with(';') {
            continue; // a one-line fn, or a declaration without a body
        }
        let close = format!("{indent}}}");
        let Some(end) = (i..lines.len()).find(|&j| lines[j] == close) else {
            continue;
        };
        out.push((name, end - i + 1));
    }
    out
}

#[test]
fn the_length_rule_counts_a_function_to_its_closing_brace() {
    let text =
        "pub(crate) async fn a() {\n    x();\n    if y {\n    }\n}\n\nfn b() {}\nfn c() {\n}\n";
    assert_eq!(
        functions(text),
        [("a".to_string(), 5), ("c".to_string(), 2)]
    );
}

#[test]
fn no_runner_is_over_150_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/rehearsal");
    let mut files = vec![root.join("arm/mod.rs"), root.join("fleet/host.rs")];
    for room in ["embedded", "gateway", "fleet"] {
        for name in ["arms.rs", "run.rs", "run/mod.rs"] {
            let p = root.join(room).join(name);
            if p.exists() {
                files.push(p);
            }
        }
    }
    let mut seen = 0;
    let mut long = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        for (name, len) in functions(&text) {
            seen += 1;
            if len > LIMIT {
                long.push(format!("{}: fn {name} is {len} lines", f.display()));
            }
        }
    }
    // Three rooms' entries and runners, the lifecycle and the host: the walk found them all.
    assert!(files.len() >= 8, "{files:?}");
    assert!(seen >= 20, "only {seen} functions found in {files:?}");
    assert!(
        long.is_empty(),
        "runners over {LIMIT} lines:\n{}",
        long.join("\n")
    );
}
