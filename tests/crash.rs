//! Crash safety with real processes: `rehearse run` is killed with SIGKILL 200 times
//! at seeded random moments 0.1–1 s after it starts, while it writes the cooldown store
//! (`auth-profiles-*.json`: a 429 storm over 8 profiles with 50 ms cooldowns rewrites it hundreds
//! of times a second) and, for the later moments, the report. After every kill:
//! - the store parses (it holds the old content or the new, never a torn mix);
//! - `events.jsonl` and `upstream.jsonl` hold whole lines only, each valid JSON;
//! - `scrapes.prom.gz` reads back: every whole gzip member (one per scrape) decodes into whole
//!   scrapes; a last member cut by the kill (a scrape's member can be bigger than the 4 KiB a
//!   kill can cut a write at) is counted, never read in part;
//! - a report file that exists is whole (report.json parses, report.html is closed);
//! - every file of every earlier run is byte-for-byte what it was (hashed before the run).
//!
//! Its own test binary: 200 process lifetimes take about two minutes and must not share the two
//! cores with the timing-sensitive integration tests. Loopback only; every child is reaped.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::Duration;

use rand::{Rng, SeedableRng};
use rehearse::engine::failover::store::CooldownStore;
use sha2::{Digest, Sha256};
use tokio::time::Instant;

/// Kills: 200 seeded moments, spread over the store rewrites and the report writes.
const KILLS: usize = 200;
/// Seed of the kill moments.
const SEED: u64 = 17;
/// The kill window after spawn.
const EARLIEST: Duration = Duration::from_millis(100);
const LATEST: Duration = Duration::from_millis(1000);

const SCENARIO: &str = r#"
name = "crash-store"
description = "a 429 storm over 8 profiles with 50 ms cooldowns: the store is rewritten all the time"
duration = "2s"
traffic = "crash.jsonl"
scrape_interval = "100ms"
seed = 1
workers = 8

[engine.cooldowns.schedules.rate_limit]
stepsMs = [50]

[[fault]]
route = "llm"
kind = "rate_limit"
retry_after = "0s"
probability = 0.5

[[expect.attempts]]
model = "openai-codex/gpt-5.2"
at_least = 1
"#;

fn write_scenario(dir: &Path) -> PathBuf {
    let mut text = SCENARIO.to_string();
    for i in 0..8 {
        text.push_str(&format!(
            "\n[[profile]]\nprovider = \"openai-codex\"\nid = \"openai-codex:p{i}\"\n"
        ));
    }
    let traffic: String = (0..400)
        .map(|i| {
            format!(
                "{{\"at_ms\":{},\"kind\":\"llm\",\"model\":\"openai-codex/gpt-5.2\",\"max_tokens\":4}}\n",
                i * 5
            )
        })
        .collect();
    std::fs::write(dir.join("crash.jsonl"), traffic).expect("traffic");
    let path = dir.join("crash-store.toml");
    std::fs::write(&path, text).expect("scenario");
    path
}

/// Every file under `dir` (recursively) with the SHA-256 of its content.
fn hashes(dir: &Path, out: &mut BTreeMap<PathBuf, [u8; 32]>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            hashes(&p, out);
        } else if let Ok(bytes) = std::fs::read(&p) {
            out.insert(p, Sha256::digest(&bytes).into());
        }
    }
}

