"""The compiled core of bankfeed. Import the names from ``bankfeed``, not from here.

IDEs and type checkers read this stub rather than the binary, so it carries the documentation;
``python -m mypy.stubtest bankfeed._native --allowlist stubtest-allowlist.txt`` checks it against
the binary.
"""

import datetime
import os
import types
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Generic, Literal, final

# The frame libraries are optional at run time; in a type checker without them (or without
# their stubs, as pyarrow has none) their types are Any.
import pandas
import polars
import pyarrow
from typing_extensions import TypeVar, disjoint_base

from bankfeed._type_aliases import (
    Answers,
    AsyncBulkResults,
    AsyncChallengeHandler,
    AsyncStep,
    BulkResults,
    ChallengeHandler,
    Days,
    IneligibleLogin,
    RecordedRequest,
    SandboxUser,
    Step,
    SupportedInstitution,
)

__all__ = [
    "Accounts",
    "AsyncChallenge",
    "AsyncClient",
    "AsyncSession",
    "Attributes",
    "Cassette",
    "Challenge",
    "Client",
    "Combined",
    "ConnectUrl",
    "Connection",
    "Investments",
    "Sandbox",
    "SecurityChallenge",
    "Session",
    "Statements",
    "Table",
    "_BaseChallenge",
    "_BaseClient",
    "_BaseSession",
    "_Catcher",
    "_Gathering",
    "__version__",
    "cassette",
    "check_cassette",
    "combine",
    "connect_url",
    "serve_sandbox",
]

#: The version of the package, e.g. ``"0.1.0"``.
__version__: str

@disjoint_base
class _BaseClient:
    """What :class:`Client` and :class:`AsyncClient` share: the configuration, pickling and
    :meth:`close`. Not made directly."""

    @property
    def base_url(self) -> str:
        """The service's base URL (``/v3/...`` is added per operation)."""

    @property
    def investments_base_url(self) -> str:
        """The base URL of the Investments operation (the real service has a separate host)."""

    @property
    def proxy(self) -> str | None:
        """The ``proxy`` option: ``"environment"`` (the default), None (no proxy), or the proxy's
        URL, shown without its user name and password (``http://***@proxy.corp:3128``)."""

    @property
    def customer_id(self) -> str:
        """The customer id the calls are made for."""

    @property
    def timeout(self) -> float:
        """Per-request timeout, in seconds."""

    @property
    def poll_interval(self) -> float:
        """Seconds between two polls of a 202 answer."""

    @property
    def poll_timeout(self) -> float:
        """Seconds an operation may stay pending before :class:`bankfeed.PendingTimeout`."""

    @property
    def max_retries(self) -> int:
        """How many times a request safe to repeat is retried after a failed connection, a timeout,
        or a 408, 429 or 5xx answer (0 to 10; 501 and 505 are not retried)."""

    @property
    def max_body_bytes(self) -> int:
        """The largest answer body read, in bytes; a larger one raises :class:`bankfeed.ProtocolError`."""

    @property
    def max_challenge_rounds(self) -> int:
        """How many challenge rounds a login answers before :class:`bankfeed.TooManyChallenges`."""

    @property
    def allow_insecure_http(self) -> bool:
        """Whether ``http://`` may reach a host that is not loopback (credentials in clear text)."""

    @property
    def max_connections(self) -> int:
        """How many requests may be in flight at once (about as many connections per host); further
        requests wait their turn. The bound, and the connections, are shared by every client of
        the same options in the process: the copies a pickle makes (each task of a Dask or Spark
        worker unpickling its own), and clients made anew with the same options."""

    @property
    def money(self) -> Literal["float", "decimal"]:
        """How the tables hold money: ``"float"`` (float64, the default) or ``"decimal"``
        (exact decimal128 read from the payload's own digits; see ``docs/tables.md#money``)."""

    @property
    def deadline(self) -> float | None:
        """Seconds one whole call may take (authorize, challenges, polling, retries), or None.

        When it runs out, the call raises :class:`bankfeed.PendingTimeout` if the operation was
        pending, else :class:`bankfeed.TransportError` with ``timed_out`` true.
        """

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""

    def close(self) -> None:
        """Cancels every call of this client in flight, in every thread and task, at once: each
        raises :class:`bankfeed.ClientClosed`, and so do later calls. Sessions and challenges
        of the client close with it; a pickled copy is a new client, which goes on (the
        connections it shares close once no client uses them). Calling it again does nothing
        but write its cassette again.

        A client on a cassette (``cassette=``) then writes what it recorded into the file, and
        raises :class:`bankfeed.CassetteError` if that cannot be done (nothing is written when
        the text still holds a secret)."""

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickles as the client's configuration, **keys included** (``api_key``, ``secret_key``):
        the pickle is as secret as the keys. The copy is a new client with the same options, which
        reads no ``BANKFEED_*`` variable, and shares the connections of the clients of those
        options in its process; ``repr`` still hides the keys. A client on a cassette raises
        ``TypeError``: its cassette belongs to its process."""

    def __dask_tokenize__(self) -> tuple[object, ...]:
        """What Dask names the client by in a task key (``dask.base.tokenize``): the same for the
        client and its copies, and nothing derived from its keys, which therefore never reach a
        task key, the dashboard or a worker's log."""

