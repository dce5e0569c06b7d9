"""The README's widget example, verbatim: a bank connected through the hosted widget.

``client.connect`` opens the sandbox's widget in your browser; sign in there as
``greatday_nomfa`` (password ``Everyday``). Run it with ``python examples/connect_quickstart.py``.
"""

import bankfeed as bf

with bf.Sandbox() as sb:
    client = sb.client(poll_interval=0.05)
    connection = client.connect(demo=True)  # in the browser tab it opens, sign in as greatday_nomfa / Everyday
    session = client.authorize_cached(connection.login_id)
    print(connection.institution, len(session.accounts_detail().accounts) > 0)
