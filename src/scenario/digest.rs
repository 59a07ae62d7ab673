//! The scenario's digest (report.json `scenario_digest`): a SHA-256 over the bytes of every file
//! that shapes what a run does — the scenario file itself, the traffic file it names, `[target]
//! config` (the user's OpenClaw configuration) and `[prometheus] rules` — so two runs with the
//! same digest rehearsed the same thing. Drift takes its baseline only from runs of the same
//! digest (`history::drift`).
//!
//! Each file enters under its role in the scenario (`scenario`, `traffic`, `target.config`,
//! `prometheus.rules[0]`, ...), never under its path: a scenario moved or copied elsewhere keeps
//! its digest, a comment edited or a traffic line added changes it. Files the run writes itself
//! (`[prometheus] targets_file`) and the shipped rules (part of the binary, whose version the
//! report records apart) are not in it.

use std::path::Path;

use sha2::{Digest, Sha256};

use super::format::ScenarioFile;

/// The digest's prefix: the hash function, so a later change of function is visible.
pub const PREFIX: &str = "sha256:";

/// The digest of some (role, bytes) parts, in order: `sha256:` and 64 hex digits. Each part is
/// framed by its role and length, so no two different lists of parts give the same input.
fn of_parts<'a>(parts: impl IntoIterator<Item = (&'a str, &'a [u8])>) -> String {
    let mut h = Sha256::new();
    for (role, bytes) in parts {
        h.update(role.as_bytes());
        h.update([0u8]);
        h.update((bytes.len() as u64).to_be_bytes());
        h.update(bytes);
    }
    format!("{PREFIX}{}", hex::encode(h.finalize()))
}

/// The digest of a scenario whose text is `text` at `path`: its text, then the files it names,
/// each read from disk relative to the scenario's directory. A file that cannot be read is an
/// error naming it (the checks before read them all, so this is a file changed under the run).
///
/// With the bytes of a `--target` file that replaced the scenario's `[target]` (`target_file`,
/// after the scenario's own files): the same scenario against another target file is another
/// digest, so drift never takes one target's runs as another's baseline.
pub(crate) fn of_scenario_with(
    path: &Path,
    text: &str,
    file: &ScenarioFile,
    target_file: Option<&[u8]>,
) -> Result<String, String> {
    let dir = path.parent().unwrap_or(Path::new(""));
    let mut named: Vec<(String, std::path::PathBuf)> =
        vec![("traffic".to_string(), dir.join(&file.traffic))];
    if let Some(c) = &file.target.config {
        named.push(("target.config".into(), dir.join(c)));
    }
    if let Some(p) = &file.prometheus {
        for (i, r) in p.rule_paths(path).into_iter().enumerate() {
            named.push((format!("prometheus.rules[{i}]"), r));
        }
    }
    let mut read: Vec<(String, Vec<u8>)> = Vec::with_capacity(named.len());
    for (role, p) in named {
        let bytes = std::fs::read(&p).map_err(|e| format!("{}: {e}", p.display()))?;
        read.push((role, bytes));
    }
    let parts = std::iter::once(("scenario", text.as_bytes()))
        .chain(read.iter().map(|(r, b)| (r.as_str(), b.as_slice())))
        .chain(target_file.map(|b| ("target_file", b)));
    Ok(of_parts(parts))
}

/// The digest of one file's bytes (`sha256:` and 64 hex digits): a `--target` file's in the
/// report.
pub(crate) fn of_bytes(bytes: &[u8]) -> String {
    let mut h = Sha256::new();
    h.update(bytes);
    format!("{PREFIX}{}", hex::encode(h.finalize()))
}

/// The first 12 hex digits, as reports and listings show a digest (`1a2b3c4d5e6f`).
pub fn short(digest: &str) -> &str {
    let hex = digest.strip_prefix(PREFIX).unwrap_or(digest);
    hex.get(..12).unwrap_or(hex)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_framed_and_a_byte_anywhere_changes_the_digest() {
        let a = of_parts([("scenario", &b"ab"[..]), ("traffic", &b"c"[..])]);
        assert!(a.starts_with("sha256:") && a.len() == 7 + 64, "{a}");
        // The same bytes split differently are another input.
        let b = of_parts([("scenario", &b"a"[..]), ("traffic", &b"bc"[..])]);
        assert_ne!(a, b);
        assert_ne!(a, of_parts([("scenario", &b"ab"[..]), ("traffic", &b"d"[..])]));
        assert_eq!(a, of_parts([("scenario", &b"ab"[..]), ("traffic", &b"c"[..])]));
        assert_eq!(short(&a).len(), 12);
        assert_eq!(short("abc"), "abc");
    }

    #[test]
    fn a_moved_scenario_keeps_its_digest_and_its_traffic_is_in_it() {
        let scenario = "name = \"t\"\nduration = \"10s\"\ntraffic = \"t.jsonl\"\n";
        let file = ScenarioFile::parse(scenario, "t.toml").unwrap();
        let write = |dir: &Path, traffic: &str| {
            std::fs::write(dir.join("t.toml"), scenario).unwrap();
            std::fs::write(dir.join("t.jsonl"), traffic).unwrap();
            of_scenario_with(&dir.join("t.toml"), scenario, &file, None).unwrap()
        };
        let (one, two) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let line = "{\"at_ms\":0,\"kind\":\"tool\",\"tool\":\"x\"}\n";
        assert_eq!(write(one.path(), line), write(two.path(), line));
        let more = format!("{line}{line}");
        assert_ne!(write(one.path(), line), write(two.path(), &more));
        std::fs::remove_file(two.path().join("t.jsonl")).unwrap();
        let e = of_scenario_with(&two.path().join("t.toml"), scenario, &file, None).unwrap_err();
        assert!(e.contains("t.jsonl"), "{e}");
    }
}
