from __future__ import annotations

import pytest

from pi_tui.tools.truncate import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    format_size,
    truncate_head,
    truncate_line,
    truncate_tail,
    utf8_len,
)


@pytest.mark.parametrize(
    ("size", "expected"),
    [
        (0, "0B"),
        (123, "123B"),
        (1023, "1023B"),
        (1024, "1.0KB"),
        (1229, "1.2KB"),
        (1280, "1.3KB"),  # an exact half rounds up, as JavaScript's toFixed does
        (50 * 1024, "50.0KB"),
        (1024 * 1024, "1.0MB"),
        (int(1.25 * 1024 * 1024), "1.3MB"),
    ],
)
def test_format_size_matches_pi(size: int, expected: str) -> None:
    assert format_size(size) == expected


def test_limits_are_pis() -> None:
    assert DEFAULT_MAX_LINES == 2000
    assert DEFAULT_MAX_BYTES == 50 * 1024


def test_small_content_is_returned_untouched() -> None:
    result = truncate_head("a\nb\n")
    assert result.content == "a\nb\n"
    assert not result.truncated
    assert result.truncated_by is None
    assert result.total_lines == 2
    assert result.total_bytes == 4


def test_head_keeps_first_lines_when_the_line_limit_hits() -> None:
    content = "\n".join(f"line{i}" for i in range(1, 2501))
    result = truncate_head(content)
    assert result.truncated_by == "lines"
    assert result.output_lines == 2000
    assert result.content.split("\n")[-1] == "line2000"
    assert result.total_lines == 2500


def test_head_keeps_whole_lines_within_the_byte_limit() -> None:
    content = "\n".join("x" * 99 + str(i % 10) for i in range(1000))
    result = truncate_head(content)
    assert result.truncated_by == "bytes"
    assert result.output_bytes <= DEFAULT_MAX_BYTES
    assert all(len(line) == 100 for line in result.content.split("\n"))
    # 100 bytes for the first line, 101 for each further one (the newline).
    assert result.output_lines == 506


def test_head_reports_a_first_line_larger_than_the_limit_instead_of_cutting_it() -> None:
    result = truncate_head("x" * 60000 + "\nshort")
    assert result.content == ""
    assert result.first_line_exceeds_limit
    assert result.truncated_by == "bytes"


def test_tail_keeps_last_lines_when_the_line_limit_hits() -> None:
    content = "\n".join(f"line{i}" for i in range(1, 2501)) + "\n"
    result = truncate_tail(content)
    assert result.truncated_by == "lines"
    assert result.content.split("\n")[0] == "line501"
    assert result.content.split("\n")[-1] == "line2500"
    assert result.total_lines == 2500


def test_tail_keeps_whole_lines_within_the_byte_limit() -> None:
    content = "\n".join(f"{i:04d}" + "y" * 96 for i in range(1000))
    result = truncate_tail(content)
    assert result.truncated_by == "bytes"
    assert not result.last_line_partial
    assert result.content.split("\n")[-1].startswith("0999")
    assert all(len(line) == 100 for line in result.content.split("\n"))


def test_tail_keeps_the_end_of_an_oversized_last_line_on_a_character_boundary() -> None:
    result = truncate_tail("first\n" + "é" * 40000)  # 80000 bytes of two-byte characters
    assert result.last_line_partial
    assert result.output_lines == 1
    assert set(result.content) == {"é"}
    assert utf8_len(result.content) <= DEFAULT_MAX_BYTES


def test_truncate_line_cuts_to_500_chars_with_a_marker() -> None:
    text, cut = truncate_line("a" * 600)
    assert cut
    assert text == "a" * 500 + "... [truncated]"
    assert truncate_line("short") == ("short", False)


def test_truncation_result_serialises_in_pis_camel_case() -> None:
    data = truncate_head("\n".join(str(i) for i in range(3000))).to_dict()
    assert data["truncatedBy"] == "lines"
    assert data["outputLines"] == 2000
    assert set(data) == {
        "content",
        "truncated",
        "truncatedBy",
        "totalLines",
        "totalBytes",
        "outputLines",
        "outputBytes",
        "lastLinePartial",
        "firstLineExceedsLimit",
        "maxLines",
        "maxBytes",
    }
