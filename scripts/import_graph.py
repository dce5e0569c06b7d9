#!/usr/bin/env python3
"""The import graph of a Rust module folder, and its cycles.

    python3 scripts/import_graph.py src/sandbox

Reads every `.rs` file under the folder (a subfolder counts as one module, named after it) and
lists, per module, the sibling modules it names through `super::x`, `crate::<folder>::x`, or, in
`mod.rs`, a child's own name (`state::Shared`); an item of `mod.rs` itself (`super::SandboxConfig`)
counts as the module `mod`. Test modules (`#[cfg(test)]` to the end of the file, where they live)
are left out: they may reach anywhere. Exits with 1 when the graph has a cycle, printing each.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def library_code(text: str) -> str:
    """`text` without its comments and without its trailing `#[cfg(test)]` module."""
    at = re.search(r"^#\[cfg\(test\)\]\s*\n\s*mod ", text, re.M)
    if at:
        text = text[: at.start()]
    return "\n".join(line.split("//", 1)[0] for line in text.splitlines())


def brace_names(group: str) -> list[str]:
    """The first segment of each top-level item of `{a, b::c, d::{e, f}}`."""
    names, depth, current = [], 0, ""
    for char in group:
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        if depth == 0 and char == ",":
            names.append(current)
            current = ""
        elif depth > 0 or char not in "{}":
            current += char
    names.append(current)
    return [re.split(r"::|\s", name.strip())[0] for name in names if name.strip()]


def graph(folder: Path) -> dict[str, set[str]]:
    modules = {path.stem for path in folder.glob("*.rs") if path.stem != "mod"}
    modules |= {path.name for path in folder.iterdir() if path.is_dir()}
    crate_path = "crate::" + "::".join(folder.parts[1:]) + "::"
    edges: dict[str, set[str]] = {name: set() for name in modules | {"mod"}}
    for path in sorted(folder.rglob("*.rs")):
        relative = path.relative_to(folder)
        at_root = len(relative.parts) == 1
        module = path.stem if at_root else relative.parts[0]
        # The folder's mod.rs names a child by itself (`state::Shared`); a file at the root or a
        # subfolder's mod.rs names a sibling through `super::`; a subfolder's other files, where
        # `super::` is the subfolder, through `super::super::`.
        if at_root and path.stem == "mod":
            sibling = ""
        elif at_root or path.stem == "mod":
            sibling = "super::"
        else:
            sibling = "super::super::"
        prefixes = [crate_path, sibling]
        code = library_code(path.read_text())
        for prefix in prefixes:
            escaped = re.escape(prefix)
            boundary = r"(?<![A-Za-z0-9_:])" if prefix == "" else ""
            for match in re.finditer(boundary + escaped + r"\{", code):
                end, depth = match.end(), 1
                while depth and end < len(code):
                    depth += {"{": 1, "}": -1}.get(code[end], 0)
                    end += 1
                for name in brace_names(code[match.end() : end - 1]):
                    edges[module].add(name if name in modules else "mod")
            for match in re.finditer(boundary + escaped + rf"({IDENT})\b", code):
                name = match.group(1)
                if prefix == "" and (name not in modules or not code[match.end() :].startswith("::")):
                    continue
                if name in ("self", "super", "crate"):
                    continue
                edges[module].add(name if name in modules else "mod")
        edges[module].discard(module)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(edges.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                other = stack.pop()
                component.append(other)
                if other == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def main() -> int:
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else "src/sandbox")
    edges = graph(folder)
    for module in sorted(edges):
        print(f"{module:12} -> {', '.join(sorted(edges[module])) or '-'}")
    found = cycles(edges)
    for component in found:
        print(f"cycle of {len(component)}: {', '.join(component)}")
    if not found:
        print("no cycle")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