fn run_dirs(reports: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(reports)
        .map(|r| {
            r.flatten()
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// What one killed run left.
#[derive(Debug, Default)]
struct Tally {
    no_dir: usize,
    mid_run: usize,
    mid_run_with_store: usize,
    reported: usize,
    temp_files_left: usize,
    torn_scrapes: usize,
    scrapes_read: usize,
    store_files_checked: usize,
    lines_checked: usize,
}

/// Checks one run directory; panics naming the file and the problem.
fn check_run_dir(dir: &Path, tally: &mut Tally) {
    let mut has_store = false;
    for e in std::fs::read_dir(dir).expect("run dir").flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        let bytes = std::fs::read(&p).unwrap_or_else(|err| panic!("{}: {err}", p.display()));
        if name.starts_with(".rehearse-tmp-") {
            tally.temp_files_left += 1;
        } else if name.starts_with("auth-profiles-") && name.ends_with(".json") {
            has_store = true;
            tally.store_files_checked += 1;
            serde_json::from_slice::<serde_json::Value>(&bytes).unwrap_or_else(|err| {
                panic!(
                    "{}: torn store ({err}):\n{}",
                    p.display(),
                    String::from_utf8_lossy(&bytes)
                )
            });
            CooldownStore::load(&p).unwrap_or_else(|err| panic!("{err}"));
        } else if name == "scrapes.prom.gz" {
            // One gzip member per scrape, one write each; a kill can cut the last member at a
            // 4 KiB boundary (see `run::sinks`): counted, not failed. Every member before it
            // decodes whole and the text parses as scrapes.
            let back = rehearse::scrape::gzlog::decode_members(&bytes[..])
                .unwrap_or_else(|err| panic!("{}: {err}", p.display()));
            tally.torn_scrapes += usize::from(back.torn.is_some());
            assert!(
                back.text.is_empty()
                    || (back.text.starts_with("# scrape t_ms=") && back.text.ends_with('\n')),
                "{}: whole members must hold whole scrapes",
                p.display()
            );
            tally.scrapes_read += back
                .text
                .lines()
                .filter(|l| l.starts_with("# scrape t_ms="))
                .count();
        } else if name == "scrapes.prom" {
            panic!("{}: scrapes are written compressed now", p.display());
        } else if name.ends_with(".jsonl") {
            assert!(
                bytes.is_empty() || bytes.ends_with(b"\n"),
                "{}: the last line is torn: {:?}",
                p.display(),
                String::from_utf8_lossy(&bytes[bytes.len().saturating_sub(200)..])
            );
            let text = std::str::from_utf8(&bytes)
                .unwrap_or_else(|err| panic!("{}: not UTF-8: {err}", p.display()));
            if name.ends_with(".jsonl") {
                for (i, line) in text.lines().enumerate() {
                    serde_json::from_str::<serde_json::Value>(line).unwrap_or_else(|err| {
                        panic!(
                            "{}:{}: not a whole JSON line ({err}): {line}",
                            p.display(),
                            i + 1
                        )
                    });
                    tally.lines_checked += 1;
                }
            }
        } else if name == "report.json" {
            serde_json::from_slice::<serde_json::Value>(&bytes)
                .unwrap_or_else(|err| panic!("{}: torn report ({err})", p.display()));
        } else if name == "report.html" {
            let text = String::from_utf8_lossy(&bytes);
            assert!(
                text.trim_end().ends_with("</html>"),
                "{}: torn",
                p.display()
            );
        } else if name.ends_with(".md") || name.ends_with(".xml") {
            assert!(!bytes.is_empty(), "{}: empty", p.display());
        }
    }
    if dir.join("report.json").exists() {
        tally.reported += 1;
    } else {
        tally.mid_run += 1;
        tally.mid_run_with_store += usize::from(has_store);
    }
}

#[test]
fn kill_9_at_200_random_moments_never_tears_a_file() {
    let work = tempfile::tempdir().expect("temp dir");
    let scenario = write_scenario(work.path());
    let reports = work.path().join("reports");
    std::fs::create_dir_all(&reports).expect("reports dir");
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(SEED);
    let mut tally = Tally::default();
    let began = Instant::now();
    for i in 0..KILLS {
        let before_dirs = run_dirs(&reports);
        let mut before = BTreeMap::new();
        for d in &before_dirs {
            hashes(d, &mut before);
        }
        let delay = rng.gen_range(EARLIEST..=LATEST);
        let mut child = Command::new(env!("CARGO_BIN_EXE_rehearse"))
            .args(["run", "--no-progress", "--speed", "5", "--seed"])
            .arg(i.to_string())
            .arg("--scenario")
            .arg(&scenario)
            .arg("--report-dir")
            .arg(&reports)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn rehearse run");
        thread::sleep(delay);
        let _ = child.kill(); // SIGKILL (fails only if it already exited)
        child.wait().expect("reap the run");

        let after_dirs = run_dirs(&reports);
        let new: Vec<&PathBuf> = after_dirs
            .iter()
            .filter(|d| !before_dirs.contains(d))
            .collect();
        assert!(
            new.len() <= 1,
            "kill {i}: more than one new run dir: {new:?}"
        );
        match new.first() {
            None => tally.no_dir += 1,
            Some(d) => check_run_dir(d, &mut tally),
        }
        let mut after = BTreeMap::new();
        for d in &before_dirs {
            hashes(d, &mut after);
        }
        for (path, hash) in &before {
            assert_eq!(
                after.get(path),
                Some(hash),
                "kill {i} ({delay:?}): an earlier run's {} changed or vanished",
                path.display()
            );
        }
        assert_eq!(
            after.len(),
            before.len(),
            "kill {i}: files appeared in earlier runs"
        );
    }
    eprintln!("{KILLS} kills in {:?}: {tally:?}", began.elapsed());
    // The kills landed where they should: mid-run while the store was being rewritten, and
    // after the report (the run finished inside the window).
    assert!(
        tally.mid_run_with_store >= 20,
        "too few kills mid-run with a store: {tally:?}"
    );
    assert!(
        tally.reported >= 5,
        "too few runs reached their report: {tally:?}"
    );
    assert!(
        tally.scrapes_read > 0,
        "no killed run's scrapes were read back: {tally:?}"
    );
}