@final
class Client(_BaseClient):
    """A client of the bank-data aggregation API.

    Arguments left out fall back to ``BANKFEED_BASE_URL`` (with
    ``BANKFEED_INVESTMENTS_BASE_URL``), ``BANKFEED_CUSTOMER_ID``, ``BANKFEED_API_KEY`` and
    ``BANKFEED_SECRET_KEY``; the proxy variables apply too (see ``proxy``). Every call blocks with the GIL released;
    Ctrl-C stops a wait at once. A wrong argument type raises ``TypeError`` naming the argument;
    an invalid value raises :class:`bankfeed.ConfigError`::

        client = bf.Client(base_url="https://toolbox-api.private.fin.ag",
                           customer_id="43387ca6-0391-4c82-857d-70d95f087ecb")
        greatday = bf.answers({"What city were you born in?": "Montreal",
                               "What is the best country on earth?": "Canada",
                               "What shape do people like most?": "Triangle"})
        session = client.login("FlinksCapital", "Greatday", "Everyday", on_challenge=greatday)
    """

    def __new__(
        cls,
        base_url: str | None = None,
        customer_id: str | None = None,
        *,
        api_key: str | None = None,
        secret_key: str | None = None,
        investments_base_url: str | None = None,
        timeout: float = 240.0,
        poll_interval: float = 10.0,
        poll_timeout: float = 1800.0,
        max_retries: int = 2,
        max_challenge_rounds: int = 10,
        allow_insecure_http: bool = False,
        deadline: float | None = None,
        max_body_bytes: int = 134217728,
        max_connections: int = 100,
        proxy: str | None = "environment",
        money: Literal["float", "decimal"] = "float",
        cassette: str | os.PathLike[str] | Cassette | None = None,
        record_mode: Literal["none", "once", "new_episodes", "all", "rewrite"] | None = None,
        allow_live_record: bool = False,
    ) -> Client:
        """Checks the options and builds the client; nothing is sent yet.

        ``timeout`` is per request, ``poll_interval`` the seconds between two polls of a 202
        answer (at least 0.01: a smaller value, 0 included, is raised to it), ``poll_timeout``
        how long an operation may stay pending before :class:`bankfeed.PendingTimeout`;
        ``max_retries`` bounds the retries of a transient failure, ``max_challenge_rounds`` the
        challenge rounds of one login. ``deadline`` bounds a whole call (authorize, challenge
        rounds, polling and retries together), in seconds; ``None`` leaves a call bounded only
        by the other limits. In a bulk call it bounds each login's flow, not the whole call.
        ``max_body_bytes`` (128 MiB by default, room for 100,000 transactions) bounds the size of
        an answer: a larger one raises :class:`bankfeed.ProtocolError` before it is read whole.
        ``max_connections`` bounds the
        requests in flight at once (1 to 10,000), and so the connections open to a host, within
        those opened in a race for an idle one: a bulk call of thousands of logins at full
        concurrency was measured with up to half again as many (302 for 200). Each login holds
        one only while a request of its own is out.

        ``money`` is how the tables hold every amount, balance, value, price and quantity:
        ``"float"`` (float64, the default, as before) or ``"decimal"``: an exact decimal128 of
        each column's documented size (:data:`bankfeed.schema` and ``docs/tables.md#money``),
        read from the digits the payload wrote. A value that does not fit its column is that
        call's :class:`bankfeed.DecodeError`, naming the column; it is never rounded.

        Credentials and keys go only over https: an ``http://`` URL is refused unless its host is
        loopback (127.0.0.0/8, ``::1``, ``localhost``, as for a :class:`Sandbox`) or
        ``allow_insecure_http=True``. A URL with a user name or password, a ``customer_id`` that
        is not a GUID or a plain path segment, and an empty key or one a header cannot carry are
        refused too, with :class:`bankfeed.ConfigError` naming the option (never the key).

        ``base_url`` given here is the host of every operation, Investments included, unless
        ``investments_base_url`` is given too: ``BANKFEED_INVESTMENTS_BASE_URL`` applies only
        with ``BANKFEED_BASE_URL``. ``customer_id``, ``api_key`` and ``secret_key`` left out still
        come from their variables.

        ``proxy`` says how requests reach the service. ``"environment"`` (the default) honours
        ``HTTPS_PROXY``, ``HTTP_PROXY``, ``ALL_PROXY`` and ``NO_PROXY`` (upper case first, then
        lower case); a URL such as ``"http://proxy.corp:3128"`` (or ``https://``, with
        ``user:password@`` if the proxy asks for them) sends every request through that proxy;
        ``None`` uses no proxy. Loopback hosts (127.0.0.0/8, ``::1``, ``localhost``, a
        :class:`Sandbox`) never go through a proxy. A proxy that cannot be used (a ``socks5://``
        one, a value that does not parse) raises :class:`bankfeed.ConfigError` naming ``proxy``
        or the variable; the proxy's password never shows in a ``repr`` or a message, and a
        :class:`bankfeed.TransportError` of a request sent through a proxy names it.

        ``cassette`` records the client's requests and the answers they get into a file, or
        answers them from it with no server at all (docs/cassettes.md): a path such as
        ``"tests/cassettes/test_login.yaml"``, or a :func:`cassette` shared with other clients.
        ``record_mode`` says which, as vcrpy names them: ``"none"`` (the default: replay only,
        never the network), ``"once"`` (record when the file does not exist, replay when it
        does), ``"new_episodes"``, ``"all"`` or ``"rewrite"``. Left out, a client built inside a
        ``with bf.cassette(...)`` block is on that block's cassette. Passwords, answers, keys and
        tokens never reach the file, and LoginIds and RequestIds are written as pseudonyms. The
        file is written when the client closes (:meth:`close`, or the end of its ``with``
        block), and not at all when its text still holds a secret; a request the cassette has
        no answer for raises :class:`bankfeed.CassetteError`. Recording against a host that is
        neither loopback nor the service's public test instance needs
        ``allow_live_record=True``: a live Authorize can count against a bank's lockout::

            client = bf.Client(base_url=sb.url, customer_id=sb.customer_id,
                               cassette="tests/cassettes/test_login.yaml", record_mode="once")
            session = client.login("FlinksCapital", "Greatday", "Everyday", on_challenge=greatday)
            client.close()   # writes the cassette; the next run replays it
        """

    def authorize(
        self,
        institution: str,
        username: str,
        password: str,
        *,
        save: bool = False,
        language: str | None = None,
        tag: str | None = None,
        schedule_refresh: bool | None = None,
    ) -> Step:
        """A live login with credentials (``MostRecentCached`` false).

        Returns a :class:`Session`, or a :class:`Challenge` to answer with
        ``challenge.answer(...)``::

            step = client.authorize("FlinksCapital", "Greatday", "Everyday", save=True)
            while isinstance(step, bf.Challenge):
                answers = {}
                for c in step.challenges:      # what the person types: a text, a number, "1 Text"
                    answers.update(bf.typed_answer(c, ask_the_user(c)))
                step = step.answer(answers)
        """

    def login(
        self,
        institution: str,
        username: str,
        password: str,
        *,
        on_challenge: ChallengeHandler | None = None,
        save: bool = False,
        language: str | None = None,
        tag: str | None = None,
        schedule_refresh: bool | None = None,
    ) -> Session:
        """A live login whose challenges are answered by ``on_challenge(challenge) -> answers``.

        The handler runs on a thread of its own, in a copy of your ``contextvars`` context, so that
        the call's ``deadline``, ``close()`` and Ctrl-C end it even while the handler waits for the
        end user; a handler still running then is left to finish on its own. See
        :func:`bankfeed.answers` for a handler from a fixed mapping. Without a handler, a challenge
        raises :class:`bankfeed.ChallengeRequired` (whose ``challenge`` can be answered).
        """

    def authorize_cached(self, login_id: str) -> Session:
        """A cached read of a saved connection (``MostRecentCached`` true): a new session on the
        already processed data. The service may ask a security question first: then this raises
        :class:`bankfeed.ChallengeRequired`, whose ``challenge`` answered opens the session (of
        ``login_id``, also when the answer's 200 names no login)."""

    def authorize_saved(self, login_id: str, *, save: bool = False) -> Step:
        """A live login by a saved connection (``MostRecentCached`` false), e.g. the trusted-device
        flow. Returns a :class:`Session` or a :class:`Challenge`."""

    def login_saved(
        self, login_id: str, *, on_challenge: ChallengeHandler | None = None, save: bool = False
    ) -> Session:
        """:meth:`authorize_saved` with its challenges answered by ``on_challenge``."""

    def investments(self, login_id: str, *, request_id: str | None = None) -> Investments:
        """A cached session of ``login_id``, then its Investments (202 answers polled), as tables::

            inv = client.investments(login_id)
            inv.positions.to_pandas()

        With ``request_id`` (the one a :class:`bankfeed.PendingTimeout` names), no new session
        is opened: the pending operation of that RequestId is polled again, where it stood.
        """

    def attributes(
        self,
        login_id: str,
        attributes: Mapping[str, Sequence[str]] | None = None,
        *,
        package: str | None = None,
        filters: Mapping[str, Any] | None = None,
        detail: Sequence[str] | None = None,
        account_filter: Sequence[str] | None = None,
        request_id: str | None = None,
    ) -> Attributes:
        """Attributes of a saved connection: a cached session, account detail polled to 200, then
        the attributes call (itself polled).

        Either a use-case ``package`` (``"income"``, ``"credit_risk"``, ``"user_analysis"``,
        ``"lending"``, ``"all"``, ``"business_analysis"``, ``"all_business"``), or custom
        ``attributes`` (``{group: [names]}``, names verbatim) with optional ``filters`` (e.g.
        ``{"AccountCategory": ["Operations"]}``), ``detail`` (names whose transactions to return)
        and ``account_filter`` (account ids)::

            attrs = client.attributes(login_id, package="income")
            attrs = client.attributes(login_id, {"Card": ["balance_min", "count_nsf"]}, detail=["count_nsf"])

        ``request_id`` resumes a pending call, as for :meth:`investments`.
        """

    def delete_login(self, login_id: str) -> dict[str, Any]:
        """Deletes the retained data of a saved connection (DeleteCard). Returns the server's
        answer: a dict, or ``{"Message": text}`` when it answered in plain text."""

    def set_scheduled_refresh(self, login_id: str, active: bool) -> bool:
        """Turns the nightly refresh of a saved login on (``active=True``) or off
        (SetScheduledRefresh). Returns the state set, which later answers show as the login's
        ``IsScheduledRefresh``. An unknown LoginId raises :class:`bankfeed.ApiError`
        (``INVALID_LOGIN``)."""

    def mfa_questions(self, login_id: str) -> list[str]:
        """The security questions of a saved login (GetMFAQuestions), in the order the
        service lists them: the questions :meth:`answer_mfa_questions` takes answers to."""

    def answer_mfa_questions(self, login_id: str, answers: dict[str, str]) -> None:
        """Stores answers to a saved login's security questions (AnswerMFAQuestions), given
        as ``{question: answer}``; the service gives them itself when a refresh of the login
        asks those questions. Each question and answer must be non-blank text
        (:class:`bankfeed.ConfigError` names the question, never an answer); a question the login
        is not asked raises :class:`bankfeed.ApiError` (``INVALID_REQUEST``)."""

    def nightly_refresh_status(self) -> list[IneligibleLogin]:
        """The saved logins whose nightly refresh is on but cannot run
        (GetNightlyRefreshStatus), each an :class:`IneligibleLogin` as the service describes
        it: ``LoginId``, ``LastRefreshDate``, ``LastRefreshState``, ``LastRefreshErrorCode``. Sent with the
        client's ``secret_key`` as ``Authorization: Bearer``; have the affected users link their
        account again."""

    def connect_url(
        self,
        *,
        demo: bool | None = None,
        product_type: str | None = None,
        redirect_url: str | None = None,
        inner_redirect: bool | None = None,
        language: str | None = None,
        consent: bool | None = None,
        customer_name: str | None = None,
        account_selector: bool | None = None,
        account_selector_multiple: bool | None = None,
        account_selector_currency: str | None = None,
        show_all_accounts: bool | None = None,
        tag: str | None = None,
        institution: str | None = None,
        maximum_retry: int | None = None,
        institution_filter: bool | None = None,
        close_enable: bool | None = None,
        header_enable: bool | None = None,
        back_enable: bool | None = None,
        extra: Mapping[str, str | bool | int] | None = None,
    ) -> ConnectUrl:
        """The URL of the service's hosted widget (:func:`bankfeed.connect_url`'s options but
        ``instance`` and ``authorize_token``), with an authorize token minted just before
        (GenerateAuthorizeToken, with the client's ``secret_key``; single use, 30 minutes) when
        the client has a secret key. The widget is the one of the client's service:
        ``https://X-api.private.fin.ag`` is served by ``https://X-iframe.private.fin.ag/v2/``, any
        other ``base_url`` (a sandbox) at ``<base_url>/v2/``::

            url = client.connect_url(demo=True, redirect_url="https://example.com/connected")
            print(url)           # the token shows as ***
            open_it(url.reveal())

        Mint it when the person is about to connect: the token expires unused after 30 minutes."""

    def connect(
        self,
        *,
        timeout: float = 300.0,
        open_browser: bool = True,
        on_url: Callable[[ConnectUrl], object] | None = None,
        demo: bool | None = None,
        product_type: str | None = None,
        inner_redirect: bool | None = None,
        language: str | None = None,
        consent: bool | None = None,
        customer_name: str | None = None,
        account_selector: bool | None = None,
        account_selector_multiple: bool | None = None,
        account_selector_currency: str | None = None,
        show_all_accounts: bool | None = None,
        tag: str | None = None,
        institution: str | None = None,
        maximum_retry: int | None = None,
        institution_filter: bool | None = None,
        close_enable: bool | None = None,
        header_enable: bool | None = None,
        back_enable: bool | None = None,
        extra: Mapping[str, str | bool | int] | None = None,
    ) -> Connection:
        """Connects a bank through the hosted widget, from a script: once the authorize token is
        minted, a loopback catcher listens on ``127.0.0.1`` (a random port, two random unguessable
        paths); the widget's URL (:meth:`connect_url`, its ``redirect_url`` the catcher) is opened
        in the browser through the catcher's one-time launch page (``webbrowser.open`` is given
        no secret: a command line is readable by every local user), or handed to ``on_url(url)``
        instead (a :class:`ConnectUrl`: ``url.reveal()`` is the address; keep it off command
        lines); with ``open_browser=False`` and no ``on_url`` the launch page's address is printed
        on stderr for the person to open. Only the masked URL is logged
        (``bankfeed.connect``). When the widget redirects (or a page forwards its ``REDIRECT``
        event to the catcher by POST), the browser is answered "You can close this tab" and the
        :class:`Connection` returned::

            connection = client.connect(demo=True, timeout=600)
            session = client.authorize_cached(connection.login_id)

        Raises :class:`bankfeed.ConnectTimeout` (a ``TimeoutError``) when ``timeout`` seconds pass
        without a connection, :class:`bankfeed.ConfigError` (``field="loginId"``) when the
        widget reports a LoginId that is not a GUID. Ctrl-C and ``close()``
        stop the wait at once; the catcher is closed before ``connect`` returns or raises, also
        when ``on_url`` raises. On Linux, connections of other users' processes are refused."""

    def institutions(self) -> list[SupportedInstitution]:
        """Every institution the service supports (Institutions), each a
        :class:`SupportedInstitution` with ``Id``, ``Localizations`` (``Language``, ``Name``,
        ``Urls``), ``Status`` and ``Country``; the pages (``skip`` and ``take``) are read until
        ``Count`` have come."""

    def session(self, request_id: str, *, login_id: str | None = None) -> Session:
        """The session of a known RequestId, without sending anything: its data calls poll that
        RequestId where it stood (e.g. after :class:`bankfeed.PendingTimeout`)::

            try:
                detail = client.authorize_cached(login_id).accounts_detail()
            except bf.PendingTimeout as exc:
                if exc.request_id is None:  # no RequestId to resume: call again later
                    raise
                detail = client.session(exc.request_id, login_id=login_id).accounts_detail()
        """

    def investments_many(
        self,
        login_ids: Iterable[str],
        *,
        concurrency: int = 32,
        progress: bool = False,
        request_ids: Mapping[str, str] | None = None,
        on_challenge: ChallengeHandler | None = None,
    ) -> BulkResults[Investments]:
        """The Investments of every login, ``concurrency`` of them at a time, each the whole flow
        of :meth:`investments` run in Rust. Yields ``(login_id, result)`` as each finishes, the
        result being :class:`Investments` or the exception that login raised (one failure never
        stops the others); ``progress=True`` shows a progress bar. Gather them with
        :func:`bankfeed.combine`::

            results = list(client.investments_many(login_ids, concurrency=64, progress=True))
            positions = bf.combine(results).positions.to_pandas()   # a login_id column first

        ``login_ids`` is any iterable of text, read one item at a time: a list, a pandas or
        polars Series, a NumPy array, a pyarrow array or chunked array (a Ray Data batch's
        column). A missing value in it (None, NaN, ``pandas.NA``, an Arrow null) is that login's
        own :class:`ConfigError`, handed back as ``("", error)``; an item of another kind (a
        number, bytes) raises TypeError, and a whole DataFrame too (pass its column).

        The call starts at once; Ctrl-C, closing the iterator, or leaving a ``with`` block around
        it stops every login in flight. A reader still reading after ``close()`` (from a
        watchdog thread, say) or the client's ``close()`` gets the results already fetched, then
        ``(login_id, ClientClosed)`` for every login not finished, so the pairs always add up to
        ``login_ids``. The client's ``deadline`` bounds each login's flow, not the whole call; a
        ``threading.Timer(seconds, results.close)`` bounds the call. The iterator can only be
        read in the process that started it (a forked child gets :class:`ClientClosed` at once).

        ``request_ids={login_id: request_id}`` resumes those logins' polling where their
        :class:`PendingTimeout` left it, instead of opening new sessions (each key must be one
        of ``login_ids``)::

            pending = {i: r.request_id for i, r in results if isinstance(r, bf.PendingTimeout) and r.request_id}
            later = list(client.investments_many(pending, request_ids=pending))

        A cached read may be asked a security question, as a live login is (a 203 to the cached
        Authorize). Without ``on_challenge`` nothing is answered: that login's result is its own
        :class:`ChallengeRequired`, whose message says what to do, and the others go on. With
        ``on_challenge`` (what :meth:`login` takes: ``bf.answers({...})``, or a function of the
        challenge), the handler answers it and the login goes on. The challenge's ``login_id``
        says whose question it is, so that one handler can hold the answers of many logins::

            held = {login_id: bf.answers(answers) for login_id, answers in stored_answers.items()}

            def on_challenge(c: bf.Challenge) -> dict[str, list[str]]:
                return held[c.login_id](c) if c.login_id in held else {}   # {}: nothing answered

            results = client.investments_many(login_ids, on_challenge=on_challenge)

        The handler is asked one challenge at a time, started by the thread that reads the results
        (a plain function on a thread of its own, as for :meth:`login`), so a handler written for
        one login serves as it is; a login waiting for its answers counts against its
        ``deadline``. The session the answers open keeps the LoginId asked for.
        """

    def attributes_many(
        self,
        login_ids: Iterable[str],
        attributes: Mapping[str, Sequence[str]] | None = None,
        *,
        package: str | None = None,
        filters: Mapping[str, Any] | None = None,
        detail: Sequence[str] | None = None,
        account_filter: Sequence[str] | None = None,
        concurrency: int = 32,
        progress: bool = False,
        request_ids: Mapping[str, str] | None = None,
        on_challenge: ChallengeHandler | None = None,
    ) -> BulkResults[Attributes]:
        """:meth:`attributes` of every login, as :meth:`investments_many` runs them (its
        ``on_challenge`` too)."""

    def accounts_detail_many(
        self,
        login_ids: Iterable[str],
        *,
        with_transactions: bool | None = None,
        days: Days | None = None,
        with_account_identity: bool | None = None,
        with_kyc: bool | None = None,
        accounts_filter: Sequence[str] | None = None,
        with_details_and_banking_statements: bool | None = None,
        number_of_banking_statements: str | None = None,
        date_from: datetime.date | str | None = None,
        date_to: datetime.date | str | None = None,
        refresh_delta: Mapping[str, str] | None = None,
        concurrency: int = 32,
        progress: bool = False,
        request_ids: Mapping[str, str] | None = None,
        on_challenge: ChallengeHandler | None = None,
    ) -> BulkResults[Accounts]:
        """A cached session of every login, then its account detail (see
        :meth:`Session.accounts_detail`), as :meth:`investments_many` runs them (its
        ``on_challenge`` too)."""

    def __enter__(self) -> Client:
        """The client itself; leaving the block closes it (see :meth:`close`)."""

    def __exit__(self, kind: object, value: object, traceback: object) -> None:
        """Closes the client."""

