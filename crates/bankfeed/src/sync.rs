//! Locking that survives a panic elsewhere.

use std::sync::{Mutex, MutexGuard};

/// Locks `mutex`, carrying on when it is poisoned. Every lock of the crate is held for a short
/// update and never across an await, so a panic in another holder is the only way to poison
/// one, and it leaves nothing half-written that a reader could trip over: stopping every later
/// request because of one failed request would be worse.
pub fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_poisoned_mutex_still_locks_with_its_data() {
        let mutex = Mutex::new(1);
        let poisoned = std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    let mut guard = lock(&mutex);
                    *guard = 2;
                    panic!("poisons the mutex");
                })
                .join()
        });
        assert!(poisoned.is_err() && mutex.is_poisoned());
        assert_eq!(*lock(&mutex), 2);
    }
}
