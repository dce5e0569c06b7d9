"""The corpus itself (tests/corpus/README.md): every file says where its shape comes from, what it
answers and with which status, and the README lists it with its source, so that a shape no source
backs cannot slip in unnoticed."""

from __future__ import annotations

from recordedserver import CORPUS, corpus_names, recorded


def test_every_corpus_file_names_its_source_and_the_readme_lists_it() -> None:
    readme = (CORPUS / "README.md").read_text(encoding="utf-8")
    rows = [line for line in readme.splitlines() if line.startswith("| `")]
    listed = sorted(row.split("`")[1].removesuffix(".json") for row in rows)
    assert listed == corpus_names()
    for name in corpus_names():
        data = recorded(name)
        assert list(data) == ["source", "request", "status", "body"], name
        assert data["source"].strip() and data["request"].strip(), name
        body = data["body"]
        # A JSON body that states its status states the one it came with.
        if isinstance(body, dict) and "HttpStatusCode" in body:
            assert body["HttpStatusCode"] == data["status"], name
