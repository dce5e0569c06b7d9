//! Where the core's log records wait for Python, and the one thread that hands them to Python's
//! `logging` (docs/logging.md#threads-and-the-gil).
//!
//! The IO threads queue a record and go on; they never take the GIL for it. The `bankfeed-log`
//! thread emits the records in order, attached to Python one record at a time, through the exit
//! gate of src/exit.rs. Everything here belongs to the process that made it: a forked child
//! makes its own queue and thread on its first record (crates/bankfeed/src/fork.rs), so it neither emits its
//! parent's records again nor waits on a thread it does not have.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use log::Level;
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use pyo3::{intern, wrap_pyfunction};

use bankfeed::fork::PerProcess;
use bankfeed::sync;

/// One record, made on the thread where it happened and emitted later.
pub(crate) struct Pending {
    /// Which of the bridge's loggers it goes to.
    pub(crate) target: usize,
    pub(crate) level: Level,
    pub(crate) message: String,
    pub(crate) file: Option<&'static str>,
    pub(crate) line: Option<u32>,
    /// When it happened: the record's `created`, whenever it is emitted.
    pub(crate) created: SystemTime,
    /// The thread it happened on (`bankfeed-io`): the record's `threadName`.
    pub(crate) thread: Option<String>,
}

/// Records past this many waiting are dropped, and counted: a handler that stalls for good must
/// not make the process hold every record of every call from then on.
const CAPACITY: usize = 100_000;

/// The longest a fork waits for the record being emitted (a handler that blocks for good would
/// otherwise hold every fork of the process): past it the fork goes on, as it would without
/// bankfeed's hook.
const FORK_WAIT: Duration = Duration::from_secs(2);

#[derive(Default)]
struct Queue {
    records: VecDeque<Pending>,
    /// Records queued so far, and records emitted (or given up) so far: a flush waits for the
    /// second to reach the first.
    pushed: u64,
    done: u64,
    /// Records dropped because the queue was full, not yet reported.
    dropped: u64,
    /// The emitting thread is inside Python with a record.
    busy: bool,
    /// Since when it has been inside Python with the record it is emitting.
    busy_since: Option<Instant>,
    /// A fork is about to happen: no record enters Python until it has.
    forking: bool,
}

#[derive(Default)]
struct Shared {
    queue: Mutex<Queue>,
    /// Wakes the emitting thread: a record came, or a fork is over.
    ready: Condvar,
    /// Wakes the waiters of a flush or a fork: a record was emitted.
    progress: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        sync::lock(&self.queue)
    }
}

/// This process's queue and thread: made on the first record, again in a forked child.
static SHARED: PerProcess<Arc<Shared>> = PerProcess::new();

/// The queue of this process, with its thread started; None when no thread can be started.
fn shared() -> Option<Arc<Shared>> {
    SHARED
        .get_or_try_init(|| {
            let shared = Arc::new(Shared::default());
            let emitter = Arc::clone(&shared);
            std::thread::Builder::new().name("bankfeed-log".to_owned()).spawn(move || run(&emitter)).map(|_| shared)
        })
        .ok()
}

/// The queue of this process if it has one already: a flush or a fork of a process that never
/// logged has nothing to wait for.
fn existing() -> Option<Arc<Shared>> {
    SHARED.get_if_made()
}

/// Queues `record` for Python; never blocks on Python.
pub(crate) fn push(record: Pending) {
    let Some(shared) = shared() else { return };
    let mut queue = shared.lock();
    if queue.records.len() >= CAPACITY {
        queue.dropped += 1;
        return;
    }
    queue.records.push_back(record);
    queue.pushed += 1;
    drop(queue);
    shared.ready.notify_one();
}

/// The longest a blocking call waits for its records before it returns: far more than emitting
/// them takes, short enough that a handler that stalls delays a result by little.
const FLUSH_WAIT: Duration = Duration::from_millis(500);

/// How long past its `deadline` a call may wait for its records: enough for the emitting thread
/// to hand over the last ones (the warning that the deadline ran out among them), little enough
/// that a handler that stalls cannot hold the call much past its deadline.
const PAST_DEADLINE: Duration = Duration::from_millis(100);

/// Until when a blocking call that ends now waits for its records, given when its `deadline`
/// runs out: [`FLUSH_WAIT`] at most, and [`PAST_DEADLINE`] at most past the deadline.
pub(crate) fn flush_until(deadline: Option<Instant>) -> Instant {
    let now = Instant::now();
    let most = now + FLUSH_WAIT;
    deadline.map_or(most, |deadline| deadline.max(now + PAST_DEADLINE).min(most))
}

/// Waits, with the GIL released, until the records queued so far are emitted, or until `until`
/// (at most [`FLUSH_WAIT`] from now): a blocking call's records come before its result, unless a
/// handler is too slow for that. Free when nothing waits.
pub(crate) fn flush(py: Python<'_>, until: Instant) {
    let Some(shared) = existing() else { return };
    let until = until.min(Instant::now() + FLUSH_WAIT);
    let target = {
        let queue = shared.lock();
        // A handler stuck for longer than a flush may wait has stalled: the records will follow
        // when it comes back, and no call waits for them meanwhile.
        let stalled = queue.busy_since.is_some_and(|since| since.elapsed() > FLUSH_WAIT);
        if queue.done >= queue.pushed || stalled {
            return;
        }
        queue.pushed
    };
    py.detach(|| wait_while(&shared, until, |queue| queue.done < target));
}

