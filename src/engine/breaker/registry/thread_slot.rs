//! A small index per live thread ([`current`]): below [`SLOTS`], never held by two live
//! threads at once, handed back when its thread ends and reused by the next thread that asks.
//! The success logs (`successes.rs`) keep one single-producer log per dependency and slot.
//!
//! A slot handed from an ended thread to a new one carries a happens-before edge (the free
//! list's lock): whatever the ended thread wrote into its logs is visible to the new holder.

use std::cell::Cell;
use std::sync::Mutex;

use crate::util::sync::Locked;

/// How many threads can hold a slot at once; a thread beyond that gets none (and its
/// successes take the dependency's lock, as every record did before the logs).
pub(crate) const SLOTS: usize = 64;

/// Slots handed back, and the next one never handed out.
struct Pool {
    free: Vec<usize>,
    next: usize,
}

static POOL: Mutex<Pool> = Mutex::new(Pool {
    free: Vec::new(),
    next: 0,
});

/// A thread's slot, handed back when the thread ends (its thread-local is dropped).
struct Held(Option<usize>);

impl Drop for Held {
    fn drop(&mut self) {
        if let Some(slot) = self.0 {
            // Whatever runs later in this thread's teardown logs nothing under it: `HELD`
            // is gone, so `current` finds no slot.
            let _ = SLOT.try_with(|s| s.set(NONE));
            POOL.locked().free.push(slot);
        }
    }
}

/// No slot (yet): `SLOT` before the first ask, and once given back.
const NONE: usize = usize::MAX;

thread_local! {
    /// This thread's slot, read on every logged success (no lazy set-up, no destructor).
    static SLOT: Cell<usize> = const { Cell::new(NONE) };
    /// The slot's owner: claims it on the first ask, hands it back when the thread ends.
    static HELD: Held = Held(claim());
}

fn claim() -> Option<usize> {
    let mut pool = POOL.locked();
    if let Some(slot) = pool.free.pop() {
        return Some(slot);
    }
    (pool.next < SLOTS).then(|| {
        pool.next += 1;
        pool.next - 1
    })
}

/// This thread's slot: `None` when [`SLOTS`] live threads already hold one, or while the
/// thread's locals are being torn down.
#[inline]
pub(crate) fn current() -> Option<usize> {
    let slot = SLOT.with(Cell::get);
    if slot != NONE {
        return Some(slot);
    }
    first_ask()
}

/// [`current`] before this thread has a slot: claims one through `HELD` (whose destructor
/// hands it back and clears `SLOT`).
#[cold]
fn first_ask() -> Option<usize> {
    let slot = HELD.try_with(|h| h.0).ok().flatten()?;
    SLOT.with(|s| s.set(slot));
    Some(slot)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use std::sync::{Arc, Barrier};

    /// Threads alive at the same time never share a slot; a thread keeps its slot; slots of
    /// ended threads are reused (more threads than slots over time all get one).
    #[test]
    fn live_threads_hold_distinct_slots_and_ended_ones_hand_theirs_back() {
        for _round in 0..3 * SLOTS / 8 {
            let barrier = Arc::new(Barrier::new(8));
            let threads: Vec<_> = (0..8)
                .map(|_| {
                    let b = barrier.clone();
                    std::thread::spawn(move || {
                        let first = current();
                        b.wait(); // all 8 alive here
                        assert_eq!(current(), first, "a thread keeps its slot");
                        first
                    })
                })
                .collect();
            let slots: Vec<_> = threads
                .into_iter()
                .map(|t| t.join().expect("thread"))
                .collect();
            let distinct: HashSet<_> = slots.iter().collect();
            assert_eq!(distinct.len(), 8, "{slots:?}");
            assert!(
                slots.iter().all(|s| s.is_some_and(|s| s < SLOTS)),
                "{slots:?}"
            );
        }
    }
}
