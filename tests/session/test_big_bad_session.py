"""A 100,000-entry session with damaged lines in the middle and a torn last line opens, answers, and
keeps every line it cannot read, byte for byte."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ENTRIES = 100_000


def _lines(cwd: Path) -> list[bytes]:
    header = {"type": "session", "version": 3, "id": "big-bad", "timestamp": "2025-01-01T00:00:00.000Z"}
    lines = [json.dumps({**header, "cwd": str(cwd)}).encode()]
    parent = None
    for i in range(ENTRIES):
        role = "user" if i % 2 == 0 else "assistant"
        message: dict[str, object] = {"role": role, "content": [{"type": "text", "text": f"m{i}"}]}
        if role == "assistant":
            message.update(api="faux", provider="faux", model="faux-1", stopReason="stop")
        entry = {"type": "message", "id": f"{i:08x}", "parentId": parent, "message": message}
        lines.append(json.dumps(entry, separators=(",", ":")).encode())
        parent = f"{i:08x}"
    return lines


def test_a_damaged_100k_entry_session_opens_answers_and_keeps_what_it_cannot_read(tmp_path: Path) -> None:
    lines = _lines(tmp_path)
    middle = len(lines) // 2
    damaged = {
        middle: lines[middle][: len(lines[middle]) // 2],  # cut short
        middle + 10: b"\xff\xfe not UTF-8 \x00 {{",  # garbage
        middle + 20: b'["an array, not an entry"]',
    }
    for index, text in damaged.items():
        lines[index] = text
    torn = b'{"type":"message","id":"ffffffff","parentId":"0001869f","message":{"role":"us'
    path = tmp_path / "big.jsonl"
    body = b"\n".join(lines) + b"\n"
    path.write_bytes(body + torn)

    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "PI_CODING_AGENT_DIR", "LANG")}
    env["PI_OFFLINE"] = "1"
    run = subprocess.run(
        [sys.executable, "-m", "pi_tui", "--provider", "faux", "--session", str(path), "-p", "hi"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        timeout=55,
    )
    assert run.returncode == 0, run.stderr.decode()[-2000:]
    assert "faux provider" in run.stdout.decode()

    after = path.read_bytes()
    assert after.startswith(body)  # every line before the torn tail, damaged ones included, unchanged
    for text in damaged.values():
        assert b"\n" + text + b"\n" in after
    assert after.startswith(body + torn + b"\n")  # the torn tail too, ended in place, as pi does
    assert not list(path.parent.glob("*.bak"))
    added = [json.loads(line) for line in after[len(body) + len(torn) + 1 :].splitlines()]
    # (written before sessions recorded their prompt: it gets its first system message, as pi does)
    assert [e["message"]["role"] for e in added if e["type"] == "message"] == ["system", "user", "assistant"]
    assert added[0]["parentId"] == f"{ENTRIES - 1:08x}"  # the answer continues the conversation
