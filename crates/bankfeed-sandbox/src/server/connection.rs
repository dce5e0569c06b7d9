//! How the sandbox accepts and serves connections, within the limits of docs/sandbox.md#limits.
//!
//! `axum::serve` has no header-read or idle timeout and no bound on open connections: idle
//! sockets piled up until the process ran out of file descriptors, and a client sending its
//! headers a byte at a time held a connection forever. So the sandbox runs hyper's HTTP/1
//! connection itself:
//!
//! - at most `max_connections` are open. When all are taken and another is waiting, the one that
//!   has gone longest without being answered (idle between requests, or still sending its
//!   request, for at least a second) gives its place up (`slots`): a client holding every place
//!   with slow uploads cannot keep a normal client waiting for its own connections to time out.
//!   A connection whose request is being answered is never cut; when every one is, the newcomer
//!   waits (the kernel queues the others) until one closes;
//! - a request's headers must arrive within `header_read_timeout`, counted from the accept for
//!   the first request and from the first byte of the head for later ones ([`Guarded`]);
//! - a whole request, head and body, must arrive within `request_read_timeout` of its first
//!   byte, or it is answered 408 and the connection closed (`upload`): the idle timeout alone
//!   restarts at every byte, so a body sent a byte at a time would never end;
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
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes, HttpBody};
use axum::Router;
use hyper::body::{Frame, Incoming, SizeHint};
use hyper::server::conn::http1;
use hyper::service::{service_fn, Service as _};
use hyper::Request;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, OwnedSemaphorePermit, Semaphore, TryAcquireError};
use tokio::time::{sleep, sleep_until, Instant, Sleep};

use crate::server::inject::Dropped;
use crate::server::slots::{Place, Room, Slot, Slots, GRACE};
use crate::server::upload::Upload;
use bankfeed::sync::lock;

/// How long the accept loop pauses after an error that is not about one connection (out of
/// file descriptors, say), so that it does not spin while connections close.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// What an HTTP/2 client sends first (RFC 9113, section 3.4).
const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// How long a refused HTTP/2 connection is kept open for its client to read the refusal.
const H2_LINGER: Duration = Duration::from_secs(1);

/// How long a connection cut in the middle of its request has to write its 408: a few hundred
/// bytes into an empty send buffer, so far longer than needed unless its client reads nothing.
const CUT_LINGER: Duration = Duration::from_secs(1);

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
    pub request_read_timeout: Duration,
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
    let slots = Arc::new(Slots::default());
    let (closing, closing_seen) = watch::channel(false);
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        // Accepted before a place is free: a connection waiting is what lets one be made. The
        // rest of the surplus stays in the kernel's queue, where it costs no file descriptor.
        let accepted = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => accepted,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(error) if is_connection_error(&error) => continue,
            Err(_) => {
                sleep(ACCEPT_BACKOFF).await;
                continue;
            }
        };
        let permit = match Arc::clone(&permits).try_acquire_owned() {
            Ok(permit) => permit,
            Err(TryAcquireError::Closed) => break,
            Err(TryAcquireError::NoPermits) => {
                let permit = tokio::select! {
                    () = &mut shutdown => break,
                    permit = make_room(&permits, &slots) => permit,
                };
                let Some(permit) = permit else { break };
                permit
            }
        };
        // Answers are written whole; Nagle would only delay their last segment.
        let _ = stream.set_nodelay(true);
        let place = slots.open();
        tokio::spawn(serve_connection(stream, router.clone(), limits, closing_seen.clone(), permit, place));
    }
    drop(listener);
    let _ = closing.send(true);
    // Every connection holds a permit until it is closed.
    let _ = permits.acquire_many(u32::try_from(max).unwrap_or(u32::MAX)).await;
    Ok(())
}

