//! [`Cell`]: one dependency's breaker behind a lock of its own, with two flags beside the lock,
//! all in one atomic byte: "closed" and "a success cannot trip it".
//!
//! Why not a `Mutex` and an `AtomicBool`: a std `Mutex` costs two atomic read-modify-writes per
//! lock + unlock (a compare-exchange to take it, a swap to release it, so that a parked waiter
//! is woken), and on the 2-core VM of docs/bench/capacity.md (c) each costs ~8 ns — two thirds
//! of a closed breaker's record through the registry went there. Here taking the lock is one
//! `lock bts` (`fetch_or` of the lock bit) and releasing it is a plain release store of the new
//! closed flag: nobody parks, so nobody has to be woken. A caller that finds the lock taken spins
//! a little, then yields its thread until it is free. Every critical section is a few dozen
//! nanoseconds of pure computation (a breaker's decision; events are emitted after the lock is
//! released), so a waiter rarely gets past the spinning.
//!
//! The flags are written only by the lock's holder, in the release store that frees the lock,
//! from the value's own [`Flags`] answers: they are always the state as of the last change, and
//! reading them takes no lock ([`Cell::is_closed`], [`Cell::success_is_quiet`]). While another
//! worker holds the lock an admit that reads "closed" is the admit that came before that change,
//! as it would have been had it taken the lock first.

use std::cell::UnsafeCell;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicU8, Ordering};

/// The bit of the state byte saying the value is closed (as of the last change).
const CLOSED: u8 = 1;
/// The bit of the state byte saying the lock is held.
const LOCKED: u8 = 2;
/// The bit of the state byte saying a success cannot change the value's state (as of the last
/// change).
const QUIET: u8 = 4;
/// Spin rounds (each twice as long as the last) before a waiter yields its thread.
const SPINS: u32 = 6;

/// What the flags are computed from when the lock is released.
pub(crate) trait Flags {
    /// True when the value is in its closed state.
    fn is_closed(&self) -> bool;
    /// True when recording a success cannot change the value's state.
    fn success_is_quiet(&self) -> bool;

    /// The flag bits of the state byte.
    #[inline]
    fn bits(&self) -> u8 {
        let closed = if self.is_closed() { CLOSED } else { 0 };
        let quiet = if self.success_is_quiet() { QUIET } else { 0 };
        closed | quiet
    }
}

/// A value behind a lock of its own, with its closed flag readable without the lock.
/// `repr(C)`: the flag, which a closed admit reads first, at the start of the cell.
#[repr(C)]
pub(crate) struct Cell<T> {
    /// `CLOSED | LOCKED` bits.
    state: AtomicU8,
    value: UnsafeCell<T>,
}

// SAFETY: the value is only reached through a `CellGuard`, and at most one guard exists at a
// time (the `LOCKED` bit, taken with acquire and released with release ordering): the cell
// hands a `T` from thread to thread as a `Mutex<T>` does, which needs `T: Send` only.
unsafe impl<T: Send> Sync for Cell<T> {}

impl<T: Flags> Cell<T> {
    /// A cell holding `value`, unlocked, its flags set from the value.
    pub(crate) fn new(value: T) -> Self {
        Self {
            state: AtomicU8::new(value.bits()),
            value: UnsafeCell::new(value),
        }
    }

    /// True when the value is closed, as of the last change (no lock taken).
    #[inline]
    pub(crate) fn is_closed(&self) -> bool {
        self.state.load(Ordering::Acquire) & CLOSED != 0
    }

    /// True when a success cannot change the value's state, as of the last change (no lock).
    #[inline]
    pub(crate) fn success_is_quiet(&self) -> bool {
        self.state.load(Ordering::Acquire) & QUIET != 0
    }

