"""The docs stay true: the sandbox tables match the sandbox, every link and cited anchor exists, the
index lists every page, the map names every file, and the extension's docstrings at run time are
the stub's.

docs/sandbox.md's users table is checked against ``Sandbox.users`` and its attribute table against
``Sandbox.attribute_catalogue()`` and ``Sandbox.attribute_packages()``. Every relative link of the
README, CONTRIBUTING, CHANGELOG and docs/ must lead to a file (and heading) of the repository, and
every docs anchor a code comment cites must be a heading of that page (docs/architecture.md#quality-gates).
"""

from __future__ import annotations

import ast
import re
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

import bankfeed as bf
from bankfeed import _native

ROOT = Path(__file__).resolve().parents[3]
DOCS = ROOT / "docs"
SANDBOX_DOC = DOCS / "sandbox.md"

README = ROOT / "README.md"

#: The pages whose links are followed.
PAGES = sorted(
    [README, ROOT / "CONTRIBUTING.md", ROOT / "CHANGELOG.md", *DOCS.glob("*.md"), *(ROOT / "examples").glob("*.md")]
)

#: Where code comments cite docs anchors.
CODE_DIRS = ("src", "crates", "python", "tests")
CODE_SUFFIXES = {".rs", ".py", ".pyi", ".toml", ".txt", ".md"}

#: The operation that answers every attribute; the others are use-case packages.
ALL_ATTRIBUTES = "GetAllAttributes"

FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
CITATION = re.compile(r"docs/([a-z0-9_-]+\.md)#([A-Za-z0-9_-]+)")
EXTERNAL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def prose_lines(text: str) -> Iterator[str]:
    """The lines of a markdown text outside fenced code blocks."""
    fenced = False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield line


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: inline markup dropped, lower case, punctuation removed,
    spaces turned into hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = text.replace("`", "").replace("*", "")
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every anchor of a markdown file, with GitHub's -1, -2 suffixes for repeated headings."""
    seen: dict[str, int] = {}
    found: set[str] = set()
    for line in prose_lines(path.read_text(encoding="utf-8")):
        match = HEADING.match(line)
        if not match:
            continue
        anchor = github_anchor(match.group(2))
        count = seen.get(anchor, 0)
        seen[anchor] = count + 1
        found.add(anchor if count == 0 else f"{anchor}-{count}")
    return found


def links(path: Path) -> list[str]:
    """The link targets of a markdown file, outside code blocks and inline code."""
    targets: list[str] = []
    for line in prose_lines(path.read_text(encoding="utf-8")):
        without_code = re.sub(r"`[^`]*`", "", line)
        targets.extend(match.group(1) for match in LINK.finditer(without_code))
    return targets


def section(path: Path, title: str) -> list[str]:
    """The prose lines of the `## title` section of a markdown file."""
    lines: list[str] = []
    inside = False
    for line in prose_lines(path.read_text(encoding="utf-8")):
        match = HEADING.match(line)
        if match and len(match.group(1)) <= 2:
            inside = match.group(2).strip() == title
            continue
        if inside:
            lines.append(line)
    assert lines, f"{path.name} has no '## {title}' section"
    return lines


def first_table(lines: list[str]) -> list[list[str]]:
    """The body rows of the first markdown table in `lines`, as cells (header and rule dropped)."""
    rows: list[list[str]] = []
    for line in lines:
        if line.lstrip().startswith("|"):
            cells = re.split(r"(?<!\\)\|", line.strip().strip("|"))
            rows.append([cell.strip().replace("\\|", "|") for cell in cells])
        elif rows:
            break
    assert len(rows) >= 2 and all(set(cell) <= set(":- ") for cell in rows[1]), "no markdown table found"
    return rows[2:]


def unquote(cell: str) -> str:
    """A table cell without its code backticks."""
    return cell.replace("`", "").strip()


def challenge_types(cell: str) -> list[str]:
    """A cell of challenge types as the list it stands for: types separated by commas, a repeat as the
    type, the multiplication sign and a count; `none` for no challenge."""
    if cell.strip() == "none":
        return []
    types: list[str] = []
    for item in cell.split(","):
        match = re.fullmatch(r"\s*([A-Za-z]+)(?:\s*\N{MULTIPLICATION SIGN}\s*(\d+))?\s*", item)
        assert match, f"cannot read the challenge list {cell!r}"
        types.extend([match.group(1)] * int(match.group(2) or 1))
    return types


