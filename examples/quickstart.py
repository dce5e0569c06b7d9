"""The README's short example, verbatim: the tests check that the two agree, run it and type-check it."""

import bankfeed as bf

with bf.Sandbox(tier2=True) as sb:           # a real HTTP server on 127.0.0.1, a free port;
                                              # tier2: a Tier 2 customer (the custom attributes need it)
    client = sb.client(poll_interval=0.05)    # it sends sb.secret_key and sb.api_key, as bf.Client(...) would

    # Step by step: a live login returns a Session or a Challenge. Each challenge prints how it
    # is answered; bf.typed_answer reads what a person types (a choice's or an image's number,
    # "1 Text" for TextOrCall, Enter for the trusted device) into the wire form.
    step = client.authorize("FlinksCapital", "Greatday", "Everyday", save=True)
    while isinstance(step, bf.Challenge):
        answers: dict[str, list[str]] = {}
        for c in step.challenges:
            print(c)                                          # prompt, choices, the answer form
            answers.update(bf.typed_answer(c, input(c.prompt + " ")))
        step = step.answer(answers)
    session = step
    # In a notebook, a Challenge shows itself (images as a numbered grid), and bf.ChallengeForm(step)
    # is a form to click; in a terminal, on_challenge=bf.ask_in_terminal asks (docs/answering.md).

    # Or in one call, with a handler (here canned answers; answers are checked before sending).
    session = client.login("FlinksCapital", "Greatday", "Everyday", save=True,
                           on_challenge=bf.answers({"What city were you born in?": "Montreal",
                                                    "What is the best country on earth?": "Canada",
                                                    "What shape do people like most?": "Triangle"}))

    # Every login has a LoginId; only a saved one (save=True) can be opened again by it, or deleted.
    login_id = session.login_id
    if login_id is None:
        raise RuntimeError("the service gave no LoginId")

    cached = client.authorize_cached(login_id)            # a new RequestId on the saved connection
    inv = client.investments(login_id)                    # cached authorize + Investments, 202 polled
    print(inv.value, inv.cash)
    positions = inv.positions.to_pandas()                 # account and security joined

    detail = cached.accounts_detail(days="Days365")       # GetAccountsDetail, polled on its Async link
    transactions = detail.transactions.to_pandas()        # one row per transaction, its account joined

    attrs = client.attributes(login_id, package="income")  # the Income use-case package; preparation inside
    attrs = client.attributes(login_id, {"Card": ["balance_min", "count_nsf"]},  # a custom set: Tier 2 only
                              filters={"AccountCategory": ["Operations"]}, detail=["count_nsf"])
    values = attrs.values.to_pandas()                     # value is null (NaN in pandas) for NONE_DETECTED

    try:
        client.authorize_cached("00000000-0000-0000-0000-000000000000")
    except bf.InvalidLogin as exc:                        # typed errors keep what the server said
        print(exc.code, exc.status, exc.request_id)       # INVALID_LOGIN 401 None
