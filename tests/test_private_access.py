from __future__ import annotations

import ast
import functools
from collections import defaultdict
from pathlib import Path

import pytest

# One worker of a run takes these tests, so the package is parsed once (`private_accesses`).
pytestmark = pytest.mark.xdist_group("private-access-parse")

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("pi_tui", "extensions")

# Receivers that are the object itself: `self._x`, `cls._x`, `super()._x`, `type(self)._x`.
OWN = {"self", "cls", "super()", "type(self)"}

# Code that reads or writes a `_private` member of an object other than itself, by (file, receiver as
# written): the members it touches and why. Anything else reaching into another object's private state
# fails the test: give the other object a public method or property instead. An entry that is no longer
# used fails too, so the list only shrinks.
SAME_CLASS = "its own class's instance"
ALLOWED: dict[tuple[str, str], tuple[set[str], str]] = {
    # A class working on another instance of itself: copies, alternative constructors, equality, and a
    # nested request handler calling back into the server object that defines it.
    ("pi_tui/ai/oauth/callback.py", "owner"): (
        {"_handle"},
        f"{SAME_CLASS}: the request handler class "
        "defined inside the callback server hands each request to it",
    ),
    ("pi_tui/testing/oauth_server.py", "owner"): (
        {"_dispatch"},
        f"{SAME_CLASS}: the nested request handler of the fake OAuth server",
    ),
    ("pi_tui/sandbox/proxy.py", "proxy"): (
        {"_serve"},
        f"{SAME_CLASS}: the nested connection handler of the allow-list proxy",
    ),
    ("pi_tui/ai/providers/mistral.py", "twin"): ({"_ids", "_owners"}, f"{SAME_CLASS}: ToolCallIds.copy"),
    ("pi_tui/ai/providers/openai_completions.py", "twin"): (
        {"_flush_images"},
        f"{SAME_CLASS}: finish() flushes a copy so the builder can go on",
    ),
    ("pi_tui/context/panels.py", "copy"): (
        {"_counter", "_last_prefix"},
        f"{SAME_CLASS}: PanelManager's preview and what-if copies",
    ),
    ("pi_tui/session/manager.py", "manager"): (
        {"_lock", "_plan_repairs", "_pending_tail", "_deferred"},
        f"{SAME_CLASS}: SessionManager.open, _from_file and _deferred_from_file, the constructors from a file",
    ),
    ("pi_tui/session/manager.py", "original"): (
        {"_tree"},
        f"{SAME_CLASS}: fork_from reads the session it copies",
    ),
    ("pi_tui/session/manager.py", "fork"): (
        {"_tree", "_write_initial"},
        f"{SAME_CLASS}: fork_from fills the copy",
    ),
    ("pi_tui/session/manager.py", "new"): (
        {"_tree", "_new_id", "_path", "_write_initial"},
        f"{SAME_CLASS}: create_branched_session fills the new session",
    ),
    ("pi_tui/session/tree.py", "tree"): (
        {"_has_assistant", "_index", "_run_start"},
        f"{SAME_CLASS}: SessionTree.from_entries fills the tree it builds",
    ),
    ("pi_tui/util/record.py", "other"): ({"_fields", "_extra"}, f"{SAME_CLASS}: Record equality"),
    ("pi_tui/util/record.py", "base"): (
        {"_spec", "_build"},
        f"{SAME_CLASS}: a Record class builds its field table from its bases'",
    ),
    # Record's machinery inside record.py: a record's namespace belongs to its fields, so the machinery's
    # names stay underscored (a record may well have a field called `dump`, `spec` or `copy`).
    ("pi_tui/util/record.py", "value"): (
        {"_dump", "_deepcopy"},
        "record.py's dump and deep copy of a nested Record",
    ),
    ("pi_tui/util/record.py", "owner"): (
        {"_spec", "_build"},
        "record.py's model_fields descriptor reads its Record class's field table",
    ),
    ("pi_tui/util/record.py", "f"): ({"_copy"}, "record.py: a FieldInfo copied into a subclass's table"),
    ("pi_tui/util/record.py", "info"): (
        {"_copy"},
        "record.py: a declared FieldInfo copied before it is bound",
    ),
    ("pi_tui/util/record_checks.py", "tp"): (
        {"_maker", "_build"},
        "record_checks.py, split from record.py "
        "(which imports it), recognises a Record class by the machinery's hooks",
    ),
    # Public API whose name starts with an underscore.
    ("pi_tui/modes/interactive/exit_guard.py", "os"): (
        {"_exit"},
        "os._exit, the standard library's exit without clean-up, when the normal quit cannot finish",
    ),
    ("pi_tui/modes/termination.py", "os"): (
        {"_exit"},
        "os._exit when a signal's normal exit cannot finish in time (an extension handler that blocks)",
    ),
    ("pi_tui/sandbox/bridge.py", "os"): ({"_exit"}, "os._exit in the forked bridge process"),
    ("pi_tui/util/quick_exit.py", "os"): (
        {"_exit"},
        "os._exit, the standard library's exit without the interpreter's teardown, after a print run",
    ),
    ("pi_tui/util/quick_exit.py", "atexit"): (
        {"_run_exitfuncs"},
        "atexit's own runner of the registered hooks (the interpreter's exit runs them the same way)",
    ),
    ("pi_tui/ai/providers/azure_openai_responses.py", "parts"): (
        {"_replace"},
        "a named tuple's documented _replace",
    ),
    # Textual internals, all in one module that tests/modes/interactive/test_textual_internals.py guards.
    ("pi_tui/modes/interactive/textual_private.py", "app"): (
        {"_exit", "_exception", "_handle_exception"},
        "Textual has no public API for these; docs/architecture.md, 'The full-screen app', lists them",
    ),
    ("pi_tui/modes/interactive/textual_private.py", "container.screen"): (
        {"_layout_widgets"},
        "the screen's record of layout requests, fixed up for the chat's stream layout (Textual has no API)",
    ),
    ("pi_tui/modes/interactive/textual_private.py", "node"): (
        {"_css_styles", "_inline_styles", "_component_styles", "_Static__visual", "_layout_cache"},
        "a removed widget's style sheets (and its component classes' virtual nodes) and the visual of a Rich"
        " renderable it keeps, unlinked from it so that it is freed without the cycle collector",
    ),
    ("pi_tui/modes/interactive/textual_private.py", "Compositor"): (
        {"_arrange_root"},
        "the compositor's layout, wrapped so the cycle it leaves behind holds no widgets (no Textual API)",
    ),
    ("pi_tui/modes/interactive/textual_private.py", "widget"): (
        {"_vertical_scrollbar"},
        "the chat's own vertical scroll bar put where Textual keeps the one it makes (no Textual API)",
    ),
    ("pi_tui/modes/interactive/textual_private.py", "widget.app"): (
        {"_start_widget"},
        "a scroll bar made outside the widget tree is started as Textual starts its own (no Textual API)",
    ),
    ("pi_tui/modes/interactive/textual_private.py", "child"): (
        {"_layout_updates"},
        "Textual's count of a widget's layout requests, which tells the chat's stream layout what changed",
    ),
}


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _member(node: ast.AST) -> tuple[ast.expr, str, int] | None:
    """(receiver, member, line) of ``x._name`` or of ``getattr``/``setattr``/``hasattr(x, "_name", …)``."""
    if isinstance(node, ast.Attribute):
        return node.value, node.attr, node.lineno
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("getattr", "setattr", "hasattr")
        and len(node.args) >= 2
        and isinstance(node.args[1], ast.Constant)
        and isinstance(node.args[1].value, str)
    ):
        return node.args[0], node.args[1].value, node.lineno
    return None