@final
class AsyncClient(_BaseClient):
    """A :class:`Client` for asyncio: the same options, and every call awaited. Works in any
    running event loop (a notebook's, uvloop's, one per thread); cancelling the awaiting task
    (``asyncio.wait_for``, ``asyncio.timeout``) stops the call at once::

        async with bf.AsyncClient() as client:
            inv = await client.investments(login_id)
            async for login_id, result in client.investments_many(login_ids, concurrency=64):
                ...
    """

    def __new__(
        cls,
        base_url: str | None = None,
        customer_id: str | None = None,
        *,
        api_key: str | None = None,
        secret_key: str | None = None,
        investments_base_url: str | None = None,
        timeout: float = 240.0,
        poll_interval: float = 10.0,
        poll_timeout: float = 1800.0,
        max_retries: int = 2,
        max_challenge_rounds: int = 10,
        allow_insecure_http: bool = False,
        deadline: float | None = None,
        max_body_bytes: int = 134217728,
        max_connections: int = 100,
        proxy: str | None = "environment",
        money: Literal["float", "decimal"] = "float",
        cassette: str | os.PathLike[str] | Cassette | None = None,
        record_mode: Literal["none", "once", "new_episodes", "all", "rewrite"] | None = None,
        allow_live_record: bool = False,
    ) -> AsyncClient:
        """Checks the options and builds the client; nothing is sent yet.

        ``timeout`` is per request, ``poll_interval`` the seconds between two polls of a 202
        answer (at least 0.01: a smaller value, 0 included, is raised to it), ``poll_timeout``
        how long an operation may stay pending before :class:`bankfeed.PendingTimeout`;
        ``max_retries`` bounds the retries of a transient failure, ``max_challenge_rounds`` the
        challenge rounds of one login. ``deadline`` bounds a whole call (authorize, challenge
        rounds, polling and retries together), in seconds; ``None`` leaves a call bounded only
        by the other limits. In a bulk call it bounds each login's flow, not the whole call.
        ``max_body_bytes`` (128 MiB by default, room for 100,000 transactions) bounds the size of
        an answer: a larger one raises :class:`bankfeed.ProtocolError` before it is read whole.
        ``max_connections`` bounds the
        requests in flight at once (1 to 10,000), and so the connections open to a host, within
        those opened in a race for an idle one: a bulk call of thousands of logins at full
        concurrency was measured with up to half again as many (302 for 200). Each login holds
        one only while a request of its own is out.

        ``money`` is how the tables hold every amount, balance, value, price and quantity:
        ``"float"`` (float64, the default, as before) or ``"decimal"``: an exact decimal128 of
        each column's documented size (:data:`bankfeed.schema` and ``docs/tables.md#money``),
        read from the digits the payload wrote. A value that does not fit its column is that
        call's :class:`bankfeed.DecodeError`, naming the column; it is never rounded.

        Credentials and keys go only over https: an ``http://`` URL is refused unless its host is
        loopback (127.0.0.0/8, ``::1``, ``localhost``, as for a :class:`Sandbox`) or
        ``allow_insecure_http=True``. A URL with a user name or password, a ``customer_id`` that
        is not a GUID or a plain path segment, and an empty key or one a header cannot carry are
        refused too, with :class:`bankfeed.ConfigError` naming the option (never the key).

        ``base_url`` given here is the host of every operation, Investments included, unless
        ``investments_base_url`` is given too: ``BANKFEED_INVESTMENTS_BASE_URL`` applies only
        with ``BANKFEED_BASE_URL``. ``customer_id``, ``api_key`` and ``secret_key`` left out still
        come from their variables.

        ``proxy`` says how requests reach the service. ``"environment"`` (the default) honours
        ``HTTPS_PROXY``, ``HTTP_PROXY``, ``ALL_PROXY`` and ``NO_PROXY`` (upper case first, then
        lower case); a URL such as ``"http://proxy.corp:3128"`` (or ``https://``, with
        ``user:password@`` if the proxy asks for them) sends every request through that proxy;
        ``None`` uses no proxy. Loopback hosts (127.0.0.0/8, ``::1``, ``localhost``, a
        :class:`Sandbox`) never go through a proxy. A proxy that cannot be used (a ``socks5://``
        one, a value that does not parse) raises :class:`bankfeed.ConfigError` naming ``proxy``
        or the variable; the proxy's password never shows in a ``repr`` or a message, and a
        :class:`bankfeed.TransportError` of a request sent through a proxy names it.

        ``cassette`` records the client's requests and the answers they get into a file, or
        answers them from it with no server at all (docs/cassettes.md): a path such as
        ``"tests/cassettes/test_login.yaml"``, or a :func:`cassette` shared with other clients.
        ``record_mode`` says which, as vcrpy names them: ``"none"`` (the default: replay only,
        never the network), ``"once"`` (record when the file does not exist, replay when it
        does), ``"new_episodes"``, ``"all"`` or ``"rewrite"``. Left out, a client built inside a
        ``with bf.cassette(...)`` block is on that block's cassette. Passwords, answers, keys and
        tokens never reach the file, and LoginIds and RequestIds are written as pseudonyms. The
        file is written when the client closes (:meth:`close`, or the end of its ``with``
        block), and not at all when its text still holds a secret; a request the cassette has
        no answer for raises :class:`bankfeed.CassetteError`. Recording against a host that is
        neither loopback nor the service's public test instance needs
        ``allow_live_record=True``: a live Authorize can count against a bank's lockout::

            client = bf.AsyncClient(base_url=sb.url, customer_id=sb.customer_id,
                                    cassette="tests/cassettes/test_login.yaml", record_mode="once")
            session = await client.login("FlinksCapital", "Greatday", "Everyday", on_challenge=greatday)
            client.close()   # writes the cassette; the next run replays it
        """

    async def authorize(
        self,
        institution: str,
        username: str,
        password: str,
        *,
        save: bool = False,
        language: str | None = None,
        tag: str | None = None,
        schedule_refresh: bool | None = None,
    ) -> AsyncStep:
        """A live login with credentials (``MostRecentCached`` false).

        Returns an :class:`AsyncSession`, or an :class:`AsyncChallenge` to answer with
        ``challenge.answer(...)``::

            step = await client.authorize("FlinksCapital", "Greatday", "Everyday", save=True)
            while isinstance(step, bf.AsyncChallenge):
                answers = {}
                for c in step.challenges:      # what the person types: a text, a number, "1 Text"
                    answers.update(bf.typed_answer(c, ask_the_user(c)))
                step = await step.answer(answers)
        """

    async def login(
        self,
        institution: str,
        username: str,
        password: str,
        *,
        on_challenge: AsyncChallengeHandler | None = None,
        save: bool = False,
        language: str | None = None,
        tag: str | None = None,
        schedule_refresh: bool | None = None,
    ) -> AsyncSession:
        """A live login whose challenges are answered by ``on_challenge(challenge) -> answers``.

        ``on_challenge`` may be an ``async def`` function, run as a task of the event loop (and
        cancelled when the call ends first), or a plain one, run on a thread of its own so that it
        never blocks the loop (left to finish on its own when the call ends first). See
        :func:`bankfeed.answers` for a handler from a fixed mapping. Without a handler, a challenge
        raises :class:`bankfeed.ChallengeRequired` (whose ``challenge`` can be answered).
        """

    async def authorize_cached(self, login_id: str) -> AsyncSession:
        """A cached read of a saved connection (``MostRecentCached`` true): a new session on the
        already processed data. The service may ask a security question first: then this raises
        :class:`bankfeed.ChallengeRequired`, whose ``challenge`` answered (awaited) opens the
        session (of ``login_id``, also when the answer's 200 names no login)."""

    async def authorize_saved(self, login_id: str, *, save: bool = False) -> AsyncStep:
        """A live login by a saved connection (``MostRecentCached`` false), e.g. the trusted-device
        flow. Returns an :class:`AsyncSession` or an :class:`AsyncChallenge`."""

    async def login_saved(
        self, login_id: str, *, on_challenge: AsyncChallengeHandler | None = None, save: bool = False
    ) -> AsyncSession:
        """:meth:`authorize_saved` with its challenges answered by ``on_challenge``."""

    async def investments(self, login_id: str, *, request_id: str | None = None) -> Investments:
        """A cached session of ``login_id``, then its Investments (202 answers polled), as tables::

            inv = await client.investments(login_id)
            inv.positions.to_pandas()

        With ``request_id`` (the one a :class:`bankfeed.PendingTimeout` names), no new session
        is opened: the pending operation of that RequestId is polled again, where it stood.
        """

    async def attributes(
        self,
        login_id: str,
        attributes: Mapping[str, Sequence[str]] | None = None,
        *,
        package: str | None = None,
        filters: Mapping[str, Any] | None = None,
        detail: Sequence[str] | None = None,
        account_filter: Sequence[str] | None = None,
        request_id: str | None = None,
    ) -> Attributes:
        """Attributes of a saved connection: a cached session, account detail polled to 200, then
        the attributes call (itself polled).

        Either a use-case ``package`` (``"income"``, ``"credit_risk"``, ``"user_analysis"``,
        ``"lending"``, ``"all"``, ``"business_analysis"``, ``"all_business"``), or custom
        ``attributes`` (``{group: [names]}``, names verbatim) with optional ``filters`` (e.g.
        ``{"AccountCategory": ["Operations"]}``), ``detail`` (names whose transactions to return)
        and ``account_filter`` (account ids)::

            attrs = await client.attributes(login_id, package="income")
            attrs = await client.attributes(login_id, {"Card": ["balance_min", "count_nsf"]}, detail=["count_nsf"])

        ``request_id`` resumes a pending call, as for :meth:`investments`.
        """

    async def delete_login(self, login_id: str) -> dict[str, Any]:
        """Deletes the retained data of a saved connection (DeleteCard). Returns the server's
        answer: a dict, or ``{"Message": text}`` when it answered in plain text."""

    async def set_scheduled_refresh(self, login_id: str, active: bool) -> bool:
        """Turns the nightly refresh of a saved login on (``active=True``) or off
        (SetScheduledRefresh). Returns the state set, which later answers show as the login's
        ``IsScheduledRefresh``. An unknown LoginId raises :class:`bankfeed.ApiError`
        (``INVALID_LOGIN``)."""

    async def mfa_questions(self, login_id: str) -> list[str]:
        """The security questions of a saved login (GetMFAQuestions), in the order the
        service lists them: the questions :meth:`answer_mfa_questions` takes answers to."""

    async def answer_mfa_questions(self, login_id: str, answers: dict[str, str]) -> None:
        """Stores answers to a saved login's security questions (AnswerMFAQuestions), given
        as ``{question: answer}``; the service gives them itself when a refresh of the login
        asks those questions. Each question and answer must be non-blank text
        (:class:`bankfeed.ConfigError` names the question, never an answer); a question the login
        is not asked raises :class:`bankfeed.ApiError` (``INVALID_REQUEST``)."""

    async def nightly_refresh_status(self) -> list[IneligibleLogin]:
        """The saved logins whose nightly refresh is on but cannot run
        (GetNightlyRefreshStatus), each an :class:`IneligibleLogin` as the service describes
        it: ``LoginId``, ``LastRefreshDate``, ``LastRefreshState``, ``LastRefreshErrorCode``. Sent with the
        client's ``secret_key`` as ``Authorization: Bearer``; have the affected users link their
        account again."""

    async def connect_url(
        self,
        *,
        demo: bool | None = None,
        product_type: str | None = None,
        redirect_url: str | None = None,
        inner_redirect: bool | None = None,
        language: str | None = None,
        consent: bool | None = None,
        customer_name: str | None = None,
        account_selector: bool | None = None,
        account_selector_multiple: bool | None = None,
        account_selector_currency: str | None = None,
        show_all_accounts: bool | None = None,
        tag: str | None = None,
        institution: str | None = None,
        maximum_retry: int | None = None,
        institution_filter: bool | None = None,
        close_enable: bool | None = None,
        header_enable: bool | None = None,
        back_enable: bool | None = None,
        extra: Mapping[str, str | bool | int] | None = None,
    ) -> ConnectUrl:
        """The URL of the service's hosted widget (:func:`bankfeed.connect_url`'s options but
        ``instance`` and ``authorize_token``), with an authorize token minted just before
        (GenerateAuthorizeToken, with the client's ``secret_key``; single use, 30 minutes) when
        the client has a secret key. The widget is the one of the client's service:
        ``https://X-api.private.fin.ag`` is served by ``https://X-iframe.private.fin.ag/v2/``, any
        other ``base_url`` (a sandbox) at ``<base_url>/v2/``::

            url = await client.connect_url(demo=True, redirect_url="https://example.com/connected")
            print(url)           # the token shows as ***
            open_it(url.reveal())

        Mint it when the person is about to connect: the token expires unused after 30 minutes."""

    async def connect(
        self,
        *,
        timeout: float = 300.0,
        open_browser: bool = True,
        on_url: Callable[[ConnectUrl], object] | None = None,
        demo: bool | None = None,
        product_type: str | None = None,
        inner_redirect: bool | None = None,
        language: str | None = None,
        consent: bool | None = None,
        customer_name: str | None = None,
        account_selector: bool | None = None,
        account_selector_multiple: bool | None = None,
        account_selector_currency: str | None = None,
        show_all_accounts: bool | None = None,
        tag: str | None = None,
        institution: str | None = None,
        maximum_retry: int | None = None,
        institution_filter: bool | None = None,
        close_enable: bool | None = None,
        header_enable: bool | None = None,
        back_enable: bool | None = None,
        extra: Mapping[str, str | bool | int] | None = None,
    ) -> Connection:
        """Connects a bank through the hosted widget, from a script: once the authorize token is
        minted, a loopback catcher listens on ``127.0.0.1`` (a random port, two random unguessable
        paths); the widget's URL (:meth:`connect_url`, its ``redirect_url`` the catcher) is opened
        in the browser through the catcher's one-time launch page (``webbrowser.open`` is given
        no secret: a command line is readable by every local user), or handed to ``on_url(url)``
        instead (a :class:`ConnectUrl`: ``url.reveal()`` is the address; keep it off command
        lines); with ``open_browser=False`` and no ``on_url`` the launch page's address is printed
        on stderr for the person to open. Only the masked URL is logged
        (``bankfeed.connect``). When the widget redirects (or a page forwards its ``REDIRECT``
        event to the catcher by POST), the browser is answered "You can close this tab" and the
        :class:`Connection` returned::

            connection = await client.connect(demo=True, timeout=600)
            session = await client.authorize_cached(connection.login_id)

        Raises :class:`bankfeed.ConnectTimeout` (a ``TimeoutError``) when ``timeout`` seconds pass
        without a connection, :class:`bankfeed.ConfigError` (``field="loginId"``) when the
        widget reports a LoginId that is not a GUID. Ctrl-C, task cancellation and ``close()``
        stop the wait at once; the catcher is closed before ``connect`` returns or raises, also
        when ``on_url`` raises. On Linux, connections of other users' processes are refused."""

    async def institutions(self) -> list[SupportedInstitution]:
        """Every institution the service supports (Institutions), each a
        :class:`SupportedInstitution` with ``Id``, ``Localizations`` (``Language``, ``Name``,
        ``Urls``), ``Status`` and ``Country``; the pages (``skip`` and ``take``) are read until
        ``Count`` have come."""

    def session(self, request_id: str, *, login_id: str | None = None) -> AsyncSession:
        """The session of a known RequestId, without sending anything: its data calls poll that
        RequestId where it stood (e.g. after :class:`bankfeed.PendingTimeout`)::

            try:
                detail = await (await client.authorize_cached(login_id)).accounts_detail()
            except bf.PendingTimeout as exc:
                if exc.request_id is None:  # no RequestId to resume: call again later
                    raise
                detail = await client.session(exc.request_id, login_id=login_id).accounts_detail()
        """

    def investments_many(
        self,
        login_ids: Iterable[str],
        *,
        concurrency: int = 32,
        progress: bool = False,
        request_ids: Mapping[str, str] | None = None,
        on_challenge: AsyncChallengeHandler | None = None,
    ) -> AsyncBulkResults[Investments]:
        """The Investments of every login, ``concurrency`` of them at a time, each the whole flow
        of :meth:`investments` run in Rust. Yields ``(login_id, result)`` as each finishes, the
        result being :class:`Investments` or the exception that login raised (one failure never
        stops the others); ``progress=True`` shows a progress bar. Gather them with
        :func:`bankfeed.acombine`::

            combined = await bf.acombine(client.investments_many(login_ids, concurrency=64))
            positions = combined.positions.to_pandas()   # a login_id column first

        ``login_ids`` is any iterable of text, as for :meth:`Client.investments_many`: a list, a
        pandas or polars Series, a NumPy or pyarrow array; a missing value is that login's own
        :class:`ConfigError`, handed back as ``("", error)``.

        The call starts at once; cancelling the task, closing the iterator (``await
        it.aclose()``), or leaving an ``async with`` block around it stops every login in flight.
        A reader still reading after ``aclose()`` (from another task) or the client's
        ``close()`` gets the results already fetched, then ``(login_id, ClientClosed)`` for every
        login not finished. The client's ``deadline`` bounds each login's flow, not the whole
        call; ``async with asyncio.timeout(seconds):`` around the ``async for`` or
        :func:`bankfeed.acombine` bounds the call.
        ``request_ids={login_id: request_id}`` resumes those logins' polling where their
        :class:`PendingTimeout` left it, as on :meth:`Client.investments_many`.

        A cached read asked a security question is that login's :class:`ChallengeRequired`, as
        on :meth:`Client.investments_many`, unless ``on_challenge`` answers it: the handler kinds
        :meth:`login` takes, run on the event loop that reads the results (an ``async def`` as a
        task of the loop, cancelled by ``aclose()``; a plain function on a thread of its own),
        one challenge at a time.
        """

    def attributes_many(
        self,
        login_ids: Iterable[str],
        attributes: Mapping[str, Sequence[str]] | None = None,
        *,
        package: str | None = None,
        filters: Mapping[str, Any] | None = None,
        detail: Sequence[str] | None = None,
        account_filter: Sequence[str] | None = None,
        concurrency: int = 32,
        progress: bool = False,
        request_ids: Mapping[str, str] | None = None,
        on_challenge: AsyncChallengeHandler | None = None,
    ) -> AsyncBulkResults[Attributes]:
        """:meth:`attributes` of every login, as :meth:`investments_many` runs them (its
        ``on_challenge`` too)."""

    def accounts_detail_many(
        self,
        login_ids: Iterable[str],
        *,
        with_transactions: bool | None = None,
        days: Days | None = None,
        with_account_identity: bool | None = None,
        with_kyc: bool | None = None,
        accounts_filter: Sequence[str] | None = None,
        with_details_and_banking_statements: bool | None = None,
        number_of_banking_statements: str | None = None,
        date_from: datetime.date | str | None = None,
        date_to: datetime.date | str | None = None,
        refresh_delta: Mapping[str, str] | None = None,
        concurrency: int = 32,
        progress: bool = False,
        request_ids: Mapping[str, str] | None = None,
        on_challenge: AsyncChallengeHandler | None = None,
    ) -> AsyncBulkResults[Accounts]:
        """A cached session of every login, then its account detail (see
        :meth:`AsyncSession.accounts_detail`), as :meth:`investments_many` runs them (its
        ``on_challenge`` too)."""

    async def __aenter__(self) -> AsyncClient:
        """The client itself; leaving the block closes it (see :meth:`close`)."""

    async def __aexit__(self, kind: object, value: object, traceback: object) -> None:
        """Closes the client."""

