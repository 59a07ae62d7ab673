//! The one upstream recorder of every kind of run (embedded, gateway, fleet): every request the
//! mock upstream served goes to upstream.jsonl; in memory it keeps the breaker probes' arrivals
//! (canaries are not breaker probes), which user requests each fault applied to, duplicate
//! executions of an idempotency key fed to the engine's metrics (embedded runs), and — only when
//! the scenario has expectations judged at the upstream — the model requests, at most `cap` of
//! them. A run that reaches the cap says so (`truncated_at_ms`): the upstream judge then treats
//! the record as ending there, so nothing after it can pass.
//!
//! Whatever else it keeps, every request (any route, probes, canaries and the warm-up's
//! included) goes onto a compact bounded tape ([`RequestTape`]) the report's request lanes are
//! drawn from.
//!
//! A request's line goes to upstream.jsonl when the upstream finished serving it
//! ([`RecordSink::done`]), with its `done_ms` and `whole`, so the lines are in the order the
//! requests ended (`t_ms` orders their arrivals); the records kept in memory get the same end.
//! A request still being served when the records are taken is written then, without them.
//!
//! Requests that arrive before the run's clock starts (the upstream's faults disarmed, the
//! records marked `warmup`) are the warm-up's: written to upstream.jsonl as they are (marked),
//! counted apart ([`WarmupSeen`]) and never kept for the judge, counted as fault hits or probes.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::rehearsal::observe::FaultHits;
use crate::rehearsal::arm::sinks::EventsWriter;
use crate::engine::{Event, EventKind, EventSink};
use crate::report::requests::tape::RequestTape;
use crate::upstream::{RecordSink, UpstreamRecord};
use crate::util::sync::Locked;

/// The mock upstream of a run of `file` (every kind builds it here): the scenario's faults and
/// seed at `speed`, the token owners its faults may be scoped to, and no arrivals kept inside
/// it (every request reaches the recorder, and upstream.jsonl through it).
pub(crate) fn scenario_upstream(
    file: &crate::scenario::ScenarioFile,
    seed: u64,
    speed: crate::util::speed::Speed,
) -> std::sync::Arc<crate::upstream::Upstream> {
    crate::upstream::Upstream::new(crate::upstream::UpstreamConfig {
        faults: file.fault.clone(),
        seed,
        speed,
        max_arrivals_per_dep: 0,
        owners: crate::scenario::gateway::token_owners(file),
        ..crate::upstream::UpstreamConfig::default()
    })
}

pub(crate) use crate::rehearsal::plan::MAX_UPSTREAM_RECORDS;

/// A breaker probe as it arrived at the upstream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ProbeSeen {
    /// Arrival, run ms (wall clock since the run start).
    pub t_ms: u64,
    /// The dep (`X-Breaker-Probe`).
    pub dep: String,
    /// The host that sent it (fleet runs; `None` for one engine).
    pub host: Option<String>,
    /// True when the upstream answered it without a fault.
    pub ok: bool,
}

/// The model requests a run kept, and where the cap cut them.
#[derive(Debug, Clone, Default)]
pub struct KeptRecords {
    /// The model requests (route `llm`, canaries left out), in arrival order.
    pub records: Vec<UpstreamRecord>,
    /// The cap they were kept under.
    pub cap: usize,
    /// Run ms of the first model request left out for the cap (`None`: nothing was left out).
    pub truncated_at_ms: Option<u64>,
    /// Model requests left out.
    pub dropped: u64,
    /// Every request the system under test sent the upstream during the arm, any route
    /// (canaries, the harness's own calls, left out): zero means it sent nothing and nothing at
    /// the upstream can be judged.
    pub served: u64,
    /// Every request, compact, for the report's request lanes.
    pub tape: RequestTape,
    /// The requests the per-turn rows are read from (`verdict::turns`).
    pub turns: TurnRecords,
}

/// The requests of the run (warm-up and canaries left out, any route), marked with a turn or
/// not, at most `cap` of them: what the report's turns are built from.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TurnRecords {
    /// In arrival order.
    pub records: Vec<UpstreamRecord>,
    /// Requests left out for the cap.
    pub dropped: u64,
}

