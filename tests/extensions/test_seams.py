from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "pi_tui"

# Objects other modules drive through public methods only: the extension runner and its `Dispatch`
# (handler table, calling, error reporting), and the agent (`RunHost` declares what a run uses).
SEAMS = {"runner", "_runner", "dispatch", "_dispatch", "agent", "_agent"}


def test_no_module_reaches_into_the_runner_the_dispatch_or_the_agent() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                not isinstance(node, ast.Attribute)
                or not node.attr.startswith("_")
                or node.attr.startswith("__")
            ):
                continue
            owner = node.value
            name = (
                owner.id
                if isinstance(owner, ast.Name)
                else owner.attr
                if isinstance(owner, ast.Attribute)
                else ""
            )
            if name in SEAMS:
                found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno} {ast.unparse(node)}")
    assert found == []


def test_the_loop_hooks_and_the_outside_turn_hook_do_not_know_the_runner() -> None:
    for name in ("loop_hooks.py", "outside_turn.py", "dispatch.py"):
        tree = ast.parse((PACKAGE / "extensions" / name).read_text(encoding="utf-8"))
        imported = {
            node.module
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module is not None
        }
        assert "runner" not in imported and "pi_tui.extensions.runner" not in imported, name
