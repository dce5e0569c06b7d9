"""The data axis: what a data call's result holds. Every table (investments, banking, statements,
attributes) is checked against ``.raw``, the payload as the service sent it, on generated data of
several sizes; attribute names against the sandbox's catalogue (``Sandbox.attribute_catalogue()``
and ``attribute_packages()``), their values being the Rust suite's to recompute
(``crates/bankfeed-sandbox/tests/it/sandbox_data/``). Payloads shaped like the real service's, 200s that are not the
operation's payload, and the ``login_ids`` columns a data job hands to a bulk call belong here too.
The shared fetched data comes from ``datahelpers`` and the ``sized`` fixture."""

from __future__ import annotations

import pytest

import datahelpers as dh
from bfhelpers import API_NAMES


@pytest.fixture(scope="module", params=[(size, name) for size in dh.SIZES for name in API_NAMES], ids="-".join)
def sized(request: pytest.FixtureRequest) -> dh.Sized:
    """(size name, data fetched once from a sandbox of that size) for each size (empty, one,
    natural, large) and each client: the data of ``bf.AsyncClient`` is fetched from the same
    sandbox, so every table test holds for both. Overrides the top-level ``sized``, which the
    other axes take from the blocking client only."""
    size, name = request.param
    return size, dh.fetched(*dh.SIZES[size], flavour=name)
