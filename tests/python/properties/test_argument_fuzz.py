"""Every public call, every argument, every kind of hostile value (docs/bad-input.md#arguments).

Each argument of each call is given, in turn, values that break what a binding assumes of its
input: text with a lone surrogate, sequences whose ``__len__`` or ``__length_hint__`` lies or that
never end, a mapping whose own code raises, huge and odd numbers, the wrong types. Whatever the
call does with them, it must raise an ``Exception`` (or succeed): never abort the process, never
raise a ``PanicException`` (a ``BaseException``, which ``except Exception`` does not catch), and
never put the secret text of a value into the error. The calls run in a child process, so that an
abort fails the test instead of killing pytest.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import bankfeed as bf

#: The suite's top folder, where the child imports ``lying`` from.
HERE = str(Path(__file__).resolve().parents[1])

SCRIPT = r'''
import itertools, json, sys
import bankfeed as bf

URL, CUSTOMER, LOGIN, HERE = sys.argv[1:5]
sys.path.insert(0, HERE)
from lying import Hinting, Lying
SECRET = "fuzz-Secret-7f3a"


class RaisingMapping:
    """A Mapping (registered below) whose every method raises."""
    def __getitem__(self, key):
        raise LookupError("mapping says no")
    def __iter__(self):
        raise LookupError("mapping says no")
    def __len__(self):
        raise LookupError("mapping says no")
    def keys(self):
        raise LookupError("mapping says no")
    def items(self):
        raise LookupError("mapping says no")


import collections.abc
collections.abc.Mapping.register(RaisingMapping)

deep = []
for _ in range(10_000):
    deep = [deep]

HOSTILE = {
    "surrogate": SECRET + "\udcff",
    "surrogate-list": [SECRET + "\udcff"],
    "lying-len": Lying(["x"], 2**62),
    "lying-len-10e13": Lying(["x"], 10**13),
    "huge-range": range(10**13),
    "lying-hint": Hinting(["x"]),
    "endless": itertools.repeat("x"),
    "raising-mapping": RaisingMapping(),
    "huge-int": 2**200,
    "negative": -(2**63),
    "nan": float("nan"),
    "bytes": b"\xff" * 3,
    "object": object(),
    "deep": deep,
    "none": None,
    "empty": "",
}

client = bf.Client(URL, CUSTOMER, poll_interval=0.01, poll_timeout=2, deadline=5, max_retries=0)
session = client.authorize("FlinksCapital", "greatday_nomfa", "Everyday", save=True)
challenge = client.authorize("FlinksCapital", "Greatday", "Everyday")
table = bf.Investments.from_json(json.dumps({"Accounts": [], "Securities": [], "Value": 0, "Cash": 0})).accounts

def drained(call):
    def run(**kwargs):
        return list(call(**kwargs))
    return run

CALLS = {
    "Client": (lambda **k: bf.Client(**k), {"base_url": URL, "customer_id": CUSTOMER},
               ["api_key", "secret_key", "investments_base_url", "timeout", "poll_interval", "poll_timeout",
                "max_retries", "max_challenge_rounds", "allow_insecure_http", "deadline", "max_body_bytes",
                "max_connections", "proxy"]),
    "authorize": (client.authorize, {"institution": "FlinksCapital", "username": "nobody", "password": "Everyday"},
                  ["save", "language", "tag", "schedule_refresh"]),
    "login": (client.login, {"institution": "FlinksCapital", "username": "nobody", "password": "Everyday"},
              ["on_challenge"]),
    "authorize_cached": (client.authorize_cached, {"login_id": LOGIN}, []),
    "authorize_saved": (client.authorize_saved, {"login_id": LOGIN}, ["save"]),
    "investments": (client.investments, {"login_id": LOGIN}, ["request_id"]),
    "attributes": (client.attributes, {"login_id": LOGIN, "attributes": {"Card": ["balance_min"]}},
                   ["filters", "detail", "account_filter", "request_id"]),
    "attributes-package": (client.attributes, {"login_id": LOGIN, "package": "income"}, []),
    "delete_login": (client.delete_login, {"login_id": LOGIN}, []),
    "set_scheduled_refresh": (client.set_scheduled_refresh, {"login_id": LOGIN, "active": True}, []),
    "mfa_questions": (client.mfa_questions, {"login_id": LOGIN}, []),
    "answer_mfa_questions": (client.answer_mfa_questions, {"login_id": LOGIN, "answers": {"Q?": "A"}}, []),
    "nightly_refresh_status": (client.nightly_refresh_status, {}, []),
    "institutions": (client.institutions, {}, []),
    "session": (client.session, {"request_id": session.request_id}, ["login_id"]),
    "investments_many": (drained(client.investments_many), {"login_ids": [LOGIN]},
                         ["concurrency", "progress", "request_ids"]),
    "attributes_many": (drained(client.attributes_many), {"login_ids": [LOGIN], "package": "income"},
                        ["concurrency", "request_ids"]),
    "accounts_detail_many": (drained(client.accounts_detail_many), {"login_ids": [LOGIN]},
                             ["days", "accounts_filter", "with_transactions", "number_of_banking_statements"]),
    "accounts_detail": (session.accounts_detail, {}, ["with_transactions", "days", "accounts_filter", "with_kyc",
                                                     "number_of_banking_statements"]),
    "accounts_summary": (session.accounts_summary, {}, ["with_balance", "with_account_identity"]),
    "statements": (session.statements, {}, ["number_of_statements", "accounts_filter"]),
    "session.attributes": (session.attributes, {"attributes": {"Card": ["balance_min"]}}, ["filters", "detail"]),
    "answer": (challenge.answer, {"answers": {challenge.prompts[0]: "Montreal"}}, []),
    "validate": (challenge.validate, {"answers": {challenge.prompts[0]: "Montreal"}}, []),
    "answers": (lambda **k: bf.answers(**k), {"mapping": {"Q?": "A"}}, []),
    "combine": (lambda **k: bf.combine(**k), {"pairs": []}, []),
    "from_json": (lambda **k: bf.Investments.from_json(**k), {"data": "{}"}, []),
    "column": (lambda **k: table.column(**k), {"name": "id"}, []),
    "login_ids_for": (lambda **k: bf.Sandbox.login_ids_for(**k), {"logins": 1}, ["seed"]),
    "Sandbox": (lambda **k: bf.Sandbox(**k).close(), {}, ["customer_id", "host", "port", "pending_polls",
                                                         "pending_seconds", "seed", "secret_key", "api_key",
                                                         "faults", "logins", "tier2"]),
}

calls = 0
for name, (call, base, optional) in CALLS.items():
    for parameter in [*base, *optional]:
        for kind, value in HOSTILE.items():
            if kind == "endless" and name == "Sandbox":
                continue  # faults= is converted whole, as JSON: an endless list is the caller's loop
            calls += 1
            try:
                call(**{**base, parameter: value})
            except Exception as error:
                texts = [str(error), repr(error), repr(getattr(error, "args", ()))]
                if any(SECRET in text for text in texts):
                    print(f"LEAK {name} {parameter}={kind}: {type(error).__name__}")
            except BaseException as error:
                print(f"NOT-AN-EXCEPTION {name} {parameter}={kind}: {type(error).__name__}: {error}")
print("calls", calls)
'''


def test_no_hostile_argument_aborts_panics_or_leaks(sandbox: bf.Sandbox) -> None:
    login_id = sandbox.login_ids_for(1)[0]
    # The child's clients take the sandbox's keys from the environment, as another process does.
    assert sandbox.secret_key and sandbox.api_key
    keys = {"BANKFEED_SECRET_KEY": sandbox.secret_key, "BANKFEED_API_KEY": sandbox.api_key}
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(SCRIPT), sandbox.url, sandbox.customer_id, login_id, HERE],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env={**os.environ, **keys},
    )
    assert done.returncode == 0, f"exit {done.returncode}: {done.stderr[-3000:]}"
    lines = done.stdout.splitlines()
    assert lines and lines[-1].startswith("calls "), done.stdout[-3000:]
    assert int(lines[-1].split()[1]) > 1000
    assert lines[:-1] == [], "\n".join(lines[:-1])
