"""Abort works while an extension's ``input`` or ``before_agent_start`` handler runs (issue #15, item 4):
the prompt ends at once with an "aborted" outcome instead of waiting out the hook budget."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest

from pi_tui.testing import FakeLLM, Reply, text, tool_call
from tests.e2e.helpers import write_models_json
from tests.modes.rpc.rpc_client import RpcProcess

from .helpers import MODEL, session_lines, start_cli, wait_for

pytestmark = pytest.mark.slow

# The first prompt's handler says it is waiting, then waits forever; later prompts pass straight through.
HANGER = """
import asyncio
from pathlib import Path

calls = []

def register(pi):
    @pi.on("{event}")
    async def hang(event, ctx):
        calls.append(1)
        if len(calls) == 1:
            Path("hook.waiting").write_text("yes")
            ctx.ui.notify("hook waiting")
            await asyncio.Event().wait()  # never set
"""


@pytest.mark.parametrize("event", ["input", "before_agent_start"])
def test_rpc_abort_ends_a_prompt_whose_hook_never_returns(
    tmp_path: Path, agent_dir: Path, event: str
) -> None:
    hanger = tmp_path / "hanger.py"
    hanger.write_text(HANGER.replace("{event}", event))
    fake = FakeLLM()
    fake.script([Reply([text("second prompt answered")])])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        rpc = RpcProcess(tmp_path, *MODEL, "-e", str(hanger))
        try:
            first = rpc.send({"type": "prompt", "message": "first"})
            rpc.wait_for(lambda r: r.get("method") == "notify" and r.get("message") == "hook waiting")
            started = time.monotonic()
            rpc.call({"type": "abort"}, timeout=10)
            answer, _ = rpc.response(first, timeout=10)
            assert time.monotonic() - started < 5  # not the 120 s hook budget
            assert answer["success"] is False and answer["error"].startswith("Aborted"), answer
            assert rpc.call({"type": "get_state"})["data"]["isStreaming"] is False

            rpc.call({"type": "prompt", "message": "second"})
            end, _ = rpc.event("agent_end")
            assert end["messages"][-1]["content"][0]["text"] == "second prompt answered"
            assert rpc.close() == 0
        finally:
            rpc.kill()
    assert len(fake.requests) == 1  # nothing of the aborted prompt was sent
    messages = [line["message"] for line in session_lines(agent_dir) if line.get("type") == "message"]
    assert [(m["role"], m["content"][0]["text"] if m["role"] == "user" else "") for m in messages] == [
        ("system", ""),  # the prompt recorded by the first run that starts, as pi records it
        ("user", "second"),
        ("assistant", ""),
    ]


def test_ctrl_c_in_print_mode_ends_a_run_whose_before_agent_start_hook_never_returns(
    tmp_path: Path, agent_dir: Path
) -> None:
    hanger = tmp_path / "hanger.py"
    hanger.write_text(HANGER.replace("{event}", "before_agent_start"))
    (agent_dir).mkdir(parents=True, exist_ok=True)
    (agent_dir / "settings.json").write_text(json.dumps({"extensionHookTimeout": 600}))
    fake = FakeLLM()
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        proc = start_cli([*MODEL, "-e", str(hanger), "-p", "go"], tmp_path)
        try:
            wait_for(lambda: (tmp_path / "hook.waiting").exists(), 30, "the hook to start waiting")
            started = time.monotonic()
            os.kill(proc.pid, signal.SIGINT)
            proc.wait(timeout=10)
            elapsed = time.monotonic() - started
        finally:
            if proc.poll() is None:
                proc.kill()
            out, err = proc.communicate()
    assert proc.returncode == 130, err
    assert elapsed < 5
    assert out == ""
    assert fake.requests == []


@pytest.mark.parametrize("event", ["tool_call", "context", "tool_result"])
def test_rpc_abort_ends_a_run_whose_loop_hook_never_returns(
    tmp_path: Path, agent_dir: Path, event: str
) -> None:
    hanger = tmp_path / "hanger.py"
    hanger.write_text(HANGER.replace("{event}", event))
    fake = FakeLLM()
    fake.script([Reply([tool_call("bash", {"command": "touch ran.txt"})]), Reply([text("never")])])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        rpc = RpcProcess(tmp_path, *MODEL, "-e", str(hanger))
        try:
            rpc.call({"type": "prompt", "message": "first"})
            rpc.wait_for(lambda r: r.get("method") == "notify" and r.get("message") == "hook waiting")
            started = time.monotonic()
            answer, before = rpc.response(rpc.send({"type": "abort"}), timeout=10)
            assert answer["success"] is True
            assert time.monotonic() - started < 5  # not the 120 s hook budget
            (end,) = [r for r in before if r["type"] == "agent_end"]  # abort answers once the run ended
            assert rpc.call({"type": "get_state"})["data"]["isStreaming"] is False
            assert rpc.close() == 0
        finally:
            rpc.kill()
    assert "extension_error" not in json.dumps(rpc.records)  # an abort is not the extension's failure
    assert len(fake.requests) == (0 if event == "context" else 1)
    # as pi 0.87.1, agent_end lists the run's announced messages from the system message on (pi-tui
    # does not store that one in the session file)
    assert end["messages"][0]["role"] == "system"
    roles = [m["role"] for m in end["messages"][1:]]
    last = end["messages"][-1]
    if event == "context":  # the first request was never built
        assert roles == ["user", "assistant"] and last["stopReason"] == "aborted", last
    elif event == "tool_call":  # the call is refused, never run
        assert not (tmp_path / "ran.txt").exists()
        assert roles == ["user", "assistant", "toolResult"] and last["isError"] is True
    else:  # the tool ran; its result is kept as the tool gave it
        assert (tmp_path / "ran.txt").exists()
        assert roles == ["user", "assistant", "toolResult"] and last["isError"] is False
    saved = [line["message"]["role"] for line in session_lines(agent_dir) if line.get("type") == "message"]
    assert saved == ["system", *roles]  # and every line of the session file parses
