//! A mutex lock that survives a poisoned mutex, for the shared state every
//! layer keeps behind `std::sync::Mutex`.

use std::sync::{Mutex, MutexGuard};

/// Locks a mutex, recovering the data if a panicking thread poisoned it:
/// the state behind these mutexes stays consistent between statements.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
