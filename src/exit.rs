//! Python's exit with calls in flight: the IO threads stop entering Python before the interpreter
//! starts finalising (docs/architecture.md#exit-with-calls-in-flight).
//!
//! On CPython 3.13 and older, a thread that needs the GIL back once finalising has begun is ended
//! with `pthread_exit`. Python code releases and retakes the GIL inside itself (a logging handler
//! takes a lock, writes a file), so an IO thread running such code through pyo3 can be ended
//! there, and the unwinding of `pthread_exit` across Rust frames aborts the process. No check of
//! `Py_IsFinalizing` can close that window: finalising may begin just after it. An `atexit` hook
//! can, because Python runs those hooks before it starts finalising: the hook closes a gate, then
//! waits, with the GIL released, for the IO threads already through it to leave Python.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use pyo3::prelude::*;

/// Set by the `atexit` hook: from then on no IO thread enters Python.
static CLOSED: AtomicBool = AtomicBool::new(false);
/// Threads between the gate and the end of their time in Python.
static INSIDE: AtomicUsize = AtomicUsize::new(0);

/// How long the hook waits for threads inside Python (a logging handler that blocks, say) before
/// letting the exit go on regardless.
pub(crate) const GRACE: Duration = Duration::from_secs(2);

/// Runs `f` attached to the interpreter, or returns None once Python's exit has begun (or when it
/// cannot attach at all). For threads Python did not start, such as the IO threads.
pub(crate) fn attach_unless_exiting<R>(f: impl for<'py> FnOnce(Python<'py>) -> R) -> Option<R> {
    run_unless_exiting(|| Python::try_attach(f)).flatten()
}

/// Runs `f`, Python code called from Rust (a challenge handler on the caller's thread), or
/// returns None once Python's exit has begun. The same hazard as on an IO thread: a daemon thread
/// in a handler when finalising begins would be ended inside it, across Rust frames.
pub(crate) fn run_unless_exiting<R>(f: impl FnOnce() -> R) -> Option<R> {
    struct Leave;
    impl Drop for Leave {
        fn drop(&mut self) {
            INSIDE.fetch_sub(1, Ordering::SeqCst);
        }
    }
    // Counted before the gate is read (both SeqCst): either this thread sees the gate closed, or
    // the hook sees it inside and waits for it.
    INSIDE.fetch_add(1, Ordering::SeqCst);
    let _leave = Leave;
    if CLOSED.load(Ordering::SeqCst) {
        return None;
    }
    Some(f())
}

/// Closes the gate and waits, the GIL released, for the threads inside Python to leave (at most
/// [`GRACE`]). Called by the `atexit` hook (`atexit.rs`).
pub(crate) fn close(py: Python<'_>) {
    CLOSED.store(true, Ordering::SeqCst);
    // Released: the threads inside may be waiting for the GIL to finish.
    py.detach(|| {
        let until = Instant::now() + GRACE;
        while INSIDE.load(Ordering::SeqCst) > 0 && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(1));
        }
    });
}
