//! What the server remembers between requests: sessions, saved logins, tokens, the request log.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicU16, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use axum::response::{IntoResponse, Response};
use serde_json::Value;

use axum::body::Bytes;

use crate::config::{RecordedRequest, SandboxConfig};
use crate::generator::{login_guid_for, AsOf, DataCache, Guid};
use crate::operations::challenge::{Round, QUESTION_AND_ANSWER};
use crate::operations::language::Language;
use crate::server::faults::Faults;
use crate::server::reply::{self, ErrorReply};
use crate::world::tokens::Tokens;
use crate::world::users::{bulk_username, User};
use bankfeed::sync::lock;

/// Bounds the memory of a long-running sandbox (benchmarks send millions of requests).
const MAX_LOGGED: usize = 100_000;

/// Below this many sessions, expired ones are not worth sweeping.
const SWEEP_FLOOR: usize = 1024;

/// The state every handler shares.
pub(crate) struct Shared {
    pub config: SandboxConfig,
    inner: Mutex<Inner>,
    count: AtomicU64,
    log: Mutex<Log>,
    /// Outside `inner`, so generating a large data set does not hold up unrelated sessions.
    pub data: DataCache,
    /// The faults still to inject (docs/sandbox.md#faults).
    pub faults: Faults,
    /// The sandbox's "today" ([`AsOf`]), in days after its first day: outside `inner`, so that
    /// every data answer reads it without waiting for the lock (docs/sandbox.md#the-clock).
    clock: AtomicU16,
}

impl Shared {
    pub(crate) fn new(config: SandboxConfig) -> Shared {
        Shared {
            clock: AtomicU16::new(config.as_of.days_after_first()),
            inner: Mutex::new(Inner::new(&config)),
            faults: Faults::new(config.faults.clone()),
            config,
            count: AtomicU64::new(0),
            log: Mutex::new(Log::default()),
            data: DataCache::default(),
        }
    }

    /// The sandbox's "today".
    pub(crate) fn clock(&self) -> AsOf {
        AsOf::after_first(i64::from(self.clock.load(Ordering::SeqCst))).unwrap_or_default()
    }

    /// Moves the clock `days` days on (docs/sandbox.md#the-clock); the error is the rule `days`
    /// breaks, and leaves the clock where it was.
    pub(crate) fn advance(&self, days: i64) -> Result<AsOf, String> {
        let mut moved = Err(String::new());
        let _ = self.clock.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |now| {
            moved = AsOf::after_first(i64::from(now)).unwrap_or_default().advanced(days);
            moved.as_ref().ok().map(|clock| clock.days_after_first())
        });
        if moved.is_ok() {
            self.data.clear();
        }
        moved
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, Inner> {
        lock(&self.inner)
    }

    pub(crate) fn count_request(&self) {
        self.count.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn request_count(&self) -> u64 {
        self.count.load(Ordering::Relaxed)
    }

    /// Logs `request`, whose masked body is `body` (JSON text), dropping the oldest entries
    /// past [`MAX_LOGGED`] or `request_log_bytes` (docs/sandbox.md#the-request-log).
    pub(crate) fn record(&self, request: RecordedRequest, body: Option<String>) {
        let entry = Logged::new(request, body);
        let mut log = lock(&self.log);
        log.bytes = log.bytes.saturating_add(entry.bytes);
        log.entries.push_back(entry);
        while log.entries.len() > MAX_LOGGED || log.bytes > self.config.request_log_bytes {
            let Some(oldest) = log.entries.pop_front() else { break };
            log.bytes = log.bytes.saturating_sub(oldest.bytes);
            log.dropped = log.dropped.saturating_add(1);
        }
    }

    /// The log, oldest first, each body parsed from its text.
    pub(crate) fn requests(&self) -> Vec<RecordedRequest> {
        let log = lock(&self.log);
        log.entries.iter().map(Logged::request).collect()
    }

    /// How many entries the log dropped to stay within its bounds.
    pub(crate) fn requests_dropped(&self) -> u64 {
        lock(&self.log).dropped
    }

    /// What the log's entries cost, as counted against `request_log_bytes`.
    pub(crate) fn request_log_bytes(&self) -> usize {
        lock(&self.log).bytes
    }

    /// Back to the state at start (docs/sandbox.md#the-admin-api): no session, no token, only
    /// the bulk logins saved, no fault waiting, and an empty request log and count. The data
    /// cache is kept: a login's data depends on its LoginId and the seed alone.
    pub(crate) fn reset(&self) {
        *self.lock() = Inner::new(&self.config);
        self.clock.store(self.config.as_of.days_after_first(), Ordering::SeqCst);
        self.data.clear();
        self.faults.clear();
        *lock(&self.log) = Log::default();
        self.count.store(0, Ordering::Relaxed);
    }
}

/// The request log and what it costs.
#[derive(Default)]
struct Log {
    entries: VecDeque<Logged>,
    /// The sum of the entries' `bytes`.
    bytes: usize,
    /// Entries dropped, oldest first, to stay within the bounds.
    dropped: u64,
}

/// One entry of the log: the request without its body, and the body as masked JSON text.
struct Logged {
    request: RecordedRequest,
    body: Option<String>,
    /// What it costs: its own size and its strings' lengths.
    bytes: usize,
}

impl Logged {
    fn new(request: RecordedRequest, body: Option<String>) -> Logged {
        let text = |field: &Option<String>| field.as_ref().map_or(0, String::len);
        let bytes = [
            std::mem::size_of::<Logged>(),
            request.method.len(),
            request.path.len(),
            text(&request.username),
            text(&request.login_id),
            text(&request.request_id),
            text(&request.body_prefix),
            text(&body),
        ]
        .iter()
        .fold(0usize, |sum, bytes| sum.saturating_add(*bytes));
        Logged { request, body, bytes }
    }

