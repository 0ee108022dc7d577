from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import pytest

from pi_tui.modes.plain.bridge import PlainUIBridge
from pi_tui.modes.plain.render import EventPrinter


class ScriptedTerminal:
    """Answers each question with the next scripted line (None: timed out or cancelled)."""

    color = False

    def __init__(self, answers: list[str | None]) -> None:
        self.answers = answers
        self.out: list[str] = []
        self.asked: list[str] = []

    def write(self, text: str) -> None:
        self.out.append(text)

    async def read_line(self, prompt: str, default: str = "") -> str | None:
        return None

    async def ask(self, prompt: str, timeout: float | None = None) -> str | None:
        self.asked.append(prompt)
        return self.answers.pop(0)

    @contextlib.contextmanager
    def watch_abort(self, on_abort: Callable[[], None]) -> Iterator[None]:
        yield

    @contextlib.contextmanager
    def keys_held(self) -> Iterator[None]:
        yield


def _bridge(answers: list[str | None]) -> tuple[PlainUIBridge, ScriptedTerminal]:
    terminal = ScriptedTerminal(answers)
    return PlainUIBridge(terminal, EventPrinter(terminal.write, color=False)), terminal


@pytest.mark.parametrize(
    ("answer", "expected"),
    [("2", "beta"), ("gam", "gamma"), ("", None), (None, None), ("9", None), ("a", None)],
)
async def test_select_takes_a_number_or_a_unique_prefix(answer: str | None, expected: str | None) -> None:
    bridge, terminal = _bridge([answer])
    assert await bridge.select("Pick one", ["alpha", "beta", "gamma", "alpine"]) == expected
    shown = "".join(terminal.out)
    assert "Pick one" in shown and "  3. gamma" in shown


@pytest.mark.parametrize(
    ("answer", "expected"), [("y", True), ("Yes", True), ("n", False), ("", False), (None, False)]
)
async def test_confirm_is_yes_only_when_the_user_says_so(answer: str | None, expected: bool) -> None:
    bridge, terminal = _bridge([answer])
    assert await bridge.confirm("Allow?", "rm -rf build") is expected
    assert terminal.asked == ["Allow?: rm -rf build [y/N] "]


async def test_input_and_editor() -> None:
    bridge, _ = _bridge(["my-branch", ""])
    assert await bridge.input("Branch name", "feature/…") == "my-branch"
    assert await bridge.input("Branch name") is None  # an empty answer cancels
    bridge, _ = _bridge(["first line", "second line", "."])
    assert await bridge.editor("Commit message") == "first line\nsecond line"
    bridge, _ = _bridge([""])
    assert await bridge.editor("Commit message") is None
    bridge, _ = _bridge(["more", None])
    assert await bridge.editor("Notes", "kept") == "kept\nmore"


def test_statuses_make_the_toolbar_and_editor_text_prefills_the_next_prompt() -> None:
    bridge, _ = _bridge([])
    assert bridge.toolbar() is None
    bridge.set_status("git", "main")
    bridge.set_status("todo", "2 open")
    assert bridge.toolbar() == "main · 2 open"
    bridge.set_status("git", None)
    assert bridge.toolbar() == "2 open"
    bridge.set_editor_text("draft")
    assert bridge.editor_text == "draft"
