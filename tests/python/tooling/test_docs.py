"""The docs stay true: the sandbox tables match the sandbox, and every link and cited anchor exists.

docs/sandbox.md's users table is checked against ``Sandbox.users`` and its attribute table against
``Sandbox.attribute_catalogue()`` and ``Sandbox.attribute_packages()``. Every relative link of the
README, CONTRIBUTING, CHANGELOG and docs/ must lead to a file (and heading) of the repository, and
every docs anchor a code comment cites must be a heading of that page (docs/architecture.md#quality-gates).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import bankfeed as bf

ROOT = Path(__file__).resolve().parents[3]
DOCS = ROOT / "docs"
SANDBOX_DOC = DOCS / "sandbox.md"

README = ROOT / "README.md"

#: The pages whose links are followed.
PAGES = sorted(
    [README, ROOT / "CONTRIBUTING.md", ROOT / "CHANGELOG.md", *DOCS.glob("*.md"), *(ROOT / "examples").glob("*.md")]
)

#: Where code comments cite docs anchors.
CODE_DIRS = ("src", "python", "tests")
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
    users: list[dict[str, Any]] = sandbox.users
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
README_EXAMPLES = ("quickstart.py", "async_quickstart.py")


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