    fn request(&self) -> RecordedRequest {
        let body = self.body.as_deref().and_then(|text| serde_json::from_str::<Value>(text).ok());
        RecordedRequest { body, ..self.request.clone() }
    }
}

/// The mutable part, behind one lock: every operation touches at most a session and a login.
pub(crate) struct Inner {
    sessions: HashMap<String, Session>,
    /// Keyed by number: 100,000 saved bulk logins (docs/sandbox.md#many-logins) cost about
    /// 50 bytes each.
    logins: HashMap<Guid, Login>,
    /// LoginIds are derived from it (see `login_guid_for`).
    seed: u64,
    /// Only with a secret key: without one, Authorize asks for no token and none is kept.
    tokens: Tokens,
    sweep_at: usize,
    /// The RequestId of the newest session of each LoginId: the one whose processing makes the
    /// login busy (docs/sandbox.md#documented-failures). An older session of a login is replaced
    /// by a newer one: it keeps working, but no longer counts as in progress.
    latest: HashMap<String, String>,
    /// The same, of live sessions only (credentials, or a saved connection refreshed live): the
    /// ones that hold the connection to the bank, which `CONCURRENT_SESSION` protects.
    latest_live: HashMap<String, String>,
    /// How long a session whose data is processing lives without activity.
    processing_ttl: Duration,
    /// `card_in_use` of the configuration: how long a login connected new stays in `connected`.
    card_in_use: Duration,
    /// When each login an Authorize connected new was connected, while that is less than
    /// `card_in_use` ago (older entries are dropped as they are met): DeleteCard refuses it
    /// meanwhile (docs/sandbox.md#documented-failures).
    connected: HashMap<Guid, Instant>,
    /// Credentials logins so far, which picks the question of a user asked one of several
    /// (docs/sandbox.md#users) together with the seed.
    logins_begun: u64,
    /// Per username (lower case), how many of its connections were deleted: a user who connects
    /// again after DeleteCard gets a new LoginId (docs/sandbox.md#lastrefresh-loginids-and-languages).
    deleted: HashMap<String, u32>,
    /// When this state began: a refresh's `LastRefresh` is the clock's morning
    /// ([`reply::LAST_REFRESH`] on the clock's day) plus the time since then.
    started: Instant,
    /// The saved logins whose nightly refresh is on (`SetScheduledRefresh`, or `ScheduleRefresh`
    /// on the Authorize that saved them): kept apart from `logins`, so bulk logins cost no more.
    scheduled: HashSet<Guid>,
    /// The answers to security questions stored by `AnswerMFAQuestions`, per login: question to
    /// answer (docs/protocol.md#operations-beyond-the-interface).
    mfa_answers: HashMap<Guid, HashMap<String, String>>,
}

/// A connection known by LoginId.
pub(crate) struct Login {
    pub user: User,
    /// Only saved connections can be read cached or reopened live by LoginId.
    pub saved: bool,
    /// Its `LastRefresh`, in 100 ns ticks after [`reply::LAST_REFRESH`]: the clock's morning
    /// until a live session refreshes it again (docs/sandbox.md#lastrefresh-loginids-and-languages).
    pub refreshed: u64,
}

/// A session, known by RequestId.
#[expect(clippy::struct_excessive_bools, reason = "independent facts of a session, each named, not a state machine")]
pub(crate) struct Session {
    pub user: User,
    /// Known from the start when the session was opened by LoginId; otherwise issued on open.
    pub login_id: Option<String>,
    /// Whether opening the session saves the connection.
    pub save: bool,
    /// The caller's `Tag`, echoed in every Authorize answer of this session.
    pub tag: Option<Value>,
    /// The language of its prompts (`Language` of the Authorize that opened it).
    pub language: Language,
    /// The `LastRefresh` of its connection when it opened, in the ticks of [`Login::refreshed`].
    pub last_refresh: u64,
    pub stage: Stage,
    last_seen: Instant,
    /// Per data operation: how far its simulated processing has come.
    pending: HashMap<&'static str, Pending>,
    /// Per banking operation: the body of its last POST, which its `...Async` GET answers to.
    remembered: HashMap<&'static str, Bytes>,
    /// Whether account detail has answered 200 for this RequestId: attributes wait for it.
    pub detail_ready: bool,
    /// A live login (credentials, or a saved connection with `MostRecentCached` false), not a
    /// cached read.
    pub live: bool,
    /// Wrong answers given to its challenges so far (`max_wrong_answers`).
    pub wrong_answers: u32,
    /// The token that opened the session, and when it expires: its challenge answers may carry
    /// it again (docs/sandbox.md#keys).
    pub token: Option<OpeningToken>,
    /// `ScheduleRefresh` of the Authorize: turns the nightly refresh on for a login it saves
    /// new (docs/protocol.md#operations-beyond-the-interface).
    pub schedule_refresh: bool,
    /// Whether the login's nightly refresh is on, as the answers' `IsScheduledRefresh` says;
    /// kept up to date by `SetScheduledRefresh`.
    pub scheduled_refresh: bool,
    /// A cached read asked a question first (`cached_challenges`): the 200 of its answer names
    /// no `Login`, as the service's does (docs/sandbox.md#cached-reads-asked-a-question).
    pub asked_cached: bool,
}

/// The Authorize token a session was opened with.
#[derive(Clone, Copy)]
pub(crate) struct OpeningToken {
    pub token: u128,
    pub expires: Instant,
}

pub(crate) enum Stage {
    /// Waiting for the answers to `flow[round]`.
    Challenged {
        flow: &'static [Round],
        round: usize,
    },
    Open,
}

struct Pending {
    loading_calls: u32,
    calls: u32,
    first: Instant,
    /// When its processing ends, whether anyone polls or not (None: later than the clock can
    /// say): the service goes on processing an operation nobody polls
    /// (docs/sandbox.md#documented-failures).
    ends: Option<Instant>,
    /// It has answered 200: its data was delivered.
    done: bool,
}

/// How long the processing of a data call lasts per 202 it answers: what a client polling once a
/// second meets, so that by default (one 202) an operation nobody polls ends within seconds.
const SECONDS_PER_POLL: f64 = 1.0;

/// How long an operation answering `polls` 202s and waiting at least `pending_seconds` processes:
/// [`SECONDS_PER_POLL`] per 202, or `pending_seconds` when that is longer.
fn processing_time(polls: u32, pending_seconds: f64) -> Option<Duration> {
    let seconds = (f64::from(polls) * SECONDS_PER_POLL).max(pending_seconds);
    if seconds.is_nan() || seconds <= 0.0 {
        return Some(Duration::ZERO);
    }
    Duration::try_from_secs_f64(seconds).ok()
}

impl Pending {
    /// Whether it is processing at `now`: it answered 202 (or "still loading"), has not answered
    /// 200, and its processing time has not run out.
    fn processing_at(&self, now: Instant) -> bool {
        !self.done && (self.calls > 0 || self.loading_calls > 0) && self.ends.is_none_or(|ends| now < ends)
    }

