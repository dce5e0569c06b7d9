//! The embedded sandbox: a loopback HTTP server that imitates the v3 aggregation API.
//!
//! It follows the session and challenge state machines of docs/protocol.md#authorize for the
//! public test institution `FlinksCapital` (password `Everyday` for every user, see [`users()`]
//! and docs/sandbox.md#users), so a client written for the real test instance works against it
//! unchanged.
//!
//! ```no_run
//! use bankfeed_sandbox::{Sandbox, SandboxConfig};
//! let sandbox = Sandbox::start(SandboxConfig::default()).unwrap();
//! println!("{}/v3/{}/BankingServices/Authorize", sandbox.url(), sandbox.customer_id());
//! sandbox.stop();
//! ```

mod config;
mod generator;
mod operations;
mod replay;
mod server;
mod widget;
mod world;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use tokio::sync::{oneshot, watch};

pub use config::{
    AuthorizeKind, CachedChallenges, PendingOperations, RecordedRequest, SandboxConfig, CARD_IN_USE, DATA_OPERATIONS,
    DEFAULT_CUSTOMER_ID, DEFAULT_REQUEST_LOG_BYTES, LOGGED_BODY_BYTES, MAX_LOGINS, PUBLIC_API_KEY, PUBLIC_SECRET_KEY,
};
pub use generator::AsOf;
pub use operations::catalogue::{attribute_catalogue, attribute_packages};
pub use replay::ServedCassette;
pub use server::faults::{Fault, FaultKind};
pub use server::reply::AsyncLinks;
use world::state::Shared;
pub use world::users::{bulk_username, users, SandboxUser, BULK_PREFIX};

/// Worker threads of a started sandbox: enough that a slow answer (100,000 transactions to
/// serialise) does not hold up the requests of other sessions, few enough to stay light in a
/// test process.
const WORKERS: usize = 2;

/// The listen backlog: how many connections the kernel queues before the accept loop takes
/// them (capped by `net.core.somaxconn`), so that a client opening thousands of connections at
/// once is queued rather than refused or left retrying its SYN (docs/sandbox.md#limits).
const BACKLOG: u32 = 4096;

/// How long a stopping server waits for in-flight requests before it drops them.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// A running sandbox server, on its own OS thread with its own small multi-threaded tokio
/// runtime (`WORKERS` workers, so concurrent requests are served in parallel), so it works
/// from synchronous code, from any async runtime, and from Python alike.
///
/// Dropping it stops the server, as [`Sandbox::stop`] does.
pub struct Sandbox {
    addr: SocketAddr,
    shared: Arc<Shared>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<std::io::Result<()>>>,
    /// The process that started the server: a forked child has no server thread to stop.
    pid: u32,
}