/// At exit: waits (GIL released, until `until`) for every record queued to be emitted, so that
/// the last records of a script reach its handlers before `logging` shuts them down.
pub(crate) fn drain(py: Python<'_>, until: Instant) {
    let Some(shared) = existing() else { return };
    py.detach(|| wait_while(&shared, until, |queue| queue.done < queue.pushed));
}

/// Waits on `progress` while `waiting` holds and `until` has not come.
fn wait_while(shared: &Shared, until: Instant, waiting: impl Fn(&Queue) -> bool) {
    let mut queue = shared.lock();
    while waiting(&queue) {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return;
        }
        queue = sync::wait_timeout(&shared.progress, queue, left);
    }
}

/// The emitting thread: one record at a time, in order, each emitted with the GIL taken for it
/// alone, so that a fork can come between two.
fn run(shared: &Shared) {
    loop {
        let (record, dropped) = {
            let mut queue = shared.lock();
            loop {
                if !queue.forking && (!queue.records.is_empty() || queue.dropped > 0) {
                    break;
                }
                queue = sync::wait(&shared.ready, queue);
            }
            queue.busy = true;
            queue.busy_since = Some(Instant::now());
            (queue.records.pop_front(), std::mem::take(&mut queue.dropped))
        };
        let emitted = record.is_some();
        // None once Python's exit has begun: the record is dropped. A failure inside Python is
        // dropped too: logging must not fail a call, and here there is nobody to tell (a
        // handler's own error is printed by logging).
        let _ = crate::exit::attach_unless_exiting(|py| {
            if dropped > 0 {
                let _ = report_dropped(py, dropped);
            }
            if let Some(record) = record {
                let _ = emit(py, record);
            }
        });
        let mut queue = shared.lock();
        queue.busy = false;
        queue.busy_since = None;
        if emitted {
            queue.done += 1;
        }
        drop(queue);
        shared.progress.notify_all();
    }
}

/// Hands `record` to its Python logger, as made where it happened.
fn emit(py: Python<'_>, record: Pending) -> PyResult<()> {
    let logger = crate::loggers::logger(py, record.target)?;
    // Asked again: the application may have raised the level since the record was made, and
    // nothing below the level it configured may reach a handler.
    let level = crate::loggers::python_level(record.level);
    if !logger.call_method1(intern!(py, "isEnabledFor"), (level,))?.is_truthy()? {
        return Ok(());
    }
    let made = logger.call_method1(
        intern!(py, "makeRecord"),
        (
            logger.getattr(intern!(py, "name"))?,
            level,
            record.file.unwrap_or("bankfeed"),
            record.line.unwrap_or(0),
            record.message,
            PyTuple::empty(py),
            py.None(),
        ),
    )?;
    // The time and thread of the event, not of its emission (as `logging.LogRecord` computes
    // them from `created`).
    if let Ok(since) = record.created.duration_since(UNIX_EPOCH) {
        let created = since.as_secs_f64();
        let start: f64 = py.import("logging")?.getattr(intern!(py, "_startTime"))?.extract()?;
        made.setattr(intern!(py, "created"), created)?;
        made.setattr(intern!(py, "msecs"), f64::from(since.subsec_millis()))?;
        made.setattr(intern!(py, "relativeCreated"), (created - start) * 1000.0)?;
    }
    if let Some(thread) = record.thread {
        made.setattr(intern!(py, "threadName"), thread)?;
    }
    logger.call_method1(intern!(py, "handle"), (made,))?;
    Ok(())
}

/// A warning that `dropped` records were dropped while the queue was full.
fn report_dropped(py: Python<'_>, dropped: u64) -> PyResult<()> {
    let logger = py.import("logging")?.call_method1(intern!(py, "getLogger"), ("bankfeed",))?;
    let message = format!(
        "bankfeed dropped {dropped} log records: {CAPACITY} were waiting for the handlers of the bankfeed loggers, \
         which did not keep up (a handler that blocks, or DEBUG logging of many calls)"
    );
    logger.call_method1(intern!(py, "warning"), (message,))?;
    Ok(())
}

/// `os.register_at_fork(before=...)`: keeps the emitting thread out of Python until the fork is
/// done, waiting (GIL released, at most [`FORK_WAIT`]) for the record it is emitting. A child
/// forked while that thread held a handler's or a stream's lock would find the lock held forever.
#[pyfunction]
fn _before_fork(py: Python<'_>) {
    let Some(shared) = existing() else { return };
    shared.lock().forking = true;
    let until = Instant::now() + FORK_WAIT;
    py.detach(|| wait_while(&shared, until, |queue| queue.busy));
}

/// `os.register_at_fork(after_in_parent=...)`: the emitting thread goes on.
#[pyfunction]
fn _after_fork_in_parent() {
    let Some(shared) = existing() else { return };
    shared.lock().forking = false;
    shared.ready.notify_all();
}

/// Registers the fork hooks; called at import, after `logging` is imported, so that this
/// `before` hook runs before `logging`'s own (hooks run last-registered first): the record being
/// emitted may need `logging`'s lock to finish.
pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = module.py();
    let kwargs = pyo3::types::PyDict::new(py);
    kwargs.set_item("before", wrap_pyfunction!(_before_fork, module)?)?;
    kwargs.set_item("after_in_parent", wrap_pyfunction!(_after_fork_in_parent, module)?)?;
    py.import("os")?.getattr("register_at_fork")?.call((), Some(&kwargs))?;
    Ok(())
}
