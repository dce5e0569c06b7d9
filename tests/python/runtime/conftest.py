"""The runtime axis: how calls run rather than what they return. What only ``bf.AsyncClient`` has
(coroutines, cancellation, timeouts, several event loops, uvloop, calls from a running loop), the
error bridge between the Rust core and Python, one client shared by many threads, log records
handed over without running Python on the IO threads, and the bound on connections under a burst
of calls."""
