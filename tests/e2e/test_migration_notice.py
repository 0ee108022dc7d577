from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.shared_fixtures import PI_SESSIONS

from .helpers import rehome_session, run_cli

FIXTURE = PI_SESSIONS / "before-compaction.jsonl"


@pytest.mark.skipif(not FIXTURE.exists(), reason="the shared pi fixtures are not next to this checkout")
def test_opening_a_pi_v1_file_tells_the_user_it_will_be_upgraded(tmp_path: Path, agent_dir: Path) -> None:
    session = tmp_path / "old.jsonl"
    shutil.copy(FIXTURE, session)
    rehome_session(session, tmp_path.resolve())  # the session runs in the directory it records
    copied = session.read_bytes()
    run = run_cli(["--session", str(session), "--provider", "faux", "-p", "/session"], tmp_path)
    assert run.returncode == 0, run.stderr
    assert "migrated from format v1" in run.stderr and "kept as .bak" in run.stderr
    assert session.read_bytes() == copied  # a command that writes nothing leaves it untouched
