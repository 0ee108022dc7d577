from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from pi_tui.modes.interactive import report_crash


def test_a_crash_is_logged_and_the_user_told_where_the_log_and_session_are(
    tmp_path: Path, agent_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session_file = tmp_path / "s.jsonl"
    app = SimpleNamespace(session=SimpleNamespace(session_manager=SimpleNamespace(path=session_file)))
    assert report_crash(agent_dir, app, "Traceback: boom\n") == 1
    err = capsys.readouterr().err
    log = agent_dir / "pi-tui-crash.log"
    assert log.read_text() == "Traceback: boom\n"
    assert f"the details are in {log}" in err and str(session_file) in err
