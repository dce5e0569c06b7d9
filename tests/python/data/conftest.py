"""The data axis: what a data call's result holds. Every table (investments, banking, statements,
attributes) is checked against ``.raw``, the payload as the service sent it, on generated data of
several sizes; attribute names against the sandbox's catalogue (``Sandbox.attribute_catalogue()``
and ``attribute_packages()``), their values being the Rust suite's to recompute
(``tests/sandbox_data.rs``). Payloads shaped like the real service's, 200s that are not the
operation's payload, and the ``login_ids`` columns a data job hands to a bulk call belong here too.
The shared fetched data comes from ``datahelpers`` and the ``sized`` fixture."""