/// What the upstream received before the run's clock started.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct WarmupSeen {
    /// Requests of any route.
    pub requests: u64,
    /// The model requests' `t_ms` (ms since the warm-up began), at most [`MAX_WARMUP_ARRIVALS`].
    pub llm_t_ms: Vec<u64>,
}

/// Most warm-up model-request arrivals kept (the warm-up's turns are few; its count goes on).
const MAX_WARMUP_ARRIVALS: usize = 10_000;

/// A request whose serving has not ended: its record and where its copies are kept.
#[derive(Debug)]
struct Open {
    record: UpstreamRecord,
    /// Its index in [`TurnRecords::records`].
    turn_at: Option<usize>,
    /// Its index in [`Kept::records`].
    kept_at: Option<usize>,
}

#[derive(Debug, Default)]
struct Kept {
    records: Vec<UpstreamRecord>,
    truncated_at_ms: Option<u64>,
    dropped: u64,
}

/// Records upstream requests (see the module doc). Subscribe it to the run's `Upstream`.
pub(crate) struct UpstreamRecorder {
    out: EventsWriter,
    faults: Arc<FaultHits>,
    probes: Mutex<Vec<ProbeSeen>>,
    duplicates: Option<Arc<dyn EventSink>>,
    /// `Some` when the scenario has expectations judged at the upstream.
    kept: Option<Mutex<Kept>>,
    cap: usize,
    served: AtomicU64,
    warmup: Mutex<WarmupSeen>,
    tape: Mutex<RequestTape>,
    turns: Mutex<TurnRecords>,
    /// Requests still being served, by their `seq`.
    open: Mutex<std::collections::HashMap<u64, Open>>,
}

impl std::fmt::Debug for UpstreamRecorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UpstreamRecorder")
            .field("keeps_records", &self.kept.is_some())
            .field("cap", &self.cap)
            .finish_non_exhaustive()
    }
}

impl UpstreamRecorder {
    /// A recorder writing to `out`, counting fault hits into `faults`, keeping model requests
    /// (at most [`MAX_UPSTREAM_RECORDS`]) when `keep_records`.
    pub(crate) fn new(out: EventsWriter, faults: Arc<FaultHits>, keep_records: bool) -> Self {
        Self {
            out,
            faults,
            probes: Mutex::new(Vec::new()),
            duplicates: None,
            kept: keep_records.then(|| Mutex::new(Kept::default())),
            cap: MAX_UPSTREAM_RECORDS,
            served: AtomicU64::new(0),
            warmup: Mutex::new(WarmupSeen::default()),
            tape: Mutex::new(RequestTape::new()),
            turns: Mutex::new(TurnRecords::default()),
            open: Mutex::new(std::collections::HashMap::new()),
        }
    }

    /// Keeps at most `cap` model requests instead of [`MAX_UPSTREAM_RECORDS`].
    pub(crate) fn with_cap(mut self, cap: usize) -> Self {
        self.cap = cap;
        self
    }

    /// Reports duplicate executions of an idempotency key to `sink` (the engine's metrics) as
    /// `IdempotentDuplicate` events: only the upstream can see them.
    pub(crate) fn with_duplicates(mut self, sink: Arc<dyn EventSink>) -> Self {
        self.duplicates = Some(sink);
        self
    }

    /// The breaker probes so far.
    pub(crate) fn probes(&self) -> Vec<ProbeSeen> {
        self.probes.locked().clone()
    }

    /// What the warm-up sent so far.
    pub(crate) fn warmup(&self) -> WarmupSeen {
        self.warmup.locked().clone()
    }

    /// Takes the model requests kept so far (empty when none were kept) and the tape. The
    /// requests still being served are written to upstream.jsonl now, without an end.
    pub(crate) fn take_records(&self) -> KeptRecords {
        let mut open: Vec<Open> = self.open.locked().drain().map(|(_, o)| o).collect();
        open.sort_by_key(|o| o.record.seq);
        for o in &open {
            self.out.append_at(o.record.t_ms, &o.record);
        }
        let served = self.served.load(Ordering::Relaxed);
        let tape = std::mem::take(&mut *self.tape.locked());
        let turns = std::mem::take(&mut *self.turns.locked());
        let Some(kept) = &self.kept else {
            return KeptRecords {
                cap: self.cap,
                served,
                tape,
                turns,
                ..KeptRecords::default()
            };
        };
        let k = std::mem::take(&mut *kept.locked());
        KeptRecords {
            records: k.records,
            cap: self.cap,
            truncated_at_ms: k.truncated_at_ms,
            dropped: k.dropped,
            served,
            tape,
            turns,
        }
    }
}

