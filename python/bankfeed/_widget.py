"""``bf.ConnectWidget``: the hosted widget inside a notebook (docs/connect.md#in-a-notebook).

An anywidget: the front-end shows the widget's URL in an iframe and listens to its
``postMessage`` events; each event is synced to the kernel (``events``), and the ``REDIRECT`` one
(``redirect``) becomes :attr:`ConnectWidget.result`, a :class:`bankfeed.Connection`, and a call of
``on_connect``. Nothing here waits: the kernel handles a widget's messages only between cells, so
the cell that creates the widget returns at once and a later cell (or the callback) reads the
result.

The LoginId is kept out of what a saved notebook holds: the events keep it masked, and the
``REDIRECT`` event's own copy is cleared once the kernel has read it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping
from typing import Any

import anywidget
import traitlets

from bankfeed._native import AsyncClient, Client, Connection, ConnectUrl, connect_url

_log = logging.getLogger("bankfeed.connect")

#: Where the widget is told to redirect when the caller names no place: the iframe navigates
#: there only after its REDIRECT event, which has already replaced the iframe by then.
DEFAULT_REDIRECT = "http://localhost/bankfeed-connected"

_ESM = r"""
// The widget's events (docs/connect.md#what-the-widget-reports) reach the page with postMessage;
// only those of this widget's own iframe are kept.
const MASK = "***";

// The kernel reads a LoginId under a key "loginId" in any case, and from a URL's query parameter
// of that name (%-escapes decoded): every such key and parameter is masked, at any depth and in
// any string, so that no spelling the kernel reads stays in the events a saved notebook keeps.
function isLoginId(name) {
  return name.toLowerCase() === "loginid";
}

function decoded(name) {
  return name.replace(/\+/g, " ").replace(/%([0-9a-fA-F]{2})/g, (_, hex) => String.fromCharCode(parseInt(hex, 16)));
}

