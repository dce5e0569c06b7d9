"""The pytest plugin's cassettes (docs/cassettes.md#in-pytest): where a test's cassette is, the
``bankfeed_cassette`` fixture that opens it for the test, and the checks made of it (its age before
the test, the interactions it left unplayed after).

The entry point, ``bankfeed.pytest_plugin``, declares the options and hooks and calls in here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Literal

import pytest

import bankfeed as bf

#: The record modes, as ``bf.cassette`` names them (docs/cassettes.md#modes).
RecordMode = Literal["none", "once", "new_episodes", "all", "rewrite"]
RECORD_MODES: tuple[RecordMode, ...] = ("none", "once", "new_episodes", "all", "rewrite")
#: The test tiers (docs/cassettes.md#one-suite-three-tiers).
Target = Literal["sandbox", "cassettes", "live"]
TARGETS: tuple[Target, ...] = ("sandbox", "cassettes", "live")
#: What ``--bankfeed-old-cassettes`` does with a cassette older than the age allowed.
OLD_CASSETTE_ACTIONS = ("warn", "fail")

#: The marker as a test writes it, which the plugin's messages name.
MARKER = "@pytest.mark.bankfeed_cassette"
#: Where the cassettes are, from the rootdir, unless the ini option ``bankfeed_cassette_dir`` says.
DEFAULT_CASSETTE_DIR = "tests/cassettes"

#: The modes that replay what the file holds when it exists: those whose cassette has an age to
#: check, and (``none`` and ``once``, which only replay then) interactions that may go unplayed.
_READS_THE_FILE: tuple[RecordMode, ...] = ("none", "once", "new_episodes")
_REPLAYS_ONLY: tuple[RecordMode, ...] = ("none", "once")
#: What a file name made of a test's name keeps: the rest becomes ``_``.
_UNSAFE = re.compile(r"[^A-Za-z0-9._\-\[\]]")


class OldCassetteWarning(pytest.PytestWarning):
    """A test replays a cassette older than ``--bankfeed-cassette-max-age`` days: what the
    service answered then may no longer be what it answers (docs/cassettes.md#in-pytest)."""


@dataclass(frozen=True)
class Settings:
    """The plugin's cassette and tier options for this run, checked once at its start."""

    #: ``--bankfeed-target``: where ``bankfeed_client`` sends its requests.
    target: Target
    #: ``--bankfeed-record-mode``.
    record_mode: RecordMode
    #: ``--bankfeed-allow-live-record``: a cassette may record a host that is neither loopback
    #: nor the public test instance.
    allow_live_record: bool
    #: ``--bankfeed-fail-unplayed`` (ini ``bankfeed_fail_unplayed``).
    fail_unplayed: bool
    #: ``--bankfeed-cassette-max-age`` in days (ini ``bankfeed_cassette_max_age``), or None.
    max_age_days: float | None
    #: ``--bankfeed-old-cassettes`` (ini ``bankfeed_old_cassettes``): ``warn`` or ``fail``.
    old_cassettes: str
    #: The folder of the default cassettes (ini ``bankfeed_cassette_dir``), absolute.
    cassette_dir: Path

    @property
    def uses_cassettes(self) -> bool:
        """Whether a marked test gets its cassette: always, except at the live tier without a
        record mode, which sends every request to the service and records nothing."""
        return not (self.target == "live" and self.record_mode == "none")

    @property
    def mode(self) -> RecordMode:
        """The mode of a test's cassette: the cassettes tier only ever replays."""
        return "none" if self.target == "cassettes" else self.record_mode


@dataclass(frozen=True)
class InUse:
    """The cassette a test runs on, for the check made after it."""

    cassette: bf.Cassette
    #: Its path from the rootdir, as the plugin's messages show it.
    shown: str
    #: Whether the file existed before the test (a replay), or is being recorded.
    existed: bool


SETTINGS = pytest.StashKey[Settings]()
IN_USE = pytest.StashKey[InUse]()


def settings(config: pytest.Config) -> Settings:
    """The options read at the run's start (``pytest_configure``)."""
    return config.stash[SETTINGS]


def has_cassette(item: pytest.Item) -> bool:
    """Whether the test has a cassette: it is marked, or it asks for ``bankfeed_cassette``."""
    return item.get_closest_marker("bankfeed_cassette") is not None or "bankfeed_cassette" in getattr(
        item, "fixturenames", ()
    )


def cassette_path(item: pytest.Item, options: Settings) -> Path:
    """The test's cassette: the marker's path (from the rootdir, when relative), or
    ``{cassette_dir}/{module}/{test}.yaml``. ``{module}`` is the test file's path without ``.py``,
    from the folder that holds the cassette folder (``tests/``) when the file is under it, else from
    the rootdir; ``{test}`` is the test's name in its module, a class's ``::`` written ``.``."""
    marker = item.get_closest_marker("bankfeed_cassette")
    given = _marker_path(marker) if marker is not None else None
    root = item.config.rootpath
    if given is not None:
        return given if given.is_absolute() else root / given
    module = item.path.with_suffix("")
    for base in (options.cassette_dir.parent, root):
        if module.is_relative_to(base):
            module = module.relative_to(base)
            break
    else:
        module = Path(module.name)
    in_module = item.nodeid.split("::", 1)[-1].replace("::", ".")
    return options.cassette_dir / module / f"{_UNSAFE.sub('_', in_module)}.yaml"


def _marker_path(marker: pytest.Mark) -> Path | None:
    """The path a marker gives (``bankfeed_cassette("x.yaml")`` or ``path="x.yaml"``), or None. A
    mistake fails the test with one line naming the marker."""
    extra = sorted(set(marker.kwargs) - {"path"})
    if extra or len(marker.args) > 1 or (marker.args and "path" in marker.kwargs):
        pytest.fail(
            f"{MARKER} takes one path at most (positional or path=), got {len(marker.args)} positional"
            + (f" and {', '.join(extra)}" if extra else ""),
            pytrace=False,
        )
    given = marker.args[0] if marker.args else marker.kwargs.get("path")
    if given is None:
        return None
    if not isinstance(given, (str, Path)) or not str(given):
        pytest.fail(f"{MARKER}: the path must be a non-empty str or Path, got {given!r}", pytrace=False)
    return Path(given)


def shown(path: Path, config: pytest.Config) -> str:
    """``path`` from the rootdir when it is under it: how the messages name a cassette."""
    return path.relative_to(config.rootpath).as_posix() if path.is_relative_to(config.rootpath) else str(path)


def record_command(item: pytest.Item) -> str:
    """The command that records the test's cassette."""
    return f"pytest --bankfeed-record-mode=once {item.nodeid}"


def _check_age(item: pytest.Item, path: Path, tape: bf.Cassette, options: Settings) -> None:
    """Warns of (or fails, by ``--bankfeed-old-cassettes``) a cassette recorded longer ago than
    ``--bankfeed-cassette-max-age`` days."""
    if options.max_age_days is None:
        return
    # Asked of the parsed file: a body's text that looks like the field is not its age.
    seconds = tape._oldest_recording()
    if seconds is None:
        return
    oldest = datetime.fromtimestamp(seconds, timezone.utc)
    days = (datetime.now(timezone.utc) - oldest).total_seconds() / 86400
    if days <= options.max_age_days:
        return
    message = (
        f"cassette {shown(path, item.config)} holds an interaction recorded {days:.0f} days ago "
        f"({oldest.strftime('%Y-%m-%dT%H:%M:%SZ')}), more than --bankfeed-cassette-max-age={options.max_age_days:g}: "
        f"record it anew with --bankfeed-record-mode=rewrite"
    )
    if options.old_cassettes == "fail":
        pytest.fail(message, pytrace=False)
    item.warn(OldCassetteWarning(message))


def _check_secrets(path: Path, config: pytest.Config) -> None:
    """Fails a test whose committed cassette holds a secret where a placeholder belongs (a file
    edited by hand, or written by something else): the checks of ``bankfeed cassette check``
    (docs/cassettes.md#checking-committed-cassettes), made before the file is replayed. The
    findings name the file, the interaction and the field, never the value."""
    findings = bf.check_cassette(path)
    if findings:
        pytest.fail(
            f"cassette {shown(path, config)} is not as a recording writes it: " + "; ".join(findings),
            pytrace=False,
        )


@pytest.fixture
def bankfeed_cassette(request: pytest.FixtureRequest) -> Iterator[bf.Cassette]:
    """The test's cassette, a :class:`bankfeed.Cassette` open as a ``with bf.cassette(...)`` block
    for the whole test: every client the test builds records into it or replays from it, as
    ``--bankfeed-record-mode`` says (``none``, replay only, by default; always at
    ``--bankfeed-target=cassettes``). ``play_count()`` tells how many of its interactions were
    played. The file is ``@pytest.mark.bankfeed_cassette``'s path, or
    ``tests/cassettes/{module}/{test}.yaml``; it is written at the end of the test."""
    item = request.node
    options = settings(request.config)
    if not options.uses_cassettes:
        # pytest_runtest_setup skips such a test first; a fixture asking for this one at run time
        # (getfixturevalue) meets it here.
        pytest.skip(live_without_recording(options))
    path = cassette_path(item, options)
    existed = path.exists()
    mode = options.mode
    if mode == "none" and not existed:
        pytest.fail(
            f"cassette {shown(path, request.config)} does not exist, and record mode none only replays: "
            f"record it against the sandbox with `{record_command(item)}`",
            pytrace=False,
        )
    if existed and mode in _READS_THE_FILE:
        _check_secrets(path, request.config)
    tape = bf.cassette(path, mode, allow_live_record=options.allow_live_record)
    if existed and mode in _READS_THE_FILE:
        _check_age(item, path, tape, options)
    item.stash[IN_USE] = InUse(tape, shown(path, request.config), existed)
    with tape:
        yield tape


def live_without_recording(options: Settings) -> str:
    """Why a test that asks for its cassette is skipped at the live tier without a record mode."""
    return (
        f"--bankfeed-target={options.target}: asks for bankfeed_cassette, and a live run uses a cassette only "
        "to record one (--bankfeed-record-mode once, new_episodes, all or rewrite)"
    )


@pytest.fixture(autouse=True)
def _bankfeed_cassette_block(request: pytest.FixtureRequest) -> None:
    """Opens the cassette of a test marked ``@pytest.mark.bankfeed_cassette`` that does not ask
    for ``bankfeed_cassette`` itself: the clients it builds are on the cassette all the same."""
    if request.node.get_closest_marker("bankfeed_cassette") is None:
        return
    if settings(request.config).uses_cassettes:
        request.getfixturevalue("bankfeed_cassette")


def check_played(item: pytest.Item) -> None:
    """Fails a test that replayed its cassette without playing every interaction, under
    ``--bankfeed-fail-unplayed``: the code under test no longer sends some of what was recorded."""
    in_use = item.stash.get(IN_USE, None)
    if in_use is None or not settings(item.config).fail_unplayed:
        return
    if not in_use.existed or in_use.cassette.mode not in _REPLAYS_ONLY:
        return
    played, total = in_use.cassette.play_count()
    if played < total:
        pytest.fail(
            f"cassette {in_use.shown}: {total - played} of its {total} recorded interactions were not played "
            f"(--bankfeed-fail-unplayed): the test no longer sends them; record it anew with "
            f"--bankfeed-record-mode=rewrite",
            pytrace=False,
        )
