//! [`Table`]: the registry's map from a dependency name to its entry, read without a lock.
//!
//! Dependencies are added on first sight and never removed, so the map is append-only: open
//! addressing over slots that are each set once ([`OnceLock`]) and never cleared. A lookup hashes
//! the name (foldhash, no allocation) and probes with acquire loads only;
//! an insert takes the table's one mutex. A level takes entries until it is half full, then the
//! next level (four times larger) is opened, so every probe sequence ends at an empty slot and
//! a level never moves what it holds (readers keep `&V` for the table's life).
//!
//! This is what lets the closed breaker's admit and record skip a registry-wide lock: the
//! `BTreeMap` behind one `Mutex` it replaces cost two atomic read-modify-writes and a string
//! comparison per tree level on every call.

use std::sync::{Mutex, OnceLock};

use crate::util::sync::Locked;

/// Slots of the first level (a power of two; a run has tens of dependencies).
const FIRST_SLOTS: usize = 64;

/// An append-only map from a name to a `V`, read without a lock.
pub(crate) struct Table<V> {
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

    fn find(&self, hash: u64, name: &str) -> Option<&V> {
        for slot in self.probe(hash) {
            let e = slot.get()?;
            if e.hash == hash && &*e.name == name {
                return Some(&e.value);
            }
        }
        None
    }
}

impl<V> Default for Table<V> {
    fn default() -> Self {
        Self {
            first: Level::new(FIRST_SLOTS),
            used: Mutex::new(vec![0]),
        }
    }
}

impl<V> Table<V> {
    /// `name`'s entry, if it was ever inserted.
    pub(crate) fn get(&self, name: &str) -> Option<&V> {
        let hash = hash(name);
        let mut level = &self.first;
        loop {
            if let Some(v) = level.find(hash, name) {
                return Some(v);
            }
            level = level.next.get()?;
        }
    }

    /// `name`'s entry, inserting `make()` on first sight.
    pub(crate) fn get_or_insert(&self, name: &str, make: impl FnOnce() -> V) -> &V {
        if let Some(v) = self.get(name) {
            return v;
        }
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

/// `s` hashed with foldhash's fixed-seed quality hasher: a few multiplies over overlapping
/// word reads of the name, no copy (a hand-written word-at-a-time hash here copied each name's
/// tail through `memcpy` into a stack word and stalled on the load; it was 40 % of a closed
/// breaker's admit + record). Names are a run's own dependency names: no adversary picks them,
/// and a level never exceeds half full whatever they hash to.
fn hash(s: &str) -> u64 {
    use std::hash::BuildHasher;
    const SEED: foldhash::quality::FixedState = foldhash::quality::FixedState::with_seed(0x5eed);
    SEED.hash_one(s)
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
