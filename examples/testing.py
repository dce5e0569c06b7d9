"""Testing your own code against the sandbox: what the request log says of each request
(``bf.RecordedRequest``), asserting that a nightly job reads cached data only and sends the
options it should, a sandbox in another process steered through its admin API
(``bf.RemoteSandbox``), as a suite in another language or on a cluster would use it, and a session
recorded into a cassette once, then replayed with no server at all (``bf.cassette``).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import bankfeed as bf


def nightly_job(client: bf.Client, login_ids: list[str], days: bf.Days = "Days365") -> int:
    """The code under test: a year of account detail of every login, read from the cache. ``days``
    is typed: a type checker refuses a value the service refuses ("Days30")."""
    transactions = 0
    for login_id in login_ids:
        detail = client.authorize_cached(login_id).accounts_detail(days=days)
        transactions += len(detail.transactions)
    return transactions


with bf.Sandbox(logins=3) as sb:
    with sb.client() as client:
        print("transactions:", nightly_job(client, sb.login_ids))
    log: list[bf.RecordedRequest] = sb.requests
    logins = [entry for entry in log if entry["operation"] == "Authorize"]
    assert all(entry["authorize"] == "cached" for entry in logins), "the nightly job never logs in live"
    posts = [entry for entry in log if entry["operation"] == "GetAccountsDetail" and entry["method"] == "POST"]
    assert all(entry["body"]["DaysOfTransactions"] == "Days365" for entry in posts)
    print(len(log), "requests;", len(logins), "cached logins of", sorted({str(entry["username"]) for entry in logins}))

    # A test user, typed: its username, password and the answers its challenges take.
    greatday: bf.SandboxUser = next(user for user in sb.users if user["username"] == "Greatday")
    with sb.client() as client:
        session = client.login(
            "FlinksCapital", greatday["username"], greatday["password"], on_challenge=bf.answers(greatday["answers"])
        )
    print("Greatday logged in:", session.login_id is not None)

# The same sandbox as a process of its own (python -m bankfeed sandbox --port 0 --admin), as a
# harness starts it for a suite in another language; its admin token is printed at start.
with bf.RemoteSandbox.start("--logins", "2") as remote:
    remote.inject({"kind": "status", "status": 503, "retry_after": "0", "operation": "Investments"})
    with remote.client() as client:
        investments = client.investments(remote.login_ids[0])  # the logins it saved at start
    statuses = [entry["status"] for entry in remote.requests if entry["operation"] == "Investments"]
    print("investments statuses:", statuses, "accounts:", len(investments.accounts))
    remote.reset()
    print("after reset:", remote.request_count, "requests")

# Record once, replay forever (docs/cassettes.md): every client built inside a bf.cassette block
# records into the file ("once": when it does not exist yet), which is written when the block ends,
# the password, answers, keys and LoginIds left out.
tape_path = Path(tempfile.mkdtemp()) / "cassettes" / "test_nightly_job.yaml"
with bf.Sandbox(logins=2) as sb:
    url, customer_id, saved, keys = sb.url, sb.customer_id, sb.login_ids, (sb.api_key, sb.secret_key)
    with bf.cassette(tape_path, mode="once"), sb.client() as client:
        recorded = nightly_job(client, saved)
# The sandbox is gone: the same job replays from the file ("none": never the network). The keys
# are those of the recording (with a secret key, each login starts with a token call), though no
# header counts in matching and the file holds none.
tape: bf.Cassette
with bf.cassette(tape_path, mode="none") as tape:
    client = bf.Client(url, customer_id, api_key=keys[0], secret_key=keys[1], poll_interval=0.01)
    assert nightly_job(client, saved) == recorded
print("replayed", tape.play_count(), "transactions:", recorded)
# The file is safe to commit: the checks of `bankfeed cassette check` find no secret in it (a CI
# step runs them over tests/cassettes, and the pytest plugin before each replay).
assert bf.check_cassette(tape_path) == [], bf.check_cassette(tape_path)
# A request that was never recorded is an error naming it, and the nearest recorded one.
with bf.cassette(tape_path):
    try:
        nightly_job(bf.Client(url, customer_id, api_key=keys[0], secret_key=keys[1]), saved, days="Days90")
    except bf.CassetteError as exc:
        print("unmatched:", exc.request, "| differs in:", exc.differences)
print("testing: done")
