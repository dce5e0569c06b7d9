"""Testing your own code against the sandbox: what the request log says of each request
(``bf.RecordedRequest``), asserting that a nightly job reads cached data only and sends the
options it should, and a sandbox in another process steered through its admin API
(``bf.RemoteSandbox``), as a suite in another language or on a cluster would use it.
"""

from __future__ import annotations

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
print("testing: done")
