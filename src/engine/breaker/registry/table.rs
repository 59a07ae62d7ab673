//! [`Table`]: the registry's map from a dependency name to its entry, read without a lock.
//!
//! Dependencies are added on first sight and never removed, so the map is append-only: open
//! addressing over slots that are each set once ([`OnceLock`]) and never cleared. A lookup hashes
//! the name (foldhash, no allocation) and probes with acquire loads only;
//! an insert takes the table's one mutex. A level takes entries until it is half full, then the
//! next level (four times larger) is opened, so every probe sequence ends at an empty slot and
//! a level never moves what it holds (readers keep `&V` for the table's life).
//!
//! Each thread remembers the entry it found last (a thread-local, keyed by the table's id, ids
//! never reused): a lookup compares the name with it first, and hashes and probes only when it
//! differs. An admit and the record of its answer ask for the same name in a row.
//!
//! This is what lets the closed breaker's admit and record skip a registry-wide lock: the
//! `BTreeMap` behind one `Mutex` it replaces cost two atomic read-modify-writes and a string
//! comparison per tree level on every call.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use crate::util::sync::Locked;

/// Slots of the first level (a power of two; a run has tens of dependencies).
const FIRST_SLOTS: usize = 64;

/// Table ids, never reused: an entry remembered by a thread is only read back through the
/// table that handed it out.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// The entry this thread found last: its table's id (0: none) and the entry.
    static LAST: Cell<(u64, *const ())> = const { Cell::new((0, std::ptr::null())) };
}

/// An append-only map from a name to a `V`, read without a lock.
pub(crate) struct Table<V> {
    /// This table's id among every table the process made.
    id: u64,
    first: Level<V>,
    /// Serialises inserts; holds how many entries each level took.
    used: Mutex<Vec<usize>>,
}

struct Level<V> {
    slots: Box<[OnceLock<Box<Entry<V>>>]>,
    next: OnceLock<Box<Level<V>>>,
}

/// `repr(C)`: the hash and name a lookup compares come first, on the same cache line as the
/// start of the value, instead of after a value of hundreds of bytes.
#[repr(C)]
struct Entry<V> {
    hash: u64,
    name: Box<str>,
    value: V,
}

impl<V> Level<V> {
    fn new(slots: usize) -> Self {
        Self {
            slots: (0..slots).map(|_| OnceLock::new()).collect(),
            next: OnceLock::new(),
        }
    }

    /// The slots `hash` probes, in order (from its home slot, wrapping round).
    fn probe(&self, hash: u64) -> impl Iterator<Item = &OnceLock<Box<Entry<V>>>> {
        let mask = self.slots.len() - 1;
        let home = (hash >> 32) as usize & mask;
        (0..self.slots.len()).map(move |i| &self.slots[(home + i) & mask])
    }

    #[inline]
    fn find(&self, hash: u64, name: &str) -> Option<&Entry<V>> {
        let mask = self.slots.len() - 1;
        let mut at = (hash >> 32) as usize;
        for _ in 0..self.slots.len() {
            let e = self.slots[at & mask].get()?;
            if e.hash == hash && same(e.name.as_bytes(), name.as_bytes()) {
                return Some(e);
            }
            at = at.wrapping_add(1);
        }
        None
    }
}

impl<V> Default for Table<V> {
    fn default() -> Self {
        Self {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            first: Level::new(FIRST_SLOTS),
            used: Mutex::new(vec![0]),
        }
    }
}

impl<V> Table<V> {
    /// `name`'s entry, if it was ever inserted. The entry this thread found last is compared
    /// first (an admit and its record ask for the same name, one after the other): one
    /// thread-local read and a comparison of the name instead of a hash and a probe.
    #[inline(always)]
    pub(crate) fn get(&self, name: &str) -> Option<&V> {
        let (id, last) = LAST.with(Cell::get);
        if id == self.id {
            // SAFETY: `last` was stored by `find` of the table with this id — `self`, since ids
            // are never reused — and points to one of its entries, each boxed, never moved and
            // never dropped before the table, which `&self` keeps alive.
            let e = unsafe { &*last.cast::<Entry<V>>() };
            if same(e.name.as_bytes(), name.as_bytes()) {
                return Some(&e.value);
            }
        }
        self.find(name)
    }

    /// [`Table::get`] by hash and probe; remembers the entry found for this thread.
    #[inline(never)]
    fn find(&self, name: &str) -> Option<&V> {
        let hash = hash(name);
        let mut level = &self.first;
        loop {
            if let Some(e) = level.find(hash, name) {
                LAST.with(|l| l.set((self.id, std::ptr::from_ref(e).cast())));
                return Some(&e.value);
            }
            level = level.next.get()?;
        }
    }

    /// `name`'s entry, inserting `make()` on first sight.
    #[inline]
    pub(crate) fn get_or_insert(&self, name: &str, make: impl FnOnce() -> V) -> &V {
        match self.get(name) {
            Some(v) => v,
            None => self.insert(name, make),
        }
    }

    /// [`Table::get_or_insert`] once `name` was not found: under the insert lock.
    #[cold]
    fn insert(&self, name: &str, make: impl FnOnce() -> V) -> &V {
        let mut used = self.used.locked();
        if let Some(v) = self.get(name) {
            return v; // inserted by another thread meanwhile
        }
        let hash = hash(name);
        let mut level = &self.first;
        let mut depth = 0;
        loop {
            if used.len() == depth {
                used.push(0);
            }
            // Only this (locked) path sets slots: an empty slot found here stays empty until
            // it is set below. A level at most half full always has one.
            if used[depth] * 2 < level.slots.len()
                && let Some(slot) = level.probe(hash).find(|s| s.get().is_none())
            {
                used[depth] += 1;
                let entry = slot.get_or_init(|| {
                    Box::new(Entry {
                        hash,
                        name: name.into(),
                        value: make(),
                    })
                });
                return &entry.value;
            }
            let size = level.slots.len().saturating_mul(4);
            level = level.next.get_or_init(|| Box::new(Level::new(size)));
            depth += 1;
        }
    }

