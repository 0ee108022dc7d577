from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from pi_tui.modes.rpc.framing import JsonlWriter, Line, LineReader, OutputClosed, decode_line


async def _lines(data: bytes, *, max_line: int = 1000) -> list[Line]:
    read_fd, write_fd = os.pipe()
    os.write(write_fd, data)
    os.close(write_fd)
    reader = LineReader(read_fd, max_line=max_line)
    out = []
    while (line := await reader.next_line()) is not None:
        out.append(line)
    os.close(read_fd)
    return out


async def test_lines_split_on_lf_only_and_the_last_line_needs_no_lf() -> None:
    lines = await _lines('{"a":"x\u2028y"}\r\n\n{"b":1}'.encode())
    assert [decode_line(line) for line in lines[::2]] == [{"a": "x\u2028y"}, {"b": 1}]
    assert lines[1] == Line(b"")


async def test_an_over_long_line_is_skipped_whole_and_the_next_one_is_read() -> None:
    lines = await _lines(b"x" * 5000 + b"\n" + b'{"ok":true}\n', max_line=1000)
    assert lines[0] == Line(too_long=5000)
    with pytest.raises(ValueError, match="longer than"):
        decode_line(lines[0])
    assert decode_line(lines[1]) == {"ok": True}


def test_bad_bytes_and_bad_json_name_the_problem() -> None:
    with pytest.raises(ValueError, match="UTF-8"):
        decode_line(Line(b"\xff"))
    with pytest.raises(ValueError, match="position 1"):
        decode_line(Line(b"{x"))


def test_a_closed_pipe_is_reported_once_then_writes_are_dropped() -> None:
    read_fd, write_fd = os.pipe()
    os.close(read_fd)
    writer = JsonlWriter(write_fd)
    with pytest.raises(OutputClosed):
        writer.write({"type": "x"})
    writer.write({"type": "y"})  # no second error
    assert writer.closed
    os.close(write_fd)


def test_a_lone_surrogate_is_escaped_so_every_line_stays_utf8() -> None:
    read_fd, write_fd = os.pipe()
    JsonlWriter(write_fd).write({"delta": "bad \udcff byte", "ok": "é"})
    os.close(write_fd)
    line = os.read(read_fd, 1000)
    os.close(read_fd)
    assert line.endswith(b"\n") and json.loads(line.decode("utf-8")) == {
        "delta": "bad \udcff byte",
        "ok": "é",
    }


def test_rpc_mode_imports_neither_textual_nor_rich() -> None:
    code = (
        "import sys, pi_tui.modes.rpc, pi_tui.modes.rpc.server, pi_tui.modes.rpc.context_view;"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich', 'prompt_toolkit'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", "import json;" + code], capture_output=True, text=True, check=True
    )
    assert json.loads(out.stdout) == []
