"""What a connection has been through shows in its values (docs/sandbox.md#lastrefresh-loginids-and-languages):
the summary echoes the login's ``tag``, ``last_refresh`` moves with each live refresh, a deleted
login connects again under a new LoginId, and ``language="fr"`` asks the prompts in French."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import bankfeed as bf

# Greatday's three questions in French, as docs/sandbox.md lists them, with their answers.
GREATDAY_FR = {
    "Dans quelle ville êtes-vous né?": "Montreal",
    "Quel est le meilleur pays au monde?": "Canada",
    "Quelle forme les gens préfèrent-ils?": "Triangle",
}


@pytest.fixture
def client() -> Iterator[bf.Client]:
    with bf.Sandbox(pending_polls=0) as sb:
        yield sb.client()


def test_the_summary_echoes_the_tag_of_the_login(client: bf.Client) -> None:
    session = client.login("FlinksCapital", "greatday_nomfa", "Everyday", tag="customer-42")
    summary = session.accounts_summary()
    assert summary.raw["Tag"] == "customer-42"
    assert [link["rel"] for link in summary.raw["Links"]] == ["AccountsDetail", "Statements"]


def test_last_refresh_moves_with_a_live_refresh_and_not_with_a_cached_read(client: bf.Client) -> None:
    first = client.login("FlinksCapital", "greatday_nomfa", "Everyday", save=True)
    assert first.login_id is not None and first.last_refresh is not None
    assert client.authorize_cached(first.login_id).last_refresh == first.last_refresh
    live = client.authorize_saved(first.login_id)
    assert isinstance(live, bf.Session) and live.last_refresh is not None
    assert live.last_refresh > first.last_refresh
    assert client.authorize_cached(first.login_id).last_refresh == live.last_refresh


def test_a_deleted_login_connects_again_under_a_new_login_id() -> None:
    # Deleted right after it connected: CARD_IN_USE is test_documented_failures.py's subject.
    with bf.Sandbox(card_in_use_seconds=0.0) as sb, sb.client() as client:
        first = client.login("FlinksCapital", "greatday_nomfa", "Everyday", save=True)
        assert first.login_id is not None
        client.delete_login(first.login_id)
        again = client.login("FlinksCapital", "greatday_nomfa", "Everyday", save=True)
        assert again.login_id is not None and again.login_id != first.login_id
        with pytest.raises(bf.InvalidLogin):
            client.authorize_cached(first.login_id)


def test_language_fr_asks_greatday_in_french_and_takes_the_documented_answers(client: bf.Client) -> None:
    asked: list[str] = []

    def in_french(step: bf.Challenge) -> dict[str, str]:
        asked.extend(step.prompts)
        return {prompt: GREATDAY_FR[prompt] for prompt in step.prompts}

    session = client.login("FlinksCapital", "Greatday", "Everyday", language="fr", on_challenge=in_french)
    assert session.login_id is not None
    assert len(asked) == 1 and asked[0] in GREATDAY_FR
