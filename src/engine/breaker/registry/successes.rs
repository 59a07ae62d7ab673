//! [`Successes`]: one dependency's successes recorded without its lock, one log per thread
//! (`thread_slot.rs`), replayed into the machine by whoever takes the lock next.
//!
//! Each log is a single-producer single-consumer ring: only its thread pushes (an entry, then
//! a release store of the tail), and only the holder of the dependency's lock drains it (an
//! acquire load of the tail, the entries, then a release store of the head). Neither side
//! does an atomic read-modify-write, which is the point: on the machines of
//! docs/bench/capacity.md (c) one costs ~8 ns, as much as the rest of a closed admit + record.
//! A full log refuses the push: its thread takes the lock (which drains every log) and pushes
//! again, so a thread takes the lock once per [`LEN`] successes.

use std::cell::{Cell, UnsafeCell};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use tokio::time::Instant;

use super::thread_slot::{self, SLOTS};

/// Entries of one log (a power of two): a thread takes the lock once per this many successes.
const LEN: usize = 64;

/// One thread's log of one dependency's successes: when each attempt ended, and how long it
/// took, in two arrays (the drain copies each a slice at a time).
struct Log {
    /// Entries drained (written only by the drainer, under the dependency's lock).
    head: AtomicUsize,
    /// Entries pushed (written only by the log's thread).
    tail: AtomicUsize,
    at: Box<[UnsafeCell<Instant>]>,
    latency: Box<[UnsafeCell<Duration>]>,
}

// SAFETY: an entry is written only by the log's one producer while it is outside
// `[head, tail)`, and read only by the one drainer while it is inside it; `tail` (release on
// push, acquire on drain) and `head` (release on drain, acquire on push) order the two.
unsafe impl Sync for Log {}

impl Log {
    /// An empty log; `fill` fills its slots (none is read before it is written).
    fn new(fill: Instant) -> Self {
        Self {
            head: AtomicUsize::new(0),
            tail: AtomicUsize::new(0),
            at: (0..LEN).map(|_| UnsafeCell::new(fill)).collect(),
            latency: (0..LEN).map(|_| UnsafeCell::new(Duration::ZERO)).collect(),
        }
    }

    /// Appends a success unless the log is full. Only the log's thread calls it.
    #[inline]
    fn push(&self, at: Instant, latency: Duration) -> bool {
        let tail = self.tail.load(Ordering::Relaxed);
        if tail.wrapping_sub(self.head.load(Ordering::Acquire)) >= LEN {
            return false;
        }
        let i = tail % LEN;
        // SAFETY: slot `i` is outside `[head, tail)`: the drainer does not read it until the
        // store below publishes it, and this thread is the log's only producer.
        unsafe {
            *self.at[i].get() = at;
            *self.latency[i].get() = latency;
        }
        self.tail.store(tail.wrapping_add(1), Ordering::Release);
        true
    }

    /// Lends every entry pushed so far to `f` as one [`Batch`], then hands their slots back to
    /// the producer. Only the lock's holder calls it.
    fn drain(&self, f: &mut impl FnMut(Batch<'_>)) {
        let head = self.head.load(Ordering::Relaxed);
        let tail = self.tail.load(Ordering::Acquire);
        let n = tail.wrapping_sub(head);
        if n != 0 {
            let from = head % LEN;
            let first = n.min(LEN - from);
            // SAFETY: the slots lent are `[head, tail)`: published by the producer's release
            // store of `tail`, and not written again until the store of `head` below, after
            // `f` has returned — and `f` takes a batch of any lifetime, so it cannot keep one.
            let (at, latency) = unsafe {
                (
                    [
                        read(&self.at[from..from + first]),
                        read(&self.at[..n - first]),
                    ],
                    [
                        read(&self.latency[from..from + first]),
                        read(&self.latency[..n - first]),
                    ],
                )
            };
            f(Batch { at, latency });
        }
        self.head.store(tail, Ordering::Release);
    }
}

/// `cells` as plain values.
///
/// # Safety
/// No one may write them while the slice lives.
unsafe fn read<T>(cells: &[UnsafeCell<T>]) -> &[T] {
    // SAFETY: `UnsafeCell<T>` has the layout of `T`; the caller rules out writes.
    unsafe { std::slice::from_raw_parts(cells.as_ptr().cast::<T>(), cells.len()) }
}

/// The successes of one log being drained, oldest first, in up to two slices each (the ring
/// wraps round): when each attempt ended, and its latency, at the same positions.
#[derive(Clone, Copy)]
pub(crate) struct Batch<'a> {
    pub(crate) at: [&'a [Instant]; 2],
    pub(crate) latency: [&'a [Duration]; 2],
}

impl Batch<'_> {
    /// Each success as (when it ended, its latency), oldest first.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (Instant, Duration)> + '_ {
        let at = self.at.iter().flat_map(|c| c.iter().copied());
        at.zip(self.latency.iter().flat_map(|c| c.iter().copied()))
    }
}

/// Ids of [`Successes`], never reused: a log remembered by a thread is only used through the
/// logs that handed it out.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// The log this thread pushed onto last: the id of its [`Successes`] (0: none) and the log.
    static LAST: Cell<(u64, *const Log)> = const { Cell::new((0, std::ptr::null())) };
}

