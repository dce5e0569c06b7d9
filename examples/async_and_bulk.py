"""Many logins at once: an ETL job with the bulk calls, and a notebook's flow with ``bf.AsyncClient``.

Both run against an embedded sandbox that saves many logins at start (``bf.Sandbox(logins=N)``);
its ``login_ids`` stand for the LoginIds a real job reads from its own database. A bulk call
(``investments_many``, ``accounts_detail_many``, ``attributes_many``) runs each login's whole flow
in Rust, a bounded number at a time, and yields ``(login_id, result_or_exception)`` as each one
finishes; ``bf.combine`` gathers the pairs into one table per kind, with a ``login_id`` column.

Run it with ``python examples/async_and_bulk.py``; it needs pandas (``pip install 'bankfeed[pandas]'``).
"""

from __future__ import annotations

import asyncio
import uuid

import bankfeed as bf

#: How many saved logins the sandbox starts with (it takes up to 1,000,000).
LOGINS = 300
INSTITUTION = "FlinksCapital"
PASSWORD = "Everyday"
GREATDAY = {
    "What city were you born in?": "Montreal",
    "What is the best country on earth?": "Canada",
    "What shape do people like most?": "Triangle",
}
#: Canned answers serve both clients: bf.answers() gives a bf.CannedAnswers.
CANNED: bf.CannedAnswers = bf.answers(GREATDAY)


def etl_job(sb: bf.Sandbox) -> None:
    """A nightly job: every login's investments, account detail and income attributes, as tables."""
    # A sandbox served by another process (python -m bankfeed sandbox --logins N) has the same
    # LoginIds for the same seed: a job there computes them, or reads --login-ids-file.
    login_ids = bf.Sandbox.login_ids_for(LOGINS)
    assert login_ids == sb.login_ids
    # A LoginId that was deleted, or never saved, fails on its own: the others go on.
    gone = str(uuid.uuid4())
    login_ids.append(gone)

    # Leaving the block closes the client: anything still running stops.
    with sb.client(poll_interval=0.01) as client:
        # combine() reads the bulk call to its end: 64 logins at a time, with a progress bar
        # (tqdm when it is installed, a line on stderr otherwise).
        investments = bf.combine(client.investments_many(login_ids, concurrency=64, progress=True))
        print(investments)
        positions = investments.positions.to_pandas()  # login_id, account_id, symbol, ...
        by_login = positions.groupby("login_id")["market_value"].sum()
        print(f"investments: {len(by_login)} logins, {len(positions)} positions, {by_login.sum():,.2f} in all")
        for login_id, error in investments.errors.items():
            print(f"  {login_id}: {type(error).__name__}")
        assert list(investments.errors) == [gone]

        # Account detail with a year of transactions, for some of the logins.
        detail = bf.combine(
            client.accounts_detail_many(sb.login_ids[:50], days="Days365", with_transactions=True, concurrency=16)
        )
        transactions = detail.transactions.to_pandas()
        print(f"transactions: {len(transactions)} over {transactions['login_id'].nunique()} logins")

        # Reading the pairs one by one: each result is there as soon as its login is done.
        income = client.attributes_many(sb.login_ids[:20], package="income")
        for login_id, result in income:
            if isinstance(result, bf.BankfeedError):
                print(f"  {login_id}: {result}")
            elif login_id == sb.login_ids[0]:
                print(f"income of the first login: {result['sum_employer_income']}")

        # Stopping early: leaving the with block (or close(), or a Ctrl-C) stops every login
        # still running. bf.BulkResults names what a bulk call returns, for annotations.
        first: bf.BulkResults[bf.Investments]
        with client.investments_many(sb.login_ids) as first:
            for login_id, _ in first:
                print(f"first to finish: {login_id in sb.login_ids}")
                break
        # A live login, its challenges answered from the canned answers.
        live = client.login(INSTITUTION, "Greatday", PASSWORD, on_challenge=CANNED)
        print(f"live login with canned answers: {live.request_id != ''}")
    print(f"etl: done (client closed: {client.closed})")


