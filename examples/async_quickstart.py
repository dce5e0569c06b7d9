"""The README's async and bulk example, verbatim: the tests check that the two agree, run it and type-check it."""

import asyncio

import bankfeed as bf


async def main(sb: bf.Sandbox) -> None:
    # Client's options and methods, every call awaited; leaving the block closes the client.
    async with sb.async_client(poll_interval=0.05) as client:
        inv = await client.investments(sb.login_ids[0])    # cached authorize + Investments, 202 polled
        ten = await asyncio.gather(*(client.investments(login_id) for login_id in sb.login_ids[:10]))
        print(inv.value, len(ten))

        # Bulk: each login's whole flow runs in Rust, 32 at a time; a pair comes as each one ends,
        # and acombine gathers them into one table per kind, a login_id column first.
        combined = await bf.acombine(client.investments_many(sb.login_ids, progress=True))

    positions = combined.positions.to_pandas()     # every login's positions in one DataFrame
    print(len(positions), "positions;", len(combined.errors), "errors")


with bf.Sandbox(logins=100) as sb:                 # 100 saved logins, no MFA, each with data of its own
    asyncio.run(main(sb))                          # in a notebook: await main(sb)

    with sb.client(poll_interval=0.05) as client:  # the same bulk call, blocking; Ctrl-C stops every login
        failed = [login_id for login_id, result in client.investments_many(sb.login_ids, concurrency=16)
                  if isinstance(result, bf.BankfeedError)]   # a failure is a result: the others go on
    print(len(failed), "of", len(sb.login_ids), "logins failed")
