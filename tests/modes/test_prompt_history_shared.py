"""Two pi-tuis in one project share its prompt history file: cutting the file down keeps the prompts the
other one added, and appends and rewrites take turns (a lock on the history folder)."""

from __future__ import annotations

from pathlib import Path

from pi_tui.modes.prompt_history import PromptHistory


def test_cutting_the_history_down_keeps_what_another_pi_tui_added(tmp_path: Path) -> None:
    path = tmp_path / "prompt-history" / "p.jsonl"
    first, second = PromptHistory(path, limit=2), PromptHistory(path, limit=2)
    for text in ("a1", "a2", "a3", "a4"):
        first.add(text)
    second.add("b1")  # the other window: appended after the first loaded the file
    first.add("a5")  # past twice the limit: the file is cut down to the last two
    assert PromptHistory(path, limit=2).entries == ["b1", "a5"]
    assert path.read_text().splitlines() == ['"b1"', '"a5"']