    /// Its processing started (again) at `now`, to last `time`.
    fn start(&mut self, now: Instant, time: Option<Duration>) {
        self.first = now;
        self.ends = time.and_then(|time| now.checked_add(time));
    }

    /// When its processing ran out without being delivered, if it did by `now`.
    fn abandoned_at(&self, now: Instant) -> Option<Instant> {
        let ends = self.ends?;
        (!self.done && (self.calls > 0 || self.loading_calls > 0) && ends <= now).then_some(ends)
    }
}

/// The same LoginId for every login of a user, as the real service keeps one connection per
/// institution account; derived rather than drawn, so it survives a restart of the sandbox
/// and a deletion. Once saved, a connection stays saved.
/// The LoginId of `user`'s connection after `deleted` deletions of it: the first one derives from
/// the seed and the username alone (docs/sandbox.md#many-logins), each later one from the number
/// of deletions too.
fn connection_id(seed: u64, user: User, deleted: u32) -> Guid {
    if deleted == 0 {
        return login_guid_for(seed, &user.username());
    }
    let username = user.username().to_lowercase();
    Guid::sequential(&[&seed.to_le_bytes(), b"login", username.as_bytes(), b"again", &deleted.to_le_bytes()])
}

/// The ticks of a day.
const DAY_TICKS: u64 = 86_400 * 10_000_000;

/// The ticks from [`reply::LAST_REFRESH`] to the same time on the clock's day: the morning every
/// connection was last refreshed by, as the service refreshes connections nightly.
pub(crate) fn morning_of(clock: AsOf) -> u64 {
    u64::from(clock.days_after_first()) * DAY_TICKS
}

/// The number of 100 ns ticks in `elapsed`, the unit of `LastRefresh`'s seven fractional digits.
fn ticks(elapsed: Duration) -> u64 {
    u64::try_from(elapsed.as_nanos() / 100).unwrap_or(u64::MAX)
}

/// Why a login is busy (`Inner::busy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Busy {
    /// Its newest session's data is processing.
    Processing,
    /// An Authorize connected it new less than `card_in_use_seconds` ago.
    JustConnected,
}

