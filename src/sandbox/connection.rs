//! How the sandbox accepts and serves connections, within the limits of docs/sandbox.md#limits.
//!
//! `axum::serve` has no header-read or idle timeout and no bound on open connections: idle
//! sockets piled up until the process ran out of file descriptors, and a client sending its
//! headers a byte at a time held a connection forever. So the sandbox runs hyper's HTTP/1
//! connection itself:
//!
//! - at most `max_connections` are open; past that the accept loop waits (the kernel queues the
//!   newcomers) until one closes, so a flood delays real requests, each idle connection
//!   holding its place for no longer than the timeouts below;
//! - a request's headers must arrive within `header_read_timeout`, counted from the accept for
//!   the first request and from the first byte of the head for later ones ([`Guarded`]);
//! - a connection with nothing to do (before its first request, between two requests, or
//!   stuck on a read or write that makes no progress) is closed after `idle_timeout`;
//! - anything that is not HTTP/1 is refused at once: a connection that opens with the HTTP/2
//!   preface gets an HTTP/2 GOAWAY with `HTTP_1_1_REQUIRED` (so an HTTP/2 client says what went
//!   wrong), and garbage gets hyper's 400, then the connection is closed.
//!
//! It also closes a connection without an answer when the fault layer asks for it
//! (docs/sandbox.md#faults), which a tower service cannot do from inside the router.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes, HttpBody};
use axum::{BoxError, Router};
use hyper::body::{Frame, Incoming, SizeHint};
use hyper::server::conn::http1;
use hyper::service::{service_fn, Service as _};
use hyper::Request;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, OwnedSemaphorePermit, Semaphore};
use tokio::time::{sleep, Sleep};

use super::faults::Dropped;

/// How long the accept loop pauses after an error that is not about one connection (out of
/// file descriptors, say), so that it does not spin while connections close.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// What an HTTP/2 client sends first (RFC 9113, section 3.4).
const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// How long a refused HTTP/2 connection is kept open for its client to read the refusal.
const H2_LINGER: Duration = Duration::from_secs(1);

/// The answer to an HTTP/2 preface: the server's preface (an empty SETTINGS frame), then GOAWAY
/// (last stream 0) with the error code `HTTP_1_1_REQUIRED` (0xd).
const H2_REFUSAL: &[u8] = &[
    0, 0, 0, 0x4, 0, 0, 0, 0, 0, // SETTINGS, empty
    0, 0, 8, 0x7, 0, 0, 0, 0, 0, // GOAWAY, 8 bytes
    0, 0, 0, 0, // last stream id
    0, 0, 0, 0xd, // HTTP_1_1_REQUIRED
];

/// The connection limits of a sandbox (the fields of the same names in `SandboxConfig`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub header_read_timeout: Duration,
    pub idle_timeout: Duration,
    pub max_connections: usize,
}

/// Accepts and serves connections until `shutdown` completes, then asks every connection to
/// close once its request in flight (if any) is answered, and returns when all are closed.
pub(crate) async fn serve(
    listener: TcpListener,
    router: Router,
    limits: Limits,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()> {
    let max = limits.max_connections.clamp(1, Semaphore::MAX_PERMITS.min(u32::MAX as usize));
    let permits = Arc::new(Semaphore::new(max));
    let (closing, closing_seen) = watch::channel(false);
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        // Waiting for a permit before accepting leaves the surplus in the kernel's queue, where
        // it costs this process no file descriptor.
        let permit = tokio::select! {
            () = &mut shutdown => break,
            permit = Arc::clone(&permits).acquire_owned() => permit,
        };
        let Ok(permit) = permit else { break };
        let accepted = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok((stream, _)) => {
                // Answers are written whole; Nagle would only delay their last segment.
                let _ = stream.set_nodelay(true);
                tokio::spawn(serve_connection(stream, router.clone(), limits, closing_seen.clone(), permit));
            }
            Err(error) if is_connection_error(&error) => {}
            Err(_) => sleep(ACCEPT_BACKOFF).await,
        }
    }
    drop(listener);
    let _ = closing.send(true);
    // Every connection holds a permit until it is closed.
    let _ = permits.acquire_many(u32::try_from(max).unwrap_or(u32::MAX)).await;
    Ok(())
}

/// Errors that concern the one connection being accepted, not the listener.
fn is_connection_error(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::ConnectionRefused | io::ErrorKind::ConnectionAborted | io::ErrorKind::ConnectionReset
    )
}

