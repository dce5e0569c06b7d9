"""``bankfeed export --on-challenge MODULE:NAME``: the challenge handler that a command line names by
where it is imported from, never the answers themselves (docs/export.md#logins-asked-a-question).

The value has the form of an entry point's object reference, as ``uvicorn``, ``gunicorn`` and
``celery`` take theirs: ``package.module:name``, the name dotted for an attribute of an object
(``myjob.answers:Handlers.nightly``). The module is imported as ``python -m`` imports it, with the
current directory first on the path, so that a job's own file is found beside it. Everything is
checked before anything is sent. A value that is not of that form is never echoed: it may be an
answer typed where it does not belong (docs/export.md#the-command says why values are not echoed).
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

from bankfeed._handlers import _is_async
from bankfeed.errors import _config_error

__all__ = ["resolve"]

#: The form, for messages.
_FORM = "MODULE:NAME, an importable module and the handler in it (e.g. myjob.answers:on_challenge)"


def _dotted(text: str) -> bool:
    """Whether ``text`` is a dotted Python name: identifiers joined by dots."""
    return bool(text) and all(part.isidentifier() for part in text.split("."))


def resolve(reference: str) -> Any:
    """The handler ``reference`` names: a callable, not an ``async def`` (the command runs a
    ``bf.Client``, which calls its handler as a plain function). A ``ConfigError`` of field
    ``on_challenge`` says what is wrong; the module's own exception is named by its class only,
    since its message may hold anything the module read."""
    module_name, colon, attribute = reference.strip().partition(":")
    if not colon or not _dotted(module_name) or not _dotted(attribute):
        raise _config_error("on_challenge", f"must be {_FORM}; the value given is not of that form")
    here = os.getcwd()
    if here not in sys.path and "" not in sys.path:
        sys.path.insert(0, here)
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        missing = exc.name or module_name
        if module_name == missing or module_name.startswith(missing + "."):
            raise _config_error(
                "on_challenge", f"names the module {module_name}, which is not found in {here} nor on the Python path"
            ) from None
        raise _config_error(
            "on_challenge", f"names the module {module_name}, which imports {missing}, which is not found"
        ) from None
    except Exception as exc:  # the module's own failure, whatever it is
        raise _config_error(
            "on_challenge",
            f"names the module {module_name}, whose import raised {type(exc).__name__} "
            f"(python -c 'import {module_name}' shows it)",
        ) from None
    found: Any = module
    for part in attribute.split("."):
        try:
            found = getattr(found, part)
        except Exception:  # AttributeError, or a property's own failure
            raise _config_error("on_challenge", f"names {attribute} in {module_name}, which has none") from None
    if not callable(found):
        raise _config_error(
            "on_challenge",
            f"names {module_name}:{attribute}, a {type(found).__name__}: it must be a handler, called with each "
            "challenge (a function, or bf.answers({...}))",
        )
    if _is_async(found):
        raise _config_error(
            "on_challenge",
            f"names {module_name}:{attribute}, an async def: the command calls its handler as a plain function "
            "(bf.Client's bulk calls do), so give a plain def",
        )
    return found
