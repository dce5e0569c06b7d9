"""The terminal axis: bf.ask_in_terminal driven through a pseudo-terminal, as a person at a
terminal answers it (docs/answering.md#in-a-terminal)."""