async fn serve_connection(
    stream: TcpStream,
    router: Router,
    limits: Limits,
    mut closing: watch::Receiver<bool>,
    _permit: OwnedSemaphorePermit,
) {
    let progress = Arc::new(Progress::new());
    let io = TokioIo::new(Guarded::new(stream, Arc::clone(&progress), limits));
    let router = TowerToHyperService::new(router);
    let service = service_fn(move |request: Request<Incoming>| {
        progress.head_read();
        let done = AnswerDone(Arc::clone(&progress));
        let request = request.map(|body| Body::new(Upload::new(body, limits.idle_timeout)));
        let answer = router.call(request);
        async move {
            let response = match answer.await {
                Ok(response) => response,
                Err(never) => match never {},
            };
            // An error from the service makes hyper close the connection without an answer.
            if response.extensions().get::<Dropped>().is_some() {
                return Err(ConnectionDropped);
            }
            Ok(response.map(|body| Answer { body, _done: done }))
        }
    });
    let mut builder = http1::Builder::new();
    // hyper's own header-read timer starts whenever the connection waits for a request head,
    // so it is the idle timeout; the stricter per-head timer is Guarded's.
    builder.timer(TokioTimer::new()).header_read_timeout(limits.idle_timeout);
    let mut connection = std::pin::pin!(builder.serve_connection(io, service));
    let mut asked_to_close = false;
    loop {
        tokio::select! {
            // A failed connection (a timeout, a reset, a malformed request) has no one to tell.
            _ = connection.as_mut() => break,
            _ = closing.wait_for(|closing| *closing), if !asked_to_close => {
                asked_to_close = true;
                connection.as_mut().graceful_shutdown();
            }
        }
    }
}

/// The service's error for an answer marked [`Dropped`] (docs/sandbox.md#faults).
#[derive(Debug)]
struct ConnectionDropped;

impl std::fmt::Display for ConnectionDropped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("injected fault: the connection is dropped before the answer")
    }
}

impl std::error::Error for ConnectionDropped {}

/// Where a connection stands between requests, shared by its IO and its service.
struct Progress {
    /// True while no request head is being served: before the first, and after each answer.
    awaiting_head: AtomicBool,
    /// How many heads have been read, so a timer of an earlier head is never mistaken for one of
    /// the next.
    heads: AtomicU64,
}

impl Progress {
    fn new() -> Progress {
        Progress { awaiting_head: AtomicBool::new(true), heads: AtomicU64::new(0) }
    }

    fn head_read(&self) {
        self.heads.fetch_add(1, Ordering::SeqCst);
        self.awaiting_head.store(false, Ordering::SeqCst);
    }
}

/// Dropped by hyper once the answer is written (or abandoned): the next bytes start a new head.
struct AnswerDone(Arc<Progress>);

impl Drop for AnswerDone {
    fn drop(&mut self) {
        self.0.awaiting_head.store(true, Ordering::SeqCst);
    }
}

/// A response body that marks the connection as awaiting a head when hyper drops it.
struct Answer {
    body: Body,
    _done: AnswerDone,
}