def short_package(operation: str) -> str:
    """`GetCreditRiskAttributes` as the `package=` value that calls it, `credit_risk`."""
    match = re.fullmatch(r"Get(\w+)Attributes", operation)
    assert match, f"unexpected attributes operation {operation!r}"
    return re.sub(r"(?<!^)(?=[A-Z])", "_", match.group(1)).lower()


def test_the_users_table_is_sandbox_users(sandbox: bf.Sandbox) -> None:
    rows = first_table(section(SANDBOX_DOC, "Users"))
    documented = [(unquote(username), challenge_types(kinds), description) for username, kinds, description in rows]
    users: list[bf.SandboxUser] = sandbox.users
    expected = [(user["username"], list(user["challenge_types"]), user["description"]) for user in users]
    assert documented == expected


def test_the_attribute_table_is_the_catalogue_with_its_packages() -> None:
    rows = first_table(section(SANDBOX_DOC, "Attributes"))
    catalogue = [item["name"] for item in bf.Sandbox.attribute_catalogue()]
    packages = bf.Sandbox.attribute_packages()
    assert packages.pop(ALL_ATTRIBUTES) == catalogue, "the docs say package='all' returns every attribute"
    expected = [
        (name, [short_package(operation) for operation, names in packages.items() if name in names])
        for name in catalogue
    ]
    documented = [
        (unquote(name), [package.strip() for package in packages_cell.split(",") if package.strip()])
        for name, _computed, packages_cell in rows
    ]
    assert documented == expected


@pytest.mark.parametrize("page", PAGES, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_link_leads_to_a_file_and_heading_of_the_repository(page: Path) -> None:
    broken: list[str] = []
    for target in links(page):
        if EXTERNAL.match(target):
            continue
        file_part, _, anchor = target.partition("#")
        resolved = (page.parent / file_part).resolve() if file_part else page
        if not resolved.is_relative_to(ROOT):
            broken.append(f"{target}: leaves the repository")
        elif not resolved.exists():
            broken.append(f"{target}: no such file")
        elif anchor and (resolved.suffix != ".md" or anchor not in anchors(resolved)):
            broken.append(f"{target}: no heading #{anchor} in {resolved.relative_to(ROOT)}")
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)


@pytest.mark.parametrize("page", [README, *sorted(DOCS.glob("*.md"))], ids=lambda path: path.name)
def test_the_readme_and_docs_never_link_outside_the_repository(page: Path) -> None:
    # Relative links that climb (`../`) are how the docs once pointed outside the repository; a
    # page read on a package index cannot follow them either.
    climbing = [target for target in links(page) if not EXTERNAL.match(target) and "../" in target]
    assert not climbing, f"{page.relative_to(ROOT)} links with ../: {climbing}"


def code_files() -> Iterator[Path]:
    """The source files where comments cite the docs."""
    for folder in CODE_DIRS:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.is_file() and path.suffix in CODE_SUFFIXES and "__pycache__" not in path.parts:
                yield path


def test_every_docs_anchor_cited_in_code_exists() -> None:
    headings = {path.name: anchors(path) for path in DOCS.glob("*.md")}
    broken: list[str] = []
    cited = 0
    for path in code_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), start=1):
            for page, anchor in CITATION.findall(line):
                cited += 1
                if anchor not in headings.get(page, set()):
                    broken.append(f"{path.relative_to(ROOT)}:{number}: docs/{page}#{anchor}")
    assert cited, "no code comment cites the docs"
    assert not broken, "cited anchors that are not headings:\n" + "\n".join(broken)


def test_the_anchor_rule_is_githubs() -> None:
    assert github_anchor("Hosts, paths and versions") == "hosts-paths-and-versions"
    assert github_anchor("Account detail, summary and statements") == "account-detail-summary-and-statements"
    assert github_anchor("`bf.Sandbox(...)`: starting it") == "bfsandbox-starting-it"
    assert github_anchor("DeleteCard") == "deletecard"