function maskedText(text) {
  return text.replace(/(^|[?&#])([^=&#?]*)=([^&#?]*)/g, (pair, lead, name) =>
    isLoginId(decoded(name)) ? lead + name + "=" + MASK : pair);
}

function masked(value) {
  if (typeof value === "string") return maskedText(value);
  if (Array.isArray(value)) return value.map(masked);
  if (value === null || typeof value !== "object") return value;
  const copy = {};
  for (const [key, inner] of Object.entries(value)) copy[key] = isLoginId(key) ? MASK : masked(inner);
  return copy;
}

function readable(data) {
  if (typeof data === "string") {
    try { data = JSON.parse(data); } catch (_) { return null; }
  }
  return data && typeof data === "object" && !Array.isArray(data) ? data : null;
}

function render({ model, el }) {
  const root = document.createElement("div");
  root.className = "bankfeed-connect";
  const status = document.createElement("p");
  status.className = "bankfeed-connect-status";
  status.id = "bankfeed-connect-status";
  status.textContent = "Connect your bank below.";
  const frame = document.createElement("iframe");
  frame.id = "bankfeed-connect-frame";
  frame.title = "Connect your bank";
  frame.src = model.get("url");
  frame.style.height = model.get("height");
  frame.style.width = "100%";
  frame.style.border = "1px solid #d0d7de";
  frame.style.borderRadius = "6px";
  root.append(status, frame);
  el.append(root);

  function onMessage(message) {
    if (message.source !== frame.contentWindow) return;
    const event = readable(message.data);
    if (event === null) return;
    model.set("events", [...model.get("events"), masked(event)]);
    if (event.step === "REDIRECT") {
      model.set("redirect", event);
      frame.remove();
      status.textContent = "Bank connected" + (event.institution ? " (" + event.institution + ")" : "") +
        ". You can read it in the next cell.";
      status.classList.add("bankfeed-connect-done");
    } else if (event.flinksCode) {
      status.textContent = "The widget reports " + event.flinksCode + ".";
    }
    model.save_changes();
  }
  window.addEventListener("message", onMessage);
  return () => window.removeEventListener("message", onMessage);
}

export default { render };
"""

_CSS = """
.bankfeed-connect { font-family: system-ui, sans-serif; max-width: 560px; }
.bankfeed-connect iframe { width: 100%; border: 1px solid #d0d7de; border-radius: 6px; }
.bankfeed-connect-status { margin: 0 0 0.5rem; color: #57606a; }
.bankfeed-connect-done { color: #1a7f37; font-weight: 600; }
"""


#: A ``name=value`` pair of a query (or of a fragment, or of a string that is only a query).
_PAIR = re.compile(r"(^|[?&#])([^=&#?]*)=([^&#?]*)")
_ESCAPE = re.compile(r"%([0-9a-fA-F]{2})")
_MASK = "***"


def _is_login_id(name: str) -> bool:
    return name.lower() == "loginid"


def _masked_text(text: str) -> str:
    def pair(found: re.Match[str]) -> str:
        lead, name = found.group(1), found.group(2)
        plain = _ESCAPE.sub(lambda escape: chr(int(escape.group(1), 16)), name.replace("+", " "))
        return f"{lead}{name}={_MASK}" if _is_login_id(plain) else found.group(0)

    return _PAIR.sub(pair, text)


def _masked(value: Any) -> Any:
    """``value`` (an event) with every LoginId the kernel could read in it masked, as the
    front-end masks it: a key ``loginId`` in any case, and a query parameter of that name
    (%-escapes decoded) in any string, at any depth."""
    if isinstance(value, str):
        return _masked_text(value)
    if isinstance(value, list):
        return [_masked(inner) for inner in value]
    if isinstance(value, dict):
        return {key: _MASK if _is_login_id(str(key)) else _masked(inner) for key, inner in value.items()}
    return value


def _url_of(client_or_url: Any, options: dict[str, Any]) -> ConnectUrl:
    """The widget's URL: minted by a client, given whole, or built for an instance or address."""
    options.setdefault("inner_redirect", True)
    options.setdefault("redirect_url", DEFAULT_REDIRECT)
    if isinstance(client_or_url, AsyncClient):
        raise TypeError(
            "ConnectWidget takes a bf.Client, not an AsyncClient (it cannot await in its constructor): "
            "pass the URL instead, ConnectWidget(await client.connect_url(inner_redirect=True, ...))"
        )
    if isinstance(client_or_url, Client):
        url: ConnectUrl = client_or_url.connect_url(**options)
        return url
    if isinstance(client_or_url, ConnectUrl):
        return client_or_url
    if isinstance(client_or_url, str):
        return connect_url(client_or_url, **options)
    raise TypeError(
        "client_or_url must be a bf.Client, a bf.ConnectUrl or an instance name or widget URL (str), "
        f"not {type(client_or_url).__name__}"
    )


def _widgets_output() -> Any:
    """An ipywidgets ``Output`` (anywidget brings ipywidgets)."""
    import ipywidgets

    return ipywidgets.Output()


class ConnectWidget(anywidget.AnyWidget):
    """The hosted widget in a notebook cell, reporting the connected bank to the kernel.

    ``client_or_url`` is a :class:`bankfeed.Client` (a token is minted for the URL, as
    :meth:`bankfeed.Client.connect_url` does), a :class:`bankfeed.ConnectUrl` used as it is, or an
    instance name or widget address (a sandbox's ``sb.widget_url``) given to
    :func:`bankfeed.connect_url`; the widget options are ``connect_url``'s. The widget redirects
    inside its frame (``inner_redirect=True``), never the notebook's page, unless told otherwise.

    The cell that creates it returns at once: read :attr:`result` in a later cell, or pass
    ``on_connect``, called with the :class:`bankfeed.Connection` when the widget reports it::

        widget = bf.ConnectWidget(client, demo=True, on_connect=lambda c: print("connected", c.institution))
        widget                                  # shows the bank's login in the cell, and the prints under it
        # a later cell, once connected:
        session = client.authorize_cached(widget.result.login_id)

    ``on_connect`` runs inside ``with widget.output:``, an ipywidgets ``Output`` shown under the
    widget, so what it prints shows in the cell that made the widget (a widget's callback runs
    outside any cell, and its prints would otherwise go to the kernel's log console).

    Needs the ``notebook`` extra (``pip install bankfeed[notebook]``: anywidget).
    """

    _esm = _ESM
    _css = _CSS

    #: The widget's whole URL, its token included: what the iframe opens.
    url = traitlets.Unicode("").tag(sync=True)
    #: The iframe's height (CSS).
    height = traitlets.Unicode("640px").tag(sync=True)
    #: Every event the widget posted, in order, as dicts (``{"step": ...}`` or
    #: ``{"flinksCode": ...}``); a LoginId among them shows as ``***``.
    events = traitlets.List(traitlets.Dict()).tag(sync=True)
    #: The ``REDIRECT`` event as the front-end received it; cleared once read into :attr:`result`.
    redirect = traitlets.Dict().tag(sync=True)

    def __init__(
        self,
        client_or_url: Client | ConnectUrl | str,
        *,
        on_connect: Callable[[Connection], object] | None = None,
        height: str = "640px",
        **options: Any,
    ) -> None:
        if on_connect is not None and not callable(on_connect):
            raise TypeError(f"on_connect must be a callable or None, not {type(on_connect).__name__}")
        self._connect_url = _url_of(client_or_url, dict(options))
        self._connection: Connection | None = None
        self._error: ValueError | None = None
        self._on_connect = on_connect
        super().__init__(url=self._connect_url.reveal(), height=height)
        #: Where ``on_connect`` prints: shown under the widget, in the cell that made it (a
        #: callback's output otherwise goes to the kernel's log, not to the cell).
        self.output = _widgets_output()
        self._shown: Any = None
        self.observe(self._on_redirect, names="redirect")
        self.observe(self._on_events, names="events")
        _log.info("connect: the widget's URL is %s", self._connect_url)

    @property
    def result(self) -> Connection | None:
        """The connected bank, once the widget has reported it; None until then."""
        return self._connection

    @property
    def error(self) -> ValueError | None:
        """Why the widget's ``REDIRECT`` event could not be read (a LoginId that is not a GUID:
        :class:`bankfeed.ConfigError`), or None."""
        return self._error

    @property
    def connect_url(self) -> ConnectUrl:
        """The URL the widget shows (its token masked when shown)."""
        return self._connect_url

    def _on_events(self, change: Mapping[str, Any]) -> None:
        # A front-end that sent a LoginId unmasked (an older copy of the script above, cached by
        # the page) has it masked here too: the kernel's state is what an export of the notebook's
        # widget state holds, and the masked list goes back to the front-end.
        safe = _masked(change["new"])
        if safe != change["new"]:
            self.events = safe

    def _on_redirect(self, change: Mapping[str, Any]) -> None:
        event = change["new"]
        if not event:
            return
        try:
            connection = Connection.from_event(event)
        except ValueError as error:
            # A handler of the front-end's message has no caller to raise to: kept for .error.
            self._error = error
            _log.warning("connect: the widget's REDIRECT event cannot be read: %s", error)
            return
        finally:
            # The LoginId leaves the synced state (a saved notebook keeps it) once read.
            self.redirect = {}
        self._connection = connection
        if self._on_connect is not None:
            with self.output:
                self._on_connect(connection)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        # The widget and its output, together: what the callback prints shows under the widget.
        if self._shown is None:
            import ipywidgets

            self._shown = ipywidgets.VBox([self, self.output])
        return self._shown._repr_mimebundle_(**kwargs)

    def __repr__(self) -> str:
        state = "connected" if self._connection is not None else "waiting"
        return f"ConnectWidget({str(self._connect_url)!r}, {state})"