impl Sandbox {
    /// Binds the listener on the calling thread (so [`Sandbox::url`] is valid on return and a
    /// taken port fails here, with a [`ListenError`] naming the address inside the error), then
    /// serves on a background thread.
    ///
    /// A `logins` count above [`MAX_LOGINS`] fails with `InvalidInput`.
    pub fn start(config: SandboxConfig) -> std::io::Result<Sandbox> {
        if config.logins > MAX_LOGINS {
            let message = format!("logins must be at most {MAX_LOGINS}, got {}", config.logins);
            return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, message));
        }
        let wanted = SocketAddr::new(config.host, config.port);
        let listening = |source| ListenError::wrap(wanted, source);
        let socket = bind(wanted).map_err(listening)?;
        let addr = socket.local_addr()?;
        let runtime = runtime(addr.port())?;
        let listener = {
            // A tokio listener belongs to the runtime current when it is made.
            let _entered = runtime.enter();
            socket.listen(BACKLOG).map_err(listening)?
        };
        let shared = Arc::new(Shared::new(config));
        let (stop, stopped) = oneshot::channel::<()>();
        let served = Arc::clone(&shared);
        let thread =
            std::thread::Builder::new().name(format!("bankfeed-sandbox-{}", addr.port())).spawn(move || {
                runtime.block_on(async move {
                    // A dropped sender (Sandbox dropped without stop) also means stop.
                    let shutdown = async move {
                        let _ = stopped.await;
                    };
                    serve_shared(listener, served, shutdown).await
                })
            })?;
        Ok(Sandbox { addr, shared, stop: Some(stop), thread: Some(thread), pid: std::process::id() })
    }

    /// Base URL without a trailing slash, e.g. `http://127.0.0.1:41234`, the one its clients use.
    /// Bound to every interface (`0.0.0.0`, `::`), it is reached on
    /// loopback: a client refuses plain http to any other host, and `0.0.0.0` is no address to
    /// connect to on every system.
    pub fn url(&self) -> String {
        let ip = match self.addr.ip() {
            std::net::IpAddr::V4(ip) if ip.is_unspecified() => std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST),
            std::net::IpAddr::V6(ip) if ip.is_unspecified() => std::net::IpAddr::V6(std::net::Ipv6Addr::LOCALHOST),
            ip => ip,
        };
        format!("http://{}", SocketAddr::new(ip, self.addr.port()))
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The customer id this sandbox answers to.
    pub fn customer_id(&self) -> &str {
        &self.shared.config.customer_id
    }

    /// The secret key `GenerateAuthorizeToken` asks for, None when Authorize needs no token
    /// (docs/sandbox.md#keys).
    pub fn secret_key(&self) -> Option<&str> {
        self.shared.config.required_secret_key()
    }

    /// The API key the data operations and DeleteCard ask for, None when they need none.
    pub fn api_key(&self) -> Option<&str> {
        self.shared.config.required_api_key()
    }

    /// The LoginIds of the bulk logins saved at start (`SandboxConfig::logins`), in order:
    /// `login_ids(seed, logins)`.
    pub fn login_ids(&self) -> Vec<String> {
        login_ids(self.shared.config.seed, self.shared.config.logins)
    }

    /// Every HTTP request received so far, any path, including those answered 404.
    pub fn request_count(&self) -> u64 {
        self.shared.request_count()
    }

    /// The request log, oldest first. Only the most recent 100,000 requests, and at most about
    /// `request_log_bytes`, are kept; [`Sandbox::request_count`] keeps counting past that.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.requests()
    }

    /// How many entries the request log dropped (the oldest first) to stay within its bounds
    /// since the start or the last reset.
    pub fn requests_dropped(&self) -> u64 {
        self.shared.requests_dropped()
    }

    /// What the request log's entries cost, in the bytes `request_log_bytes` bounds.
    pub fn request_log_bytes(&self) -> usize {
        self.shared.request_log_bytes()
    }

    /// Adds faults after those already waiting (docs/sandbox.md#faults).
    pub fn inject(&self, faults: impl IntoIterator<Item = Fault>) {
        self.shared.faults.add(faults);
    }

    /// Removes every fault still waiting.
    pub fn clear_faults(&self) {
        self.shared.faults.clear();
    }

    /// Back to the state at start: no session, no token, only the bulk logins saved, no fault
    /// waiting, an empty request log and a request count of 0 (docs/sandbox.md#the-admin-api);
    /// a replayed cassette plays again from its start.
    pub fn reset(&self) {
        self.shared.reset();
        if let Some(cassette) = &self.shared.config.cassette {
            cassette.rewind();
        }
    }

    /// The cassette a replay server answers from (docs/cassettes.md#replay-for-any-client); None
    /// for the imitation.
    pub fn cassette(&self) -> Option<&ServedCassette> {
        self.shared.config.cassette.as_deref()
    }

    /// The sandbox's "today": its data ends on it (docs/sandbox.md#the-clock).
    pub fn as_of(&self) -> AsOf {
        self.shared.clock()
    }

    /// Moves the clock `days` days on (at least 1): the nights in between are played, so new
    /// transactions post and balances, prices and `LastRefresh` follow
    /// (docs/sandbox.md#the-clock). The error is the rule `days` breaks; the clock then stays.
    pub fn advance(&self, days: i64) -> Result<AsOf, String> {
        self.shared.advance(days)
    }

    /// The faults still waiting, in order, each with the `times` it has left.
    pub fn faults(&self) -> Vec<Fault> {
        self.shared.faults.list()
    }

    /// Stops accepting connections, lets in-flight requests finish (for at most a few seconds),
    /// and joins the server thread.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        if self.pid != std::process::id() {
            // A forked child's copy: the server thread lives in the parent only, and joining a
            // thread that does not exist here fails (docs/architecture.md#fork-and-child-processes).
            std::mem::forget(self.stop.take());
            std::mem::forget(self.thread.take());
            return;
        }
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            // The server's own error (if any) has nowhere useful to go at this point.
            let _ = thread.join();
        }
    }
}

/// The LoginIds of the first `count` bulk users (`bulk_00000`, `bulk_00001`, ...) in a sandbox
/// seeded with `seed`, in order: what `SandboxConfig::logins` saves, computed without a sandbox
/// (docs/sandbox.md#many-logins).
pub fn login_ids(seed: u64, count: u32) -> Vec<String> {
    (0..count).map(|index| login_id(seed, &bulk_username(index))).collect()
}

/// The LoginId a sandbox seeded with `seed` gives `username` (any sandbox user, any case).
pub fn login_id(seed: u64, username: &str) -> String {
    match world::users::bulk_index(username) {
        Some(index) => generator::login_id_for(seed, &bulk_username(index)),
        None => generator::login_id_for(seed, username),
    }
}