@disjoint_base
class _BaseSession:
    """What :class:`Session` and :class:`AsyncSession` share. Not made directly."""

    @property
    def request_id(self) -> str:
        """The RequestId of the session."""

    @property
    def login_id(self) -> str | None:
        """The LoginId of the saved connection, when the answer had one."""

    @property
    def login(self) -> dict[str, Any] | None:
        """``Login`` as sent (``Id``, ``Username``, ``IsScheduledRefresh``, ``LastRefresh``,
        ``Type``), or None. Part of :attr:`raw`: the same object on every access."""

    @property
    def last_refresh(self) -> datetime.datetime | None:
        """``Login.LastRefresh`` as an aware UTC datetime, or None. The service writes six or seven
        fractional digits, mostly without a zone (it is UTC); a seventh digit is cut to
        microseconds."""

    @property
    def institution(self) -> str | dict[str, Any] | None:
        """``Institution`` as sent: a name, or a dict with ``Id`` and ``Name``."""

    @property
    def institution_name(self) -> str | None:
        """The institution's name: ``InstitutionName`` as sent (the real service sends it beside
        ``Institution``, e.g. ``"FlinksCapital"``), else the name :attr:`institution` gives (the
        name itself, or its ``Name``); None when the answer names none."""

    @property
    def institution_id(self) -> str | None:
        """The institution's id as text: ``InstitutionId`` (the real service sends a number, e.g.
        ``14``, read as ``"14"``), else the ``Id`` of :attr:`institution` when it is a dict; None
        when the answer gives none."""

    @property
    def links(self) -> list[dict[str, Any]]:
        """``Links`` as sent: dicts with ``rel``, ``href`` and ``example`` (empty when none came)."""

    @property
    def raw(self) -> dict[str, Any]:
        """The 200 body exactly as the server sent it (parsed on first access, then kept)."""

    def _repr_html_(self) -> str:
        """The notebook view: the RequestId, the institution, the last refresh and the login's
        fields that are not secret; the LoginId shortened, no username (docs/notebooks.md)."""

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickles as its client (keys included, see :meth:`Client.__reduce__`), its ids and the
        200 body: the copy serves the data operations and gives the same :attr:`raw`."""

    def __dask_tokenize__(self) -> tuple[object, ...]:
        """What Dask names the session by in a task key: its client's token and its ids, nothing
        of the keys its pickle carries."""

@final
class Session(_BaseSession):
    """An open session: its ``request_id`` serves the data operations::

    session = client.authorize_cached(login_id)
    inv = session.investments()
    detail = session.accounts_detail(days="Days365")
    """

    def investments(self) -> Investments:
        """Investments of this session (202 answers polled until 200), as tables."""

    def accounts_detail(
        self,
        *,
        with_transactions: bool | None = None,
        days: Days | None = None,
        with_account_identity: bool | None = None,
        with_kyc: bool | None = None,
        accounts_filter: Sequence[str] | None = None,
        with_details_and_banking_statements: bool | None = None,
        number_of_banking_statements: str | None = None,
        date_from: datetime.date | str | None = None,
        date_to: datetime.date | str | None = None,
        refresh_delta: Mapping[str, str] | None = None,
    ) -> Accounts:
        """GetAccountsDetail (202 polled): accounts and transactions as tables.

        An option left at None is not sent, so the service's default applies:

        - ``with_transactions``: the transactions (default True).
        - ``days``: ``"Days90"`` (the default) or ``"Days365"``, how far back transactions go.
        - ``with_kyc``: the account holder (``Holder``: name, address, email, phone; default True).
        - ``with_account_identity``: the transit, institution and account numbers (default False:
          they come as None unless asked for).
        - ``accounts_filter``: account ids; an id the login does not have is refused.
        - ``date_from``, ``date_to``: a ``datetime.date`` or ``"YYYY-MM-DD"``, the first and last
          day of transactions wanted (default: no bound; without ``days``, the whole history held).
        - ``refresh_delta``: ``{account_id: last_transaction_id}``, the last transaction held of an
          account: that account then gives only the transactions after it.
        - ``with_details_and_banking_statements``, ``number_of_banking_statements``
          (``"MostRecent"``, ``"Months3"``, ``"Months12"``): PDF statements with the detail.

        ::

            detail = session.accounts_detail(with_transactions=True, days="Days365")
            detail.transactions.to_pandas()
        """

    def accounts_summary(
        self, *, with_balance: bool | None = None, with_account_identity: bool | None = None
    ) -> Accounts:
        """GetAccountsSummary (202 polled): accounts as a table."""

    def statements(
        self, *, number_of_statements: str | None = None, accounts_filter: Sequence[str] | None = None
    ) -> Statements:
        """GetStatements (202 polled). ``number_of_statements``: ``"MostRecent"``, ``"Months3"`` or
        ``"Months12"``."""

    def attributes(
        self,
        attributes: Mapping[str, Sequence[str]] | None = None,
        *,
        package: str | None = None,
        filters: Mapping[str, Any] | None = None,
        detail: Sequence[str] | None = None,
        account_filter: Sequence[str] | None = None,
    ) -> Attributes:
        """Attributes of this session: account detail polled first, then the attributes call
        (see :meth:`Client.attributes` for the arguments)."""

@final
class AsyncSession(_BaseSession):
    """A :class:`Session` of an :class:`AsyncClient`: every data call is awaited::

    session = await client.authorize_cached(login_id)
    inv = await session.investments()
    """

    async def investments(self) -> Investments:
        """Investments of this session (202 answers polled until 200), as tables."""

    async def accounts_detail(
        self,
        *,
        with_transactions: bool | None = None,
        days: Days | None = None,
        with_account_identity: bool | None = None,
        with_kyc: bool | None = None,
        accounts_filter: Sequence[str] | None = None,
        with_details_and_banking_statements: bool | None = None,
        number_of_banking_statements: str | None = None,
        date_from: datetime.date | str | None = None,
        date_to: datetime.date | str | None = None,
        refresh_delta: Mapping[str, str] | None = None,
    ) -> Accounts:
        """GetAccountsDetail (202 polled): accounts and transactions as tables.

        An option left at None is not sent, so the service's default applies:

        - ``with_transactions``: the transactions (default True).
        - ``days``: ``"Days90"`` (the default) or ``"Days365"``, how far back transactions go.
        - ``with_kyc``: the account holder (``Holder``: name, address, email, phone; default True).
        - ``with_account_identity``: the transit, institution and account numbers (default False:
          they come as None unless asked for).
        - ``accounts_filter``: account ids; an id the login does not have is refused.
        - ``date_from``, ``date_to``: a ``datetime.date`` or ``"YYYY-MM-DD"``, the first and last
          day of transactions wanted (default: no bound; without ``days``, the whole history held).
        - ``refresh_delta``: ``{account_id: last_transaction_id}``, the last transaction held of an
          account: that account then gives only the transactions after it.
        - ``with_details_and_banking_statements``, ``number_of_banking_statements``
          (``"MostRecent"``, ``"Months3"``, ``"Months12"``): PDF statements with the detail.

        ::

            detail = await session.accounts_detail(with_transactions=True, days="Days365")
            detail.transactions.to_pandas()
        """

    async def accounts_summary(
        self, *, with_balance: bool | None = None, with_account_identity: bool | None = None
    ) -> Accounts:
        """GetAccountsSummary (202 polled): accounts as a table."""

    async def statements(
        self, *, number_of_statements: str | None = None, accounts_filter: Sequence[str] | None = None
    ) -> Statements:
        """GetStatements (202 polled). ``number_of_statements``: ``"MostRecent"``, ``"Months3"`` or
        ``"Months12"``."""

    async def attributes(
        self,
        attributes: Mapping[str, Sequence[str]] | None = None,
        *,
        package: str | None = None,
        filters: Mapping[str, Any] | None = None,
        detail: Sequence[str] | None = None,
        account_filter: Sequence[str] | None = None,
    ) -> Attributes:
        """Attributes of this session: account detail polled first, then the attributes call
        (see :meth:`Client.attributes` for the arguments)."""

@final
class SecurityChallenge:
    """One element of :attr:`Challenge.challenges`. Its ``repr`` ends with the answer form of its
    type (``answer: the number of an image, 1 to 16, through bf.typed_answer(c, '8')``, ...);
    :func:`bankfeed.typed_answer` turns what a person types into its answer (docs/answering.md)."""

    @property
    def type(self) -> str:
        """``QuestionAndAnswer``, ``ImageSelection``, ``MultipleChoice``,
        ``MultipleChoiceMultipleAnswers``, ``TextOrCall``, ``WaitUntilEUAccept``, or an unknown
        type as sent."""

    @property
    def prompt(self) -> str:
        """The question, verbatim: also the key of its answer."""

    @property
    def choices(self) -> list[str] | None:
        """``Iterables``: the choices, or None."""

    @property
    def images(self) -> list[bytes] | None:
        """For an ImageSelection challenge, the decoded images (in the order of ``choices``); else
        None."""

    @property
    def is_security_code(self) -> bool:
        """Whether the prompt asks for a six-digit security code."""

    @property
    def raw(self) -> dict[str, Any]:
        """The element as sent (converted on first access, then kept)."""

    def _repr_html_(self) -> str:
        """The notebook view: the prompt, the answer form of its type, then the images as a grid
        numbered 1 to 16 or the choices numbered from 1 (as :func:`bankfeed.typed_answer` reads
        the numbers)."""

@disjoint_base
class _BaseChallenge:
    """What :class:`Challenge` and :class:`AsyncChallenge` share. Not made directly."""

    @property
    def request_id(self) -> str:
        """The RequestId the answers go to."""

    @property
    def login_id(self) -> str | None:
        """The LoginId of the saved connection this step is for: the one a cached or
        saved-connection Authorize named (a bulk call's login), kept through every round; None
        for a login with credentials, whose LoginId comes with its session."""

    @property
    def challenges(self) -> list[SecurityChallenge]:
        """The challenges of this step, in the order the server sent them."""

    @property
    def prompts(self) -> list[str]:
        """The prompts, verbatim: the keys of the answers."""

    @property
    def institution(self) -> str | dict[str, Any] | None:
        """``Institution`` as sent: a name, or a dict."""

    @property
    def institution_name(self) -> str | None:
        """The institution's name: ``InstitutionName`` as sent (the real service's 203 has it
        beside ``Institution``), else the name :attr:`institution` gives; None when the 203 names
        none."""

    @property
    def institution_id(self) -> str | None:
        """The institution's id as text: ``InstitutionId`` (a number on the wire, e.g. ``14``, read
        as ``"14"``), else the ``Id`` of :attr:`institution` when it is a dict; None when the 203
        gives none."""

    @property
    def raw(self) -> dict[str, Any]:
        """The 203 body exactly as the server sent it (parsed on first access, then kept)."""

    def validate(self, answers: Answers) -> None:
        """Checks ``answers`` against the answer rules without sending anything; raises
        :class:`bankfeed.InvalidAnswer` naming the prompt and the rule (never the answer)."""

    def _repr_html_(self) -> str:
        """The notebook view: how to answer the step (typed answers, or :class:`bankfeed.ChallengeForm`),
        then each challenge with its answer form, the images of an ImageSelection as a numbered grid."""

@final
class Challenge(_BaseChallenge):
    """Security challenges to answer before the session opens (a 203 answer).

    Answer them all in one call::

        step = client.authorize("FlinksCapital", "Greatday", "Everyday")
        while isinstance(step, bf.Challenge):
            answers = {}
            for c in step.challenges:      # what the person types: a text, a number, "1 Text"
                answers.update(bf.typed_answer(c, ask_the_user(c)))
            step = step.answer(answers)

    In a notebook, :class:`bankfeed.ChallengeForm` is a form that answers every round; in a
    terminal, ``client.login(..., on_challenge=bf.ask_in_terminal)`` asks the person
    (docs/answering.md).
    """

    def answer(self, answers: Answers) -> Step:
        """Sends the answers (prompt to a string or a list of strings; a TextOrCall challenge is
        keyed by the chosen choice) after checking them. Returns the next step: a
        :class:`Session`, or a :class:`Challenge`."""

@final
class AsyncChallenge(_BaseChallenge):
    """A :class:`Challenge` met by an :class:`AsyncClient`; its answer is awaited::

    step = await client.authorize("FlinksCapital", "Greatday", "Everyday")
    while isinstance(step, bf.AsyncChallenge):
        answers = {}
        for c in step.challenges:      # what the person types: a text, a number, "1 Text"
            answers.update(bf.typed_answer(c, ask_the_user(c)))
        step = await step.answer(answers)
    """

    async def answer(self, answers: Answers) -> AsyncStep:
        """Sends the answers (prompt to a string or a list of strings; a TextOrCall challenge is
        keyed by the chosen choice) after checking them. Returns the next step: a
        :class:`AsyncSession`, or an :class:`AsyncChallenge`."""

@final
class Sandbox:
    """The embedded sandbox: a real HTTP server on loopback that speaks the same API, with the
    public test users and one user per challenge flow (see :attr:`users`)::

        with bf.Sandbox() as sb:
            client = sb.client(poll_interval=0.05)
            session = client.login("FlinksCapital", "greatday_nomfa", "Everyday", save=True)
    """

    def __new__(
        cls,
        *,
        customer_id: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        pending_polls: int = 1,
        pending_seconds: float = 0.0,
        slow_pending_polls: int = 5,
        loading_polls: int = 0,
        pending_operations: Sequence[str] | None = None,
        async_links: Literal["template", "concrete"] = "template",
        cached_challenges: Literal["never", "always", "per_user"] = "never",
        seed: int = 0,
        investment_transactions: int | None = None,
        banking_transactions: int | None = None,
        tier2: bool = False,
        investments: bool = True,
        auth: bool = True,
        secret_key: str | None = "c4569c54-e167-4d34-8de6-f4113bc82414",
        api_key: str | None = "3d5266a8-b697-48d4-8de6-52e2e2662acc",
        token_ttl: float = 1800.0,
        faults: Sequence[Mapping[str, Any]] | None = None,
        logins: int = 0,
        session_idle_seconds: float = 480.0,
        session_processing_seconds: float = 1800.0,
        card_in_use_seconds: float = 3.0,
        max_wrong_answers: int = 3,
        admin: bool = False,
        request_log_bytes: int = 16777216,
        as_of: datetime.date | str | None = None,
        replay: str | os.PathLike[str] | None = None,
        record: str | os.PathLike[str] | None = None,
        upstream: str | None = None,
        allow_live_record: bool = False,
    ) -> Sandbox:
        """Starts the server on ``host:port`` (an IP address; port 0 picks a free one); a port
        taken already is an :class:`OSError` naming the address.

        - ``customer_id``: the id expected in every path, in any case (others get 404). It, ``api_key`` and
          ``secret_key`` must be what :class:`Client` takes: the same :class:`ConfigError` otherwise.
        - ``pending_polls``: how many times a data call of ``pending_operations`` answers 202
          before 200; ``pending_seconds``: additionally answer 202 until this long after the first
          call; ``slow_pending_polls``: the count used instead for ``test_pending`` and
          ``test_dispatched``, whose every data call waits. A call nobody polls is done after a
          second per 202 (or ``pending_seconds``, when longer), as the service goes on
          processing: its login is busy only that long.
        - ``loading_polls``: before that, how many times a data call answers 400 ``SESSION_LOADING``.
        - ``pending_operations``: the data operations that answer 202 before their 200, by name
          (``GetAccountsDetail``, ``GetAccountsSummary``, ``GetStatements``, ``Investments``,
          ``Attributes``, in any case); None for the service's recorded behaviour, account detail,
          Investments and the attributes calls (the summary and statements answer 200 at once).
        - ``async_links``: the link of a banking operation's 202: ``"template"``, the service's
          ``{"rel": "{Endpoint}Async", "href": "/{Endpoint}Async", "example":
          "/{Endpoint}Async/{requestId}"}``, or ``"concrete"``, the operation's own
          (``/GetAccountsDetailAsync/<RequestId>``). The ``...Async/<RequestId>`` GET and the
          repeated POST are served either way.
        - ``cached_challenges``: whether a cached Authorize (a LoginId with ``MostRecentCached``
          true) is first asked a security question, as the service may ask: ``"never"``,
          ``"always"``, or ``"per_user"`` (the users whose row in docs/sandbox.md's users table
          says so). The answer's 200 names no ``Login``, as the service's does.
        - ``seed``: seeds LoginIds and all generated data (same seed and username, same data).
        - ``investment_transactions`` / ``banking_transactions``: exactly that many generated
          trades / transactions per login in the year before 2026-11-20 (None: a natural amount);
          the days the clock adds (``as_of``, :meth:`advance`) have their natural activity, none
          with 0.
        - ``tier2``: whether the customer has a Tier 2 package, which ``GetAllAttributes`` and the
          custom set of attributes need (without it, only the use-case packages answer).
        - ``investments``: whether Investments is enabled for the customer: the widget at
          :attr:`widget_url` shows the investment institutions for ``productType=investment``
          only then, and the banking list otherwise (see The hosted widget in docs/sandbox.md).
        - ``auth``: whether keys are asked for, as on the public test instance (the default).
          ``auth=False`` asks for none, for old clients that send no key; :meth:`client` then
          sends none either.
        - ``secret_key``: Authorize needs a token from ``GenerateAuthorizeToken``, which needs
          this key in ``flinks-auth-key``; ``api_key``: the data operations and DeleteCard need
          this ``x-api-key`` header. Both default to the public test instance's published keys
          (public test data); None turns that one key off. :meth:`client` sends them.
        - ``token_ttl``: seconds a token lives after it is minted (the service's 30 minutes by
          default; shorter for a test of expiry). A token opens one session: its first Authorize,
          and the challenge answers of that RequestId, may carry it; another session may not
          (see the Keys section of docs/sandbox.md).
        - ``faults``: faults to inject, in order, each a dict such as
          ``{"kind": "status", "status": 503, "operation": "Investments", "times": 2}``
          (see the Faults section of docs/sandbox.md); none by default.
        - ``logins``: how many bulk logins (``bulk_00000``, ``bulk_00001``, ...; MFA-free, each
          with data of its own) are saved at start, from 0 to 1,000,000; :attr:`login_ids` lists
          their LoginIds (see the Many logins section of docs/sandbox.md).
        - ``session_idle_seconds``: a RequestId dies (``SESSION_EXPIRED``) after this long without
          a request, 8 minutes as at the service; ``session_processing_seconds``: the same while
          its data is processing (a data call answered 202 and not yet 200), 30 minutes. Each
          above 0 and at most 86400, so a test can make them seconds.
        - ``card_in_use_seconds``: DeleteCard answers 400 ``CARD_IN_USE`` this long after the
          Authorize that connected the login new (it always does while the login's data is
          processing), as the service's error reference says the code is reproduced; 3 seconds
          by default, 0 turns it off.
        - ``max_wrong_answers``: the wrong challenge answer that reaches this count (3 by
          default, at least 1) ends the session with 401 ``INVALID_SECURITY_RESPONSE_NO_RETRY``.
        - ``admin``: serve the admin API under ``/_sandbox/`` (the request log, faults, reset, for
          a sandbox in another process), guarded by :attr:`admin_token`; off by default.
        - ``request_log_bytes``: about how many bytes :attr:`requests` keeps, 16 MiB by default
          (0 or more); past it the oldest entries are dropped first, and
          :attr:`requests_dropped` counts them. A body whose masked text is longer than 64 KiB
          is kept as its size and its first 64 KiB (see The request log in docs/sandbox.md).
        - ``as_of``: the sandbox's "today", a ``datetime.date`` (a ``datetime`` counts as its
          day) or ``"YYYY-MM-DD"``, from 2026-11-20 (the default) to 2036-11-20: every login's
          data ends on it, with a year of history before it, and its first ``LastRefresh`` is that
          morning. The same seed and ``as_of`` give the same data. :meth:`advance` moves it on
          (see The clock in docs/sandbox.md).
        - ``replay``: the path of a cassette (docs/cassettes.md): the sandbox is then a replay
          server, for any client that can change its base URL. Every request, at any path, is
          matched as an in-process replay matches it and answered with the next unplayed
          recorded answer, in recorded order, without waiting (a recorded ``Retry-After`` is
          sent as it was). A request the cassette has no answer for gets a 400 in the service's
          error shape, ``FlinksCode`` ``CASSETTE_UNMATCHED`` (its ``Message`` names the closest
          recorded request and how the two differ) or ``CASSETTE_RUN_OUT`` (every recorded answer
          to it was played), with the text an in-process replay raises. No key is checked and any
          customer id matches; :meth:`client` sends its keys all the same. The options of the
          imitation (``pending_polls`` to ``max_wrong_answers``, ``faults``, ``logins``, ``seed``,
          ``as_of``, ``admin``) do nothing in a replay: one given is a :class:`ConfigError` naming
          ``replay`` and it. A missing or broken cassette is a :class:`CassetteError`.
          :meth:`reset` plays it again from its start; :meth:`inject` and :meth:`advance` raise
          ``ValueError``. See Replay for any client in docs/cassettes.md.
        - ``record`` and ``upstream``: the sandbox records instead, for any client: every
          request is forwarded, as it came, to ``upstream`` (a server's root, as a client's
          ``base_url``), and the traffic recorded into a new cassette at ``record`` through the
          redactor of an in-process recording, the file written again after each answer (and
          never with a secret in it: the client then gets a 400 ``CASSETTE_ERROR`` instead of
          the answer). An ``upstream`` that is neither loopback nor the public test instance
          needs ``allow_live_record=True``: a live Authorize can count against a bank's lockout.
          The options of the imitation are refused as with ``replay``, and so is giving
          ``replay`` too. See Recording any client in docs/cassettes.md.
        """

    @property
    def replay(self) -> str | None:
        """The path of the cassette this sandbox replays (``replay=``), None for the imitation."""

    @property
    def record(self) -> str | None:
        """The path of the cassette this sandbox records into (``record=``), None otherwise."""

    def play_count(self) -> tuple[int, int] | None:
        """How many of the replayed cassette's interactions were played, and how many it holds:
        equal when the client under test played every one. ``(0, 0)`` for a recording, None for
        the imitation."""

    @property
    def as_of(self) -> datetime.date:
        """The sandbox's "today": ``as_of`` at start, moved on by :meth:`advance`, back to
        ``as_of`` by :meth:`reset`."""

    def advance(self, days: int = 1) -> datetime.date:
        """Moves the clock ``days`` days on (a whole number, 1 or more) and returns the new
        :attr:`as_of`: the nights in between are played. New transactions post for every
        account (some dated up to 3 days back, as banks post late), balances follow them,
        prices, positions and cash of the investment accounts move, and ``LastRefresh`` is at
        least the new day's morning. A transaction shown once keeps its ``Id`` and stays; the
        data is the same as a sandbox started at the new ``as_of``. ``RefreshDelta`` naming
        the last transaction held returns exactly those posted since (see The clock in
        docs/sandbox.md). A ``days`` that breaks the rule is a :class:`ConfigError` naming
        ``days``, and the clock stays."""

    @property
    def url(self) -> str:
        """The base URL, e.g. ``http://127.0.0.1:51234``."""

    @property
    def widget_url(self) -> str:
        """The sandbox's imitation of the hosted connection widget, ``<url>/v2/``, e.g.
        ``http://127.0.0.1:51234/v2/``: add the widget's parameters (``demo=true``,
        ``redirectUrl=...``, ``authorizeToken=...`` when the sandbox asks for keys) and open it in a
        browser or an iframe (see The hosted widget in docs/sandbox.md)."""

    @property
    def login_ids(self) -> list[str]:
        """The LoginIds of the ``logins`` bulk logins saved at start (``bulk_00000``,
        ``bulk_00001``, ...), in order; the same as ``Sandbox.login_ids_for(logins, seed)``. Each
        read is a new list (changing it changes nothing else), copied from one made on the first
        read."""

    @staticmethod
    def login_ids_for(logins: int, seed: int = 0) -> list[str]:
        """The LoginIds that ``Sandbox(logins=logins, seed=seed)`` saves, computed without a
        sandbox: what a program needs to read a sandbox served by another process."""

    @property
    def customer_id(self) -> str:
        """The customer id the server accepts."""

    @property
    def secret_key(self) -> str | None:
        """The secret key ``GenerateAuthorizeToken`` asks for in ``flinks-auth-key``: the public
        test instance's unless ``secret_key=`` said otherwise; None when none is asked for. Give it
        to a client made by hand, or to another process (``BANKFEED_SECRET_KEY``)."""

    @property
    def api_key(self) -> str | None:
        """The API key the data operations and DeleteCard ask for in ``x-api-key``: the public
        test instance's unless ``api_key=`` said otherwise; None when none is asked for. Give it
        to a client made by hand, or to another process (``BANKFEED_API_KEY``)."""

    @property
    def users(self) -> list[SandboxUser]:
        """Every test user: ``username``, ``password``, ``description``, ``challenge_types`` (in
        the order they come) and ``answers`` (prompt, or chosen choice, to the answer list that
        passes)."""

    @staticmethod
    def attribute_catalogue() -> list[dict[str, str]]:
        """The attributes the sandbox computes: dicts with ``name`` and ``description``."""

    @staticmethod
    def attribute_packages() -> dict[str, list[str]]:
        """The use-case operations and the attribute names each returns."""

    @property
    def closed(self) -> bool:
        """Whether ``close()`` was called (or its ``with`` block ended)."""

    @property
    def request_count(self) -> int:
        """How many HTTP requests the sandbox has received."""

    @property
    def requests(self) -> list[RecordedRequest]:
        """The requests received (the most recent 100,000, within ``request_log_bytes``), oldest
        first: dicts with ``method``,
        ``path``, ``status`` (0 when no answer was sent), ``operation`` (the wire operation, e.g.
        ``"GetAccountsDetail"``; None for a path no operation serves), ``authorize`` (for
        Authorize: ``"credentials"``, ``"cached"``, ``"saved"`` or ``"challenge_answer"``),
        ``username``, ``login_id`` and ``request_id`` (what the request concerns; for Authorize,
        the ids its answer gave), ``body`` (the JSON body with every password, answer, key and
        token replaced by ``"***"``; None without one, and for one longer than 64 KiB),
        ``body_size`` (the body's size in bytes, for a request to an operation), ``body_prefix``
        (for a body longer than 64 KiB, the first 64 KiB of its masked JSON text) and ``time``
        (seconds since the epoch, as ``time.time()``)."""

    @property
    def requests_dropped(self) -> int:
        """How many entries :attr:`requests` dropped, the oldest first, to stay within its
        bounds (100,000 entries, ``request_log_bytes``) since the start or the last
        :meth:`reset`."""

    def inject(self, *faults: Mapping[str, Any]) -> None:
        """Adds faults after those already waiting; each a dict as for ``faults=``."""

    def clear_faults(self) -> None:
        """Removes every fault still waiting."""

    def reset(self) -> None:
        """Back to the state at start: no session, no token, only the ``logins`` saved at start,
        no fault waiting, an empty request log, a ``request_count`` of 0 and the clock at
        ``as_of``; a replayed cassette plays again from its start."""

    @property
    def admin_token(self) -> str | None:
        """The token of the admin API (``Authorization: Bearer <token>``), new at every start;
        None unless made with ``admin=True``."""

    @property
    def faults(self) -> list[dict[str, Any]]:
        """The faults still waiting, in order, as dicts with every key (``times``: what is left)."""

    def client(self, **options: Any) -> Client:
        """A :class:`Client` of this sandbox; ``options`` are Client's keyword arguments.

        It polls every 0.05 s unless given ``poll_interval`` (or every tenth of
        ``pending_seconds``, when that is longer): the sandbox answers the poll after a 202 at
        once, where the real service wants 10 s between polls, the default of ``Client``.
        """

    def async_client(self, **options: Any) -> AsyncClient:
        """An :class:`AsyncClient` of this sandbox; ``options`` are its keyword arguments, and
        ``poll_interval`` defaults as for :meth:`client`::

            async with sb.async_client() as client:
                inv = await client.investments(sb.login_ids[0])
        """

    def close(self) -> None:
        """Stops the server. Closing twice is harmless."""

    def __enter__(self) -> Sandbox: ...
    def __exit__(self, *_exc: object) -> None: ...