/// Why a RequestId does not lead to a session.
pub(crate) enum Missing {
    Unknown,
    Expired,
}

impl Session {
    pub(crate) fn new(user: User, login_id: Option<String>, save: bool, tag: Option<Value>) -> Session {
        Session {
            user,
            login_id,
            save,
            tag,
            language: Language::English,
            last_refresh: 0,
            stage: Stage::Open,
            last_seen: Instant::now(),
            pending: HashMap::new(),
            remembered: HashMap::new(),
            detail_ready: false,
            asked_cached: false,
            live: true,
            wrong_answers: 0,
            token: None,
            schedule_refresh: false,
            scheduled_refresh: false,
        }
    }

    /// Whether its data is processing at `now`: a data operation has answered 202 (or "still
    /// loading"), not yet 200, and its processing time has not run out. Such a session lives
    /// `processing_ttl`, and keeps its login busy (`CONCURRENT_SESSION`, `CARD_IN_USE`).
    pub(crate) fn processing_at(&self, now: Instant) -> bool {
        self.pending.values().any(|pending| pending.processing_at(now))
    }

    /// Whether it has expired at `now`, idle since its last request: longer than `processing_ttl`
    /// while processing, than `ttl` otherwise. A processing nobody polled to its end keeps it
    /// alive until that end, never past `processing_ttl`, so a session that died while processing
    /// stays dead.
    fn expired(&self, now: Instant, ttl: Duration, processing_ttl: Duration) -> bool {
        let idle = now.duration_since(self.last_seen);
        if self.processing_at(now) {
            return idle > processing_ttl;
        }
        match self.pending.values().filter_map(|pending| pending.abandoned_at(now)).max() {
            Some(ended) => idle > processing_ttl.min(ttl.max(ended.saturating_duration_since(self.last_seen))),
            None => idle > ttl,
        }
    }

    pub(crate) fn is_open(&self) -> bool {
        matches!(self.stage, Stage::Open)
    }

    /// The answer while the data of `op` is still "processing" for this session (a 400 while
    /// loading, then, when the operation `waits`, 202s naming `async_rel`'s link when given), or
    /// None once it is done. Every data operation goes through here, so the pending knobs apply
    /// to all; handlers build the 200 after letting go of the lock. A slow user's operations
    /// always wait: that is what they are for (docs/sandbox.md#users).
    pub(crate) fn pending(
        &mut self,
        op: &'static str,
        config: &SandboxConfig,
        request_id: &str,
        async_rel: Option<&'static str>,
        waits: bool,
    ) -> Option<Response> {
        let (polls, code, waits) = match self.user.scenario.slow_pending {
            Some(code) => (config.slow_pending_polls, code, true),
            None => (config.pending_polls, reply::OPERATION_PENDING, waits),
        };
        let time = if waits { processing_time(polls, config.pending_seconds) } else { Some(Duration::ZERO) };
        let now = Instant::now();
        let pending = self.pending.entry(op).or_insert_with(|| {
            let mut pending = Pending { loading_calls: 0, calls: 0, first: now, ends: None, done: false };
            pending.start(now, time);
            pending
        });
        if pending.loading_calls < config.loading_polls {
            pending.loading_calls += 1;
            pending.start(now, time);
            return Some(
                ErrorReply::bad_request(
                    reply::SESSION_LOADING,
                    "The session is still loading; retry once loading ends",
                )
                .with_request_id(request_id)
                .into_response(),
            );
        }
        let waited = now.duration_since(pending.first).as_secs_f64();
        // Processing that ran out while nobody polled is done: the next call gets the data.
        let in_time = pending.ends.is_none_or(|ends| now < ends);
        if waits && ((pending.calls < polls && in_time) || waited < config.pending_seconds) {
            pending.calls = pending.calls.saturating_add(1);
            return Some(match async_rel {
                Some(rel) => reply::pending_async(code, request_id, rel, config.async_links),
                None => reply::pending(code, request_id),
            });
        }
        pending.done = true;
        None
    }

