from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_tui.testing import FakeLLM, Reply, text, tool_call
from pi_tui.util.json_safe import MAX_DEPTH, MAX_RECORD_DEPTH
from tests.e2e.helpers import write_models_json

from .rpc_client import RpcProcess

pytestmark = pytest.mark.slow

HOSTILE = b"[" * 100_000 + b"]" * 100_000


def _arguments(depth: int) -> str:
    """Tool-call arguments whose ``tree`` makes the whole object ``depth`` levels deep."""
    return '{"path":"notes.txt","tree":' + "[" * (depth - 1) + "]" * (depth - 1) + "}"


@pytest.mark.parametrize("model", ["fake-anthropic/claude-fake", "fake-openai/gpt-fake"])
def test_deep_json_on_stdin_or_from_the_model_is_one_error_and_the_session_goes_on(
    tmp_path: Path, agent_dir: Path, model: str
) -> None:
    (tmp_path / "notes.txt").write_text("remember the milk\n")
    fake = FakeLLM()
    fake.script(
        [
            Reply([tool_call("read", _arguments(MAX_DEPTH))]),  # deep, but allowed
            Reply([tool_call("read", _arguments(100_000))]),  # too deep: the call gets no arguments
            Reply([text("all done")]),
        ]
    )
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        rpc = RpcProcess(tmp_path, "--model", model)
        try:
            rpc.send_raw(HOSTILE + b"\n")
            answer = rpc.next()
            assert answer == {
                "type": "response",
                "command": "parse",
                "success": False,
                "error": f"Failed to parse command: JSON nested deeper than {MAX_RECORD_DEPTH} levels "
                f"at position {MAX_RECORD_DEPTH} (line 1 column {MAX_RECORD_DEPTH + 1})",
            }
            # the same depth inside a command: rejected whole, the command never runs
            rpc.send_raw(b'{"id":"n","type":"set_session_name","name":' + HOSTILE + b"}\n")
            assert rpc.next()["command"] == "parse"
            assert "sessionName" not in rpc.call({"type": "get_state"})["data"]

            rpc.call({"type": "prompt", "message": "read my notes"})
            rpc.event("agent_end", timeout=40)
            messages = rpc.call({"type": "get_messages"})["data"]["messages"]
            assert rpc.close() == 0
        finally:
            rpc.kill()
    assert fake.violations == []
    fake.assert_script_consumed()
    first_call, second_call = [m["content"][0] for m in messages if m["role"] == "assistant"][:2]
    assert first_call["arguments"]["path"] == "notes.txt"
    assert json.dumps(first_call["arguments"]["tree"]).count("[") == MAX_DEPTH - 1
    assert second_call["arguments"] == {}  # what the model sent is kept as text beside it
    assert second_call["rawArguments"].startswith('{"path":"notes.txt","tree":[[[')
    results = [m for m in messages if m["role"] == "toolResult"]
    assert [r["isError"] for r in results] == [False, True]
    assert "remember the milk" in results[0]["content"][0]["text"]
    assert messages[-1]["content"][0]["text"] == "all done"
