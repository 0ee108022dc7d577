"""RPC: a refusal asks the client through the extension UI, with the permission gate still on top."""

from __future__ import annotations

from pathlib import Path

from pi_tui.testing import FakeLLM, Reply, text, tool_call
from tests.e2e.helpers import write_models_json
from tests.modes.rpc.rpc_client import RpcProcess


def test_rpc_client_allows_the_path_for_the_session(tmp_path: Path, agent_dir: Path) -> None:
    project = tmp_path / "project"
    outside = tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    (outside / "keep.txt").write_text("precious")
    fake = FakeLLM()
    fake.script(
        [
            Reply([tool_call("bash", {"command": f"echo one > {outside}/a.txt"})]),
            Reply(
                [tool_call("bash", {"command": f"echo two > {outside}/b.txt && rm -rf {outside}/keep.txt"})]
            ),
            Reply([text("Done.")]),
        ]
    )
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        rpc = RpcProcess(project, "--model", "fake-openai/gpt-fake", "-e", "permission_gate")
        try:
            rpc.call({"type": "prompt", "message": "write the notes"}, timeout=30)
            ask, _ = rpc.event("extension_ui_request")
            assert ask["method"] == "select" and "The sandbox refused a command" in ask["title"]
            assert ask["options"][1] == f"Allow writes to {outside} for this session"
            rpc.send({"type": "extension_ui_response", "id": ask["id"], "value": ask["options"][1]})
            # the second command writes in the allowed folder; the gate still asks about rm -rf
            gate, _ = rpc.event("extension_ui_request")
            assert gate["method"] == "confirm" and "rm -rf" in gate["message"]
            rpc.send({"type": "extension_ui_response", "id": gate["id"], "confirmed": False})
            rpc.event("agent_settled")
            assert rpc.close() == 0
        finally:
            rpc.kill()
    assert (outside / "a.txt").read_text() == "one\n"
    assert not (outside / "b.txt").exists()  # the gate refused the whole second command
    assert (outside / "keep.txt").exists()


def test_rpc_bash_runs_sandboxed_and_names_the_refusal(tmp_path: Path, agent_dir: Path) -> None:
    project = tmp_path / "project"
    outside = tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    (outside / "keep.txt").write_text("precious")
    rpc = RpcProcess(project, "--provider", "faux")
    try:
        answer = rpc.call({"type": "bash", "command": f"rm {outside}/keep.txt"}, timeout=30)
        assert answer["success"] is True
        assert answer["data"]["exitCode"] == 1
        assert f"[sandbox] Refused write to {outside}/keep.txt" in answer["data"]["output"]
        assert rpc.close() == 0
    finally:
        rpc.kill()
    assert (outside / "keep.txt").exists()