def cassette(
    path: str | os.PathLike[str],
    mode: Literal["none", "once", "new_episodes", "all", "rewrite"] = "none",
    *,
    allow_live_record: bool = False,
) -> Cassette:
    """A cassette for every client built inside its ``with`` block (docs/cassettes.md#in-python):
    each :class:`Client` and :class:`AsyncClient` made there without a ``cassette=`` of its own,
    :meth:`Sandbox.client` included, records into the file at ``path`` or replays from it, as
    ``mode`` says (see ``record_mode`` of :class:`Client`). The file is written when the block
    ends, whether or not it raised, and when one of its clients closes.

    The block is a context variable: the asyncio tasks started inside it see it, and so does a
    thread run in a copy of its context (``asyncio.to_thread``, ``contextvars.copy_context()``);
    a plain ``threading.Thread`` does not, as with every context variable. Its clients must all
    be of one ``base_url`` and ``customer_id``. A wrong ``path`` or ``mode`` raises
    ``TypeError`` or :class:`bankfeed.ConfigError` naming the argument::

        with bf.cassette("tests/cassettes/test_accounts.yaml", mode="once") as tape:
            client = sb.client()
            session = client.login("FlinksCapital", "Greatday", "Everyday", on_challenge=greatday)
            accounts = session.accounts_detail()
        print(tape.play_count())   # (0, 0) when it recorded; (played, recorded) when it replayed
    """

