from __future__ import annotations

from pathlib import Path

import pytest

from pi_tui.testing import FakeLLM, Reply, text, tool_call
from tests.modes.rpc.rpc_client import RpcProcess

from .conftest import MODEL

pytestmark = pytest.mark.slow


def test_rpc_rewind_reports_conflicts_then_applies_the_chosen_resolution(
    fake: FakeLLM, project: Path
) -> None:
    (project / "a.txt").write_text("before\n")
    fake.script([Reply([tool_call("write", {"path": "a.txt", "content": "after\n"})]), Reply([text("ok")])])
    rpc = RpcProcess(project, "--model", MODEL)
    try:
        rpc.call({"type": "prompt", "message": "go"}, timeout=30)
        rpc.event("agent_settled", timeout=30)
        entries = rpc.call({"type": "get_entries"})["data"]["entries"]
        user = next(e for e in entries if e.get("message", {}).get("role") == "user")
        (project / "a.txt").write_text("mine\n")

        stopped = rpc.call({"type": "rewind", "entryId": user["id"], "mode": "both"})["data"]
        assert stopped["applied"] is False and stopped["conflicts"][0]["path"] == "a.txt"
        assert "-mine" in stopped["conflicts"][0]["diff"]
        assert (project / "a.txt").read_text() == "mine\n"

        chosen = {
            "type": "rewind",
            "entryId": user["id"],
            "mode": "both",
            "resolutions": {"a.txt": "restore"},
        }
        done = rpc.call(chosen)["data"]
        assert done["applied"] is True and done["restored"] == ["a.txt"] and done["editorText"] == "go"
        assert (project / "a.txt").read_text() == "before\n"

        bad, _ = rpc.response(rpc.send({"type": "rewind", "entryId": "nope"}))
        assert bad["success"] is False and "nope" in bad["error"]
        assert rpc.close() == 0
    finally:
        rpc.kill()


def test_a_user_bash_command_is_checkpointed_and_rewound(fake: FakeLLM, project: Path) -> None:
    (project / "f.txt").write_text("alpha\n")
    (project / "old.txt").write_text("old\n")
    fake.script([Reply([text("hello")])])
    rpc = RpcProcess(project, "--model", MODEL)
    try:
        rpc.call({"type": "prompt", "message": "hi"}, timeout=30)
        rpc.event("agent_settled", timeout=30)
        leaf = rpc.call({"type": "get_state"})["data"]
        entries = rpc.call({"type": "get_entries"})["data"]["entries"]
        answer = entries[-1]["id"]
        command = "sed -i s/alpha/ALPHA/ f.txt && rm old.txt && echo n > new.txt"
        assert rpc.call({"type": "bash", "command": command}, timeout=30)["data"]["exitCode"] == 0
        entries = rpc.call({"type": "get_entries"})["data"]["entries"]
        record = entries[-1]
        assert record["type"] == "custom" and record["customType"] == "pi-tui.checkpoint"
        assert [f["path"] for f in record["data"]["files"]] == ["f.txt", "new.txt", "old.txt"]
        done = rpc.call({"type": "rewind", "entryId": answer, "mode": "code"})["data"]
        assert sorted(done["restored"]) == ["f.txt", "new.txt", "old.txt"], (leaf, done)
        assert rpc.close() == 0
    finally:
        rpc.kill()
    assert (project / "f.txt").read_text() == "alpha\n" and (project / "old.txt").read_text() == "old\n"
    assert not (project / "new.txt").exists()
