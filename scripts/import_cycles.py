"""Fails when modules of the Rust crate import each other in a circle (CONTRIBUTING.md).

Reads the `use crate::...` and `use super::...` paths of every file under src/ (its tests left
out), groups them by module, and looks for strongly connected components in two graphs: the
core (everything but the Python binding and the sandbox) and the sandbox. A module of the core
is a file, or, under src/data/, src/tables/ and src/authorize/, a file of those folders.

    python3 scripts/import_cycles.py          # exit 1 and the circles, when there are any
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
FOLDERS = ("data", "tables", "authorize")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "mod":
        parts.pop()
    return "" if parts == ["lib"] else "::".join(parts)


def sources() -> dict[str, str]:
    files = {}
    for path in sorted(SRC.rglob("*.rs")):
        text = path.read_text()
        # A module's tests may use what the module may not; comments (an intra-doc link) use nothing.
        text = re.split(r"^#\[cfg\(test\)\]\s*\n\s*mod ", text, flags=re.M)[0]
        files[module_name(path)] = "\n".join(line.split("//", 1)[0] for line in text.splitlines())
    return files


def resolve(parts: list[str], known: dict[str, str]) -> str | None:
    for end in range(len(parts), 0, -1):
        name = "::".join(parts[:end])
        if name in known:
            return name
    return None


def graph(known: dict[str, str], node) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for name, text in known.items():
        here = node(name)
        if here is None:
            continue
        targets = edges.setdefault(here, set())
        parent = name.split("::")[:-1] if name else []
        paths = [path.split("::") for path in re.findall(r"\bcrate::((?:\w+::)*\w+)", text)]
        paths += [parent + path.split("::") for path in re.findall(r"\bsuper::((?:\w+::)*\w+)", text)]
        # A folder's mod.rs names its children by their own names (`state::Shared`).
        prefix = [name] if name else []
        paths += [
            prefix + path.split("::")
            for path in re.findall(r"(?<![\w:])((?:\w+::)+\w+)", text)
            if "::".join([*prefix, path.split("::")[0]]) in known
        ]
        for path in paths:
            target = resolve(path, known)
            there = node(target) if target is not None else None
            if there is not None and there != here:
                targets.add(there)
    return edges


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in sorted(edges.get(module, ())):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(edges):
        if module not in index:
            visit(module)
    return found


def core_node(name: str) -> str | None:
    parts = name.split("::")
    if name == "" or parts[0] in ("sandbox", "python", "fuzzing"):
        return None
    return "::".join(parts[:2]) if parts[0] in FOLDERS else parts[0]


def sandbox_node(name: str) -> str | None:
    return name if name.startswith("sandbox") else None


def main() -> int:
    known = sources()
    failed = False
    for label, node in (("core", core_node), ("sandbox", sandbox_node)):
        edges = graph(known, node)
        found = circles(edges)
        for component in found:
            failed = True
            print(f"{label}: modules importing each other in a circle: {', '.join(component)}")
            for module in component:
                print(f"    {module} -> {', '.join(sorted(edges[module] & set(component)))}")
        if not found:
            print(f"{label}: no import circle among {len(edges)} modules")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