def check_cassette(path: str | os.PathLike[str]) -> list[str]:
    """Checks a committed cassette without the values of the session that recorded it, as
    ``bankfeed cassette check`` does (docs/cassettes.md#checking-committed-cassettes): the file
    parses, every request header but ``Content-Type`` holds the placeholder ``REDACTED``, so do
    the ``Password``, ``Username`` and ``Token`` fields of any body and every answer of
    ``SecurityResponses``, an answer has no header a recording does not write, and every sidecar
    file the cassette refers to (docs/cassettes.md#sidecar-files) is there with the SHA-256 its
    name says. Returns one
    line per finding, naming the file, the interaction and the field, never the value; an empty
    list when the file is clean. A file that cannot be read or is no cassette is a finding too::

        problems = bf.check_cassette("tests/cassettes/test_login.yaml")
        assert not problems, problems"""

@final
class Cassette:
    """A cassette that clients share: made by :func:`cassette`, used as a ``with`` block or
    given to a client as ``cassette=``. It opens its file for the first client built on it."""

    @property
    def path(self) -> str:
        """The file's path, as given."""

    @property
    def mode(self) -> Literal["none", "once", "new_episodes", "all", "rewrite"]:
        """The record mode."""

    def play_count(self) -> tuple[int, int]:
        """How many of the file's interactions were replayed, and how many it holds: equal when a
        test played every one. ``(0, 0)`` until a client has used it."""

    def _has_token_call(self) -> bool:
        """Whether the file records a ``GenerateAuthorizeToken`` call: its client had a secret key,
        so a client that replays it needs one too (the pytest plugin's cassettes tier). Reads the
        file as a replay does; raises :class:`bankfeed.CassetteError` when it cannot be read or is
        not a cassette."""

    def _oldest_recording(self) -> int | None:
        """When the file's oldest interaction was recorded (its earliest ``recorded_at``), in
        seconds since 1970 (UTC); None when it holds none that reads as a time (the pytest
        plugin's ``--bankfeed-cassette-max-age``). Reads the file as a replay does; raises
        :class:`bankfeed.CassetteError` when it cannot be read or is not a cassette."""

    def save(self) -> bool:
        """Writes what its clients recorded into the file, as the end of its block does; returns
        whether the file was written (a replay writes nothing). Raises
        :class:`bankfeed.CassetteError`, writing nothing, when the text still holds a secret."""

    def __enter__(self) -> Cassette:
        """Makes it the cassette of every client built inside the block."""

    def __exit__(self, kind: object, value: object, traceback: object) -> None:
        """Ends the block, then writes the file (see :meth:`save`)."""

