"""The conformance axis: the client and the sandbox against the answers a real instance of the
service was recorded sending (``tests/corpus``, read by ``recordedserver``). The client is driven
through every entry point that reads or polls them; the sandbox's default answers are compared
with them key for key (docs/protocol.md#polling, docs/sandbox.md)."""
