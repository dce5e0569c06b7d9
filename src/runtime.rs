//! The tokio runtime every call of the process shares, blocking and async alike
//! (docs/architecture.md#how-a-call-travels).

use tokio::runtime::Runtime;

use crate::error::PyBankfeedError;
use bankfeed::fork::PerProcess;

/// Started on the first call, and started again in a forked child, whose copy of the parent's
/// runtime has no threads to run anything (docs/architecture.md#fork-and-child-processes). A
/// runtime is never dropped: the parent's lives as long as the process, and a child must not tear
/// down the parent's copy.
pub(crate) fn runtime() -> Result<&'static Runtime, PyBankfeedError> {
    static RUNTIME: PerProcess<&'static Runtime> = PerProcess::new();
    RUNTIME
        .get_or_try_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .thread_name("bankfeed-io")
                .build()
                .map(|runtime| &*Box::leak(Box::new(runtime)))
        })
        .map_err(|e| PyBankfeedError::internal(format!("bankfeed's runtime could not start: {e}")))
}

/// Aborts its task when dropped: a call whose caller went away (Ctrl-C, a cancelled task, an
/// iterator closed) stops at once, its request in flight and any sleep with it.
#[derive(Default)]
pub(crate) struct AbortOnDrop(pub(crate) Option<tokio::task::JoinHandle<()>>);

impl AbortOnDrop {
    pub(crate) fn abort(&mut self) {
        if let Some(task) = self.0.take() {
            task.abort();
        }
    }
}

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.abort();
    }
}
