"""A person connecting a bank, for ``examples/connect_quickstart.py`` run by the tests: the
``BROWSER`` command ``webbrowser.open`` runs with the catcher's launch page (``python
widget_person.py URL``). It loads the page, which sends it on to the widget's URL, as a browser
does; then it does what the widget does once the person has signed in: saves a login of
``greatday_nomfa`` on the sandbox the widget's URL names (through its API, with the public test
instance's keys the sandbox asks for by default) and loads the redirect URL with the LoginId
appended."""

from __future__ import annotations

import sys
import urllib.request
from urllib.parse import parse_qs, urlencode, urlsplit

import bankfeed as bf
from bankfeed import _native


def main(launch_url: str) -> None:
    with urllib.request.urlopen(launch_url, timeout=10) as page:
        page.read()
        url = page.geturl()
    parts = urlsplit(url)
    redirect = parse_qs(parts.query)["redirectUrl"][0]
    keys = _native._defaults()["Sandbox"]
    client = bf.Client(
        f"{parts.scheme}://{parts.netloc}",
        keys["customer_id"],
        api_key=keys["api_key"],
        secret_key=keys["secret_key"],
    )
    session = client.authorize("FlinksCapital", "greatday_nomfa", "Everyday", save=True)
    assert isinstance(session, bf.Session) and session.login_id is not None
    query = urlencode({"loginId": session.login_id, "institution": "FlinksCapital"})
    with urllib.request.urlopen(f"{redirect}?{query}", timeout=10) as page:
        page.read()


if __name__ == "__main__":
    main(sys.argv[1])