impl HttpBody for Answer {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// A request body that fails when the client stops sending it for the idle timeout, so a
/// handler never waits forever for a body announced and not sent.
struct Upload {
    body: Incoming,
    stall: Duration,
    stalled: Option<Pin<Box<Sleep>>>,
}

impl Upload {
    fn new(body: Incoming, stall: Duration) -> Upload {
        Upload { body, stall, stalled: None }
    }
}

impl HttpBody for Upload {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = self.get_mut();
        match Pin::new(&mut this.body).poll_frame(cx) {
            Poll::Pending => {
                let stall = this.stall;
                let stalled = this.stalled.get_or_insert_with(|| Box::pin(sleep(stall)));
                if stalled.as_mut().poll(cx).is_ready() {
                    return Poll::Ready(Some(Err("the request body stopped arriving".into())));
                }
                Poll::Pending
            }
            ready => {
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

/// The TCP stream with the two timers hyper does not have: a request head must be complete
/// within the header-read timeout of its first byte (of the accept, for the first request), and
/// a write that makes no progress fails after the idle timeout. An error from here makes hyper
/// drop the connection.
struct Guarded {
    /// Taken only when the stream is dropped, to refuse HTTP/2 ([`refuse_http2`]).
    stream: Option<TcpStream>,
    progress: Arc<Progress>,
    limits: Limits,
    /// The deadline of the head being read, tagged with `Progress::heads` when it started.
    head: Option<(u64, Pin<Box<Sleep>>)>,
    write_stalled: Option<Pin<Box<Sleep>>>,
    /// How many of the connection's first bytes matched the HTTP/2 preface; None once one did not.
    preface: Option<usize>,
}

impl Guarded {
    fn new(stream: TcpStream, progress: Arc<Progress>, limits: Limits) -> Guarded {
        let head = Some((0, Box::pin(sleep(limits.header_read_timeout))));
        Guarded { stream: Some(stream), progress, limits, head, write_stalled: None, preface: Some(0) }
    }

    fn match_preface(&mut self, read: &[u8]) {
        for byte in read {
            self.preface = match self.preface {
                Some(matched) if matched < H2_PREFACE.len() && H2_PREFACE.get(matched) == Some(byte) => {
                    Some(matched + 1)
                }
                Some(matched) if matched == H2_PREFACE.len() => return,
                _ => None,
            };
            if self.preface.is_none() {
                return;
            }
        }
    }

    fn stream(&mut self) -> io::Result<Pin<&mut TcpStream>> {
        self.stream.as_mut().map(Pin::new).ok_or_else(|| io::Error::from(io::ErrorKind::NotConnected))
    }

    fn timed_out(what: &str) -> io::Error {
        io::Error::new(io::ErrorKind::TimedOut, format!("{what} timed out"))
    }
}

impl AsyncRead for Guarded {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let heads = this.progress.heads.load(Ordering::SeqCst);
        let awaiting = this.progress.awaiting_head.load(Ordering::SeqCst);
        if !awaiting || this.head.as_ref().is_some_and(|(started, _)| *started != heads) {
            this.head = None;
        }
        if let Some((_, deadline)) = this.head.as_mut() {
            if deadline.as_mut().poll(cx).is_ready() {
                return Poll::Ready(Err(Guarded::timed_out("reading the request headers")));
            }
        }
        let before = buf.filled().len();
        let read = this.stream()?.poll_read(cx, buf);
        if this.preface.is_some() {
            this.match_preface(buf.filled().get(before..).unwrap_or_default());
        }
        if matches!(read, Poll::Ready(Ok(()))) && awaiting && buf.filled().len() > before && this.head.is_none() {
            let mut deadline = Box::pin(sleep(this.limits.header_read_timeout));
            // Polled once so that its wake-up is registered even if hyper reads no further.
            let _ = deadline.as_mut().poll(cx);
            this.head = Some((heads, deadline));
        }
        read
    }
}

impl Drop for Guarded {
    fn drop(&mut self) {
        // hyper closes a connection that opens with the HTTP/2 preface without a word.
        if self.preface == Some(H2_PREFACE.len()) {
            if let (Some(stream), Ok(runtime)) = (self.stream.take(), tokio::runtime::Handle::try_current()) {
                runtime.spawn(refuse_http2(stream));
            }
        }
    }
}

/// Sends [`H2_REFUSAL`] and the end of the stream, then reads until the client closes (for at most [`H2_LINGER`]):
/// closing a socket with unread bytes resets it, and the reset would reach the client before
/// the GOAWAY.
async fn refuse_http2(mut stream: TcpStream) {
    // A few bytes into an empty send buffer: a non-blocking write takes them whole.
    let _ = stream.try_write(H2_REFUSAL);
    // Half-closed, so a client waiting for the end of the stream sees it at once.
    let _ = std::future::poll_fn(|cx| Pin::new(&mut stream).poll_shutdown(cx)).await;
    let drain = async {
        let mut sink = [0u8; 4096];
        while stream.readable().await.is_ok() {
            match stream.try_read(&mut sink) {
                Ok(0) => return,
                Ok(_) => {}
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => {}
                Err(_) => return,
            }
        }
    };
    let _ = tokio::time::timeout(H2_LINGER, drain).await;
}

impl AsyncWrite for Guarded {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let written = this.stream()?.poll_write(cx, data);
        this.track_write(cx, written)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let written = this.stream()?.poll_write_vectored(cx, data);
        this.track_write(cx, written)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.as_ref().is_some_and(TcpStream::is_write_vectored)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().stream()?.poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().stream()?.poll_shutdown(cx)
    }
}

impl Guarded {
    /// A client that stops reading its answer must not hold the connection forever.
    fn track_write(&mut self, cx: &mut Context<'_>, written: Poll<io::Result<usize>>) -> Poll<io::Result<usize>> {
        if written.is_pending() {
            let idle = self.limits.idle_timeout;
            let stalled = self.write_stalled.get_or_insert_with(|| Box::pin(sleep(idle)));
            if stalled.as_mut().poll(cx).is_ready() {
                return Poll::Ready(Err(Guarded::timed_out("writing the answer")));
            }
        } else {
            self.write_stalled = None;
        }
        written
    }
}