    /// How far the processing of `op` has come, `(polls answered 202, polls it takes)`, for a user
    /// whose 202s carry the results processed so far (`test_pending`, `test_dispatched`, as the
    /// service documents them: docs/protocol.md#polling); None for any other, or once done.
    pub(crate) fn progress(&self, op: &'static str, config: &SandboxConfig) -> Option<(u32, u32)> {
        self.user.scenario.slow_pending?;
        let pending = self.pending.get(op).filter(|pending| !pending.done && pending.calls > 0)?;
        Some((pending.calls, config.slow_pending_polls))
    }

    pub(crate) fn remember(&mut self, op: &'static str, body: Bytes) {
        self.remembered.insert(op, body);
    }

    pub(crate) fn remembered(&self, op: &'static str) -> Option<Bytes> {
        self.remembered.get(op).cloned()
    }
}

impl Inner {
    /// The state of a new sandbox: `config.logins` bulk logins saved (docs/sandbox.md#many-logins).
    fn new(config: &SandboxConfig) -> Inner {
        let mut inner = Inner {
            sessions: HashMap::new(),
            logins: HashMap::new(),
            seed: config.seed,
            tokens: Tokens::new(config.token_ttl),
            sweep_at: 0,
            latest: HashMap::new(),
            latest_live: HashMap::new(),
            processing_ttl: config.processing_ttl,
            card_in_use: config.card_in_use,
            connected: HashMap::new(),
            logins_begun: 0,
            deleted: HashMap::new(),
            started: Instant::now(),
            scheduled: HashSet::new(),
            mfa_answers: HashMap::new(),
        };
        inner.logins.reserve(config.logins as usize);
        for index in 0..config.logins {
            let login_id = login_guid_for(config.seed, &bulk_username(index));
            inner.logins.insert(login_id, Login { user: User::bulk(index), saved: true, refreshed: 0 });
        }
        inner
    }

    /// Keeps a token for its lifetime (docs/sandbox.md#limits).
    pub(crate) fn add_token(&mut self, token: u128) {
        self.tokens.add(token, Instant::now());
    }

    /// Single use: a token is gone once it has been presented, and refused after its lifetime.
    /// Its expiry, when it was good.
    pub(crate) fn take_token(&mut self, token: u128) -> Option<OpeningToken> {
        self.tokens.take(token, Instant::now()).map(|expires| OpeningToken { token, expires })
    }

    /// When a kept token expires (or expired), without using it up.
    pub(crate) fn token_expiry(&self, token: u128) -> Option<Instant> {
        self.tokens.expiry(token)
    }

    /// The token the session of `request_id` was opened with, if it is known and had one; the
    /// session's inactivity clock is left alone.
    pub(crate) fn opening_token(&self, request_id: &str) -> Option<OpeningToken> {
        self.sessions.get(&normalize_id(request_id)).and_then(|session| session.token)
    }

    /// The number of this credentials login in the sandbox's life, from 0.
    pub(crate) fn next_login(&mut self) -> u64 {
        let number = self.logins_begun;
        self.logins_begun = number.wrapping_add(1);
        number
    }

    /// How many tokens are kept.
    #[cfg(test)]
    pub(crate) fn token_count(&self) -> usize {
        self.tokens.len()
    }

    /// Stores a new session and returns its RequestId.
    pub(crate) fn add_session(&mut self, session: Session, ttl: Duration) -> String {
        self.sweep(ttl);
        let request_id = uuid::Uuid::new_v4().to_string();
        if let Some(login_id) = &session.login_id {
            self.newest(login_id, &request_id, session.live);
        }
        self.sessions.insert(request_id.clone(), session);
        request_id
    }

    /// Makes `request_id` the newest session of `login_id`, replacing the one before.
    fn newest(&mut self, login_id: &str, request_id: &str, live: bool) {
        self.latest.insert(login_id.to_owned(), request_id.to_owned());
        if live {
            self.latest_live.insert(login_id.to_owned(), request_id.to_owned());
        }
    }

