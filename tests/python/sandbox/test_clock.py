"""The sandbox's clock (docs/sandbox.md#the-clock): ``as_of`` fixes its "today", ``advance`` plays
the nights, and the data moves as a nightly job would meet it: new transactions post (some dated
a few days back), balances, prices and ``LastRefresh`` follow, nothing shown changes or vanishes,
and ``RefreshDelta`` and ``DateFrom`` answer from the clock. Read through the client's ``raw``
payloads, as an incremental reader would keep them."""

from __future__ import annotations

import datetime
import itertools
import json
import subprocess
import sys
import urllib.error
import urllib.request
from typing import Any

import pytest

import bankfeed as bf

#: The clock the tests start at: a few days past the first day, so late transactions can post.
START = "2026-11-26"


def detail(client: bf.Client, login_id: str, **options: Any) -> dict[str, Any]:
    """GetAccountsDetail of a cached session of ``login_id``, as the server sent it."""
    raw: dict[str, Any] = client.authorize_cached(login_id).accounts_detail(**options).raw
    return raw


def investments(client: bf.Client, login_id: str) -> dict[str, Any]:
    raw: dict[str, Any] = client.investments(login_id).raw
    return raw


def transactions(payload: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every transaction of the answer by its Id, with its account's Id."""
    return {
        transaction["Id"]: {**transaction, "AccountId": account["Id"]}
        for account in payload["Accounts"]
        for transaction in account["Transactions"]
    }


def last_held(payload: dict[str, Any]) -> dict[str, str]:
    """Per account, the last transaction posted: the first one listed."""
    return {
        account["Id"]: account["Transactions"][0]["Id"] for account in payload["Accounts"] if account["Transactions"]
    }


def test_as_of_fixes_the_data_and_a_moved_clock_is_a_sandbox_started_there() -> None:
    with bf.Sandbox(logins=3, seed=5, as_of=START) as first, bf.Sandbox(logins=3, seed=5, as_of=START) as second:
        assert first.as_of == datetime.date(2026, 11, 26)
        with first.client() as a, second.client() as b:
            for login_id in first.login_ids:
                assert (
                    detail(a, login_id, days="Days365")["Accounts"] == detail(b, login_id, days="Days365")["Accounts"]
                )
        assert first.advance(days=2) == datetime.date(2026, 11, 28)
        later = bf.Sandbox(logins=3, seed=5, as_of=datetime.date(2026, 11, 28))
        with later, first.client() as a, later.client() as c:
            for login_id in first.login_ids:
                moved, started = detail(a, login_id, days="Days365"), detail(c, login_id, days="Days365")
                assert moved["Accounts"] == started["Accounts"]
                assert investments(a, login_id)["Accounts"] == investments(c, login_id)["Accounts"]


def test_the_default_clock_is_the_first_day_and_reset_puts_it_back() -> None:
    with bf.Sandbox(logins=1) as sb:
        assert sb.as_of == datetime.date(2026, 11, 20)
        with sb.client() as client:
            newest = max(t["Date"] for t in transactions(detail(client, sb.login_ids[0])).values())
        assert newest <= "2026-11-20"
        sb.advance()
        assert sb.as_of == datetime.date(2026, 11, 21)
        sb.reset()
        assert sb.as_of == datetime.date(2026, 11, 20)


def test_nights_post_new_transactions_some_dated_back_and_keep_what_was_shown() -> None:
    with bf.Sandbox(logins=4, as_of=START) as sb, sb.client() as client:
        late = 0
        for login_id in sb.login_ids:
            before = transactions(detail(client, login_id, days="Days365"))
            sb_clock = sb.as_of
            for _ in range(3):
                sb.advance(days=1)
            after = transactions(detail(client, login_id, days="Days365"))
            sb.reset()
            assert sb.as_of == sb_clock
            new = {key: value for key, value in after.items() if key not in before}
            assert new, "three nights post something"
            # Nothing shown changes; only what left the year shown (now from 2025-11-30) is gone.
            assert set(before) - set(after) == {key for key, t in before.items() if t["Date"] < "2025-11-30"}
            for key, value in after.items():
                assert key not in before or value == before[key]
            # Dated on or before the new clock, and at most 3 days before the first night: some
            # of the old clock's last days had not all posted yet.
            assert all("2026-11-24" <= t["Date"] <= "2026-11-29" for t in new.values())
            late += sum(1 for t in new.values() if t["Date"] < "2026-11-28")
        assert late > 0, "some transactions post after their date"


def test_a_transaction_appears_on_a_later_night_dated_days_before_it() -> None:
    # Night by night: a transaction first seen on day D+1 may carry a date before D.
    with bf.Sandbox(logins=6, as_of=START) as sb, sb.client() as client:
        days_late = []
        seen = {login_id: set(transactions(detail(client, login_id, days="Days365"))) for login_id in sb.login_ids}
        for _ in range(4):
            today = sb.advance(days=1)
            for login_id in sb.login_ids:
                now = transactions(detail(client, login_id, days="Days365"))
                days_late += [
                    (today - datetime.date.fromisoformat(t["Date"])).days
                    for key, t in now.items()
                    if key not in seen[login_id]
                ]
                seen[login_id] |= set(now)
        assert max(days_late) >= 2, "some appear dated two or more days before the night they appear on"
        assert max(days_late) <= 3 and min(days_late) == 0


def test_refresh_delta_after_a_night_returns_exactly_the_new_transactions() -> None:
    with bf.Sandbox(logins=4, as_of=START) as sb, sb.client() as client:
        for login_id in sb.login_ids:
            yesterday = detail(client, login_id, days="Days365")
            sb.advance(days=2)
            today = detail(client, login_id, days="Days365")
            delta = detail(client, login_id, refresh_delta=last_held(yesterday))
            new = set(transactions(today)) - set(transactions(yesterday))
            assert set(transactions(delta)) == new
            # In the order they posted, the last first, as the full answer lists them.
            for account, full in zip(delta["Accounts"], today["Accounts"], strict=True):
                ids = [t["Id"] for t in account["Transactions"]]
                assert ids == [t["Id"] for t in full["Transactions"]][: len(ids)]
            sb.reset()


def test_balances_follow_the_new_transactions() -> None:
    with bf.Sandbox(logins=3, as_of=START) as sb, sb.client() as client:
        moved = 0
        for login_id in sb.login_ids:
            before = {a["Id"]: a for a in detail(client, login_id, days="Days365")["Accounts"]}
            sb.advance(days=5)
            for account in detail(client, login_id, days="Days365")["Accounts"]:
                listed = account["Transactions"]
                if not listed:
                    continue
                # The balance is the running balance after the last transaction posted.
                assert account["Balance"]["Current"] == listed[0]["Balance"]
                # Each running balance is the one before it plus the credit, less the debit.
                for newer, older in itertools.pairwise(listed):
                    change = (newer["Credit"] or 0) - (newer["Debit"] or 0)
                    assert newer["Balance"] == pytest.approx(older["Balance"] + change, abs=0.001)
                moved += account["Balance"]["Current"] != before[account["Id"]]["Balance"]["Current"]
            sb.reset()
        assert moved > 0


def test_investments_move_with_the_clock() -> None:
    with bf.Sandbox(logins=2, as_of=START) as sb, sb.client() as client:
        login_id = sb.login_ids[0]
        before = investments(client, login_id)
        sb.advance(days=30)
        after = investments(client, login_id)
        assert after["Value"] != before["Value"]
        prices_before = {s["Symbol"]: s["Price"] for s in before["Securities"]}
        assert {s["Symbol"]: s["Price"] for s in after["Securities"]} != prices_before
        assert {s["Date"][:10] for s in after["Securities"]} == {"2026-12-25"}
        # The trades of the year shown (now from 2025-12-26) are kept, and new ones came.
        trades_before = {t["Id"] for a in before["Accounts"] for t in a["Transactions"] if t["Date"] >= "2025-12-26"}
        trades_after = {t["Id"] for a in after["Accounts"] for t in a["Transactions"]}
        assert trades_before < trades_after


def test_last_refresh_follows_the_clock() -> None:
    with bf.Sandbox(logins=1, as_of=START) as sb, sb.client() as client:
        login_id = sb.login_ids[0]
        assert detail(client, login_id)["Login"]["LastRefresh"] == "2026-11-26T08:15:42.1234567"
        sb.advance(days=1)
        assert detail(client, login_id)["Login"]["LastRefresh"] == "2026-11-27T08:15:42.1234567"
        live = client.login_saved(login_id).accounts_detail().raw["Login"]["LastRefresh"]
        assert live > "2026-11-27T08:15:42.1234567" and live.startswith("2026-11-27T")


def test_date_from_filters_by_the_transactions_date() -> None:
    with bf.Sandbox(logins=3, as_of=START) as sb, sb.client() as client:
        sb.advance(days=4)
        for login_id in sb.login_ids:
            everything = transactions(detail(client, login_id, days="Days365"))
            recent = transactions(detail(client, login_id, date_from="2026-11-28"))
            assert set(recent) == {key for key, t in everything.items() if t["Date"] >= "2026-11-28"}
            window = transactions(detail(client, login_id, date_from="2026-11-10", date_to="2026-11-27"))
            assert set(window) == {key for key, t in everything.items() if "2026-11-10" <= t["Date"] <= "2026-11-27"}
            # Days90 counts back from the clock, 2026-11-30.
            default = transactions(detail(client, login_id))
            assert set(default) == {key for key, t in everything.items() if t["Date"] >= "2026-09-02"}


def test_attributes_count_from_the_clock() -> None:
    with bf.Sandbox(logins=1, as_of=START) as sb, sb.client() as client:
        login_id = sb.login_ids[0]
        today = sb.advance(days=10)
        year = detail(client, login_id, days="Days365")
        values = client.attributes(login_id, package="user_analysis").raw["Card"]
        dates = [datetime.date.fromisoformat(t["Date"]) for t in transactions(year).values()]
        assert values["count_transactions"] == len(dates)
        assert values["account_age_days"] == (today - min(dates)).days
        current = sum(account["Balance"]["Current"] for account in year["Accounts"])
        assert values["balance_current"] == pytest.approx(current, abs=0.005)


@pytest.mark.parametrize(
    ("value", "rule"),
    [
        ("2026-11-19", 'must be a date from 2026-11-20 to 2036-11-20, got "2026-11-19"'),
        ("2036-11-21", 'must be a date from 2026-11-20 to 2036-11-20, got "2036-11-21"'),
        ("tomorrow", 'must be a date written YYYY-MM-DD, got "tomorrow"'),
        ("2026-02-30", 'must be a date written YYYY-MM-DD, got "2026-02-30"'),
    ],
)
def test_a_bad_as_of_is_refused_naming_it(value: str, rule: str) -> None:
    with pytest.raises(bf.ConfigError) as caught:
        bf.Sandbox(as_of=value)
    assert caught.value.field == "as_of" and caught.value.rule == rule


def test_an_as_of_of_the_wrong_type_says_what_it_takes() -> None:
    with pytest.raises(TypeError, match=r"^as_of must be a datetime.date, a str written YYYY-MM-DD, or None, not int$"):
        bf.Sandbox(as_of=20261126)  # type: ignore[arg-type]


def test_a_bad_advance_is_refused_naming_days_and_the_clock_stays() -> None:
    with bf.Sandbox(as_of=START) as sb:
        for days in (0, -3):
            with pytest.raises(bf.ConfigError) as caught:
                sb.advance(days=days)
            assert caught.value.field == "days"
        for wrong in (1.5, "1", True):
            with pytest.raises(TypeError, match=r"^days must be"):
                sb.advance(days=wrong)  # type: ignore[arg-type]
        with pytest.raises(bf.ConfigError) as caught:
            sb.advance(days=4000)
        assert caught.value.field == "days" and "2036-11-20" in caught.value.rule
        assert sb.as_of == datetime.date(2026, 11, 26)


def admin_clock(sb: bf.Sandbox, body: bytes | None, token: str | None) -> tuple[int, Any]:
    method = "GET" if body is None else "POST"
    request = urllib.request.Request(f"{sb.url}/_sandbox/clock", data=body, method=method)
    if body is not None:
        request.add_header("Content-Type", "application/json")
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_the_admin_api_reads_and_moves_the_clock_behind_its_token() -> None:
    with bf.Sandbox(admin=True, as_of=START) as sb:
        token = sb.admin_token
        assert admin_clock(sb, None, token) == (200, {"as_of": START})
        for wrong in (None, "nope"):
            assert admin_clock(sb, b'{"days": 1}', wrong)[0] == 401
        assert sb.as_of == datetime.date(2026, 11, 26), "a refused call moves nothing"
        assert admin_clock(sb, b'{"days": 2}', token) == (200, {"as_of": "2026-11-28"})
        assert sb.as_of == datetime.date(2026, 11, 28)
        for body, said in [
            (b'{"days": 0}', "days must be a whole number of days, 1 or more, got 0"),
            (b'{"days": "1"}', 'days must be a whole number of days, 1 or more, got "1"'),
            (b"{}", "days"),
            (b"not json", "days"),
        ]:
            status, answer = admin_clock(sb, body, token)
            assert status == 400 and answer["FlinksCode"] == "INVALID_REQUEST" and said in answer["Message"]
        assert sb.as_of == datetime.date(2026, 11, 28)


def test_remote_sandbox_advances_a_sandbox_started_with_as_of() -> None:
    with bf.RemoteSandbox.start("--as-of", START, "--logins", "1") as remote:
        assert remote.as_of == datetime.date(2026, 11, 26)
        with remote.client() as client:
            login_id = bf.Sandbox.login_ids_for(1)[0]
            yesterday = detail(client, login_id, days="Days365")
            assert remote.advance(days=2) == datetime.date(2026, 11, 28)
            assert remote.as_of == datetime.date(2026, 11, 28)
            delta = detail(client, login_id, refresh_delta=last_held(yesterday))
            assert delta["Login"]["LastRefresh"].startswith("2026-11-28T")
            assert set(transactions(delta)) == set(transactions(detail(client, login_id, days="Days365"))) - set(
                transactions(yesterday)
            )
        with pytest.raises(bf.ConfigError) as caught:
            remote.advance(days=0)
        assert caught.value.field == "days"
        remote.reset()
        assert remote.as_of == datetime.date(2026, 11, 26)


def test_the_command_refuses_a_bad_as_of_naming_the_flag() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bankfeed", "sandbox", "--port", "0", "--as-of", "2026-11-19"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert 'error: --as-of: must be a date from 2026-11-20 to 2036-11-20, got "2026-11-19"' in done.stderr
