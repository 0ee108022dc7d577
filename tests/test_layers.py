from __future__ import annotations

import ast
import functools
import re
from collections import defaultdict
from pathlib import Path

import pytest

# One worker of a run takes these tests, so the package is parsed once (`_all_imports`).
pytestmark = pytest.mark.xdist_group("layers-parse")

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "pi_tui"
ARCHITECTURE = ROOT / "docs" / "architecture.md"

# Imports that go against the documented order, by (importing module, imported module): each needs a
# reason a reader accepts. Add one only with a reason that stands on its own.
EXCEPTIONS: dict[tuple[str, str], str] = {
    ("pi_tui.resources.settings", "pi_tui.sandbox.policy"): "the settings parse their `sandbox` section with "
    "the sandbox's policy module, which imports nothing of ours (inside the property, and as a type)",
    ("pi_tui.sandbox.session", "pi_tui.runtime.agent_session"): "names the type of the session the runtime "
    "factory hands it, under TYPE_CHECKING only",
}


def documented_layers() -> list[tuple[str, list[str]]]:
    """The layer table of docs/architecture.md: (layer, top-level names of pi_tui it holds), in order."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    table = text[text.index("| layer | folder | owns |") :].split("\n\n", 1)[0].splitlines()[2:]
    layers = []
    for row in table:
        _, layer, folder, *_ = (cell.strip() for cell in row.split("|"))
        names = [path.split("/")[1].removesuffix(".py") for path in re.findall(r"`(pi_tui/[^`]+)`", folder)]
        layers.append((layer, names))
    return layers


def _unit(module: str) -> str:
    """The top-level name under pi_tui a module belongs to (``pi_tui.ai.types`` → ``ai``)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(*, with_type_only: bool = True) -> list[tuple[str, str, str]]:
    """Every import of a pi_tui module by another, wherever it is written (module level, inside a
    function, under TYPE_CHECKING unless ``with_type_only`` is false): (importing module, imported
    module, file:line)."""
    return [
        (module, target, where)
        for module, target, where, type_only in _all_imports()
        if with_type_only or not type_only
    ]


@functools.cache
def _all_imports() -> tuple[tuple[str, str, str, bool], ...]:
    """The package's imports, read once per test process (the tests here each need them, and parsing
    every file is most of their time): (importing module, imported module, file:line, under
    TYPE_CHECKING)."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"))
        type_only = {
            id(inner)
            for block in ast.walk(tree)
            if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
            for inner in ast.walk(block)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    targets = [".".join([*base, *([node.module] if node.module else [])])]
                else:
                    targets = [node.module or ""]
            else:
                continue
            where = f"{path.relative_to(ROOT)}:{node.lineno}"
            found += [
                (module, t, where, id(node) in type_only)
                for t in targets
                if t == "pi_tui" or t.startswith("pi_tui.")
            ]
    return tuple(found)


def test_every_part_of_the_package_has_a_documented_layer() -> None:
    placed = [name for _, names in documented_layers() for name in names]
    assert len(placed) == len(set(placed)), "a name is in two layers"
    present = {
        p.name.removesuffix(".py")
        for p in PACKAGE.iterdir()
        if p.suffix == ".py" or (p / "__init__.py").exists()
    }
    assert present - set(placed) == set(), "add these to the layer table of docs/architecture.md"
    assert set(placed) - present == set(), "the layer table names what does not exist"


def test_imports_follow_the_documented_layer_order() -> None:
    rank = {name: i for i, (_, names) in enumerate(documented_layers()) for name in names}
    layer_of = {name: layer for layer, names in documented_layers() for name in names}
    wrong = []
    for importer, imported, where in imports():
        src, dst = _unit(importer), _unit(imported)
        if rank[dst] <= rank[src] or (importer, imported) in EXCEPTIONS:
            continue
        wrong.append(f"{where}: {importer} ({layer_of[src]}) imports {imported} ({layer_of[dst]})")
    assert wrong == [], "imports against the layer order of docs/architecture.md:\n" + "\n".join(wrong)


def test_every_exception_is_still_needed_and_has_a_reason() -> None:
    seen = {(importer, imported) for importer, imported, _ in imports()}
    for pair, reason in EXCEPTIONS.items():
        assert pair in seen, f"{pair} is no longer imported: remove its exception"
        assert len(reason.split()) >= 5, f"{pair}: say why"


def test_no_import_cycle_between_packages() -> None:
    # What runs: a type named under TYPE_CHECKING is no import at run time, and the exceptions are named.
    graph: dict[str, set[str]] = defaultdict(set)
    for importer, imported, _ in imports(with_type_only=False):
        src, dst = _unit(importer), _unit(imported)
        if src != dst and dst != "__init__" and (importer, imported) not in EXCEPTIONS:
            graph[src].add(dst)
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                pytest.fail("import cycle: " + " → ".join([*path[path.index(nxt) :], nxt]))
            if nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for start in sorted(graph):
        if start not in state:
            visit(start, [start])


def test_relative_and_function_level_imports_are_seen() -> None:
    seen = {(importer, imported) for importer, imported, _ in imports()}
    assert ("pi_tui.extensions.runner", "pi_tui.extensions.budget") in seen  # from .budget import …
    assert ("pi_tui.runtime.agent_session", "pi_tui.context.render") in seen  # inside a method
