from __future__ import annotations

from pathlib import Path

import pytest

from pi_tui.session import default_session_dir
from pi_tui.util.json_safe import MAX_RECORD_DEPTH

from .helpers import run_cli

pytestmark = pytest.mark.slow

HOSTILE = b"[" * 100_000 + b"]" * 100_000


def test_a_deep_line_in_a_session_neither_stops_continue_nor_hides_the_listing(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    first = run_cli(["--provider", "faux", "-p", "hello"], project)
    assert first.returncode == 0, first.stderr
    folder = default_session_dir(project)
    (path,) = folder.glob("*.jsonl")
    line_no = path.read_bytes().count(b"\n") + 1
    with path.open("ab") as handle:
        handle.write(HOSTILE + b"\n")
    deep_header = folder / "2020-01-01T00-00-00-000Z_0badf00d-0000-4000-8000-000000000000.jsonl"
    deep_header.write_bytes(HOSTILE + b"\n")
    hostile_bytes = path.read_bytes()

    again = run_cli(["--provider", "faux", "-c", "-p", "again"], project)

    assert again.returncode == 0, again.stderr
    assert "You said: “again”" in again.stdout
    assert (
        f"skipped 1 unreadable line (line {line_no}: JSON nested deeper than {MAX_RECORD_DEPTH} levels)"
        in (again.stderr)
    )
    assert "Traceback" not in again.stderr
    assert path.read_bytes().startswith(hostile_bytes)  # the line is kept; the new turn follows it

    listing = run_cli(["-r"], project)
    assert listing.returncode == 0, listing.stderr
    rows = [line for line in listing.stdout.splitlines() if line.endswith(".jsonl")]
    assert len(rows) == 1 and rows[0].endswith(str(path)) and "hello" in rows[0]
    assert "Traceback" not in listing.stderr