    /// Takes the lock (spinning, then yielding, while another thread holds it).
    #[inline]
    pub(crate) fn lock(&self) -> CellGuard<'_, T> {
        if self.state.fetch_or(LOCKED, Ordering::Acquire) & LOCKED != 0 {
            self.lock_contended();
        }
        CellGuard { cell: self }
    }

    /// [`Cell::lock`] once the first try found the lock held: wait until it looks free (loads
    /// only), then try again.
    #[cold]
    fn lock_contended(&self) {
        let mut round = 0;
        loop {
            while self.state.load(Ordering::Relaxed) & LOCKED != 0 {
                if round < SPINS {
                    for _ in 0..1u32 << round {
                        std::hint::spin_loop();
                    }
                    round += 1;
                } else {
                    std::thread::yield_now();
                }
            }
            if self.state.fetch_or(LOCKED, Ordering::Acquire) & LOCKED == 0 {
                return;
            }
        }
    }
}

/// The lock on a [`Cell`]'s value; dropping it releases the lock and publishes the closed flag.
pub(crate) struct CellGuard<'a, T: Flags> {
    cell: &'a Cell<T>,
}

impl<T: Flags> Deref for CellGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: this guard holds the lock, so no other reference to the value exists.
        unsafe { &*self.cell.value.get() }
    }
}

impl<T: Flags> DerefMut for CellGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: this guard holds the lock, so no other reference to the value exists.
        unsafe { &mut *self.cell.value.get() }
    }
}

impl<T: Flags> Drop for CellGuard<'_, T> {
    /// Releases the lock with the value's flags as of now, in one store: while the lock is
    /// held no other thread changes the byte (a waiter's `fetch_or` of a bit already set writes
    /// back what was there).
    #[inline]
    fn drop(&mut self) {
        let bits = T::bits(self);
        self.cell.state.store(bits, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    struct Count {
        n: u64,
        closed: bool,
    }

    impl Flags for Count {
        fn is_closed(&self) -> bool {
            self.closed
        }
        fn success_is_quiet(&self) -> bool {
            self.n.is_multiple_of(2)
        }
    }

    #[test]
    fn the_flag_follows_the_value_as_of_the_last_release() {
        let c = Cell::new(Count { n: 0, closed: true });
        assert!(c.is_closed());
        {
            let mut g = c.lock();
            g.closed = false;
            // Still the state as of the last change until the lock is released.
            assert!(c.is_closed());
        }
        assert!(!c.is_closed());
        c.lock().closed = true;
        assert!(c.is_closed());
        assert!(c.success_is_quiet());
        c.lock().n = 1;
        assert!(!c.success_is_quiet());
        assert!(c.is_closed());
        assert!(
            !Cell::new(Count {
                n: 0,
                closed: false
            })
            .is_closed()
        );
    }

    /// Four threads add to one counter under the lock, reading and writing it in two steps with
    /// a yield in between: any two guards at once would lose increments.
    #[test]
    fn the_lock_excludes_and_counts_every_increment() {
        let c = Arc::new(Cell::new(Count { n: 0, closed: true }));
        let threads: Vec<_> = (0..4)
            .map(|i| {
                let c = c.clone();
                std::thread::spawn(move || {
                    for k in 0..20_000u64 {
                        let mut g = c.lock();
                        let n = g.n;
                        if k % 64 == 0 {
                            std::thread::yield_now();
                        }
                        g.n = n + 1;
                        g.closed = (k + i) % 3 != 0;
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().expect("thread");
        }
        assert_eq!(c.lock().n, 80_000);
    }

    /// A panic while the lock is held releases it (the guard is dropped while unwinding), as the
    /// crate's recovery of a poisoned `Mutex` would hand the data on.
    #[test]
    fn a_panic_under_the_lock_releases_it() {
        let c = Arc::new(Cell::new(Count { n: 0, closed: true }));
        let c2 = c.clone();
        let _ = std::thread::spawn(move || {
            let mut g = c2.lock();
            g.n = 7;
            g.closed = false;
            panic!("under the lock");
        })
        .join();
        let g = c.lock();
        assert_eq!(g.n, 7);
        drop(g);
        assert!(!c.is_closed());
    }
}
