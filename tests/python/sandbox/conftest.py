"""The sandbox axis: ``bf.Sandbox`` itself as a user configures and meets it. The arguments it
refuses and how it says so, its connection limits, its scale (``logins=N`` and the ``bulk_<n>``
users), and every fault it injects against every operation of the client (docs/sandbox.md)."""