    /// The session of `request_id`, its inactivity clock restarted. Expiry is checked here,
    /// lazily, so no timer task is needed; each lifetime holds as set (docs/sandbox.md#knobs): a
    /// test that sets the processing one shorter than the idle one gets what it set.
    pub(crate) fn session(&mut self, request_id: &str, ttl: Duration) -> Result<&mut Session, Missing> {
        let processing_ttl = self.processing_ttl;
        let session = self.sessions.get_mut(&normalize_id(request_id)).ok_or(Missing::Unknown)?;
        let now = Instant::now();
        if session.expired(now, ttl, processing_ttl) {
            return Err(Missing::Expired);
        }
        session.last_seen = now;
        Ok(session)
    }

    /// Why `login_id` is busy, when it is: its newest session (its newest live one, with
    /// `live_only`) is processing its data (and has not expired), or an Authorize connected it
    /// new less than `recent` ago.
    pub(crate) fn busy(&mut self, login_id: &str, ttl: Duration, recent: Duration, live_only: bool) -> Option<Busy> {
        let guid = parse_login_id(login_id)?;
        let login_id = guid.to_text();
        let now = Instant::now();
        let newest = if live_only { &self.latest_live } else { &self.latest };
        let session = newest.get(&login_id).and_then(|request_id| self.sessions.get(request_id));
        if session.is_some_and(|session| !session.expired(now, ttl, self.processing_ttl) && session.processing_at(now))
        {
            return Some(Busy::Processing);
        }
        let connected = self.connected.get(&guid).copied()?;
        if now.duration_since(connected) < recent {
            return Some(Busy::JustConnected);
        }
        if now.duration_since(connected) >= self.card_in_use {
            self.connected.remove(&guid);
        }
        None
    }

    /// The LoginId the connection of `user` has, or will have once a session of it opens.
    pub(crate) fn login_id_of(&self, user: User) -> String {
        let deleted = self.deleted.get(&user.username().to_lowercase()).copied().unwrap_or(0);
        connection_id(self.seed, user, deleted).to_text()
    }

    /// Forgets a session (the one a no-retry answer ended).
    pub(crate) fn end_session(&mut self, request_id: &str) {
        self.sessions.remove(&normalize_id(request_id));
    }

    /// The open session a data operation names, after the checks every data operation shares.
    pub(crate) fn data_session(
        &mut self,
        request_id: &str,
        login_id: &str,
        ttl: Duration,
    ) -> Result<&mut Session, ErrorReply> {
        let session = self.open_session(request_id, ttl)?;
        let owner = session.login_id.as_deref().unwrap_or_default();
        if !owner.eq_ignore_ascii_case(login_id.trim()) {
            return Err(ErrorReply::invalid_request(format!("LoginId {login_id} is not the login of this RequestId"))
                .with_request_id(request_id));
        }
        Ok(session)
    }

    /// The open session of `request_id`, for operations that name no LoginId.
    pub(crate) fn open_session(&mut self, request_id: &str, ttl: Duration) -> Result<&mut Session, ErrorReply> {
        let session = match self.session(request_id, ttl) {
            Ok(session) => session,
            Err(missing) => return Err(missing_session(missing, request_id)),
        };
        if !session.is_open() {
            // The service refuses a data call on a RequestId still at its challenges as not
            // authorized (docs/protocol.md#errors).
            return Err(ErrorReply::unauthorized(
                "UNAUTHORIZED",
                "The session is not authorized yet: answer its security challenges first",
            )
            .with_request_id(request_id));
        }
        Ok(session)
    }

    /// Forgets a connection and every session opened on it; false when the LoginId is unknown.
    pub(crate) fn delete_login(&mut self, login_id: &str) -> bool {
        let Some(guid) = parse_login_id(login_id) else { return false };
        let Some(login) = self.logins.remove(&guid) else { return false };
        // Only the user's current connection moves its next LoginId on: deleting an older one
        // (already replaced) changes nothing.
        let username = login.user.username().to_lowercase();
        let deleted = self.deleted.get(&username).copied().unwrap_or(0);
        if connection_id(self.seed, login.user, deleted) == guid {
            self.deleted.insert(username, deleted + 1);
        }
        self.scheduled.remove(&guid);
        self.mfa_answers.remove(&guid);
        self.connected.remove(&guid);
        let login_id = guid.to_text();
        self.sessions.retain(|_, session| session.login_id.as_deref() != Some(login_id.as_str()));
        self.latest.remove(&login_id);
        self.latest_live.remove(&login_id);
        true
    }

