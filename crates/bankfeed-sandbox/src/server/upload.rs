//! A request body as the handlers read it, within the bounds of docs/sandbox.md#limits: the whole
//! request must arrive within `request_read_timeout` of its first byte, and its body must not
//! stop arriving for `idle_timeout`.
//!
//! The idle timeout alone did not bound a request: its timer restarted at every byte, so a body
//! sent a byte every 20 seconds held a connection forever, and 1,100 of them held every place
//! the sandbox has. A body that fails here fails with [`ReadTimedOut`], which the router answers
//! with a 408 in the service's error envelope (`routes::whole_body`), whatever the layer that was
//! reading it made of the failure.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Bytes, HttpBody};
use axum::BoxError;
use hyper::body::{Frame, Incoming, SizeHint};
use tokio::time::{sleep, sleep_until, Instant, Sleep};

use crate::server::slots::Slot;

/// Why a request body was not read whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReadTimedOut {
    /// The request (head and body) took longer than `request_read_timeout`, this long.
    Whole(Duration),
    /// The body stopped arriving for `idle_timeout`, this long.
    Stalled(Duration),
    /// Every connection was taken, and this one gave its place to a newcomer (see `slots`).
    Cut,
}

impl ReadTimedOut {
    /// The `ReadTimedOut` in `error` or in its sources, if any.
    pub(crate) fn find(error: &(dyn std::error::Error + 'static)) -> Option<ReadTimedOut> {
        std::iter::successors(Some(error), |error| error.source())
            .find_map(|error| error.downcast_ref::<ReadTimedOut>())
            .copied()
    }
}

impl fmt::Display for ReadTimedOut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadTimedOut::Whole(limit) => {
                write!(f, "The request was not received whole within {} s of its first byte", limit.as_secs_f64())
            }
            ReadTimedOut::Stalled(limit) => {
                write!(f, "The request body stopped arriving for {} s", limit.as_secs_f64())
            }
            ReadTimedOut::Cut => f.write_str(
                "The request was still arriving when every connection of the sandbox was taken; \
                 it was cut to make room for a new connection",
            ),
        }
    }
}

impl std::error::Error for ReadTimedOut {}

/// A request body that fails with [`ReadTimedOut`] rather than wait past its bounds, and tells
/// the connection's [`Slot`] once it has been read whole.
pub(crate) struct Upload {
    body: Incoming,
    slot: Arc<Slot>,
    stall: Duration,
    stalled: Option<Pin<Box<Sleep>>>,
    whole: Duration,
    /// When the request must have been read whole; armed on the first wait.
    deadline_at: Instant,
    deadline: Option<Pin<Box<Sleep>>>,
    cut: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
}

impl Upload {
    /// The body of a request whose first byte came at `began`.
    pub(crate) fn new(body: Incoming, slot: Arc<Slot>, stall: Duration, whole: Duration, began: Instant) -> Upload {
        if body.is_end_stream() {
            slot.answering();
        }
        let deadline_at = began.checked_add(whole).unwrap_or(began);
        Upload { body, slot, stall, stalled: None, whole, deadline_at, deadline: None, cut: None }
    }

    fn failed(why: ReadTimedOut) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        Poll::Ready(Some(Err(Box::new(why))))
    }
}

impl HttpBody for Upload {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = self.get_mut();
        let slot = &this.slot;
        if this.cut.get_or_insert_with(|| Box::pin(slot.cut())).as_mut().poll(cx).is_ready() {
            return Upload::failed(ReadTimedOut::Cut);
        }
        // Checked before the body, so a body that never pauses long enough to stall still ends
        // at the deadline.
        let deadline_at = this.deadline_at;
        if this.deadline.get_or_insert_with(|| Box::pin(sleep_until(deadline_at))).as_mut().poll(cx).is_ready() {
            return Upload::failed(ReadTimedOut::Whole(this.whole));
        }
        match Pin::new(&mut this.body).poll_frame(cx) {
            Poll::Pending => {
                let stall = this.stall;
                let stalled = this.stalled.get_or_insert_with(|| Box::pin(sleep(stall)));
                if stalled.as_mut().poll(cx).is_ready() {
                    return Upload::failed(ReadTimedOut::Stalled(stall));
                }
                Poll::Pending
            }
            Poll::Ready(None) => {
                this.slot.answering();
                Poll::Ready(None)
            }
            ready @ Poll::Ready(_) => {
                this.stalled = None;
                ready.map_err(Into::into)
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timeout_is_found_through_the_errors_that_wrap_it() {
        let wrapped = axum::Error::new(axum::Error::new(ReadTimedOut::Stalled(Duration::from_secs(30))));
        assert_eq!(ReadTimedOut::find(&wrapped), Some(ReadTimedOut::Stalled(Duration::from_secs(30))));
        assert_eq!(ReadTimedOut::find(&axum::Error::new("another failure")), None);
    }

    #[test]
    fn messages_name_the_limit() {
        assert_eq!(
            ReadTimedOut::Whole(Duration::from_secs(30)).to_string(),
            "The request was not received whole within 30 s of its first byte"
        );
        assert_eq!(
            ReadTimedOut::Stalled(Duration::from_millis(500)).to_string(),
            "The request body stopped arriving for 0.5 s"
        );
    }
}
