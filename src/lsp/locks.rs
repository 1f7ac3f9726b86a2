//! Locks that outlive a panic elsewhere: a poisoned lock's data is still used (every value kept
//! under these locks is whole between statements).

use std::sync::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

pub fn read_lock<T>(l: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(|e| e.into_inner())
}

pub fn write_lock<T>(l: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(|e| e.into_inner())
}

/// A copy of what a lock holds.
pub fn read<T: Clone>(l: &RwLock<T>) -> T {
    read_lock(l).clone()
}

pub fn write<T>(l: &RwLock<T>, value: T) {
    *write_lock(l) = value;
}