    /// Marks the session open, issuing its LoginId (and saving the connection, if asked) when it
    /// was opened with credentials. A live session refreshes its connection: its `LastRefresh`
    /// moves to now, except at the connection's first refresh, which reports the clock's
    /// morning ([`reply::LAST_REFRESH`] on the clock's day) so that a first login's answers are
    /// the same on every run; a cached one reports the last refresh, or the clock's morning when
    /// that is later (docs/sandbox.md#lastrefresh-loginids-and-languages).
    pub(crate) fn open(&mut self, request_id: &str, clock: AsOf) -> Option<&Session> {
        let morning = morning_of(clock);
        let now = morning.saturating_add(ticks(self.started.elapsed()));
        let session = self.sessions.get_mut(&normalize_id(request_id))?;
        let guid = if let Some(guid) = session.login_id.as_deref().and_then(parse_login_id) {
            guid
        } else {
            let deleted = self.deleted.get(&session.user.username().to_lowercase()).copied().unwrap_or(0);
            connection_id(self.seed, session.user, deleted)
        };
        let mut first = false;
        let login = self.logins.entry(guid).or_insert_with(|| {
            first = true;
            Login { user: session.user, saved: false, refreshed: 0 }
        });
        login.saved |= session.save && session.login_id.is_none();
        if first && !self.card_in_use.is_zero() {
            self.connected.insert(guid, Instant::now());
        }
        if session.live && !first {
            login.refreshed = now.max(login.refreshed + 1);
        }
        login.refreshed = login.refreshed.max(morning);
        session.last_refresh = login.refreshed;
        if session.login_id.is_none() {
            let login_id = guid.to_text();
            // Only a login saved new takes `ScheduleRefresh`; later, SetScheduledRefresh does.
            if first && session.save && session.schedule_refresh {
                self.scheduled.insert(guid);
            }
            self.latest.insert(login_id.clone(), normalize_id(request_id));
            if session.live {
                self.latest_live.insert(login_id.clone(), normalize_id(request_id));
            }
            session.login_id = Some(login_id);
        }
        session.stage = Stage::Open;
        session.scheduled_refresh =
            session.login_id.as_deref().and_then(parse_login_id).is_some_and(|guid| self.scheduled.contains(&guid));
        Some(session)
    }

    /// Turns the nightly refresh of a saved login on or off, in its open sessions' answers too;
    /// false for an unknown or unsaved LoginId.
    pub(crate) fn set_scheduled_refresh(&mut self, login_id: &str, on: bool) -> bool {
        let Some(guid) = parse_login_id(login_id).filter(|guid| self.logins.get(guid).is_some_and(|login| login.saved))
        else {
            return false;
        };
        if on {
            self.scheduled.insert(guid);
        } else {
            self.scheduled.remove(&guid);
        }
        let login_id = guid.to_text();
        for session in self.sessions.values_mut().filter(|session| session.login_id.as_deref() == Some(&login_id)) {
            session.scheduled_refresh = on;
        }
        true
    }

