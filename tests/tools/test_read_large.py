"""A file over `STREAMED_TEXT_BYTES` is read in chunks: the same answer as reading it whole, in little memory."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from pi_tui.agent.tool import ToolError, ToolResult
from pi_tui.tools import line_scan
from pi_tui.tools import read as read_module
from pi_tui.tools.read import read_file_result

CASES = [
    ("short lines", "\n".join(f"line {i}" for i in range(5000))),
    ("trailing newline", "\n".join(f"row {i}" for i in range(3000)) + "\n"),
    ("wide lines", "\n".join("w" * 900 + str(i) for i in range(300))),
    ("one huge line", "x" * 70_000 + "\nafter\n"),
    ("blank lines", "\n\n\n" + "a\n" * 10 + "\n\n"),
    ("non-ascii", "\n".join("żółw 🐢 " * 20 + str(i) for i in range(800))),
    ("empty last lines", "a\nb\n\n\n"),
]
SELECTIONS = [
    (None, None),
    (1, None),
    (2, 5),
    (100, 50),
    (2999, None),
    (3000, 10),
    (4, 0),
    (1, 5000),
    (5000, None),
    (2, None),
]


def _answer(path: Path, offset: int | None, limit: int | None) -> ToolResult | str:
    try:
        return read_file_result(path.parent, path.name, offset, limit)
    except ToolError as exc:
        return f"error: {exc}"


@pytest.mark.parametrize(("name", "text"), CASES, ids=[c[0] for c in CASES])
def test_a_streamed_read_answers_as_a_whole_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, text: str
) -> None:
    path = tmp_path / "f.txt"
    path.write_text(text, encoding="utf-8")
    monkeypatch.setattr(line_scan, "CHUNK_BYTES", 4096)  # many chunks, boundaries everywhere
    for offset, limit in SELECTIONS:
        whole = _answer(path, offset, limit)
        monkeypatch.setattr(read_module, "STREAMED_TEXT_BYTES", 0)
        streamed = _answer(path, offset, limit)
        monkeypatch.setattr(read_module, "STREAMED_TEXT_BYTES", 8 * 1024 * 1024)
        assert streamed == whole, (offset, limit)


def test_a_large_log_is_read_without_holding_it(tmp_path: Path) -> None:
    path = tmp_path / "big.log"
    line = "2026-11-27 00:00:00 INFO something happened in the service\n"
    with path.open("w") as out:
        for _ in range(40):
            out.write(line * 20_000)  # ~48 MB
    tracemalloc.start()
    try:
        result = read_file_result(tmp_path, "big.log", None, None)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    text = result.content[0].text  # type: ignore[union-attr]
    assert text.endswith("[Showing lines 1-867 of 800001 (50.0KB limit). Use offset=868 to continue.]")
    assert result.details is not None and result.details["truncation"]["totalLines"] == 800_000
    assert peak < 16 * 1024 * 1024  # reading it whole took ~6 times the file's size