async def notebook(sb: bf.Sandbox) -> None:
    """What a notebook's cells do. In Jupyter, write each ``await`` in a cell as it is: the kernel's
    event loop runs it."""
    async with sb.async_client(poll_interval=0.01) as client:
        # A live login whose challenges an `async def` handler answers (a plain function works
        # too, such as bf.answers(...)); it runs on the event loop, so it may await a widget.
        async def ask(challenge: bf.AsyncChallenge) -> bf.Answers:
            await asyncio.sleep(0)
            return {prompt: GREATDAY[prompt] for prompt in challenge.prompts}

        handler: bf.AsyncChallengeHandler = ask
        session: bf.AsyncSession = await client.login(
            INSTITUTION, "Greatday", PASSWORD, save=True, on_challenge=handler
        )
        accounts = await session.accounts_summary()
        print(f"Greatday: {len(accounts.accounts)} accounts, LoginId saved: {session.login_id is not None}")

        # Step by step, a challenge shown per cell.
        step: bf.AsyncStep = await client.authorize(INSTITUTION, "Greatday", PASSWORD)
        while isinstance(step, bf.AsyncChallenge):
            print(f"asked: {step.prompts}")
            step = await step.answer({prompt: GREATDAY[prompt] for prompt in step.prompts})
        print(f"session {type(step).__name__}")

        # The canned answers the ETL job used, now for the async client.
        await client.login(INSTITUTION, "Greatday", PASSWORD, on_challenge=CANNED)

        # Without a handler, the challenge comes with the exception, ready to answer.
        try:
            await client.login(INSTITUTION, "Greatday", PASSWORD)
        except bf.ChallengeRequired as exc:
            if isinstance(exc.challenge, bf.AsyncChallenge):
                answered = await exc.challenge.answer({prompt: GREATDAY[prompt] for prompt in exc.prompts})
                print(f"answered from the exception: {type(answered).__name__}")

        # Several logins at once, each call a coroutine.
        some = await asyncio.gather(*(client.investments(login_id) for login_id in sb.login_ids[:20]))
        print(f"gathered: {sum(len(inv.positions) for inv in some)} positions of 20 logins")

        # A bulk call, as an async iterator (bf.AsyncBulkResults, for annotations), gathered by
        # bf.acombine as it comes. Combined is generic in its errors: a bulk call's are
        # bf.BankfeedError.
        bulk: bf.AsyncBulkResults[bf.Investments] = client.investments_many(sb.login_ids[:100], progress=True)
        combined: bf.Combined[bf.BankfeedError] = await bf.acombine(bulk)
        print(f"{combined.kind}: {list(combined.tables)}, {len(combined.errors)} errors")
        print(combined.positions.to_pandas().groupby("login_id").size().describe()[["count", "mean"]].to_dict())

    # A call that takes too long: cancelling its task stops the Rust work at once, polling included.
    # What stops it: asyncio.wait_for (as here) or asyncio.timeout around the await, task.cancel(),
    # the client's deadline= option (the call raises when it runs out) or client.close(). Jupyter's
    # "interrupt kernel" does not: ipykernel does not cancel an awaited cell (`await
    # asyncio.sleep(10)` goes on too), so bound a long call in the cell itself. (A blocking
    # bf.Client call does stop at the interrupt, as at Ctrl-C.)
    patient = sb.async_client(poll_interval=5)  # 5 s between polls
    try:
        await asyncio.wait_for(patient.investments(sb.login_ids[0]), timeout=0.2)
    except asyncio.TimeoutError:
        sent = sb.request_count
        await asyncio.sleep(0.3)
        print(f"cancelled; requests since: {sb.request_count - sent}")
    patient.close()
    print(f"notebook: done (client closed: {client.closed})")


def main() -> None:
    with bf.Sandbox(logins=LOGINS, pending_polls=2) as sb:
        etl_job(sb)
        asyncio.run(notebook(sb))
    print("async and bulk: done")


if __name__ == "__main__":
    main()
