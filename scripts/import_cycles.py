"""Fails when modules of a Rust crate, or of the Python package, import each other in a circle
(CONTRIBUTING.md).

Cargo keeps the arrows between the crates of the workspace (a crate cannot depend on one that
depends on it); this keeps them within each crate. For every crate (the binding, `src/`, and each
of `crates/*/src/`) it reads the `use crate::...` and `use super::...` paths of every file (its
tests left out), groups them by module, and looks for strongly connected components. A module is
a file; a folder's files are one module, but for the folders whose files are layers of their own
(`FOLDERS`).

The Python package (`python/bankfeed`) is read the same way: every file a module (a package's
`__init__.py` the package), and every `import` and `from ... import` of `bankfeed` an arrow
(`python_graph` says which it counts).

    python3 scripts/import_cycles.py          # exit 1 and the circles, when there are any
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Each crate's source folder, by the crate's name.
CRATES = {
    "bankfeed-python": ROOT / "src",
    **{path.parent.name: path for path in sorted((ROOT / "crates").glob("*/src"))},
}
#: The Python package, read by `python_graph`.
PACKAGE = ROOT / "python" / "bankfeed"
#: The folders whose files are modules of their own, by crate: the others' files are one module.
FOLDERS = {
    "bankfeed": ("data", "tables", "authorize"),
    "bankfeed-sandbox": ("server", "operations", "world", "widget", "generator"),
    "bankfeed-python": ("run",),
}


def module_name(path: Path, src: Path) -> str:
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "mod":
        parts.pop()
    return "" if parts == ["lib"] else "::".join(parts)


def sources(src: Path) -> dict[str, str]:
    files = {}
    for path in sorted(src.rglob("*.rs")):
        text = path.read_text()
        # A module's tests may use what the module may not; comments (an intra-doc link) use nothing.
        text = re.split(r"^#\[cfg\(test\)\]\s*\n\s*mod ", text, flags=re.M)[0]
        files[module_name(path, src)] = "\n".join(line.split("//", 1)[0] for line in text.splitlines())
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


def node_of(folders: tuple[str, ...]):
    """A crate's modules as nodes of its graph: a file, or a folder's files as one but for
    `folders`; the crate's root (lib.rs) is no node, as it only declares and re-exports."""

    def node(name: str) -> str | None:
        parts = name.split("::")
        if name == "":
            return None
        return "::".join(parts[:2]) if parts[0] in folders else parts[0]

    return node


def python_modules(package: Path) -> dict[str, Path]:
    """The package's modules by dotted name: `bankfeed._export.run`; a package by its
    `__init__.py` (`bankfeed._export`); the extension by its stub (`_native.pyi`)."""
    modules = {}
    for path in sorted([*package.rglob("*.py"), *package.rglob("*.pyi")]):
        if path.suffix == ".pyi" and path.with_suffix(".py").exists():
            continue
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def python_graph(package: Path) -> dict[str, set[str]]:
    """Which module of the package imports which. Every import statement counts, wherever it
    stands: at the top, inside a function (an import delayed to the call is still a dependency,
    and a delayed import is how a circle gets hidden rather than removed), and under
    `if TYPE_CHECKING:` (the annotations name the other module: the type checker and the reader
    follow that arrow, and it was where the package's last circle stood). `from a.b import c`
    points at `a.b.c` when that is a module, else at `a.b`; a name of a package's `__init__.py` is
    an arrow to the package."""
    modules = python_modules(package)
    edges: dict[str, set[str]] = {}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        targets = edges.setdefault(name, set())
        if path.suffix == ".pyi":
            # The extension: an arrow to it, none from it. Its stub imports the aliases its
            # signatures are typed with, and what the binary itself imports is Rust, read above.
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            found: list[str] = []
            if isinstance(node, ast.Import):
                found = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:  # relative: from the module's own package, or above it
                    base = name.split(".") if is_package else name.split(".")[:-1]
                    base = base[: len(base) - node.level + 1]
                    source = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    source = node.module or ""
                found = [
                    f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules else source for alias in node.names
                ]
            for target in found:
                # `import a.b.c` also runs `a` and `a.b`; the arrow is to the module named.
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    targets.add(target)
    return edges


def report(label: str, edges: dict[str, set[str]]) -> bool:
    """Prints the circles of one graph, or that it has none; whether it has any."""
    found = circles(edges)
    for component in found:
        print(f"{label}: modules importing each other in a circle: {', '.join(component)}")
        for module in component:
            print(f"    {module} -> {', '.join(sorted(edges[module] & set(component)))}")
    if not found:
        print(f"{label}: no import circle among {len(edges)} modules")
    return bool(found)


def main() -> int:
    failed = False
    for label, src in CRATES.items():
        known = sources(src)
        edges = graph(known, node_of(FOLDERS.get(label, ())))
        found = circles(edges)
        for component in found:
            failed = True
            print(f"{label}: modules importing each other in a circle: {', '.join(component)}")
            for module in component:
                print(f"    {module} -> {', '.join(sorted(edges[module] & set(component)))}")
        if not found:
            print(f"{label}: no import circle among {len(edges)} modules")
    failed = report("python/bankfeed", python_graph(PACKAGE)) or failed
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