    /// The security questions of a saved login (its user's question-and-answer prompts), or
    /// None for an unknown or unsaved LoginId.
    pub(crate) fn mfa_questions(&self, login_id: &str) -> Option<Vec<&'static str>> {
        let (user, _) = self.saved_login(login_id)?;
        let challenges = user.scenario.flow().iter().chain(user.scenario.saved_flow()).flatten();
        let mut questions: Vec<&'static str> = Vec::new();
        for challenge in challenges.filter(|challenge| challenge.kind == QUESTION_AND_ANSWER) {
            if !questions.contains(&challenge.prompt) {
                questions.push(challenge.prompt);
            }
        }
        Some(questions)
    }

    /// Stores `answers` (question to answer) for a saved login, replacing earlier answers to the
    /// same questions; false for an unknown or unsaved LoginId.
    pub(crate) fn store_mfa_answers(&mut self, login_id: &str, answers: Vec<(String, String)>) -> bool {
        let Some(guid) = parse_login_id(login_id).filter(|guid| self.logins.get(guid).is_some_and(|login| login.saved))
        else {
            return false;
        };
        self.mfa_answers.entry(guid).or_default().extend(answers);
        true
    }

    /// The stored answer to `question` for a login, if `AnswerMFAQuestions` gave one.
    fn stored_mfa_answer(&self, login_id: &str, question: &str) -> Option<&str> {
        let guid = parse_login_id(login_id)?;
        self.mfa_answers.get(&guid)?.get(question).map(String::as_str)
    }

    /// `flow` without its leading rounds that the answers stored by `AnswerMFAQuestions` pass: a
    /// live refresh answers the security questions it has answers to itself, which is what the
    /// service collects them for (docs/protocol.md#operations-beyond-the-interface).
    pub(crate) fn without_answered(&self, login_id: &str, flow: &'static [Round]) -> &'static [Round] {
        let answered = |round: &Round| {
            !round.is_empty()
                && round.iter().all(|challenge| {
                    challenge.kind == QUESTION_AND_ANSWER
                        && self
                            .stored_mfa_answer(login_id, challenge.prompt)
                            .is_some_and(|answer| challenge.accepts(&[answer.to_owned()]))
                })
        };
        let skipped = flow.iter().take_while(|round| answered(round)).count();
        flow.get(skipped..).unwrap_or_default()
    }

    /// The saved logins whose nightly refresh is on but cannot run unattended: a live refresh of
    /// them would stop at a challenge no stored answer passes. Sorted, so answers are stable.
    pub(crate) fn ineligible_for_nightly_refresh(&self) -> Vec<String> {
        let mut ineligible: Vec<String> = self
            .scheduled
            .iter()
            .filter_map(|guid| {
                let login = self.logins.get(guid).filter(|login| login.saved)?;
                let login_id = guid.to_text();
                let left = self.without_answered(&login_id, login.user.scenario.saved_flow());
                (!left.is_empty()).then_some(login_id)
            })
            .collect();
        ineligible.sort();
        ineligible
    }

    /// The user a RequestId's session or a LoginId belongs to, for the fault layer; it touches
    /// no clock and no state.
    pub(crate) fn username_of(&self, request_id: Option<&str>, login_id: Option<&str>) -> Option<String> {
        let session = request_id.and_then(|id| self.sessions.get(&normalize_id(id)));
        let login = || login_id.and_then(parse_login_id).and_then(|id| self.logins.get(&id));
        let user = session.map(|session| session.user).or_else(|| login().map(|login| login.user))?;
        Some(user.username().into_owned())
    }

    /// The user and LoginId a request concerns, for the request log: those of the session its
    /// RequestId names, else of the connection its LoginId names. Touches no clock and no state.
    pub(crate) fn concerning(
        &self,
        request_id: Option<&str>,
        login_id: Option<&str>,
    ) -> (Option<String>, Option<String>) {
        if let Some(session) = request_id.and_then(|id| self.sessions.get(&normalize_id(id))) {
            return (Some(session.user.username().into_owned()), session.login_id.clone());
        }
        let Some(guid) = login_id.and_then(parse_login_id) else { return (None, None) };
        match self.logins.get(&guid) {
            Some(login) => (Some(login.user.username().into_owned()), Some(guid.to_text())),
            None => (None, None),
        }
    }

    /// A saved connection, or None for an unknown or unsaved LoginId.
    pub(crate) fn saved_login(&self, login_id: &str) -> Option<(User, String)> {
        let login_id = parse_login_id(login_id)?;
        let login = self.logins.get(&login_id).filter(|login| login.saved)?;
        Some((login.user, login_id.to_text()))
    }

    /// Drops sessions long expired, amortised: only when the map has doubled since last time.
    fn sweep(&mut self, ttl: Duration) {
        if self.sessions.len() < self.sweep_at.max(SWEEP_FLOOR) {
            return;
        }
        // Twice the TTL, so a caller who comes back just late still hears SESSION_EXPIRED.
        let processing_ttl = self.processing_ttl;
        let now = Instant::now();
        self.sessions
            .retain(|_, session| !session.expired(now, ttl.saturating_mul(2), processing_ttl.saturating_mul(2)));
        let card_in_use = self.card_in_use;
        self.connected.retain(|_, connected| now.duration_since(*connected) < card_in_use);
        let sessions = &self.sessions;
        self.latest.retain(|_, request_id| sessions.contains_key(request_id));
        self.latest_live.retain(|_, request_id| sessions.contains_key(request_id));
        self.sweep_at = self.sessions.len().saturating_mul(2);
    }
}

/// The error for a RequestId that leads nowhere; an unknown one in the service's recorded words.
pub(crate) fn missing_session(missing: Missing, request_id: &str) -> ErrorReply {
    match missing {
        Missing::Unknown => ErrorReply::bad_request(
            "SESSION_NONEXISTENT",
            format!("RequestId {request_id} is invalid or session has ended"),
        ),
        Missing::Expired => ErrorReply::bad_request(
            "SESSION_EXPIRED",
            "The session expired after a period of inactivity: authorize again",
        )
        .with_request_id(request_id),
    }
}

/// A LoginId as the service writes it (a hyphenated GUID, any case), or None: no other text
/// names a login.
fn parse_login_id(id: &str) -> Option<Guid> {
    let id = id.trim();
    if id.len() != 36 {
        return None;
    }
    uuid::Uuid::try_parse(id).ok().map(|id| Guid(id.as_u128()))
}

/// GUIDs are compared case-insensitively, as the service (a .NET one) does.
fn normalize_id(id: &str) -> String {
    id.trim().to_ascii_lowercase()
}