impl RecordSink for UpstreamRecorder {
    fn done(&self, seq: u64, done_ms: u64, whole: bool) {
        let Some(mut o) = self.open.locked().remove(&seq) else {
            return;
        };
        o.record.done_ms = Some(done_ms);
        o.record.whole = Some(whole);
        self.out.append_at(o.record.t_ms, &o.record);
        let end = |r: Option<&mut UpstreamRecord>| {
            if let Some(r) = r.filter(|r| r.seq == Some(seq)) {
                r.done_ms = Some(done_ms);
                r.whole = Some(whole);
            }
        };
        if let Some(i) = o.turn_at {
            end(self.turns.locked().records.get_mut(i));
        }
        if let (Some(i), Some(kept)) = (o.kept_at, &self.kept) {
            end(kept.locked().records.get_mut(i));
        }
    }

    fn record(&self, r: &UpstreamRecord) {
        let (mut turn_at, mut kept_at) = (None, None);
        self.record_kept(r, &mut turn_at, &mut kept_at);
        match r.seq {
            Some(seq) => {
                let open = Open {
                    record: r.clone(),
                    turn_at,
                    kept_at,
                };
                self.open.locked().insert(seq, open);
            }
            // A record nobody will end: written as it is.
            None => self.out.append_at(r.t_ms, r),
        }
    }
}

