"""Big session files are decoded with orjson; every line must load exactly as `json` loads it."""

from __future__ import annotations

import io
import json
from pathlib import Path

from pi_tui.session.entries import MessageEntry, RawEntry, entry_to_line
from pi_tui.session.loader import FAST_DECODE_BYTES, LoadedFile, load_session_file, parse_session_lines

HEADER = b'{"type":"session","version":3,"id":"fast","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}'


def _message(i: int, parent: str | None, text: str) -> bytes:
    entry = {
        "type": "message",
        "id": f"{i:08x}",
        "parentId": parent,
        "timestamp": "2025-01-01T00:00:01.000Z",
        "message": {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": i},
    }
    return json.dumps(entry, separators=(",", ":"), ensure_ascii=False).encode()


# Lines orjson refuses or would read differently from `json`: each must come out as `json` reads it.
ODD_LINES = [
    # a 20-digit integer (orjson: a float) in an extension's data
    b'{"type":"custom","id":"c0000001","parentId":"00000001","customType":"x","data":{"n":123456789012345678901}}',
    # a negative integer below 64 bits
    b'{"type":"custom","id":"c0000002","parentId":"c0000001","customType":"x","data":{"n":-9223372036854775809}}',
    # NaN and Infinity, which `json` accepts
    b'{"type":"custom","id":"c0000003","parentId":"c0000002","customType":"x","data":{"a":NaN,"b":-Infinity}}',
    # a lone surrogate escape, which `json` keeps
    b'{"type":"custom","id":"c0000004","parentId":"c0000003","customType":"x","data":{"s":"\\ud800"}}',
    # a byte-order mark before the object
    b'\xef\xbb\xbf{"type":"custom","id":"c0000005","parentId":"c0000004","customType":"x","data":{}}',
    # not JSON, and not UTF-8
    b'{"type":"message","id":"c0000006", cut here',
    b"\xff\xfe not UTF-8 {{",
]


def _file(filler: int) -> bytes:
    lines = [HEADER, _message(1, None, "first")]
    lines += ODD_LINES
    parent = "c0000005"
    for i in range(2, 2 + filler):
        lines.append(_message(i, parent, f"message {i} ünïcödé 🙂 " + "x" * 200))
        parent = f"{i:08x}"
    return b"\n".join(lines) + b"\n"


def _summary(loaded: LoadedFile) -> list[tuple[str, object]]:
    return [
        (type(e).__name__, e.line if isinstance(e, RawEntry) else entry_to_line(e)) for e in loaded.entries
    ]


def test_the_fast_decoder_reads_every_line_as_the_json_module_does(tmp_path: Path) -> None:
    data = _file(filler=4_000)
    assert len(data) >= FAST_DECODE_BYTES  # a file this big is loaded with the fast decoder
    path = tmp_path / "big.jsonl"
    path.write_bytes(data)

    fast = load_session_file(path)
    plain = parse_session_lines(io.BytesIO(data), path, fast_decode=False)
    assert _summary(fast) == _summary(plain)
    assert fast.report.skipped == plain.report.skipped
    assert [s.line_no for s in fast.report.skipped] == [8, 9]

    lines = [entry_to_line(e) for e in fast.entries[1:5]]
    assert lines[0].endswith('"data":{"n":123456789012345678901}}')  # still an integer
    assert lines[1].endswith('"data":{"n":-9223372036854775809}}')
    assert lines[2].endswith('"data":{"a":NaN,"b":-Infinity}}')
    assert lines[3].endswith('"data":{"s":"\\ud800"}}')
    last = fast.entries[-1]
    assert isinstance(last, MessageEntry) and isinstance(last.message.content, list)
    assert last.message.content[0].text.startswith("message 4001 ünïcödé 🙂 ")  # type: ignore[union-attr]
