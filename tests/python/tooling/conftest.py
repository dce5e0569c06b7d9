"""The tooling axis: what ships around the library and must stay true. The docs (their tables
against the sandbox, every link and cited anchor), the scripts of ``examples/`` run as a user runs
them, the ``bankfeed`` command line, the pytest plugin in a user's own suite, the public types as
a type checker sees them, and the documented test users."""
