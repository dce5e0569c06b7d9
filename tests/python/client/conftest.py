"""The client axis: what a user does with a client, from the first call to ``close()``. Logging in
(every sandbox user, step by step and through handlers), the challenges and the rules of their
answers, sessions and cached sessions, 202 polling and resuming after a ``PendingTimeout``, closing
and interrupting calls, the bulk calls with their progress display and ``bf.combine``, the options
a client is built with and every exception a server's answer raises. A behaviour both clients have
is one case run for ``bf.Client`` and ``bf.AsyncClient`` through the ``api`` fixture of the
top-level conftest; a case for one client only says why only that client has it."""
