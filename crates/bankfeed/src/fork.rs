//! Values that belong to the process that built them: a runtime, a connection pool. After
//! `fork()` the child has their memory but none of their threads, so it builds its own
//! (docs/architecture.md#fork-and-child-processes).

use std::sync::Mutex;

use crate::sync;

/// A value kept with the id of the process that built it, and built again in any other process.
pub struct PerProcess<T> {
    // The lock is held for a comparison and a clone (or while the first value is built), so a
    // fork lands inside it only by a very unlucky chance.
    slot: Mutex<Option<(u32, T)>>,
}

impl<T: Clone> Default for PerProcess<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Clone> PerProcess<T> {
    /// Empty: the first `get_or_try_init` builds the value (the Python layer's shared runtime,
    /// the registry of connection pools).
    pub const fn new() -> Self {
        PerProcess { slot: Mutex::new(None) }
    }

    /// Holds `value`, built by this process.
    pub(crate) fn with(value: T) -> Self {
        PerProcess { slot: Mutex::new(Some((std::process::id(), value))) }
    }

    /// The value this process built, building it with `make` when there is none yet or when the
    /// one held was built by another process (the parent of a fork). The parent's value is
    /// leaked, never dropped: its threads do not exist here, and its sockets and event queues are
    /// shared with the parent through inherited descriptors, so dropping it could disturb the
    /// parent's connections.
    pub fn get_or_try_init<E>(&self, make: impl FnOnce() -> Result<T, E>) -> Result<T, E> {
        let pid = std::process::id();
        let mut slot = sync::lock(&self.slot);
        if let Some((owner, value)) = slot.as_ref() {
            if *owner == pid {
                return Ok(value.clone());
            }
        }
        let value = make()?;
        if let Some(stale) = slot.replace((pid, value.clone())) {
            std::mem::forget(stale);
        }
        Ok(value)
    }
}

impl<T: Clone> PerProcess<T> {
    /// The value this process built, if it built one; never builds.
    pub fn get_if_made(&self) -> Option<T> {
        let slot = sync::lock(&self.slot);
        slot.as_ref().filter(|(owner, _)| *owner == std::process::id()).map(|(_, value)| value.clone())
    }
}

impl<T> PerProcess<T> {
    /// Drops the value this process built (the next `get_or_try_init` builds another); a value of
    /// another process is leaked, as above.
    pub(crate) fn clear(&self) {
        let stale = sync::lock(&self.slot).take();
        if let Some((owner, value)) = stale {
            if owner == std::process::id() {
                drop(value);
            } else {
                std::mem::forget(value);
            }
        }
    }
}

impl<T> Drop for PerProcess<T> {
    fn drop(&mut self) {
        // Same reason as above: a parent's value is left alone in a child.
        let slot = sync::get_mut(&mut self.slot);
        if slot.as_ref().is_some_and(|(owner, _)| *owner != std::process::id()) {
            std::mem::forget(slot.take());
        }
    }
}

impl<T> std::fmt::Debug for PerProcess<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PerProcess")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    #[test]
    fn built_once_per_process() {
        let built = AtomicUsize::new(0);
        let make = || -> Result<usize, ()> { Ok(built.fetch_add(1, Ordering::SeqCst)) };
        let slot = PerProcess::new();
        assert_eq!(slot.get_or_try_init(make), Ok(0));
        assert_eq!(slot.get_or_try_init(make), Ok(0));
        assert_eq!(built.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_value_of_another_process_is_rebuilt_and_leaked() {
        let parents = Arc::new(());
        let slot = PerProcess { slot: Mutex::new(Some((std::process::id().wrapping_add(1), Arc::clone(&parents)))) };
        let ours = slot.get_or_try_init(|| Ok::<_, ()>(Arc::new(()))).unwrap();
        assert!(!Arc::ptr_eq(&ours, &parents));
        assert!(Arc::ptr_eq(&slot.get_or_try_init(|| Err(())).unwrap(), &ours));
        // The parent's value was forgotten, not dropped: its count never comes down.
        assert_eq!(Arc::strong_count(&parents), 2);
    }

    #[test]
    fn a_failed_build_is_tried_again() {
        let slot = PerProcess::new();
        assert_eq!(slot.get_or_try_init(|| Err::<u8, _>("no")), Err("no"));
        assert_eq!(slot.get_or_try_init(|| Ok::<_, &str>(3)), Ok(3));
    }
}
