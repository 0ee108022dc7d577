"""Print mode has nobody to ask: the refusal stands, the model is told, and stderr says why."""

from __future__ import annotations

from pathlib import Path

from pi_tui.testing import FakeLLM, Reply, text, tool_call
from tests.e2e.helpers import write_models_json
from tests.safety.helpers import MODEL, start_cli


def test_print_mode_refuses_and_says_why_on_stderr(tmp_path: Path, agent_dir: Path) -> None:
    project = tmp_path / "project"
    outside = tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    (outside / "keep.txt").write_text("precious\n")
    fake = FakeLLM()
    fake.script([Reply([tool_call("bash", {"command": f"rm -f {outside}/keep.txt"})]), Reply([text("ok")])])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        proc = start_cli([*MODEL, "-p", "tidy up"], project)
        out, err = proc.communicate(timeout=60)
        sent_back = str(fake.last_request.body)  # the tool result the model got
    assert proc.returncode == 0, err
    assert (outside / "keep.txt").exists()
    assert f"pi-tui: [sandbox] Refused write to {outside}/keep.txt" in err
    assert f"[sandbox] Refused write to {outside}/keep.txt" in sent_back
