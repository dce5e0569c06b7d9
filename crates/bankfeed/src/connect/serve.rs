//! How the catcher accepts and serves connections (docs/connect.md#security).
//!
//! `axum::serve` keeps an idle connection forever and opens as many as come: any local process
//! could take every file descriptor of the program through the catcher's port. So the catcher
//! runs hyper's HTTP/1 connection itself, within [`Limits`]:
//!
//! - at most `max_connections` are open at once; the rest wait in the kernel's queue, where they
//!   cost the program no file descriptor;
//! - a connection of another local user is answered 403 and closed at once ([`peer`]);
//! - a request's head must arrive within `header_timeout` of the accept;
//! - a connection serves one request (no keep-alive, so none idles between requests), and is
//!   closed `connection_timeout` after the accept whatever it is doing (a body sent a byte at a
//!   time, an answer never read).

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;

use super::peer::{self, Peer};

/// How long the accept loop pauses after an error that is not about one connection (out of
/// file descriptors, say), so that it does not spin while connections close.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// How long a refused connection is kept for its client to read the refusal.
const REFUSAL_LINGER: Duration = Duration::from_secs(1);

/// The answer to a connection of another local user.
const REFUSAL: &[u8] = b"HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: 52\r\nConnection: close\r\n\r\nthis catcher answers only its own user's programs.\r\n";

/// The catcher's connection limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// How long after the accept a request's head must be whole.
    pub header_timeout: Duration,
    /// How long a connection may stay open in all, from the accept.
    pub connection_timeout: Duration,
    /// How many connections may be open at once.
    pub max_connections: usize,
}

impl Default for Limits {
    /// A browser sends its request at once, and the widget's answers are a few hundred bytes:
    /// these leave it ample time, and another process little to hold.
    fn default() -> Limits {
        Limits {
            header_timeout: Duration::from_secs(10),
            connection_timeout: Duration::from_secs(30),
            max_connections: 16,
        }
    }
}

/// Accepts and serves connections until `stop` completes; then closes the listener, lets the
/// connections whose request is in flight finish for at most `flush`, and drops the rest.
pub(super) async fn serve(
    listener: TcpListener,
    router: Router,
    limits: Limits,
    stop: impl Future<Output = ()>,
    flush: Duration,
) {
    let permits = Arc::new(Semaphore::new(limits.max_connections.clamp(1, Semaphore::MAX_PERMITS)));
    let (closing, closing_seen) = watch::channel(false);
    let mut connections = JoinSet::new();
    let mut stop = std::pin::pin!(stop);
    loop {
        // A place first: until one is free, newcomers wait in the kernel's queue.
        let permit = tokio::select! {
            () = &mut stop => break,
            permit = Arc::clone(&permits).acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => break,
            },
        };
        let accepted = tokio::select! {
            () = &mut stop => break,
            accepted = listener.accept() => accepted,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(error) if is_connection_error(&error) => continue,
            Err(_) => {
                tokio::time::sleep(ACCEPT_BACKOFF).await;
                continue;
            }
        };
        while connections.try_join_next().is_some() {}
        connections.spawn(serve_connection(stream, peer, router.clone(), limits, closing_seen.clone(), permit));
    }
    drop(listener);
    let _ = closing.send(true);
    // The answer to the request that ended the wait ("you can close this tab") is written; the
    // connections still open after that are dropped with the set.
    let _ = tokio::time::timeout(flush, async { while connections.join_next().await.is_some() {} }).await;
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
    peer: SocketAddr,
    router: Router,
    limits: Limits,
    mut closing: watch::Receiver<bool>,
    _permit: OwnedSemaphorePermit,
) {
    let allowed = match stream.local_addr() {
        Ok(local) => peer::check(local, peer) != Peer::Refused,
        Err(_) => false,
    };
    if !allowed {
        // Before its request is read, which then ends nothing: it holds its place no longer.
        let _ = tokio::time::timeout(REFUSAL_LINGER, refuse(stream)).await;
        return;
    }
    // Answers are written whole; Nagle would only delay their last segment.
    let _ = stream.set_nodelay(true);
    let mut builder = http1::Builder::new();
    // hyper's header timer starts when the connection waits for a head: with one request per
    // connection, at the accept.
    builder.timer(TokioTimer::new()).header_read_timeout(limits.header_timeout).keep_alive(false);
    let mut connection =
        std::pin::pin!(builder.serve_connection(TokioIo::new(stream), TowerToHyperService::new(router)));
    let served = async {
        let mut asked_to_close = false;
        loop {
            tokio::select! {
                // A failed connection (a timeout, a reset, a malformed request) has no one to tell.
                _ = connection.as_mut() => return,
                _ = closing.wait_for(|closing| *closing), if !asked_to_close => {
                    asked_to_close = true;
                    connection.as_mut().graceful_shutdown();
                }
            }
        }
    };
    let _ = tokio::time::timeout(limits.connection_timeout, served).await;
}

/// Answers 403 and closes, reading what the client sends until it closes too: closing a socket
/// with unread bytes resets it, and the reset could reach the client before the answer.
async fn refuse(mut stream: TcpStream) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    if stream.write_all(REFUSAL).await.is_err() || stream.shutdown().await.is_err() {
        return;
    }
    let mut sink = [0u8; 4096];
    while matches!(stream.read(&mut sink).await, Ok(read) if read > 0) {}
}
