//! Seeding the further profiles' keys without a CLI start each.
//!
//! `openclaw models auth paste-api-key` is a whole OpenClaw CLI start (13–22 s of CPU on an
//! idle 2-core machine, 15–40 s on a busy one), and a gateway with three profiles paid it three
//! times before it could start. The first profile is still seeded by the CLI: it creates the state
//! database and writes the profile store in the shape this release uses. The others are then
//! added to that same store, beside the first, by Node's `node:sqlite` (the SQLite OpenClaw writes
//! with, through the install's own Node): the row `authProfiles.store` in `config_machine_state`,
//! read, extended and written back in one `BEGIN IMMEDIATE` transaction while no gateway runs.
//!
//! Only when the store is the shape seen (2026.9.x: `{"version":1,"profiles":{ID:{"type":
//! "api_key","provider":P,"key":K}}}`, the CLI's own entry for the first profile exactly that) is
//! anything written; any other shape, a missing row or table, or a Node that cannot run, writes
//! nothing and says why, and the caller seeds the rest with the CLI as before. Keys reach the
//! script on its stdin, never in its arguments or environment.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use serde::Serialize;

/// Adds profiles beside the one the CLI wrote. Prints `added N`, or `unsupported: WHY`.
const ADD_SCRIPT: &str = r#"
const { DatabaseSync } = require("node:sqlite");
const [dbPath, firstId] = process.argv.slice(1);
let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (d) => (input += d));
process.stdin.on("end", () => {
  const add = JSON.parse(input);
  const db = new DatabaseSync(dbPath);
  let done = false;
  try {
    db.exec("PRAGMA busy_timeout = 5000");
    db.exec("BEGIN IMMEDIATE");
    const row = db
      .prepare("SELECT value_json FROM config_machine_state WHERE state_key = 'authProfiles.store'")
      .get();
    if (!row) throw new Error("unsupported: no authProfiles.store row");
    const store = JSON.parse(row.value_json);
    const first = store && store.profiles && store.profiles[firstId];
    const shape = first ? Object.keys(first).sort().join(",") : "";
    if (store.version !== 1 || shape !== "key,provider,type" || first.type !== "api_key")
      throw new Error(`unsupported: store version ${store.version}, first profile's fields [${shape}]`);
    for (const p of add) store.profiles[p.id] = { type: "api_key", provider: p.provider, key: p.key };
    db.prepare(
      "UPDATE config_machine_state SET value_json = ?, updated_at_ms = ? WHERE state_key = 'authProfiles.store'"
    ).run(JSON.stringify(store), Date.now());
    db.exec("COMMIT");
    done = true;
    process.stdout.write(`added ${add.length}`);
  } catch (e) {
    if (!done) { try { db.exec("ROLLBACK"); } catch (_) {} }
    const m = String(e && e.message || e);
    process.stdout.write(m.startsWith("unsupported:") ? m : `unsupported: ${m.split("\n")[0]}`);
  } finally {
    db.close();
  }
});
"#;

/// One profile to add.
#[derive(Serialize)]
pub(super) struct StoreProfile {
    pub id: String,
    pub provider: String,
    pub key: String,
}

/// Adds `profiles` to the store in `db`, beside `first` (the profile the CLI seeded). `Ok` when
/// written; `Err(why)` when nothing was written (the caller seeds them with the CLI). `why`
/// never holds a key: the script's output names fields and versions only.
pub(super) fn add_beside(
    node: &Path,
    db: &Path,
    first: &str,
    profiles: &[StoreProfile],
) -> Result<(), String> {
    let input = serde_json::to_vec(profiles).map_err(|e| format!("encoding: {e}"))?;
    let mut child = Command::new(node)
        .arg("-e")
        .arg(ADD_SCRIPT)
        .arg(db)
        .arg(first)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("running {}: {e}", node.display()))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(&input)
            .map_err(|e| format!("writing to node's stdin: {e}"))?;
    }
    let out = child
        .wait_with_output()
        .map_err(|e| format!("waiting for node: {e}"))?;
    let said = String::from_utf8_lossy(&out.stdout).trim().to_string();
    match said.strip_prefix("added ") {
        Some(n) if out.status.success() && n == profiles.len().to_string() => Ok(()),
        _ if said.is_empty() => Err(format!("node exited with {} saying nothing", out.status)),
        _ => Err(said),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Node that is not there writes nothing and says so (the caller falls back to the CLI).
    #[test]
    fn a_missing_node_writes_nothing_and_says_why() {
        let dir = tempfile::tempdir().unwrap();
        let p = [StoreProfile {
            id: "mockai:b".into(),
            provider: "mockai".into(),
            key: "sk-secret".into(),
        }];
        let e = add_beside(
            &dir.path().join("no-node"),
            &dir.path().join("db"),
            "mockai:a",
            &p,
        )
        .unwrap_err();
        assert!(e.contains("no-node"), "{e}");
        assert!(!e.contains("sk-secret"), "{e}");
    }
}