/// One dependency's logs, one per thread slot, created on a thread's first success.
pub(crate) struct Successes {
    /// This one's id among every `Successes` the process made.
    id: u64,
    logs: Box<[OnceLock<Log>]>,
    /// Bit `s` set: slot `s`'s log exists (what a drain looks at).
    present: AtomicU64,
}

impl Default for Successes {
    fn default() -> Self {
        Self {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            logs: (0..SLOTS).map(|_| OnceLock::new()).collect(),
            present: AtomicU64::new(0),
        }
    }
}

impl Successes {
    /// Logs a success of this thread; false when it could not (no thread slot, or this
    /// thread's log is full): the caller records it through the lock instead.
    #[inline]
    pub(crate) fn push(&self, at: Instant, latency: Duration) -> bool {
        let (id, last) = LAST.with(Cell::get);
        let log = if id == self.id {
            // SAFETY: `last` was stored by `find` of the `Successes` with this id — `self`,
            // since ids are never reused — and is this thread's log of it, which lives as long
            // as `self` does (`&self` keeps it alive) and never moves (it is in `self.logs`,
            // a boxed slice set once).
            unsafe { &*last }
        } else {
            match self.find(at) {
                Some(log) => log,
                None => return false,
            }
        };
        log.push(at, latency)
    }

    /// This thread's log (created on its first success, ended at `at`), remembered for the
    /// next push; `None` without a thread slot.
    #[inline(never)]
    fn find(&self, at: Instant) -> Option<&Log> {
        let slot = thread_slot::current()?;
        let cell = self.logs.get(slot)?;
        let log = match cell.get() {
            Some(log) => log,
            None => self.create(cell, slot, at),
        };
        LAST.with(|l| l.set((self.id, std::ptr::from_ref(log))));
        Some(log)
    }

    /// This thread's first success: its log, and the bit that makes drains look at it.
    #[cold]
    fn create<'a>(&self, cell: &'a OnceLock<Log>, slot: usize, fill: Instant) -> &'a Log {
        let log = cell.get_or_init(|| Log::new(fill));
        self.present.fetch_or(1 << slot, Ordering::Release);
        log
    }

    /// Hands every logged success to `f`, a [`Batch`] per thread log, each in the order its
    /// thread pushed them. Only the holder of the dependency's lock calls it.
    #[inline]
    pub(crate) fn drain(&self, mut f: impl FnMut(Batch<'_>)) {
        let mut present = self.present.load(Ordering::Acquire);
        while present != 0 {
            let slot = present.trailing_zeros() as usize;
            present &= present - 1;
            if let Some(log) = self.logs.get(slot).and_then(OnceLock::get) {
                log.drain(&mut f);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::sync::Locked;
    use std::sync::Arc;
    use std::sync::Mutex;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[tokio::test(start_paused = true)]
    async fn a_log_hands_back_what_it_took_in_order_and_refuses_when_full() {
        let t0 = Instant::now();
        let s = Successes::default();
        let mut got = Vec::new();
        s.drain(|b| got.extend(b.iter()));
        assert!(got.is_empty());
        for i in 0..LEN as u64 {
            assert!(s.push(t0 + ms(i), ms(i)), "entry {i}");
        }
        assert!(!s.push(t0, ms(0)), "a full log refuses");
        s.drain(|b| got.extend(b.iter()));
        let want: Vec<_> = (0..LEN as u64).map(|i| (t0 + ms(i), ms(i))).collect();
        assert_eq!(got, want);
        // Drained: room again, and the ring wraps round.
        got.clear();
        for i in 0..10 {
            assert!(s.push(t0 + ms(100 + i), ms(i)));
        }
        s.drain(|b| got.extend(b.iter()));
        assert_eq!(got.len(), 10);
        assert_eq!(got[9], (t0 + ms(109), ms(9)));
    }

    /// Four threads push while a fifth drains under a lock: every success arrives once, and
    /// each thread's in the order it pushed them.
    #[test]
    fn concurrent_pushes_and_drains_lose_nothing_and_keep_each_threads_order() {
        let t0 = Instant::now();
        let s = Arc::new(Successes::default());
        let seen = Arc::new(Mutex::new(Vec::<(Instant, Duration)>::new()));
        let lock = Arc::new(Mutex::new(()));
        let drain = |s: &Successes, seen: &Mutex<Vec<_>>, lock: &Mutex<()>| {
            let _g = lock.locked();
            let mut v = seen.locked();
            s.drain(|b| v.extend(b.iter()));
        };
        let producers: Vec<_> = (0..4u64)
            .map(|p| {
                let (s, seen, lock) = (s.clone(), seen.clone(), lock.clone());
                std::thread::spawn(move || {
                    for i in 0..5_000u64 {
                        // The latency names the producer, the instant the order.
                        let e = (t0 + Duration::from_nanos(i), ms(p));
                        while !s.push(e.0, e.1) {
                            drain(&s, &seen, &lock);
                        }
                    }
                })
            })
            .collect();
        for _ in 0..200 {
            drain(&s, &seen, &lock);
            std::thread::yield_now();
        }
        for p in producers {
            p.join().expect("producer");
        }
        drain(&s, &seen, &lock);
        let seen = seen.locked();
        assert_eq!(seen.len(), 20_000);
        for p in 0..4 {
            let mine: Vec<_> = seen.iter().filter(|e| e.1 == ms(p)).map(|e| e.0).collect();
            let want: Vec<_> = (0..5_000).map(|i| t0 + Duration::from_nanos(i)).collect();
            assert_eq!(mine, want, "producer {p}");
        }
    }
}
