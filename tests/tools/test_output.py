from __future__ import annotations

from pathlib import Path

from pi_tui.tools.output import OutputAccumulator, sanitize_output


def _feed_all(acc: OutputAccumulator, chunks: list[bytes]) -> None:
    for chunk in chunks:
        acc.feed(chunk)
    acc.finish()


def test_a_character_split_across_chunks_is_decoded_whole(tmp_path: Path) -> None:
    data = "héllo wörld\n".encode()
    acc = OutputAccumulator(temp_dir=tmp_path)
    _feed_all(acc, [data[i : i + 1] for i in range(len(data))])
    assert acc.snapshot().content == "héllo wörld\n"


def test_an_escape_sequence_split_across_chunks_is_removed(tmp_path: Path) -> None:
    acc = OutputAccumulator(temp_dir=tmp_path)
    _feed_all(acc, [b"a\x1b[3", b"1mred\x1b", b"[0m b\n"])
    assert acc.snapshot().content == "ared b\n"


def test_sanitize_keeps_tabs_and_newlines_and_drops_other_controls() -> None:
    assert sanitize_output("a\tb\r\nc\x07d\x00e\x1b[2Kf\n") == "a\tb\ncdef\n"


def test_totals_count_the_whole_output_while_memory_keeps_the_tail(tmp_path: Path) -> None:
    acc = OutputAccumulator(temp_dir=tmp_path, max_lines=10, max_bytes=100)
    for i in range(1000):
        acc.feed(f"{i}\n".encode())
    acc.finish()
    snap = acc.snapshot()
    assert snap.truncation.total_lines == 1000
    assert snap.truncation.truncated_by == "lines"
    assert snap.content.split("\n")[0] == "990"
    assert len(acc._lines) <= 12
    acc.close()
    assert snap.full_output_path is not None
    assert snap.full_output_path.read_text() == "".join(f"{i}\n" for i in range(1000))


def test_no_spill_file_while_output_fits(tmp_path: Path) -> None:
    acc = OutputAccumulator(temp_dir=tmp_path)
    _feed_all(acc, [b"small\n"])
    snap = acc.snapshot()
    assert not snap.truncation.truncated
    assert snap.full_output_path is None
    assert list(tmp_path.iterdir()) == []


def test_an_unfinished_last_line_counts_as_a_line(tmp_path: Path) -> None:
    acc = OutputAccumulator(temp_dir=tmp_path)
    _feed_all(acc, [b"one\ntwo"])
    assert acc.total_lines == 2
    assert acc.snapshot().content == "one\ntwo"