def connect_url(
    instance: str = "toolbox",
    *,
    authorize_token: str | None = None,
    demo: bool | None = None,
    product_type: str | None = None,
    redirect_url: str | None = None,
    inner_redirect: bool | None = None,
    language: str | None = None,
    consent: bool | None = None,
    customer_name: str | None = None,
    account_selector: bool | None = None,
    account_selector_multiple: bool | None = None,
    account_selector_currency: str | None = None,
    show_all_accounts: bool | None = None,
    tag: str | None = None,
    institution: str | None = None,
    maximum_retry: int | None = None,
    institution_filter: bool | None = None,
    close_enable: bool | None = None,
    header_enable: bool | None = None,
    back_enable: bool | None = None,
    extra: Mapping[str, str | bool | int] | None = None,
) -> ConnectUrl:
    """The URL of the service's hosted widget ("Connect"), which a person opens (or a page
    embeds in an iframe) to connect a bank; see docs/connect.md for every option.

    ``instance`` is the service's instance name (``"toolbox"``, the shared test instance, is
    ``https://toolbox-iframe.private.fin.ag/v2/``) or the widget's own http(s) URL (a sandbox's
    ``sb.widget_url``). Every other argument is keyword-only and None leaves its parameter out
    (the widget's default): booleans are written ``true``/``false``, ``product_type`` is
    ``"banking"`` or ``"investment"`` in any case, ``language`` ``"en"`` or ``"fr"``,
    ``maximum_retry`` 1 to 100. ``extra`` passes the widget's other parameters as they are
    (``{"termsUrl": "https://..."}``); a key naming a typed parameter is refused, naming the
    argument to use. ``authorize_token`` is a token from GenerateAuthorizeToken
    (:meth:`Client.connect_url` mints one itself). A wrong type raises ``TypeError``, a wrong
    value :class:`bankfeed.ConfigError` naming the argument, what came and the rule::

        url = bf.connect_url(demo=True, product_type="investment",
                             redirect_url="https://example.com/connected")
        str(url)      # the token, if any, shows as authorizeToken=***
        url.reveal()  # the whole URL, to open or embed"""

@final
class ConnectUrl:
    """A URL of the hosted widget (:func:`connect_url`, :meth:`Client.connect_url`). ``str()``
    and ``repr()`` show it with ``authorizeToken=***``: the token opens a connection, so it never
    reaches a log, a notebook's output or an error message by accident."""

    def reveal(self) -> str:
        """The whole URL, token included: what to open or put in an iframe's ``src``."""

    @property
    def params(self) -> dict[str, str]:
        """The query parameters in the order they are written, as the widget reads them
        (``{"demo": "true", ...}``), the token as ``"***"``."""

    @property
    def base(self) -> str:
        """The widget's address without the query, e.g. ``https://toolbox-iframe.private.fin.ag/v2/``."""

@final
class Connection:
    """A bank connected through the hosted widget: what its redirect (or its ``REDIRECT``
    event) reports. ``repr()`` masks ``login_id``: the LoginId reads the login's data, so treat
    it as a secret (keep it server-side, never in a URL you log)::

        connection = client.connect(demo=True)
        session = client.authorize_cached(connection.login_id)"""

    @classmethod
    def from_redirect(cls, url_or_query: str) -> Connection:
        """Reads the query the widget appends to the redirect URL (``loginId``, ``institution``,
        ``accountId`` once per selected account or comma-separated, ``tag``), from the whole URL
        or its query alone: what your own web server's redirect handler receives::

            connection = bf.Connection.from_redirect(request.url)

        A missing LoginId, or one that is not a GUID, raises :class:`bankfeed.ConfigError`
        (``field="loginId"``), without showing it."""

    @classmethod
    def from_event(cls, event: Mapping[str, Any]) -> Connection:
        """Reads the widget's ``REDIRECT`` event (the ``data`` of its ``postMessage``:
        ``{"step": "REDIRECT", "url": ..., "loginId": ..., "institution": ..., "accountId": ...}``),
        its fields first, its ``url``'s query for what they lack. Another step raises
        :class:`bankfeed.ConfigError` (``field="event"``)."""

    @property
    def login_id(self) -> str:
        """The LoginId of the connected bank, to read its data with
        (:meth:`Client.authorize_cached`); shown as ``***`` in ``repr()``."""

    @property
    def institution(self) -> str | None:
        """The institution the widget names, e.g. ``"FlinksCapital"``."""

    @property
    def account_ids(self) -> list[str]:
        """The accounts the person selected (with ``account_selector=True``); empty otherwise."""

    @property
    def tag(self) -> str | None:
        """The ``tag`` given to the widget, echoed back."""

    @property
    def source(self) -> str:
        """How the widget reported it: ``"redirect"`` (the URL's query) or ``"event"``."""

@final
class _Catcher:
    """The loopback catcher of one ``client.connect(...)``, bound once its authorize token was
    minted (private: bankfeed._connect drives it)."""

    @property
    def widget(self) -> ConnectUrl:
        """The widget's URL, its ``redirectUrl`` the catcher's return path
        (``http://127.0.0.1:<port>/<random path>``)."""

    @property
    def launch_url(self) -> str:
        """What to open the browser at: ``http://127.0.0.1:<port>/<another random path>``, which
        sends the first GET on to :attr:`widget` and answers "already opened" after that. It holds
        neither the token nor the return path."""

    def wait(self, timeout: float) -> Any:
        """Waits for the connection, as the client runs its calls: the :class:`Connection` (a
        ``Client``), or a coroutine of it (an ``AsyncClient``). The catcher is closed once it ends."""

    def close(self) -> None:
        """Stops the catcher and closes its socket, if :meth:`wait` has not; returns once it is
        closed. Calling it again does nothing."""

def serve_sandbox(port: int, host: str = "127.0.0.1", login_ids_file: str | None = None, **options: Any) -> None:
    """Serves the sandbox on ``host:port`` until Ctrl-C (``python -m bankfeed sandbox``);
    ``options`` are :class:`Sandbox`'s keyword arguments. With ``login_ids_file``, the LoginIds of
    the ``logins`` saved at start are written there, one a line, before anything is printed.

    The first line printed (and flushed) is always
    ``bankfeed sandbox on <url> (customer id <id>)``: a harness reads the URL from it."""

def _panic_in_background(message: str) -> None:
    """A test hook: panics with ``message`` on the IO threads (an empty message does not panic);
    the panic arrives as a :class:`bankfeed.BankfeedError` carrying the message."""

def _check_login_ids(login_ids: object) -> None:
    """Raises the ``TypeError`` a bulk call raises for ``login_ids`` that are one ``str`` or a whole
    table (a pandas or polars DataFrame or LazyFrame, a pyarrow Table or RecordBatch) instead of
    a column of LoginIds; for ``bf.export``, ``bankfeed.dask.read`` and the dlt source, which read
    the LoginIds themselves."""

def _defaults() -> dict[str, dict[str, Any]]:
    """A test hook: the defaults of the options of :class:`Client` and :class:`Sandbox` as the
    core has them, by class name, which ``tests/python/test_defaults.py`` compares with their
    signatures."""

_TEST_INSTANCE_HOSTS: tuple[str, str]
"""The hosts of the service's public test instance, as the core knows them: its API's, then its
investments API's. Recordings against them are of public test data; the pytest plugin's live tier
is served by them."""

_TEST_INSTANCE_CUSTOMER_ID: str
"""The customer id of the service's public test instance, which the sandbox uses by default; the
pytest plugin's live and cassette tiers use it too."""

@final
class Table:
    """A table of results, built in Rust as columns.

    ``to_pandas()``, ``to_polars()`` and ``to_arrow()`` hand it over without copying the numbers
    (it implements ``__arrow_c_stream__``, so ``pyarrow.table(t)`` and ``polars.DataFrame(t)``
    take it directly); ``to_records()`` gives plain dicts::

        df = inv.transactions.to_pandas()
        rows = inv.positions.to_records()   # [{"account_id": ..., "symbol": ..., ...}, ...]
    """

    @property
    def columns(self) -> list[str]:
        """The column names, snake_case."""

    @property
    def column_names(self) -> list[str]:
        """The column names, snake_case, as pyarrow names them (the same list as :attr:`columns`)."""

    @property
    def num_rows(self) -> int:
        """The number of rows, as pyarrow names it (``len(t)``)."""

    @property
    def shape(self) -> tuple[int, int]:
        """``(rows, columns)``, as pandas and polars give it."""

    def __len__(self) -> int:
        """The number of rows."""

    def __getitem__(self, name: str, /) -> pyarrow.Array | list[Any]:
        """``t["symbol"]``: one column, as a ``pyarrow.Array`` when pyarrow is installed (no copy
        of the data), as a list otherwise (values as in :meth:`to_records`). KeyError names the
        columns."""

    def head(self, n: int = 5) -> Table:
        """The first ``n`` rows (all of them when there are fewer) as a Table; no value is copied."""

    def slice(self, offset: int = 0, length: int | None = None) -> Table:
        """Rows ``offset`` to ``offset + length`` (to the end when ``length`` is None) as a Table,
        as ``pyarrow.Table.slice`` gives them: past the end is empty, never an error; a negative
        ``offset`` or ``length`` raises ValueError naming it. No value is copied."""

    def to_records(self) -> list[dict[str, Any]]:
        """The rows as flat dicts: dates as ``datetime.date``, timestamps as aware ``datetime``,
        missing values as None."""

    def column(self, name: str) -> list[Any]:
        """One column as a list (values as in :meth:`to_records`); KeyError names the columns."""

    def to_arrow(self) -> pyarrow.Table:
        """A ``pyarrow.Table`` (needs ``pip install 'bankfeed[arrow]'``)."""

    def to_pandas(self) -> pandas.DataFrame:
        """A ``pandas.DataFrame``: dates as datetime64, numbers as float64 (needs
        ``bankfeed[pandas]``)."""

    def to_polars(self) -> polars.DataFrame:
        """A ``polars.DataFrame`` (needs ``pip install 'bankfeed[polars]'``)."""

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        """The Arrow PyCapsule stream interface. The requested schema is not honoured: the table
        always comes in its own types."""

    def _types(self) -> list[str]:
        """The Arrow type of each column, as pyarrow names it (``double``, ``string``,
        ``date32[day]``, ...), in the order of :attr:`columns` (for the notebook view)."""

    def _rows(self, start: int, stop: int) -> list[tuple[Any, ...]]:
        """Rows ``start`` to ``stop`` (clamped to the table) as tuples, values as in
        :meth:`to_records` (for the notebook view: its first and last rows only)."""

    def _repr_html_(self) -> str:
        """The notebook view: the shape, each column's name and Arrow type, the first and last
        rows (long values cut), as pandas and polars show a frame (docs/notebooks.md)."""

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickles as its columns (types, missing values and names kept): the copy has the same
        rows, ``t.to_arrow().equals(copy.to_arrow())``. A Table defines no ``==``: ``copy == t``
        is False, as for any two distinct objects."""

#: The type of the errors a :class:`Combined` holds: ``BankfeedError`` when it gathered a bulk call,
#: whatever exceptions were given otherwise.
_E_co = TypeVar("_E_co", bound=BaseException, default=BaseException, covariant=True)

@final
class Combined(Generic[_E_co]):
    """The results of a bulk call gathered by :func:`combine`: one :class:`Table` per kind of
    table, each with the LoginId of its rows as its first column ``login_id``, and the failures
    apart.

    Tables are reached by name as items or attributes (``combined["positions"]``,
    ``combined.positions``); ``tables`` has them all, ``errors`` the exception of each failed
    LoginId::

        combined = bf.combine(client.investments_many(login_ids))
        combined.positions.to_pandas()      # login_id, account_id, symbol, ...
        for login_id, error in combined.errors.items():
            print(login_id, error)

    When no result succeeded, the kind is None and there are no tables. The class is generic in
    the type of its errors: ``bf.combine`` of a bulk call gives a ``Combined[bf.BankfeedError]``,
    and a plain ``bf.Combined`` annotation means ``Combined[BaseException]``.
    """

    @property
    def kind(self) -> str | None:
        """The class of the combined results (``"Investments"``, ``"Accounts"``, ``"Attributes"``
        or ``"Statements"``); None when no result succeeded."""

    @property
    def tables(self) -> dict[str, Table]:
        """``{name: Table}``, in the order of the result class's own tables: Investments gives
        accounts, positions, transactions, securities; Accounts accounts, transactions;
        Attributes values, detail; Statements statements."""

    @property
    def errors(self) -> dict[str, _E_co]:
        """``{login_id: exception}`` for every LoginId whose call failed, a login that a close of
        the bulk call cut off included (as a :class:`ClientClosed`). A LoginId given twice runs
        twice: when one run failed and another succeeded, it is both in the tables and here
        (with its last exception), so deduplicate ``login_ids`` (``list(dict.fromkeys(ids))``)
        before a call whose errors you rerun."""

    def __class_getitem__(cls, item: Any, /) -> types.GenericAlias:
        """``bf.Combined[bf.BankfeedError]`` works at run time too, in annotations evaluated then."""

    def __getitem__(self, name: str, /) -> Table:
        """The table ``name``; KeyError names the tables there are."""

    def __getattr__(self, name: str) -> Table:
        """The table ``name``; AttributeError names the tables there are."""

    def _repr_html_(self) -> str:
        """The notebook view: each table's shape and first rows, the errors by class with their
        counts and first messages (LoginIds shortened, docs/notebooks.md)."""

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickles as its kind, its tables (each as its columns) and its exceptions, so gathered
        results cross process pools, Dask and Spark as the results themselves do."""

