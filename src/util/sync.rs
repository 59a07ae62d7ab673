//! The one recovery from a poisoned lock. A panic while a lock was held leaves data a later
//! reader can still use (counters, logs, records): every lock in the crate is taken through
//! [`Locked`], so there is one place that decides this, not one match per call site.

use std::sync::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Takes a lock, recovering the data of a poisoned one.
pub(crate) trait Locked<T: ?Sized> {
    /// The guard, poisoned or not.
    fn locked(&self) -> MutexGuard<'_, T>;
}

impl<T: ?Sized> Locked<T> for Mutex<T> {
    fn locked(&self) -> MutexGuard<'_, T> {
        self.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Reads and writes an `RwLock`, recovering the data of a poisoned one.
pub(crate) trait RwLocked<T: ?Sized> {
    /// A read guard, poisoned or not.
    fn read_locked(&self) -> RwLockReadGuard<'_, T>;
    /// A write guard, poisoned or not.
    fn write_locked(&self) -> RwLockWriteGuard<'_, T>;
}

impl<T: ?Sized> RwLocked<T> for RwLock<T> {
    fn read_locked(&self) -> RwLockReadGuard<'_, T> {
        self.read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
    fn write_locked(&self) -> RwLockWriteGuard<'_, T> {
        self.write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_poisoned_mutex_still_hands_out_its_data() {
        let m = Arc::new(Mutex::new(vec![1]));
        let m2 = m.clone();
        let _ = std::thread::spawn(move || {
            let mut g = m2.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            g.push(2);
            panic!("poison it");
        })
        .join();
        assert!(m.is_poisoned());
        assert_eq!(*m.locked(), vec![1, 2]);
    }

    #[test]
    fn a_poisoned_rwlock_still_reads_and_writes() {
        let l = Arc::new(RwLock::new(1));
        let l2 = l.clone();
        let _ = std::thread::spawn(move || {
            let _g = l2
                .write()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            panic!("poison it");
        })
        .join();
        assert!(l.is_poisoned());
        *l.write_locked() += 1;
        assert_eq!(*l.read_locked(), 2);
    }
}
