//! Line-by-line JSONL writers for `events.jsonl` and `upstream.jsonl` (docs/report.md), and the
//! `scrapes.prom.gz` writer that appends each scrape as it comes, as one gzip member of its own.
//! Every line (every scrape's member) is one `write_all` on an append-mode file, so a killed run
//! leaves every completed one readable (`scrape::gzlog` reads the members back and stops at a cut
//! one). In an A/B run each JSONL line carries the `policy` it belongs to.
//!
//! Time base: every JSONL row carries `t_ms`, wall clock ms since its policy run started, and
//! `scenario_ms`, the same instant in scenario time (× speed). Every other duration or instant
//! in an events.jsonl row is scenario time, like the log lines ("Retry 1/1 in 481ms" is 481 ms
//! of scenario time, 120 ms of wall clock at ×4): the engine's nominal delays and cooldowns are
//! already, and the fields it measures on its own clock (`latency_ms`, a breaker's
//! `open_for_ms`, a Retry-After skip's `until_ms`) are converted here.
//!
//! The JSONL appender under them (one write per line, no line across a 4 KiB boundary) is
//! [`crate::util::jsonl`], shared with the request log of `rehearse upstream --log`.

use crate::util::sync::Locked;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;

use crate::engine::{Event, EventSink};
use crate::scrape::{Exposition, ScrapeSink};
use crate::util::speed::Speed;

pub(crate) use crate::util::jsonl::JsonlFile;

/// A line tagged with the policy run it belongs to and its instant in scenario time.
#[derive(Debug, Serialize)]
struct Tagged<'a, T: Serialize> {
    policy: &'a str,
    scenario_ms: u64,
    #[serde(flatten)]
    inner: &'a T,
}

/// Event fields the engine measures on its own (wall) clock, converted to scenario time.
const WALL_FIELDS: [&str; 3] = ["latency_ms", "open_for_ms", "until_ms"];

/// Writes engine events to `events.jsonl` (and upstream records to `upstream.jsonl`), tagged
/// with the policy and the scenario time.
#[derive(Debug)]
pub(crate) struct EventsWriter {
    file: Arc<JsonlFile>,
    policy: String,
    speed: Speed,
}

impl EventsWriter {
    /// A writer for one policy run at `speed`.
    pub(crate) fn new(file: Arc<JsonlFile>, policy: &str, speed: Speed) -> Self {
        Self {
            file,
            policy: policy.to_string(),
            speed,
        }
    }

    /// Appends a record whose own `t_ms` is `wall_ms`, tagged with this writer's policy and the
    /// same instant in scenario time.
    pub(crate) fn append_at<T: Serialize>(&self, wall_ms: u64, value: &T) {
        self.file.append(&Tagged {
            policy: &self.policy,
            scenario_ms: self.speed.scenario_ms_u(wall_ms),
            inner: value,
        });
    }

    /// An event as its events.jsonl row: the wall-clock fields in scenario time.
    fn scenario_event(&self, event: &Event) -> serde_json::Value {
        let mut v = serde_json::to_value(event).unwrap_or_default();
        if let Some(o) = v.as_object_mut() {
            for key in WALL_FIELDS {
                let Some(x) = o.get_mut(key) else { continue };
                if let Some(n) = x.as_u64() {
                    *x = self.speed.scenario_ms_u(n).into();
                } else if let Some(f) = x.as_f64() {
                    *x = ((self.speed.to_scenario(f) * 1000.0).round() / 1000.0).into();
                }
            }
        }
        v
    }
}

impl EventSink for EventsWriter {
    fn emit(&self, event: &Event) {
        self.append_at(event.t_ms, &self.scenario_event(event));
    }
}

/// `scrapes.prom.gz`, appended to as the scrapes come: each raw scrape after its
/// `# scrape t_ms=N` line, compressed as one gzip member per scrape (what
/// `scrape::read_scrapes` then `ScrapeLog::from_prom` read back). Write failures are counted
/// and the last one kept, never raised mid-run (see [`PromFile::last_error`]).
#[derive(Debug)]
pub struct PromFile {
    path: PathBuf,
    file: Mutex<File>,
    scrapes: AtomicU64,
    last_error: Mutex<Option<String>>,
}