impl UpstreamRecorder {
    /// Keeps `r` as the module doc says; where it went in the turns' and the judge's lists.
    fn record_kept(
        &self,
        r: &UpstreamRecord,
        turn_at: &mut Option<usize>,
        kept_at: &mut Option<usize>,
    ) {
        self.tape.locked().push(r);
        if r.warmup {
            let mut w = self.warmup.locked();
            w.requests += 1;
            if r.route == crate::upstream::RouteKind::Llm && w.llm_t_ms.len() < MAX_WARMUP_ARRIVALS {
                w.llm_t_ms.push(r.t_ms);
            }
            return;
        }
        if !r.canary {
            self.served.fetch_add(1, Ordering::Relaxed);
            let mut t = self.turns.locked();
            if t.records.len() < self.cap {
                *turn_at = Some(t.records.len());
                t.records.push(r.clone());
            } else {
                t.dropped += 1;
            }
        }
        if let Some(kept) = &self.kept
            && r.route == crate::upstream::RouteKind::Llm
            && !r.canary
        {
            let mut k = kept.locked();
            if k.records.len() < self.cap {
                *kept_at = Some(k.records.len());
                k.records.push(r.clone());
            } else {
                k.dropped += 1;
                k.truncated_at_ms.get_or_insert(r.t_ms);
            }
        }
        if let Some(sink) = self.duplicates.as_ref().filter(|_| r.duplicate) {
            sink.emit(&Event {
                t_ms: r.t_ms,
                kind: EventKind::IdempotentDuplicate { dep: r.dep.clone() },
                log: None,
            });
        }
        if let Some(i) = r.fault_index.filter(|_| !r.canary) {
            self.faults.record(i, r.t_ms, &r.dep);
        }
        if r.canary || !r.probe {
            return;
        }
        self.probes.locked().push(ProbeSeen {
            t_ms: r.t_ms,
            dep: r.dep.clone(),
            host: r.host.clone(),
            ok: r.fault.is_none(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rehearsal::arm::sinks::JsonlFile;
    use crate::util::speed::Speed;

    fn record(t_ms: u64) -> UpstreamRecord {
        UpstreamRecord::llm_for_test(t_ms, 0, "mockai/default/abc".into(), None, None, None)
    }

    #[test]
    fn the_cap_keeps_the_first_records_and_says_where_it_cut() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let file =
            JsonlFile::open(&dir.path().join("upstream.jsonl")).unwrap_or_else(|e| panic!("{e}"));
        let rec = UpstreamRecorder::new(
            EventsWriter::new(file, "p", Speed::ONE),
            Arc::new(FaultHits::new(Speed::ONE)),
            true,
        )
        .with_cap(3);
        for t in [10, 20, 30, 40, 50] {
            rec.record(&record(t));
        }
        let kept = rec.take_records();
        assert_eq!(kept.records.len(), 3);
        assert_eq!(kept.truncated_at_ms, Some(40));
        assert_eq!(kept.dropped, 2);
        assert_eq!(kept.cap, 3);
        assert_eq!(kept.served, 5, "every request served counts, kept or not");
        let written = std::fs::read_to_string(dir.path().join("upstream.jsonl"))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            written.lines().count(),
            5,
            "upstream.jsonl keeps every request"
        );
    }

    #[test]
    fn warm_up_requests_are_written_marked_and_counted_apart_never_kept_for_the_judge() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let file =
            JsonlFile::open(&dir.path().join("upstream.jsonl")).unwrap_or_else(|e| panic!("{e}"));
        let hits = Arc::new(FaultHits::new(Speed::ONE));
        let rec = UpstreamRecorder::new(EventsWriter::new(file, "p", Speed::ONE), hits.clone(), true);
        let mut w = record(700);
        w.warmup = true;
        w.fault_index = Some(0);
        rec.record(&w);
        rec.record(&record(20));
        assert_eq!(
            rec.warmup(),
            WarmupSeen {
                requests: 1,
                llm_t_ms: vec![700]
            }
        );
        let kept = rec.take_records();
        assert_eq!(kept.records.len(), 1, "only the run's request is judged");
        assert_eq!(kept.records[0].t_ms, 20);
        assert!(hits.snapshot().is_empty(), "a warm-up request is no fault hit");
        let written = std::fs::read_to_string(dir.path().join("upstream.jsonl"))
            .unwrap_or_else(|e| panic!("{e}"));
        let lines: Vec<&str> = written.lines().collect();
        assert_eq!(lines.len(), 2);
        assert!(lines[0].contains("\"warmup\":true"), "{}", lines[0]);
        assert!(!lines[1].contains("warmup"), "{}", lines[1]);
    }

    #[test]
    fn a_line_is_written_when_its_serving_ended_with_the_end_and_the_kept_copies_get_it() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("upstream.jsonl");
        let file = JsonlFile::open(&path).unwrap_or_else(|e| panic!("{e}"));
        let rec = UpstreamRecorder::new(
            EventsWriter::new(file, "p", Speed::ONE),
            Arc::new(FaultHits::new(Speed::ONE)),
            true,
        );
        for (seq, t) in [(0, 100), (1, 200), (2, 300)] {
            let mut r = record(t);
            r.seq = Some(seq);
            rec.record(&r);
        }
        let lines = || std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(lines().lines().count(), 0, "no line before its serving ended");
        rec.done(1, 20_200, true);
        rec.done(0, 150, false);
        rec.done(9, 1, true); // never recorded: nothing
        let written = lines();
        let first: serde_json::Value =
            serde_json::from_str(written.lines().next().unwrap_or("")).unwrap_or_default();
        assert_eq!(first["t_ms"], 200, "in the order the requests ended");
        assert_eq!((first["done_ms"].as_u64(), first["whole"].as_bool()), (Some(20_200), Some(true)));
        let kept = rec.take_records();
        let ends: Vec<(Option<u64>, Option<bool>)> =
            kept.records.iter().map(|r| (r.done_ms, r.whole)).collect();
        assert_eq!(ends, [(Some(150), Some(false)), (Some(20_200), Some(true)), (None, None)]);
        assert_eq!(kept.turns.records[1].done_ms, Some(20_200));
        // The one still being served is written when the records are taken, without an end.
        let written = lines();
        let last = written.lines().last().unwrap_or("");
        assert_eq!(written.lines().count(), 3);
        assert!(last.contains("\"t_ms\":300") && !last.contains("done_ms"), "{last}");
    }
}
