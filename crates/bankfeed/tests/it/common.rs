//! What the client's integration tests share: a bankfeed `Client` of an embedded sandbox, the
//! sandbox users' documented answers, and the macros that run one call as the binding does.

/// Runs one call of `$client` named `$name`, as the binding runs each Python call: the call is
/// made once (`Client::call`), the body runs within it (`Call::run`: the `deadline`, a close), and
/// `$call` is the call it hands down; `$c` is the client. In scope in every module of the binary,
/// as `main.rs` declares `common` first, with `#[macro_use]`.
macro_rules! within {
    ($client:expr, $name:expr, |$c:ident, $call:ident| $body:expr) => {{
        let $c = &$client;
        let $call = $c.call($name);
        $call.run($body).await
    }};
}

/// The data operation `$op` of `$client` on `$target` with `$options`, as one call of its own
/// (see `within!`).
macro_rules! data {
    ($client:expr, $op:ty, $target:expr, $options:expr) => {{
        let c = &$client;
        let call = c.call(<$op as bankfeed::DataOperation>::WIRE.name);
        call.run(c.data::<$op>(&call, $target, $options)).await
    }};
}

use bankfeed::authorize::Credentials;
use bankfeed::config::ClientOptions;
use bankfeed::{Answers, Challenge, Client, ClientConfig, Error, Secret, Session};
use bankfeed_sandbox::{users, Sandbox, SandboxConfig, SandboxUser};

/// The test institution every sandbox user belongs to.
pub(crate) const INSTITUTION: &str = "FlinksCapital";

/// The sandbox user called `username` (any case).
pub(crate) fn user(username: &str) -> SandboxUser {
    users().into_iter().find(|user| user.username.eq_ignore_ascii_case(username)).expect("a sandbox user")
}

/// A sandbox and a `Client` of it that polls fast and gives up after 10 seconds.
pub(crate) fn client_of(config: SandboxConfig) -> (Sandbox, Client) {
    let sandbox = Sandbox::start(config).expect("sandbox starts");
    let options = ClientOptions {
        base_url: Some(sandbox.url()),
        customer_id: Some(sandbox.customer_id().to_owned()),
        // The keys the sandbox asks for, as `sb.client()` fills them in.
        api_key: sandbox.api_key().map(Secret::new),
        secret_key: sandbox.secret_key().map(Secret::new),
        poll_interval: 0.01,
        poll_timeout: 10.0,
        ..ClientOptions::default()
    };
    let client = Client::new(ClientConfig::resolve(options, |_| None).expect("options")).expect("client");
    (sandbox, client)
}

/// A challenge handler for flows that must not ask anything.
pub(crate) fn no_challenge(challenge: &Challenge) -> Result<Answers, Error> {
    Err(Error::ChallengeRequired(Box::new(challenge.clone())))
}

/// A saved session of `greatday_nomfa`, which opens without challenges.
pub(crate) async fn saved_session(client: &Client) -> Session {
    let mut credentials = Credentials::new(INSTITUTION, "greatday_nomfa", "Everyday".into());
    credentials.save = true;
    within!(client, "Authorize", |c, call| c.login(&call, credentials, &mut no_challenge))
        .expect("greatday_nomfa logs in")
}