#: The README's Python examples, in order, and the scripts of examples/ each one is (after the docstring).
README_EXAMPLES = ("quickstart.py", "async_quickstart.py", "connect_quickstart.py")


def test_the_readme_examples_are_examples_scripts() -> None:
    # The scripts are type-checked with mypy --strict and run by test_examples.py, so the README's
    # examples are both as long as each agrees with its script.
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)
    assert len(blocks) == len(README_EXAMPLES), f"the README has {len(blocks)} Python examples, not one per script"
    for block, name in zip(blocks, README_EXAMPLES, strict=True):
        script = (ROOT / "examples" / name).read_text(encoding="utf-8")
        docstring, _, body = script.partition('"""\n\n')
        assert docstring.startswith('"""'), f"examples/{name} starts with its docstring"
        assert body == block, f"README.md's example and examples/{name} differ"


INDEX = DOCS / "README.md"

#: Who the pages are written for (docs/README.md).
READERS = ("notebook users", "ETL engineers", "test writers", "contributors")


def test_the_index_lists_every_page_with_its_readers() -> None:
    rows = first_table(list(prose_lines(INDEX.read_text(encoding="utf-8"))))
    listed = [re.fullmatch(r"\[[^\]]+\]\(([^)#]+)\)", page.strip()) for page, _readers, _what in rows]
    assert all(listed), "each row of the index starts with a link to its page"
    pages = [match.group(1) for match in listed if match]
    assert sorted(pages) == sorted(path.name for path in DOCS.glob("*.md") if path != INDEX)
    for page, readers, _what in rows:
        assert any(reader in readers for reader in READERS), f"{page}: says who it is for"


ARCHITECTURE = DOCS / "architecture.md"

#: The folders whose every file the map of the tree names: the binding's, each crate's, the package's.
MAPPED = ("src", *sorted(path.relative_to(ROOT).as_posix() for path in ROOT.glob("crates/*/src")), "python/bankfeed")


def mapped_paths() -> set[str]:
    """The paths the map of the tree names: its code block, one entry a line, indented two spaces
    a level under the folder above it, several names of one folder separated by commas."""
    block = ARCHITECTURE.read_text(encoding="utf-8").split("## The map of the tree", 1)[1]
    block = block.split("```\n", 2)[1]
    paths: set[str] = set()
    folders: list[tuple[int, str]] = []  # (indent, path) of the folders above the line
    for line in block.splitlines():
        indent = len(line) - len(line.lstrip(" "))
        if indent >= 12 or not line.strip():
            continue  # a description that goes on from the line above
        names = re.split(r"\s{2,}", line.strip(), maxsplit=1)[0]
        while folders and folders[-1][0] >= indent:
            folders.pop()
        parent = folders[-1][1] if folders else ""
        for name in names.split(", "):
            paths.add(parent + name)
            if name.endswith("/"):
                folders.append((indent, parent + name))
    return paths


def test_the_map_names_every_file_of_the_code() -> None:
    mapped = mapped_paths()
    files = [
        path.relative_to(ROOT).as_posix()
        for folder in MAPPED
        for path in sorted((ROOT / folder).rglob("*"))
        # Not what a build leaves in the tree: `maturin develop` (scripts/test --quick) puts the
        # extension beside the package's sources.
        if path.is_file() and "__pycache__" not in path.parts and path.suffix not in {".so", ".pyd"}
    ]
    assert len(files) > 100, "the code's files are found"
    missing = [path for path in files if path not in mapped]
    assert not missing, f"files missing from docs/architecture.md#the-map-of-the-tree: {missing}"
    gone = [
        path
        for path in mapped
        if path.startswith(tuple(f"{folder}/" for folder in MAPPED)) and not (ROOT / path).exists()
    ]
    assert not gone, f"docs/architecture.md#the-map-of-the-tree names files that do not exist: {gone}"


