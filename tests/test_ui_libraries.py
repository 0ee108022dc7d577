from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

# One worker of a run takes these tests, so the sources are parsed once (`library_imports`).
pytestmark = pytest.mark.xdist_group("ui-libraries-parse")

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("pi_tui", "extensions")

# Where each terminal UI library may be imported (docs/architecture.md: only the full-screen app imports
# Textual and Rich, its renderer; the `--plain` line mode is the one user of prompt-toolkit).
HOMES = {
    "textual": ("pi_tui/modes/interactive/",),
    "rich": ("pi_tui/modes/interactive/",),
    "prompt_toolkit": ("pi_tui/modes/plain/",),
}

# The modules that may import Textual's private modules (`textual._compositor`, `textual.document._edit`):
# docs/architecture.md, "The full-screen app", says what each relies on, and
# tests/modes/interactive/test_textual_internals.py fails when Textual changes it.
TEXTUAL_PRIVATE = {
    "pi_tui/modes/interactive/textual_private.py",
    "pi_tui/modes/interactive/terminal_driver.py",
}


def _dotted(node: ast.expr) -> str:
    """``name`` or ``module.name`` as written (what ``ast.unparse`` gives for them, at a fraction of its
    cost on every call in the package); empty for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return f"{node.value.id}.{node.attr}"
    return ""


def imported_modules(source: str) -> list[tuple[str, int]]:
    """Every module ``source`` imports, wherever the import is written (module level, in a function, under
    TYPE_CHECKING), also ``importlib.import_module("…")`` with a literal name: (module, line)."""
    found: list[tuple[str, int]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.module, node.lineno))
            # `from textual import _compositor` imports a private module too
            found += [(f"{node.module}.{a.name}", node.lineno) for a in node.names if a.name.startswith("_")]
        elif (
            isinstance(node, ast.Call)
            and _dotted(node.func) in ("importlib.import_module", "import_module", "__import__")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.append((node.args[0].value, node.lineno))
    return found


def misplaced(source: str, rel: str) -> list[str]:
    """The imports of ``source`` (the file ``rel``) that break the rules above, as ``file:line: module``."""
    wrong = []
    for module, line in imported_modules(source):
        parts = module.split(".")
        homes = HOMES.get(parts[0])
        if homes is None:
            continue
        if not rel.startswith(homes):
            wrong.append(f"{rel}:{line}: {module} (only under {', '.join(homes)})")
        elif (
            parts[0] == "textual" and any(p.startswith("_") for p in parts[1:]) and rel not in TEXTUAL_PRIVATE
        ):
            wrong.append(f"{rel}:{line}: {module} (Textual's private module: only in textual_private.py)")
    return sorted(set(wrong))


@functools.cache
def library_imports() -> tuple[str, ...]:
    """`misplaced` over the shipped code, read once per test process."""
    found: list[str] = []
    for top in SOURCES:
        for path in sorted((ROOT / top).rglob("*.py")):
            found += misplaced(path.read_text(encoding="utf-8"), path.relative_to(ROOT).as_posix())
    return tuple(found)


def test_ui_libraries_are_imported_only_by_their_modes() -> None:
    assert list(library_imports()) == [], "move these imports (or the code) where the library belongs"


def test_every_module_allowed_textual_internals_exists_and_uses_them() -> None:
    for rel in TEXTUAL_PRIVATE:
        modules = [m for m, _ in imported_modules((ROOT / rel).read_text(encoding="utf-8"))]
        assert any(m.startswith("textual._") or "._" in m for m in modules if m.startswith("textual")), rel


def test_the_checker_sees_every_way_of_importing() -> None:
    source = (
        "import textual.app\n"
        "def f():\n    from rich.text import Text\n"
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import prompt_toolkit\n"
        "import importlib\nimportlib.import_module('textual.widgets')\n"
        "import json\n"
    )
    assert [line.split(": ")[1].split(" ")[0] for line in misplaced(source, "pi_tui/runtime/x.py")] == [
        "textual.app",
        "rich.text",
        "prompt_toolkit",
        "textual.widgets",
    ]
    assert misplaced("import prompt_toolkit\n", "pi_tui/modes/interactive/x.py") != []
    assert misplaced("import textual.app\nimport rich\n", "pi_tui/modes/interactive/x.py") == []


def test_the_checker_keeps_textuals_private_modules_in_one_place() -> None:
    for source in (
        "from textual._compositor import Compositor\n",
        "from textual.document._edit import Edit\n",
        "from textual import _xterm_parser\n",
    ):
        assert misplaced(source, "pi_tui/modes/interactive/editor.py") != [], source
        assert misplaced(source, "pi_tui/modes/interactive/textual_private.py") == [], source
    assert (
        misplaced("from textual.widgets.text_area import Edit\n", "pi_tui/modes/interactive/editor.py") == []
    )
