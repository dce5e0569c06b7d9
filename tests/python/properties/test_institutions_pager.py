"""What a hostile pager of Institutions cannot make ``client.institutions()`` hold
(docs/protocol.md#operations-beyond-the-interface): a page longer than the ``take`` asked for, a
``Count`` past the 100,000 institutions the client reads, entries that are not institutions, pages
past ``max_body_bytes`` in all, or a ``Count`` never reached are each a ``ProtocolError``, after a
bounded number of requests; a list cut short is never returned.

A raw loopback server answers every page with what a test's pager makes of its ``skip`` and
``take``, and counts the requests.
"""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

import bankfeed as bf

CUSTOMER = "43387ca6-0391-4c82-857d-70d95f087ecb"
#: The take the client asks for, and the most institutions it reads.
TAKE = 1000
MOST = 100_000

#: A pager: the body of the page at ``skip`` of ``take``.
Pager = Callable[[int, int], object]


class PagerServer(http.server.ThreadingHTTPServer):
    """Answers every request with its pager's page; counts them."""

    daemon_threads = True

    def __init__(self, pager: Pager) -> None:
        super().__init__(("127.0.0.1", 0), PagerHandler)
        self.pager = pager
        self.requests = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class PagerHandler(http.server.BaseHTTPRequestHandler):
    server: PagerServer

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        query = parse_qs(urlsplit(self.path).query)
        self.server.requests += 1
        data = json.dumps(self.server.pager(int(query["skip"][0]), int(query["take"][0]))).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def serve() -> Iterator[Callable[[Pager], PagerServer]]:
    started: list[tuple[PagerServer, threading.Thread]] = []

    def start(pager: Pager) -> PagerServer:
        server = PagerServer(pager)
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        thread.start()
        started.append((server, thread))
        return server

    yield start
    for server, thread in started:
        server.shutdown()
        server.server_close()
        thread.join(5)


def institutions(server: PagerServer, **options: Any) -> list[bf.SupportedInstitution]:
    with bf.Client(server.url, CUSTOMER, max_retries=0, **options) as client:
        return client.institutions()


def test_an_honest_pager_is_read_to_its_count(serve: Callable[[Pager], PagerServer]) -> None:
    server = serve(lambda skip, take: {"Data": [{"Id": n} for n in range(skip, min(skip + take, 2500))], "Count": 2500})
    read = institutions(server)
    assert [institution.get("Id") for institution in read] == list(range(2500))
    assert server.requests == 3


def test_a_page_longer_than_the_take_is_a_protocol_error(serve: Callable[[Pager], PagerServer]) -> None:
    # The shape: far more than asked for, of the smallest entries there are.
    server = serve(lambda skip, take: {"Data": [{}] * (take * 50), "Count": MOST})
    with pytest.raises(bf.ProtocolError, match=r"a page holds 50000 institutions, more than the 1000 asked for"):
        institutions(server)
    assert server.requests == 1


def test_a_count_past_the_most_read_is_a_protocol_error_at_once(serve: Callable[[Pager], PagerServer]) -> None:
    server = serve(lambda skip, take: {"Data": [{}] * take, "Count": 10**12})
    with pytest.raises(bf.ProtocolError, match=r"not a number of institutions up to 100000"):
        institutions(server)
    assert server.requests == 1


def test_entries_that_are_not_institutions_are_a_protocol_error(serve: Callable[[Pager], PagerServer]) -> None:
    server = serve(lambda skip, take: {"Data": [0] * take, "Count": MOST})
    with pytest.raises(bf.ProtocolError, match=r"Data\[0\] is not an institution"):
        institutions(server)
    assert server.requests == 1


def test_pages_past_max_body_bytes_in_all_are_a_protocol_error(serve: Callable[[Pager], PagerServer]) -> None:
    # Each page fits max_body_bytes; the pages together do not.
    server = serve(lambda skip, take: {"Data": [{"Name": "x" * 90}] * take, "Count": MOST})
    with pytest.raises(bf.ProtocolError, match=r"its pages hold more than max_body_bytes \(250000 bytes\) in all"):
        institutions(server, max_body_bytes=250_000)
    assert server.requests == 3


def test_a_count_never_reached_ends_after_100_pages(serve: Callable[[Pager], PagerServer]) -> None:
    server = serve(lambda skip, take: {"Data": [{"Id": skip}], "Count": MOST})
    with pytest.raises(bf.ProtocolError, match=r"100 institutions came in 100 pages, short of its Count"):
        institutions(server)
    assert server.requests == 100


def test_the_most_institutions_are_still_read_whole(serve: Callable[[Pager], PagerServer]) -> None:
    server = serve(lambda skip, take: {"Data": [{}] * take, "Count": MOST})
    assert len(institutions(server)) == MOST
    assert server.requests == 100
