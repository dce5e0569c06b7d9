//! Locking that survives a panic elsewhere.

use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

/// Locks `mutex`, carrying on when it is poisoned. Every lock of the crate is held for a short
/// update and never across an await, so a panic in another holder is the only way to poison
/// one, and it leaves nothing half-written that a reader could trip over: stopping every later
/// request because of one failed request would be worse.
pub fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The value of `mutex` through an exclusive borrow, carrying on when it is poisoned, for the
/// same reason as [`lock`].
pub fn get_mut<T>(mutex: &mut Mutex<T>) -> &mut T {
    mutex.get_mut().unwrap_or_else(PoisonError::into_inner)
}

/// Waits on `condvar` with `guard`, carrying on when the mutex is poisoned, as [`lock`] does.
pub fn wait<'a, T>(condvar: &Condvar, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
    condvar.wait(guard).unwrap_or_else(PoisonError::into_inner)
}

/// Waits on `condvar` with `guard` for at most `timeout`, carrying on when the mutex is
/// poisoned, as [`lock`] does; whether the wait timed out is not needed by any caller.
pub fn wait_timeout<'a, T>(condvar: &Condvar, guard: MutexGuard<'a, T>, timeout: Duration) -> MutexGuard<'a, T> {
    condvar.wait_timeout(guard, timeout).unwrap_or_else(PoisonError::into_inner).0
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