/// A place for the connection just accepted, when every place is taken: the connection longest
/// unanswered is cut, and its place taken as soon as it closes (or any other's, if sooner). When
/// none can be cut yet, it looks again once one can: a timer, never a busy loop.
async fn make_room(permits: &Arc<Semaphore>, slots: &Slots) -> Option<OwnedSemaphorePermit> {
    loop {
        let now = Instant::now();
        let look_again = match slots.make_room(now) {
            // A cut connection closes at once, or within CUT_LINGER, well before this.
            Room::Cut | Room::Nothing => now + GRACE,
            Room::NotBefore(then) => then,
        };
        tokio::select! {
            permit = Arc::clone(permits).acquire_owned() => return permit.ok(),
            () = sleep_until(look_again) => {}
        }
    }
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
    place: Place,
) {
    let slot = Arc::clone(place.slot());
    let progress = Arc::new(Progress::new(Arc::clone(&slot)));
    let io = TokioIo::new(Guarded::new(stream, Arc::clone(&progress), limits));
    let router = TowerToHyperService::new(router);
    let served = Arc::clone(&progress);
    let service = service_fn(move |request: Request<Incoming>| {
        let began = served.head_read();
        let done = AnswerDone(Arc::clone(&served));
        let slot = Arc::clone(&served.slot);
        let request = request.map(|body| {
            let upload = Upload::new(body, Arc::clone(&slot), limits.idle_timeout, limits.request_read_timeout, began);
            Body::new(upload)
        });
        let answer = router.call(request);
        async move {
            let response = match answer.await {
                Ok(response) => response,
                Err(never) => match never {},
            };
            // Its answer is ready, whether or not its body was read: the request keeps its place.
            slot.answering();
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
    let mut cut = std::pin::pin!(slot.cut());
    let mut asked_to_close = false;
    loop {
        tokio::select! {
            // A failed connection (a timeout, a reset, a malformed request) has no one to tell.
            _ = connection.as_mut() => return,
            _ = closing.wait_for(|closing| *closing), if !asked_to_close => {
                asked_to_close = true;
                connection.as_mut().graceful_shutdown();
            }
            () = &mut cut => break,
        }
    }
    // Cut to make room for a newcomer (docs/sandbox.md#making-room). Between requests there is no
    // one to answer: the connection closes now. A request still arriving gets its 408 (its
    // Upload fails with the cut), and the connection closes once that is written; one whose
    // body came whole just as it was cut is answered as usual.
    if progress.awaiting_head.load(Ordering::SeqCst) {
        return;
    }
    connection.as_mut().graceful_shutdown();
    if tokio::time::timeout(CUT_LINGER, connection.as_mut()).await.is_err() && slot.is_answering() {
        let _ = connection.await;
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
    /// When the first byte of the head being read came, which `request_read_timeout` counts from.
    head_began: Mutex<Option<Instant>>,
    /// The connection's place among the open ones.
    slot: Arc<Slot>,
}

impl Progress {
    fn new(slot: Arc<Slot>) -> Progress {
        Progress { awaiting_head: AtomicBool::new(true), heads: AtomicU64::new(0), head_began: Mutex::new(None), slot }
    }

    /// A head has been read; returns when its first byte came.
    fn head_read(&self) -> Instant {
        self.heads.fetch_add(1, Ordering::SeqCst);
        self.awaiting_head.store(false, Ordering::SeqCst);
        // A head read in one go with the end of the previous request (pipelined) has no first
        // byte of its own on record: its time starts now, once it is whole.
        lock(&self.head_began).take().unwrap_or_else(Instant::now)
    }

    /// Bytes came while a head was awaited: the first of them starts the request's time.
    fn bytes_came(&self) {
        lock(&self.head_began).get_or_insert_with(Instant::now);
    }
}

/// Dropped by hyper once the answer is written (or abandoned): the next bytes start a new head.
struct AnswerDone(Arc<Progress>);

impl Drop for AnswerDone {
    fn drop(&mut self) {
        self.0.awaiting_head.store(true, Ordering::SeqCst);
        self.0.slot.waiting();
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

/// The TCP stream with the two timers hyper does not have: a request head must be complete
/// within the header-read timeout of its first byte (of the accept, for the first request), and
/// within the request-read timeout, which bounds the whole request; and a write that makes no
/// progress fails after the idle timeout. An error from here makes hyper drop the connection.
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
        let head = Some((0, Box::pin(sleep(Guarded::head_timeout(&limits)))));
        Guarded { stream: Some(stream), progress, limits, head, write_stalled: None, preface: Some(0) }
    }

    /// A head is part of its request, so the bound of the whole request holds for it too.
    fn head_timeout(limits: &Limits) -> Duration {
        limits.header_read_timeout.min(limits.request_read_timeout)
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
        let came = matches!(read, Poll::Ready(Ok(()))) && buf.filled().len() > before;
        if came && awaiting {
            this.progress.bytes_came();
        }
        if came && awaiting && this.head.is_none() {
            let mut deadline = Box::pin(sleep(Guarded::head_timeout(&this.limits)));
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
