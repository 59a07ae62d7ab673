//! Does this release accept this configuration? OpenClaw 2026.9 validates its config strictly
//! (an unknown key stops the gateway's start): `openclaw config validate --json`, run in a
//! scratch sandbox of its own before the run, answers `{"valid": false, "issues": [{"path":
//! "models.providers.mockai", "message": "Unrecognized key: \"retryBogus\""}]}` (measured on
//! 2026.9.6, ~3 s on an idle 2-core machine). A refusal names the key and the release.

use std::io::Read;
use std::process::Stdio;
use std::time::Duration;

use tokio::time::Instant;

use serde_json::Value;

use super::config::write_config;
use super::install::Install;
use super::sandbox::{GatewayDirs, Sandbox, TmpIsolation};

/// The release refused the configuration, or could not be asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReleaseCheckError {
    /// Keys (or values) the release refuses.
    #[error("OpenClaw {version} refuses {}", .issues.join("; "))]
    Refused {
        /// The release.
        version: String,
        /// `key `a.b.c`: why`, one per issue.
        issues: Vec<String>,
    },
    /// `config validate` could not be run or did not answer.
    #[error("`openclaw config validate` of OpenClaw {version}: {why}")]
    NoAnswer {
        /// The release.
        version: String,
        /// Why.
        why: String,
    },
}

/// How long `config validate` may take (3 s idle, much more on a loaded 2-core machine).
const VALIDATE_TIMEOUT: Duration = Duration::from_secs(180);

/// Runs `openclaw config validate --json` of `install` over `config`.
pub fn check_with_release(install: &Install, config: &Value) -> Result<(), ReleaseCheckError> {
    let version = install.openclaw_version.clone();
    let no_answer = |why: String| ReleaseCheckError::NoAnswer {
        version: version.clone(),
        why,
    };
    let scratch = tempfile::Builder::new()
        .prefix("rehearse-validate-")
        .tempdir()
        .map_err(|e| no_answer(format!("a scratch directory: {e}")))?;
    let dirs = GatewayDirs::create(scratch.path())
        .map_err(|e| no_answer(format!("a scratch directory: {e}")))?;
    write_config(&dirs.config, config).map_err(|e| no_answer(format!("writing: {e}")))?;
    // No namespace: validating writes nothing outside its own state directory.
    let sandbox = Sandbox::new(dirs, TmpIsolation::None, &install.openclaw, &install.node);
    let mut cmd = sandbox.command(&["config", "validate", "--json"]);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| no_answer(format!("starting it: {e}")))?;
    let mut stdout = child.stdout.take();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(o) = stdout.as_mut() {
            let _ = o.read_to_string(&mut s);
        }
        s
    });
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if started.elapsed() < VALIDATE_TIMEOUT => {
                std::thread::sleep(Duration::from_millis(100));
            }
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(no_answer(format!("no answer within {VALIDATE_TIMEOUT:?}")));
            }
            Err(e) => return Err(no_answer(format!("waiting for it: {e}"))),
        }
    };
    let out = reader.join().unwrap_or_default();
    read_answer(&out, status.success(), &version)
}

/// Reads `config validate --json`'s answer (`ok`: its exit status was 0).
pub(crate) fn read_answer(out: &str, ok: bool, version: &str) -> Result<(), ReleaseCheckError> {
    let start = out.find('{').unwrap_or(0);
    let v: Value = serde_json::from_str(out.get(start..).unwrap_or("")).map_err(|e| {
        ReleaseCheckError::NoAnswer {
            version: version.to_string(),
            why: format!("its answer is not JSON ({e}): {}", out.trim()),
        }
    })?;
    let valid = v.get("valid").and_then(Value::as_bool);
    if valid == Some(true) && ok {
        return Ok(());
    }
    let issues: Vec<String> = v
        .get("issues")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(issue_text)
        .collect();
    if issues.is_empty() {
        let why = v
            .pointer("/error/message")
            .and_then(Value::as_str)
            .unwrap_or("no issue named");
        return Err(ReleaseCheckError::NoAnswer {
            version: version.to_string(),
            why: format!("not valid, but {why}"),
        });
    }
    Err(ReleaseCheckError::Refused {
        version: version.to_string(),
        issues,
    })
}

/// `key `a.b.c`: message` — an unrecognized key is named in full (the issue's path is its
/// parent's).
fn issue_text(issue: &Value) -> String {
    let path = issue.get("path").and_then(Value::as_str).unwrap_or("");
    let msg = issue.get("message").and_then(Value::as_str).unwrap_or("refused");
    let named: Vec<&str> = if msg.starts_with("Unrecognized key") {
        msg.split('"').skip(1).step_by(2).collect()
    } else {
        Vec::new()
    };
    let join = |k: &str| {
        if path.is_empty() {
            k.to_string()
        } else {
            format!("{path}.{k}")
        }
    };
    match named.as_slice() {
        [] => format!("key `{}`: {msg}", if path.is_empty() { "(top)" } else { path }),
        keys => keys
            .iter()
            .map(|k| format!("key `{}`: {msg}", join(k)))
            .collect::<Vec<_>>()
            .join("; "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_key_is_named_in_full_with_the_release() {
        // What 2026.9.6 printed for an unknown provider key (measured).
        let out = r#"{
  "ok": false,
  "error": {"type": "cli_error", "message": "OpenClaw config is invalid: /x/openclaw.json"},
  "valid": false,
  "path": "/x/openclaw.json",
  "issues": [{"path": "models.providers.mockai", "message": "Unrecognized key: \"retryBogus\""}]
}"#;
        let e = read_answer(out, false, "2026.9.6").unwrap_err();
        assert_eq!(
            e.to_string(),
            "OpenClaw 2026.9.6 refuses key `models.providers.mockai.retryBogus`: Unrecognized key: \"retryBogus\""
        );
        let ok = r#"{"ok": true, "valid": true, "path": "/x/openclaw.json", "issues": []}"#;
        assert!(read_answer(ok, true, "2026.9.6").is_ok());
        assert!(matches!(
            read_answer("openclaw: boom", false, "2026.9.6"),
            Err(ReleaseCheckError::NoAnswer { .. })
        ));
        let typed = r#"{"valid": false, "issues": [{"path": "cron.enabled", "message": "Expected boolean"}]}"#;
        assert!(
            read_answer(typed, false, "v")
                .unwrap_err()
                .to_string()
                .contains("key `cron.enabled`: Expected boolean")
        );
    }
}