    /// Every entry with its name, in no particular order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, &V)> {
        let levels = std::iter::successors(Some(&self.first), |l| l.next.get().map(|b| &**b));
        levels
            .flat_map(|l| l.slots.iter())
            .filter_map(|s| s.get())
            .map(|e| (&*e.name, &e.value))
    }
}

/// `s` hashed with foldhash's fixed-seed fast hasher over its bytes alone (one folded multiply
/// for a name of up to 16 bytes; `Hash for str` would add a second for its `0xff` terminator):
/// overlapping word reads of the name, no copy (a hand-written word-at-a-time hash here copied
/// each name's tail through `memcpy` into a stack word and stalled on the load). Names are a
/// run's own dependency names: no adversary picks them, and a level never exceeds half full
/// whatever they hash to.
#[inline]
fn hash(s: &str) -> u64 {
    use std::hash::{BuildHasher, Hasher};
    const SEED: foldhash::fast::FixedState = foldhash::fast::FixedState::with_seed(0x5eed);
    let mut h = SEED.build_hasher();
    h.write(s.as_bytes());
    h.finish()
}

/// `a == b` without a call to the C library's `memcmp` (a third of a lookup's time was the call
/// and its setup for a 10-byte name): 8-byte words, the last one overlapping the one before.
#[inline]
fn same(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if n < 8 {
        return a.iter().zip(b).all(|(x, y)| x == y);
    }
    let mut i = 0;
    while i + 8 < n {
        if word(a, i) != word(b, i) {
            return false;
        }
        i += 8;
    }
    word(a, n - 8) == word(b, n - 8)
}

/// The 8 bytes of `s` from `at` (`at + 8 <= s.len()`), as one unaligned load.
#[inline(always)]
fn word(s: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&s[at..at + 8]);
    u64::from_ne_bytes(w)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use std::sync::Arc;

    #[test]
    fn every_name_inserted_is_found_across_levels_and_no_other() {
        let t: Table<usize> = Table::default();
        // 64 slots take 32, then 256 take 128, then 1024: 600 names open three levels.
        for i in 0..600 {
            let name = format!("dep-{i}");
            assert_eq!(*t.get_or_insert(&name, || i), i);
        }
        for i in 0..600 {
            assert_eq!(t.get(&format!("dep-{i}")), Some(&i));
            // A second insert keeps the first value.
            assert_eq!(*t.get_or_insert(&format!("dep-{i}"), || usize::MAX), i);
        }
        assert_eq!(t.get("dep-600"), None);
        assert_eq!(t.get(""), None);
        let all: BTreeMap<&str, usize> = t.iter().map(|(k, v)| (k, *v)).collect();
        assert_eq!(all.len(), 600);
        assert_eq!(all["dep-599"], 599);
    }

    #[test]
    fn names_differing_in_any_byte_or_length_are_distinct() {
        let t: Table<&str> = Table::default();
        let names = [
            "",
            "a",
            "a\0",
            "crm_search",
            "crm_searcg",
            "openai-codex/default/ba7816",
            "openai-codex/default/ba7817",
            "12345678",
            "123456789",
        ];
        for n in names {
            t.get_or_insert(n, || n);
        }
        for n in names {
            assert_eq!(t.get(n), Some(&n));
        }
    }

    /// The word-wise comparison against `==` over every pair of short names that differ in one
    /// byte at any position, or in length.
    #[test]
    fn same_agrees_with_slice_equality() {
        let base: Vec<u8> = (0..40u8).map(|i| b'a' + i % 26).collect();
        for n in 0..=base.len() {
            let a = &base[..n];
            assert!(same(a, a), "{n}");
            for at in 0..n {
                let mut b = a.to_vec();
                b[at] ^= 0x20;
                assert!(!same(a, &b), "{n} at {at}");
            }
            if n > 0 {
                assert!(!same(a, &base[..n - 1]), "{n} shorter");
            }
        }
    }

    /// The entry a thread remembers belongs to one table: another table (even one made after
    /// the first was dropped) looks its own names up, and a different name is not the entry.
    #[test]
    fn the_remembered_entry_answers_only_for_its_table_and_name() {
        let a: Table<&str> = Table::default();
        a.get_or_insert("crm_search", || "a");
        assert_eq!(a.get("crm_search"), Some(&"a"));
        let b: Table<&str> = Table::default();
        assert_eq!(b.get("crm_search"), None);
        b.get_or_insert("crm_search", || "b");
        assert_eq!(b.get("crm_search"), Some(&"b"));
        assert_eq!(a.get("crm_search"), Some(&"a"));
        assert_eq!(a.get("crm_searcg"), None);
        drop(a);
        let c: Table<&str> = Table::default();
        assert_eq!(c.get("crm_search"), None);
    }

    #[test]
    fn concurrent_first_sights_insert_each_name_once() {
        let t: Arc<Table<std::sync::atomic::AtomicUsize>> = Arc::new(Table::default());
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let t = t.clone();
                std::thread::spawn(move || {
                    for i in 0..200 {
                        t.get_or_insert(&format!("d{i}"), Default::default)
                            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                })
            })
            .collect();
        for th in threads {
            th.join().expect("thread");
        }
        assert_eq!(t.iter().count(), 200);
        for (_, n) in t.iter() {
            assert_eq!(n.load(std::sync::atomic::Ordering::Relaxed), 4);
        }
    }
}
