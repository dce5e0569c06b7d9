"""Connect a bank through the service's hosted widget, on the embedded sandbox (docs/connect.md).

- the widget's URL built by hand (``bf.connect_url``) and by a client that mints its token
  (``client.connect_url``), the token masked wherever the URL is shown;
- a web server's redirect handler reading the LoginId (``bf.Connection.from_redirect``) and a page
  forwarding the widget's event (``bf.Connection.from_event``);
- ``client.connect``: a loopback catcher waits for the widget's redirect. Here the person who
  would sign in to the bank is played by a thread that signs in through the sandbox's API and
  follows the redirect, as the widget's last page does;
- ``bf.ConnectTimeout`` when nobody finishes, and ``bf.ConnectWidget`` for a notebook.

Run it with ``python examples/connect.py``.
"""

from __future__ import annotations

import threading
import urllib.request
from urllib.parse import parse_qs, urlsplit

import bankfeed as bf


def sign_in_and_redirect(sb: bf.Sandbox, url: bf.ConnectUrl) -> None:
    """What the person does in the widget, played without a browser: sign in (the connection is
    saved, as the widget saves it), then land on the redirect URL with the LoginId."""
    session = sb.client().authorize("FlinksCapital", "greatday_nomfa", "Everyday", save=True)
    assert isinstance(session, bf.Session) and session.login_id is not None
    redirect = parse_qs(urlsplit(url.reveal()).query)["redirectUrl"][0]
    query = f"?loginId={session.login_id}&institution=FlinksCapital&accountId=chequing&tag=customer-42"
    with urllib.request.urlopen(redirect + query, timeout=10) as page:
        assert b"You can close this tab" in page.read()


def main() -> None:
    # A URL by hand: your server minted the token; it never shows.
    url = bf.connect_url(
        demo=True,
        product_type="investment",
        redirect_url="https://app.example.com/connected",
        language="fr",
        tag="customer-42",
        extra={"termsUrl": "https://app.example.com/terms"},
        authorize_token="token-from-generate-authorize-token",
    )
    print(url)
    assert "token-from-generate-authorize-token" not in f"{url} {url!r} {url.params}"
    assert "authorizeToken=token-from" in url.reveal()
    try:
        bf.connect_url(language="de")
    except bf.ConfigError as exc:
        print("refused:", exc)

    # Your web server's redirect handler, and a page that forwards the widget's event.
    login_id = "8b35f6c8-e7b6-41d3-98f8-08d68b7f8d31"
    connection = bf.Connection.from_redirect(
        f"https://app.example.com/connected?loginId={login_id}&institution=FlinksCapital&tag=customer-42"
    )
    print(connection)
    event = {"step": "REDIRECT", "loginId": login_id, "institution": "FlinksCapital", "accountId": ["a", "b"]}
    assert bf.Connection.from_event(event).account_ids == ["a", "b"]

    with bf.Sandbox() as sb:
        client = sb.client(poll_interval=0.05)
        print(client.connect_url(demo=True))  # a fresh token, masked

        # From a script: here on_url plays the person; without it, the browser opens.
        def person(url: bf.ConnectUrl) -> None:
            threading.Thread(target=sign_in_and_redirect, args=(sb, url), daemon=True).start()

        connection = client.connect(on_url=person, timeout=60, demo=True, tag="customer-42")
        print(connection)
        session = client.authorize_cached(connection.login_id)
        print("cached session opened:", isinstance(session, bf.Session))

        try:
            client.connect(on_url=lambda url: None, timeout=0.5)
        except bf.ConnectTimeout as exc:
            print(f"nobody connected within {exc.waited} s")

        # In a notebook (the notebook extra): the widget in a cell, the result in a later one.
        widget = bf.ConnectWidget(client, demo=True, on_connect=lambda connection: print(connection))
        print(widget, widget.result)
    print("connect: done")


if __name__ == "__main__":
    main()
