"""An export's files on disk (docs/export.md#the-layout): the one place that names them, reads
them and writes them, so that a change of the format is a change here.

- ``layout.py``: every name: the journal, the run records, the lock, the manifest, the failures,
  the payloads kept, a run's partition and a batch's files.
- ``checks.py``: what is read back checked, field by field, before anything is done with it.
- ``journal.py``: a batch's journal entry, written as its commit and read back an entry at a time.
- ``run_records.py``: each run's record, written when it starts and when it ends.
- ``manifest.py``: ``_manifest.json`` and ``_failures.jsonl``, written at a run's end (the second by
  ``failures.py``).
- ``failures.py``: ``_failures.jsonl``, from the journal, sorted without holding it whole.
- ``lock_record.py``: what the lock says: who holds it, written as a run takes it.
"""