def combine(pairs: Iterable[tuple[str, Investments | Accounts | Attributes | Statements | _E_co]]) -> Combined[_E_co]:
    """Gathers the ``(login_id, result_or_exception)`` pairs of a bulk call (``investments_many``,
    ``accounts_detail_many``, ``attributes_many``, or a list of such pairs) into a
    :class:`Combined`.

    Each table of the results' class is concatenated over the logins, in the order of the pairs,
    with a first column ``login_id`` (a table's own ``login_id`` column, as Attributes' ``values``
    has, gives way to it); columns missing from some results are null there. Exceptions go to
    ``errors``. Results of two classes in one call raise TypeError.

    Each result's rows are copied as it comes and the result is not kept, so combining the bulk
    iterator itself (rather than a list of its pairs) needs about the memory of the combined
    tables only; :func:`acombine` does the same for an ``AsyncClient``'s bulk call. A bulk call
    closed while this reads it (``results.close()`` from a watchdog thread, or the client's
    ``close()``) ends it with what was fetched, and a :class:`ClientClosed` in ``errors`` for
    every login cut off::

        combined = bf.combine(client.investments_many(login_ids, concurrency=32))
        positions = combined.positions.to_pandas()
        failed = combined.errors            # {login_id: exception}
    """

@final
class _Gathering:
    """What :func:`bankfeed.acombine` adds each pair of an async bulk call to (private).

    Made ``like`` a finished gathering, each table starts as large as that one's grew: an export
    gathers batch after batch of about the same size. With ``provenance``, each table has
    ``request_id`` (the result's RequestId) and ``fetched_at`` (UTC, the ``fetched_at_us`` given
    with the result) after ``login_id``: the columns an export writes first."""

    def __new__(cls, like: _Gathering | None = None, /, *, provenance: bool = False) -> _Gathering: ...
    def add(
        self,
        pair: tuple[str, Investments | Accounts | Attributes | Statements | BaseException],
        /,
        fetched_at_us: int | None = None,
    ) -> int:
        """Adds one ``(login_id, result_or_exception)`` pair, as :func:`combine` does; the rows it
        added (0 for an exception). ``fetched_at_us``, microseconds since the epoch, is required
        with ``provenance``."""

    def finish(self) -> Combined[Any]:
        """The :class:`Combined` of the pairs added; the gathering is then spent."""

@final
class Investments:
    """The Investments payload as tables::

    inv = client.investments(login_id)
    inv.value, inv.cash
    inv.positions.to_pandas()      # account and security joined
    """

    @staticmethod
    def from_json(data: bytes | bytearray | str, money: Literal["float", "decimal"] = "float") -> Investments:
        """Reads an Investments payload from its JSON, e.g. a saved answer, its money columns
        as ``money`` says (as the client's option of that name)."""

    @property
    def value(self) -> float | None:
        """``Value``: the total value of the accounts."""

    @property
    def cash(self) -> float | None:
        """``Cash``: the total cash of the accounts."""

    @property
    def request_id(self) -> str | None:
        """The RequestId of the answer, when it had one."""

    @property
    def accounts(self) -> Table:
        """One row per account."""

    @property
    def positions(self) -> Table:
        """One row per position, with its account and its security joined."""

    @property
    def transactions(self) -> Table:
        """One row per transaction, with its account and its security joined."""

    @property
    def securities(self) -> Table:
        """One row per security."""

    @property
    def unknown_fields(self) -> dict[str, int]:
        """The fields of the payload that no table reads, as ``{path: count}``: ``path`` names the
        key where the payload has it (``"Accounts[].Positions[].Esg"``: ``[]`` is an item of a
        list, ``.`` a key of an object; the key as written, so a known name in another case counts
        too), ``count`` the objects that carry it. Empty when the tables read every field; a
        field here is in :attr:`raw` but in no table, so the service added something
        (docs/export.md#fields-the-service-adds). Counted on first access, then kept.

        Example::

            for path, count in result.unknown_fields.items():
                print(path, count, "rows")
        """

    @property
    def raw(self) -> dict[str, Any]:
        """The payload exactly as the server sent it (parsed on first access, then kept)."""

    def _repr_html_(self) -> str:
        """The notebook view: its value, cash and RequestId, value by account and the largest positions as
        small bar charts, then each table, short (docs/notebooks.md)."""

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickles as the payload's bytes; the copy is read again with :meth:`from_json` and has
        equal tables."""

@final
class Attributes:
    """Attributes as tables::

    attrs = client.attributes(login_id, package="income")
    attrs.values.to_pandas()   # group, login_id, attribute, value (null for NONE_DETECTED), raw_value
    attrs["count_nsf"]         # the value of an attribute (first group that has it)
    """

    @staticmethod
    def from_json(data: bytes | bytearray | str, money: Literal["float", "decimal"] = "float") -> Attributes:
        """Reads an attributes payload from its JSON, the money columns of :attr:`detail` as
        ``money`` says (as the client's option of that name)."""

    @property
    def values(self) -> Table:
        """One row per group and attribute; ``value`` is a float whatever the money type (the
        values are counts, ratios and amounts alike), ``raw_value`` the text as sent."""

    @property
    def detail(self) -> Table:
        """One row per transaction behind an attribute (when ``detail=`` asked for it); ``debit``
        and ``credit`` are money: float64, or ``decimal128(18, 4)`` with ``money="decimal"``
        (docs/tables.md#money)."""

    @property
    def groups(self) -> list[str]:
        """The group names, as the server sent them."""

    @property
    def request_id(self) -> str | None:
        """The RequestId of the answer, when it had one."""

    def to_dict(self) -> dict[str, dict[str, Any]]:
        """``{group: {attribute: value}}`` with values as sent (numbers, or strings such as
        ``NONE_DETECTED``)."""

    def __getitem__(self, name: str, /) -> Any:
        """The value of ``name`` as sent, from the first group that has it; KeyError if none."""

    @property
    def unknown_fields(self) -> dict[str, int]:
        """Always empty: every key of an attributes payload is a group or an attribute, named by
        the request, and each one is a row of :attr:`values` (docs/export.md#fields-the-service-adds)."""

    @property
    def raw(self) -> dict[str, Any]:
        """The payload exactly as the server sent it (parsed on first access, then kept)."""

    def _repr_html_(self) -> str:
        """The notebook view: its groups and RequestId, then each table, short (docs/notebooks.md)."""

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickles as the payload's bytes and its money type; the copy is read again with
        :meth:`from_json` and has equal tables."""

@final
class Accounts:
    """GetAccountsDetail or GetAccountsSummary as tables::

    detail = session.accounts_detail(with_transactions=True, days="Days365")
    detail.transactions.to_pandas()   # one row per transaction, its account joined
    """

    @staticmethod
    def from_json(data: bytes | bytearray | str, money: Literal["float", "decimal"] = "float") -> Accounts:
        """Reads a GetAccountsDetail or GetAccountsSummary payload from its JSON, its money
        columns as ``money`` says (as the client's option of that name)."""

    @property
    def accounts(self) -> Table:
        """One row per account."""

    @property
    def transactions(self) -> Table:
        """One row per transaction, with its account joined (empty for a summary)."""

    @property
    def request_id(self) -> str | None:
        """The RequestId of the answer, when it had one."""

    @property
    def eft_eligible_ratio(self) -> float | None:
        """Summary only: the share of EFT-eligible accounts (0..1), when sent at the top level."""

    @property
    def e_transfer_eligible_ratio(self) -> float | None:
        """Summary only: the share of e-transfer-eligible accounts (0..1), when sent at the top
        level."""

    @property
    def unknown_fields(self) -> dict[str, int]:
        """The fields of the payload that no table reads, as ``{path: count}``, counted as
        :attr:`Investments.unknown_fields` counts them (``"Accounts[].Transactions[].Memo"``
        would be a field the service added to transactions; docs/export.md#fields-the-service-adds).
        Empty when the tables read every field."""

    @property
    def raw(self) -> dict[str, Any]:
        """The payload exactly as the server sent it (parsed on first access, then kept)."""

    def _repr_html_(self) -> str:
        """The notebook view: its counts, ratios and RequestId, each account's balance over time as a
        small line chart, then each table, short (docs/notebooks.md)."""

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickles as the payload's bytes; the copy is read again with :meth:`from_json` and has
        equal tables."""

@final
class Statements:
    """GetStatements: a table of statements, and the PDF files::

    for file in session.statements(number_of_statements="MostRecent").files:
        Path(f"{file['unique_id']}.pdf").write_bytes(file["content"])
    """

    @staticmethod
    def from_json(data: bytes | bytearray | str) -> Statements:
        """Reads a GetStatements payload from its JSON, e.g. a saved answer."""

    @property
    def statements(self) -> Table:
        """One row per statement: ``account_number``, ``unique_id``, ``file_type``."""

    @property
    def files(self) -> list[dict[str, Any]]:
        """Every statement as a dict with ``account_number``, ``unique_id``, ``file_type`` and the
        decoded ``content`` (bytes)."""

    @property
    def unknown_fields(self) -> dict[str, int]:
        """The fields of the payload that no table reads, as ``{path: count}``, counted as
        :attr:`Investments.unknown_fields` counts them
        (``"StatementsByAccount[].Statements[].Pages"`` would be a field the service added to a
        statement; docs/export.md#fields-the-service-adds). Empty when the table reads every
        field."""

    @property
    def raw(self) -> dict[str, Any]:
        """The payload exactly as the server sent it (parsed on first access, then kept)."""

    def _repr_html_(self) -> str:
        """The notebook view: how many statements per account and file type, then the table, short
        (docs/notebooks.md)."""

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickles as the payload's bytes; the copy is read again with :meth:`from_json` and has
        equal tables."""