def accesses_in(source: str, rel: str) -> list[tuple[str, str, str, int]]:
    """Every private member of another object that ``source`` touches: (file, receiver as written,
    member, line)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        member = _member(node)
        if member is not None and _is_private(member[1]) and ast.unparse(member[0]) not in OWN:
            found.append((rel, ast.unparse(member[0]), member[1], member[2]))
    return found


@functools.cache
def private_accesses() -> tuple[tuple[str, str, str, int], ...]:
    """`accesses_in` over the shipped code (read once per test process: both tests below need it, and
    parsing every file is most of their time)."""
    found = []
    for top in SOURCES:
        for path in sorted((ROOT / top).rglob("*.py")):
            found += accesses_in(path.read_text(encoding="utf-8"), path.relative_to(ROOT).as_posix())
    return tuple(found)


def test_no_code_reaches_into_another_objects_private_members() -> None:
    unexpected = [
        f"{rel}:{line}: {receiver}.{name}"
        for rel, receiver, name, line in private_accesses()
        if name not in ALLOWED.get((rel, receiver), (set(), ""))[0]
    ]
    assert unexpected == [], "add a public method or property instead:\n" + "\n".join(unexpected)


def test_every_allowed_private_access_is_still_used() -> None:
    used: dict[tuple[str, str], set[str]] = defaultdict(set)
    for rel, receiver, name, _ in private_accesses():
        used[rel, receiver].add(name)
    stale = {key: sorted(names - used[key]) for key, (names, _) in ALLOWED.items() if names - used[key]}
    assert stale == {}, "remove these from ALLOWED: they are no longer used"


def test_the_checker_sees_an_access_through_another_object_only() -> None:
    source = (
        "def f(self, chat):\n    self._ok()\n    super()._ok()\n    type(self)._ok\n    chat._prune()\n"
        "    getattr(chat, '_log', None)\n    getattr(chat, 'log')\n"
    )
    assert sorted(accesses_in(source, "x.py")) == [("x.py", "chat", "_log", 6), ("x.py", "chat", "_prune", 5)]