/// Why [`Sandbox::start`] could not listen on its address: the system's error alone ("Address
/// already in use") does not say which address, and with several sandboxes or a fixed `port` that
/// is the first thing to know. It travels inside the `std::io::Error` (same kind, same source),
/// where a caller can find it with `get_ref()` and `downcast_ref`.
#[derive(Debug)]
pub struct ListenError {
    /// The address asked for (port 0 when any free port would do).
    pub addr: SocketAddr,
    /// What the system said.
    pub source: std::io::Error,
}

impl ListenError {
    fn wrap(addr: SocketAddr, source: std::io::Error) -> std::io::Error {
        std::io::Error::new(source.kind(), ListenError { addr, source })
    }
}

impl std::fmt::Display for ListenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "could not listen on {}: {}", self.addr, self.source)
    }
}

impl std::error::Error for ListenError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// A socket bound to `addr`, to listen on with a [`BACKLOG`] deep queue (std's `bind` would
/// ask for 128).
fn bind(addr: SocketAddr) -> std::io::Result<tokio::net::TcpSocket> {
    let socket = if addr.is_ipv4() { tokio::net::TcpSocket::new_v4()? } else { tokio::net::TcpSocket::new_v6()? };
    // As std's bind does on Unix: a restarted sandbox can take its port again at once.
    #[cfg(unix)]
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    Ok(socket)
}

/// The runtime a started sandbox serves on: its accept loop runs on the sandbox's own thread,
/// and each connection on one of the [`WORKERS`].
fn runtime(port: u16) -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(WORKERS)
        .thread_name(format!("bankfeed-sandbox-{port}-worker"))
        .enable_all()
        .build()
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        self.shutdown();
    }
}

impl std::fmt::Debug for Sandbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sandbox").field("url", &self.url()).field("customer_id", &self.customer_id()).finish()
    }
}

/// Serves the sandbox on an already bound listener until `shutdown` completes (then lets
/// in-flight requests finish, for at most a few seconds). `config.host` and `config.port` are
/// not used: the listener decides; its connection limits (`header_read_timeout`,
/// `request_read_timeout`, `idle_timeout`, `max_connections`) apply. This is what
/// `python -m bankfeed sandbox --port N` runs.
pub async fn serve(
    listener: tokio::net::TcpListener,
    config: SandboxConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    serve_shared(listener, Arc::new(Shared::new(config)), shutdown).await
}

async fn serve_shared(
    listener: tokio::net::TcpListener,
    shared: Arc<Shared>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let (began, mut stopping) = watch::channel(false);
    let signal = async move {
        shutdown.await;
        let _ = began.send(true);
    };
    let limits = server::connection::Limits {
        header_read_timeout: shared.config.header_read_timeout,
        request_read_timeout: shared.config.request_read_timeout,
        idle_timeout: shared.config.idle_timeout,
        max_connections: shared.config.max_connections,
    };
    let server = server::connection::serve(listener, server::routes::router(shared), limits, signal);
    // Graceful shutdown waits for every open connection; a client that keeps one busy must not
    // be able to hang `stop` (and with it a Python process at exit).
    let grace = async move {
        if stopping.wait_for(|began| *began).await.is_ok() {
            tokio::time::sleep(SHUTDOWN_GRACE).await;
        } else {
            std::future::pending::<()>().await;
        }
    };
    tokio::select! {
        result = server => result,
        () = grace => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_started_sandbox_serves_on_several_workers() {
        let runtime = runtime(0).unwrap();
        assert_eq!(runtime.handle().runtime_flavor(), tokio::runtime::RuntimeFlavor::MultiThread);
        // One worker would serve requests one at a time.
        assert_eq!(runtime.metrics().num_workers(), 2);
    }

    #[test]
    fn a_sandbox_on_every_interface_is_reached_on_loopback() {
        let config = SandboxConfig { host: "0.0.0.0".parse().unwrap(), ..SandboxConfig::default() };
        let sandbox = Sandbox::start(config).unwrap();
        assert_eq!(sandbox.url(), format!("http://127.0.0.1:{}", sandbox.addr().port()));
    }

    #[test]
    fn a_taken_port_names_the_address() {
        let first = Sandbox::start(SandboxConfig::default()).unwrap();
        let taken = SandboxConfig { port: first.addr().port(), ..SandboxConfig::default() };
        let error = Sandbox::start(taken).unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::AddrInUse);
        let listen = error.get_ref().and_then(|inner| inner.downcast_ref::<ListenError>()).unwrap();
        assert_eq!(listen.addr, first.addr());
        assert!(error.to_string().starts_with(&format!("could not listen on {}: ", first.addr())), "{error}");
        first.stop();
    }
}
