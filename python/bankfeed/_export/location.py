"""How an export's output location is shown: in ``repr(ExportReport)``, its notebook view, every
``ConfigError`` about ``out`` and the command's messages and summary (docs/export.md#where-it-writes).

An fsspec URL may carry a user and a password (``s3://key:secret@bucket/path``) or a token in its
query (``?token=...``, a signed URL's ``?sig=...``). Those are for the filesystem, never for a
screen or a log: the location is shown as its protocol, host, port and path only. Every place
that shows a location calls :func:`shown`, so none can show more than another.
"""

from __future__ import annotations

from urllib.parse import unquote

__all__ = ["described", "hidden_parts", "scrubbed", "shown"]

#: What stands for a secret part of a location in a message that had to be cleaned of it.
_HIDDEN = "***"
#: The length from which such a part is replaced in a text; a shorter one would match too much.
_SHORTEST_REPLACED = 4


def shown(out: str) -> str:
    """``out`` as it may be shown: a local path as given; a URL without its user, password,
    query and fragment (``s3://key:secret@bucket/x?token=t`` is ``s3://bucket/x``). Each URL of a
    chained one (``simplecache::s3://...``) is shown so."""
    if "://" not in out:
        return out
    return "::".join(
        (f"{scheme}://{authority.rpartition('@')[2]}" if scheme is not None else "") + _cut_query(path)
        for scheme, authority, path in _pieces(out)
    )


def _pieces(out: str) -> list[tuple[str | None, str, str]]:
    """The URLs of ``out`` (more than one in an fsspec chain, ``simplecache::s3://...``), each as
    its scheme (None for a piece with none: a chain's ``simplecache``, or what an IPv6 host's
    ``::`` cut off), its authority and the rest. Read by hand rather than by ``urllib.parse``,
    which takes ``simplecache::s3`` for a scheme and would leave the rest, password included, as
    the path. The authority ends at the first ``/``, ``?`` or ``#``: an ``@`` after that
    (``memory://bucket/a@b``) is in the path."""
    pieces: list[tuple[str | None, str, str]] = []
    for piece in out.split("::"):
        scheme, found, rest = piece.partition("://")
        if not found:
            pieces.append((None, "", piece))
            continue
        end = _first(rest, "/?#")
        pieces.append((scheme, rest[:end], rest[end:]))
    return pieces


def _first(text: str, marks: str) -> int:
    """Where the first of ``marks`` is in ``text``; its length when none is."""
    return min((index for index in (text.find(mark) for mark in marks) if index >= 0), default=len(text))


def _cut_query(path: str) -> str:
    """``path`` without its query and fragment."""
    return path[: _first(path, "?#")]


def hidden_parts(out: str) -> list[str]:
    """The parts of ``out`` that :func:`shown` leaves out, as they may be secret: each URL's
    user and password (together and each alone), its query and fragment (whole, and each value),
    each also percent-decoded, longest first."""
    if "://" not in out:
        return []
    parts: set[str] = set()
    for _, authority, path in _pieces(out):
        userinfo, at, _ = authority.rpartition("@")
        if at and userinfo:
            parts.add(userinfo)
            parts.update(userinfo.split(":", 1))
        tail = path[len(_cut_query(path)) + 1 :]
        if tail:
            parts.add(tail)
            for piece in tail.replace("#", "&").split("&"):
                parts.add(piece.partition("=")[2] or piece)
    parts.update([unquote(part) for part in parts])
    return sorted((part for part in parts if part), key=len, reverse=True)


def described(error: BaseException, out: str) -> str:
    """What a message says of ``error``, a filesystem's failure about ``out``: the system's text
    of its error number (``No space left on device``), which names no path; else the error's own
    text without any part of ``out`` that :func:`shown` leaves out (a filesystem may quote the URL
    it was given). A part too short to take out of a text without garbling it (a one-letter
    password) leaves the error's class only, when it is in the text."""
    strerror = getattr(error, "strerror", None)
    if isinstance(strerror, str) and strerror:
        return strerror
    text = scrubbed(str(error), out)
    if not text or any(part in text for part in hidden_parts(out) if len(part) < _SHORTEST_REPLACED):
        return type(error).__name__
    return text


def scrubbed(text: str, out: str) -> str:
    """``text`` with ``out`` in it shown as :func:`shown` shows it, and every other appearance of
    a part that :func:`shown` leaves out (a filesystem's path, a decoded password) replaced by
    ``***`` (those of at least 4 characters: a shorter one would match too much)."""
    if "://" in out:
        text = text.replace(out, shown(out))
    for part in hidden_parts(out):
        if len(part) >= _SHORTEST_REPLACED:
            text = text.replace(part, _HIDDEN)
    return text