def test_the_map_names_each_crates_integration_tests_where_they_are() -> None:
    """Each crate's integration tests are its own (`cargo test -p <crate>` runs them): the map names
    the test folder of every crate that has one, under that crate, and no test folder that is gone."""
    folders = {path.relative_to(ROOT).as_posix() + "/" for path in ROOT.glob("crates/*/tests/*") if path.is_dir()}
    assert "crates/bankfeed/tests/it/" in folders, "the client's integration tests are the client crate's"
    mapped = {path for path in mapped_paths() if re.fullmatch(r"crates/[^/]+/tests/.+/", path)}
    where = "docs/architecture.md#the-map-of-the-tree"
    assert mapped == folders, f"{where} names {sorted(mapped)}, the tree has {sorted(folders)}"


STUB = ROOT / "python" / "bankfeed" / "_native.pyi"

#: The class whose docstrings a method defined once on a shared base class carries at run time:
#: the stub documents it on both subclasses, the async one with ``await`` in its examples.
BLOCKING = {"_BaseClient": "Client", "_BaseSession": "Session", "_BaseChallenge": "Challenge"}


def stub_docstrings() -> dict[str, str]:
    """Every docstring of the stub by the name it documents (``Client``, ``Client.investments``,
    ``combine``), cleaned as ``help()`` shows it; a class's followed by its ``__new__``'s, as
    build.rs joins them."""
    docs: dict[str, str] = {}
    for node in ast.parse(STUB.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ClassDef):
            methods = {
                item.name: ast.get_docstring(item)
                for item in node.body
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
            }
            text, new = ast.get_docstring(node), methods.pop("__new__", None)
            if text is not None:
                docs[node.name] = text if new is None else f"{text}\n\n{new}"
            docs.update({f"{node.name}.{name}": doc for name, doc in methods.items() if doc is not None})
        elif isinstance(node, ast.FunctionDef) and (doc := ast.get_docstring(node)) is not None:
            docs[node.name] = doc
    return docs


#: What a pyo3 class defines that carries a docstring of its own: methods, properties, static and
#: class methods.
DOCUMENTED = (
    types.MethodDescriptorType,
    types.GetSetDescriptorType,
    types.ClassMethodDescriptorType,
    types.BuiltinFunctionType,
    staticmethod,
    classmethod,
)


def runtime_docstrings() -> dict[str, str | None]:
    """Every docstring the extension carries for the names its stub declares, by the name of the
    class that defines it at run time: ``_BaseClient.investments`` for ``Client.investments``."""
    docs: dict[str, str | None] = {}
    for name in _native.__all__:
        value = getattr(_native, name)
        if isinstance(value, type):
            docs[name] = value.__doc__
            for attribute, member in vars(value).items():
                # Slots (``__len__``, ``__getitem__``) keep CPython's own text: pyo3 gives them
                # none. ``__new__``'s text is the class's.
                if isinstance(member, DOCUMENTED) and attribute != "__new__":
                    function = member.__func__ if isinstance(member, staticmethod | classmethod) else member
                    docs[f"{name}.{attribute}"] = function.__doc__
        elif callable(value):
            docs[name] = value.__doc__
    return docs


def test_the_docstrings_at_run_time_are_the_stubs() -> None:
    # The stub is the one place the binding's docstrings are written; build.rs reads them into
    # the `#[doc = stub_doc!(...)]` of each item, so that help() and a notebook's `?` show what an
    # IDE shows (docs/architecture.md#one-source-for-the-docstrings).
    stub = stub_docstrings()
    runtime = runtime_docstrings()
    wrong: list[str] = []
    for key, doc in runtime.items():
        owner, _, member = key.partition(".")
        expected = stub.get(key)
        if expected is None and owner in BLOCKING:
            expected = stub.get(f"{BLOCKING[owner]}.{member}")
        if doc != expected and not (expected is None and member.startswith("_") and not member.startswith("__")):
            wrong.append(f"{key}: at run time {doc!r:.60}, in the stub {expected!r:.60}")
    assert not wrong, "runtime docstrings that are not the stub's:\n" + "\n".join(wrong)


def test_help_shows_the_stubs_text() -> None:
    import io
    import pydoc

    out = io.StringIO()
    pydoc.Helper(output=out)(bf.Client.investments)
    text = out.getvalue()
    assert "investments(self, /, login_id, *, request_id=None)" in text
    assert "inv.positions.to_pandas()" in text, "the example of the stub's docstring"
