"""A bash card counts its output's screen rows once: while the output grows, only what was added."""

from __future__ import annotations

from pi_tui.modes.interactive.screen_rows import RowCounter, row_count


def _rows(text: str, width: int) -> int:
    return sum(row_count(line, width) for line in text.split("\n"))


def test_counting_what_was_added_gives_what_counting_all_of_it_gives() -> None:
    text = "\n".join(("word " * (n % 23)) + "x" * (n % 97) for n in range(300))
    counter = RowCounter()
    for cut in (0, 1, 7, 200, 201, len(text) // 3, len(text) // 2, len(text) - 1, len(text)):
        assert counter.count(text[:cut], 40) == _rows(text[:cut], 40), cut
    assert counter.count(text, 55) == _rows(text, 55)  # another width: counted again
    assert counter.count("a new\ntext", 55) == 2  # not the same text grown: counted again
    assert row_count("x" * 100, 40) == 3 and row_count("", 40) == 1
