from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from pi_tui.testing import FakeLLM, Fault, Reply, text, tool_call
from tests.e2e.helpers import write_models_json

from .rpc_client import RpcProcess

pytestmark = pytest.mark.slow

SHAPER = """
from pathlib import Path

from pi_tui.extensions.api import ExtensionAPI


def register(pi: ExtensionAPI) -> None:
    @pi.on("input")
    def shape(event, ctx):
        if event.source == "rpc" and "secret" in event.text:
            return {"action": "transform", "text": event.text.replace("secret", "[redacted]")}
        return None

    async def later(args, ctx):
        pi.send_user_message("hello from an extension")

    pi.register_command("later", handler=later, description="Start a turn from the extension")
    pi.register_panel("todo", lambda: "- write the RPC docs", placement="prefix")

    def boom(args, ctx):
        raise RuntimeError("kaboom")

    pi.register_command("boom", handler=boom)

    @pi.on("session_shutdown")
    def bye(event, ctx):
        (Path(ctx.cwd) / "bye.txt").write_text(event.reason)
"""

SLOW = " ".join(f"w{i}" for i in range(60))


def test_steer_passes_input_handlers_and_extension_runs_settle(tmp_path: Path, agent_dir: Path) -> None:
    (agent_dir / "extensions").mkdir(parents=True)
    (agent_dir / "extensions" / "shaper.py").write_text(SHAPER)
    fake = FakeLLM()
    fake.script(
        [
            Reply([text(SLOW)], frame_delay=0.02),
            Reply([text("noted")]),
            Reply([text("hi extension")]),
            Reply([text(SLOW * 10)], frame_delay=0.05),
        ]
    )
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        rpc = RpcProcess(tmp_path, "--model", "fake-openai/gpt-fake")
        try:
            rpc.call({"type": "prompt", "message": "tell me"}, timeout=30)
            rpc.event("message_update")
            rpc.call({"type": "steer", "message": "the secret plan"})
            rpc.event("agent_settled")
            dumped = json.dumps(rpc.call({"type": "get_messages"})["data"])
            assert "[redacted] plan" in dumped and "secret" not in dumped

            rpc.call({"type": "prompt", "message": "/later"})
            settled, events = rpc.event("agent_settled")
            assert [e["type"] for e in events if e["type"] in ("agent_start", "agent_end")] == [
                "agent_start",
                "agent_end",
            ]
            assert rpc.call({"type": "get_last_assistant_text"})["data"] == {"text": "hi extension"}

            context = rpc.call({"type": "get_context"})["data"]
            assert [(p["name"], p["placement"]) for p in context["panels"]] == [("todo", "prefix")]
            assert context["panels"][0]["tokens"] > 0 and context["panels"][0]["lastRequest"] == "hit"
            assert "## Panels" in context["markdown"] and "todo" in context["markdown"]
            assert len(context["ledger"]["requests"]) == 3 and context["nextRequest"]["cacheReadTokens"] > 0
            assert context["breakpoints"][0]["after"] == "system"

            # end of input while a turn streams: the turn stops, the session is saved, exit 0
            session_file = rpc.call({"type": "get_state"})["data"]["sessionFile"]
            rpc.call({"type": "prompt", "message": "a long one"})
            rpc.event("message_update")
            assert rpc.close() == 0
        finally:
            rpc.kill()
    saved = [json.loads(line) for line in Path(session_file).read_text().splitlines()]
    messages = [e["message"] for e in saved if e.get("type") == "message"]
    assert messages[-2]["role"] == "user" and "a long one" in json.dumps(messages[-2])
    assert messages[-1]["role"] == "assistant" and messages[-1]["stopReason"] == "aborted"
    assert (tmp_path / "bye.txt").read_text() == "quit"


def test_sigterm_ends_like_end_of_input(tmp_path: Path, agent_dir: Path) -> None:
    (agent_dir / "extensions").mkdir(parents=True)
    (agent_dir / "extensions" / "shaper.py").write_text(SHAPER)
    fake = FakeLLM()
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        rpc = RpcProcess(tmp_path, "--model", "fake-openai/gpt-fake")
        try:
            rpc.call({"type": "get_state"}, timeout=30)
            failed, before = rpc.response(rpc.send({"type": "prompt", "message": "/boom"}))
            assert failed["success"] is True  # the command ran; its failure is an event
            error = next(r for r in before if r["type"] == "extension_error")
            assert error["extensionPath"].endswith("shaper.py") and "kaboom" in error["error"]
            assert "boom" in error["event"]
            rpc.proc.send_signal(signal.SIGTERM)
            assert rpc.proc.wait(timeout=30) == 143  # 128 + SIGTERM (issue #15); shutdown still runs
        finally:
            rpc.kill()
    assert (tmp_path / "bye.txt").read_text() == "quit"


def test_abort_retry_ends_a_run_waiting_to_retry(tmp_path: Path, agent_dir: Path) -> None:
    (agent_dir / "settings.json").write_text(json.dumps({"retry": {"baseDelayMs": 30_000, "maxDelayMs": 0}}))
    fake = FakeLLM()
    fake.script([Fault("overloaded", retry_after_ms=None)])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        rpc = RpcProcess(tmp_path, "--model", "fake-openai/gpt-fake")
        try:
            rpc.call({"type": "prompt", "message": "hi"}, timeout=30)
            retry, before = rpc.event("auto_retry_start")
            assert retry["attempt"] == 1 and retry["delayMs"] == 30_000
            # as pi 0.87.1: the failed attempt's run ends (willRetry) before the wait is announced
            assert before[-1]["type"] == "agent_end" and before[-1]["willRetry"] is True
            rpc.call({"type": "abort_retry"})
            end, _ = rpc.event("auto_retry_end")
            assert end["success"] is False and end["finalError"] == "Retry cancelled"
            _, rest = rpc.event("agent_settled")
            assert "agent_end" not in [r["type"] for r in rest]  # that run has ended already
            assert rpc.call({"type": "get_state"})["data"]["isStreaming"] is False
            assert rpc.close() == 0
        finally:
            rpc.kill()
    assert len(fake.requests) == 1


def test_the_permission_gate_asks_the_rpc_client(tmp_path: Path, agent_dir: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "keep.txt").write_text("precious")
    fake = FakeLLM()
    fake.script([Reply([tool_call("bash", {"command": "rm -rf data"})]), Reply([text("Left it alone.")])])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        rpc = RpcProcess(tmp_path, "--model", "fake-openai/gpt-fake", "-e", "permission_gate")
        try:
            rpc.call({"type": "prompt", "message": "clean up"}, timeout=30)
            ask, _ = rpc.event("extension_ui_request")
            assert ask["method"] == "confirm" and "rm -rf data" in ask["message"]
            rpc.send({"type": "extension_ui_response", "id": ask["id"], "confirmed": False})
            _, events = rpc.event("agent_settled")
            ended = next(e for e in events if e["type"] == "tool_execution_end")
            assert ended["isError"] is True
            assert rpc.close() == 0
        finally:
            rpc.kill()
    assert (tmp_path / "data" / "keep.txt").read_text() == "precious"
