//! Seeding profile keys: `printf 'KEY\n' | openclaw models auth paste-api-key --provider P
//! --profile-id ID` in the sandbox for the first profile (with a timeout), the others added to
//! the store it wrote ([`super::store`]), or by the CLI one after another when that store is not
//! the shape known (each rewrites `openclaw.json`); and the text helpers that quote a command's
//! output with ANSI colours removed and keys replaced by fingerprints.

use std::io::Write;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::time::Instant;

use super::errors::{GatewayError, GatewayOptions, io};
use super::procs::signal_group;
use super::config::ProfileSpec;
use super::sandbox::Sandbox;
use super::state::database_path;
use super::store::{StoreProfile, add_beside};
use crate::util::secrets::Scrubber;

/// Seeds every profile's key: the first with the CLI (which creates the state database and its
/// profile store), the others added to that store directly ([`super::store`]) — or, when the
/// store is not the shape known, with the CLI too. Which way was taken is appended to the seed
/// log (`seed.out`).
pub(super) async fn seed_profiles(
    sandbox: &Sandbox,
    node: &Path,
    profiles: &[ProfileSpec],
    options: &GatewayOptions,
    secrets: &[&str],
) -> Result<(), GatewayError> {
    let Some((first, rest)) = profiles.split_first() else {
        return Ok(());
    };
    seed(sandbox, &first.provider, &first.id, &first.key, options, secrets).await?;
    if rest.is_empty() {
        return Ok(());
    }
    let add: Vec<StoreProfile> = rest
        .iter()
        .map(|p| StoreProfile {
            id: p.id.clone(),
            provider: p.provider.clone(),
            key: p.key.clone(),
        })
        .collect();
    let db = database_path(&sandbox.dirs.state);
    let (node, first_id) = (node.to_path_buf(), first.id.clone());
    let written = tokio::task::spawn_blocking(move || add_beside(&node, &db, &first_id, &add))
        .await
        .unwrap_or_else(|e| Err(format!("the store writer panicked: {e}")));
    let note = match &written {
        Ok(()) => format!(
            "rehearse: {} further profile(s) added to the profile store beside {} (no CLI start each)\n",
            rest.len(),
            first.id
        ),
        Err(why) => format!("rehearse: seeding the other profiles with the CLI: {why}\n"),
    };
    let log = &sandbox.dirs.seed_log;
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .and_then(|mut f| f.write_all(note.as_bytes()))
        .map_err(io("appending to", log))?;
    if written.is_err() {
        for p in rest {
            seed(sandbox, &p.provider, &p.id, &p.key, options, secrets).await?;
        }
    }
    Ok(())
}

/// `printf 'KEY\n' | openclaw models auth paste-api-key --provider P --profile-id ID`.
async fn seed(
    sandbox: &Sandbox,
    provider: &str,
    profile: &str,
    key: &str,
    options: &GatewayOptions,
    secrets: &[&str],
) -> Result<(), GatewayError> {
    let log_path = &sandbox.dirs.seed_log;
    let open = || {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log_path)
    };
    let out = open().map_err(io("opening", log_path))?;
    let err = open().map_err(io("opening", log_path))?;
    let mut cmd = sandbox.command(&[
        "models",
        "auth",
        "paste-api-key",
        "--provider",
        provider,
        "--profile-id",
        profile,
    ]);
    cmd.stdin(Stdio::piped()).stdout(out).stderr(err);
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let mut child = cmd.spawn().map_err(|source| GatewayError::Spawn {
        what: "openclaw models auth paste-api-key".into(),
        source,
    })?;
    let failed = |problem: String| GatewayError::Seed {
        profile: profile.to_string(),
        problem,
        last_lines: tail(log_path, options.error_lines, secrets),
    };
    if let Some(mut stdin) = child.stdin.take() {
        let written = stdin
            .write_all(key.as_bytes())
            .and_then(|()| stdin.write_all(b"\n"));
        drop(stdin);
        if let Err(e) = written {
            signal_group(child.id(), libc::SIGKILL);
            let _ = child.wait();
            return Err(failed(format!("writing the key to its stdin: {e}")));
        }
    }
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(s)) if s.success() => return Ok(()),
            Ok(Some(s)) => return Err(failed(format!("exited with {s}"))),
            Ok(None) if started.elapsed() >= options.seed_timeout => {
                signal_group(child.id(), libc::SIGKILL);
                let _ = child.wait();
                return Err(failed(format!("no exit within {:?}", options.seed_timeout)));
            }
            Ok(None) => tokio::time::sleep(Duration::from_millis(100)).await,
            Err(e) => return Err(failed(format!("waiting for it: {e}"))),
        }
    }
}

/// The last `n` lines of a text file, ANSI colours removed, `secrets` replaced by fingerprints.
pub(super) fn tail(path: &Path, n: usize, secrets: &[&str]) -> Vec<String> {
    let text = std::fs::read(path).unwrap_or_default();
    let text = String::from_utf8_lossy(&text);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let scrubber = Scrubber::fingerprinting(secrets.iter().copied());
    lines[lines.len().saturating_sub(n)..]
        .iter()
        .map(|l| scrubber.scrub(&strip_ansi(l)))
        .collect()
}

fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            chars.next();
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ansi_colours_and_secrets_are_removed_from_quoted_lines() {
        let l = "\u{1b}[90m2026-12-01T09:06:53\u{1b}[39m \u{1b}[36m[gateway]\u{1b}[39m key-A ok";
        assert_eq!(strip_ansi(l), "2026-12-01T09:06:53 [gateway] key-A ok");
        let s = Scrubber::fingerprinting(["key-A", ""]).scrub(&strip_ansi(l));
        assert!(!s.contains("key-A"), "{s}");
        assert!(s.contains(&crate::util::fingerprint("key-A")));
    }

    #[test]
    fn a_quoted_tail_carries_fingerprints_never_keys() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("console.log");
        std::fs::write(&path, "first key-A\n\nsecond key-B\nthird sk-key-A-long\n").unwrap();
        let lines = tail(&path, 2, &["key-A", "sk-key-A-long", "key-B"]);
        assert_eq!(lines.len(), 2);
        let text = lines.join("\n");
        assert!(!text.contains("key-A") && !text.contains("key-B"), "{text}");
        assert!(
            text.contains(&crate::util::fingerprint("sk-key-A-long")),
            "{text}"
        );
    }
}