impl PromFile {
    /// Opens (creating or appending to) `path`.
    pub(crate) fn open(path: &Path) -> std::io::Result<Arc<Self>> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(Arc::new(Self {
            path: path.to_path_buf(),
            file: Mutex::new(file),
            scrapes: AtomicU64::new(0),
            last_error: Mutex::new(None),
        }))
    }

    /// Appends `line` and a newline (e.g. the `# policy NAME` line of an A/B run).
    pub(crate) fn line(&self, line: &str) {
        let mut buf = String::with_capacity(line.len() + 1);
        buf.push_str(line);
        buf.push('\n');
        self.write(&buf);
    }

    /// Appends one scrape after its `# scrape t_ms=N` line.
    pub(crate) fn append(&self, t_ms: u64, text: &str) {
        let mut buf = format!("# scrape t_ms={t_ms}\n");
        buf.reserve(text.len() + 1);
        buf.push_str(text);
        if !text.ends_with('\n') {
            buf.push('\n');
        }
        if self.write(&buf) {
            self.scrapes.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn write(&self, buf: &str) -> bool {
        // Compressed outside the lock; one member, one write.
        let res = crate::scrape::gzlog::encode_member(buf.as_bytes())
            .and_then(|member| self.file.locked().write_all(&member));
        match res {
            Ok(()) => true,
            Err(e) => {
                let mut last = self.last_error.locked();
                *last = Some(format!("writing {}: {e}", self.path.display()));
                false
            }
        }
    }

    /// Scrapes written so far.
    #[cfg(test)] // used by the tests only
    pub(crate) fn scrapes(&self) -> u64 {
        self.scrapes.load(Ordering::Relaxed)
    }

    /// The last write failure, if any write failed.
    pub(crate) fn last_error(&self) -> Option<String> {
        self.last_error.locked().clone()
    }
}

impl ScrapeSink for Arc<PromFile> {
    fn scrape(&mut self, t_ms: u64, text: &str, _parsed: Option<&Arc<Exposition>>) {
        self.append(t_ms, text);
    }

    fn failure(&mut self, _t_ms: u64, _error: &str) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{BreakerState, EventKind};

    #[test]
    fn every_event_is_one_complete_tagged_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        let file = JsonlFile::open(&path).unwrap();
        let w = EventsWriter::new(file.clone(), "legacy", crate::util::speed::sp(4.0));
        for t in 0..3 {
            w.emit(&Event {
                t_ms: t,
                kind: EventKind::BreakerTransition {
                    dep: "crm_search".into(),
                    from: BreakerState::Closed,
                    to: BreakerState::Open,
                    // The engine's breakers run on scaled durations: 30 s at ×4.
                    open_for_ms: Some(7_500),
                    reason: Some(crate::engine::TripReason::ConsecutiveFailures),
                },
                log: None,
            });
        }
        // Readable without closing or flushing anything else: each line went out whole.
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        let v: serde_json::Value = serde_json::from_str(lines[2]).unwrap();
        assert_eq!(v["policy"], "legacy");
        assert_eq!(v["event"], "breaker_transition");
        assert_eq!(v["t_ms"], 2, "wall clock");
        assert_eq!(v["scenario_ms"], 8, "× speed");
        assert_eq!(
            v["open_for_ms"], 30_000,
            "scenario time, like the log lines"
        );
        assert_eq!(file.lines(), 3);
        assert_eq!(file.errors(), 0);
    }

    #[test]
    fn scrapes_prom_is_appended_scrape_by_scrape_and_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(crate::scrape::SCRAPES_FILE);
        let file = PromFile::open(&path).unwrap();
        let mut sink = file.clone();
        sink.scrape(250, "a 1\n", None);
        // Readable after each scrape, before the run ends.
        let back = crate::scrape::read_scrapes(&path).unwrap();
        assert_eq!((back.members, back.torn), (1, None));
        let log = crate::scrape::ScrapeLog::from_prom(&back.text).unwrap();
        assert_eq!(log.scrapes.len(), 1);
        sink.scrape(500, "a 2", None);
        let back = crate::scrape::read_scrapes(&path).unwrap();
        assert_eq!(back.members, 2, "one gzip member per scrape");
        let text = back.text;
        assert_eq!(text, "# scrape t_ms=250\na 1\n# scrape t_ms=500\na 2\n");
        let log = crate::scrape::ScrapeLog::from_prom(&text).unwrap();
        assert_eq!(log.scrapes[1].t_ms, 500);
        let a = crate::scrape::Selector::parse("a").unwrap();
        assert_eq!(log.last_parsed().unwrap().sum(&a), 2.0);
        assert_eq!((file.scrapes(), file.last_error()), (2, None));
    }
}

/// Most transitions kept in memory per policy run (a breaker flapping every probe for hours
/// stays bounded; the report says how many were left out).
const MAX_TRANSITIONS: usize = 20_000;

/// Keeps the `BreakerTransition` events of one policy run — the same events events.jsonl gets,
/// with their exact instants — as the run's one source of transition times.
#[derive(Debug, Default)]
pub(crate) struct TransitionLog {
    kept: Mutex<Vec<crate::scrape::Transition>>,
    dropped: AtomicU64,
}

impl TransitionLog {
    /// The transitions so far, ordered by time (stable: one dep's causal order is kept on ties),
    /// and how many were left out beyond the cap.
    pub(crate) fn sorted(&self) -> (Vec<crate::scrape::Transition>, u64) {
        let mut v = self.kept.locked().clone();
        v.sort_by_key(|t| t.t_ms);
        (v, self.dropped.load(Ordering::Relaxed))
    }
}

impl EventSink for TransitionLog {
    fn emit(&self, event: &Event) {
        let crate::engine::EventKind::BreakerTransition {
            dep,
            from,
            to,
            reason,
            ..
        } = &event.kind
        else {
            return;
        };
        let mut g = self.kept.locked();
        if g.len() >= MAX_TRANSITIONS {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        g.push(crate::scrape::Transition {
            dep: dep.clone(),
            from: *from,
            to: *to,
            t_ms: event.t_ms,
            timing: crate::scrape::Timing::Event,
            reason: *reason,
        });
    }
}
