"""A client written only from pi's documented RPC protocol (pi-reference §10, pi-delta-0.87 §3), the way
an editor integration would be: it knows the command names, fields, responses and events, and nothing of
pi-tui's code. It drives ``pi-tui --mode rpc`` through a tool call, a steer, an abort, a compaction, a fork
and a session switch."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from pi_tui.testing import FakeLLM, Reply, text, tool_call
from tests.e2e.helpers import write_models_json

pytestmark = pytest.mark.slow


class RpcFailed(Exception):
    pass


class PiRpcClient:
    """JSONL over stdio: commands carry an id; the matching response echoes it; events have none."""

    def __init__(self, argv: list[str], cwd: Path) -> None:
        env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}
        self.proc = subprocess.Popen(
            argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        self.inbox: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.events: list[dict[str, Any]] = []
        self.counter = 0
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        buffer = b""
        while chunk := self.proc.stdout.read1(65536):
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")  # LF only: U+2028 may sit inside a record
            for line in lines:
                self.inbox.put(json.loads(line.rstrip(b"\r")))
        self.inbox.put(None)

    def _next(self) -> dict[str, Any]:
        item = self.inbox.get(timeout=30)
        if item is None:
            raise RpcFailed("the agent closed its output")
        return item

    def send(self, command_type: str, **fields: Any) -> str:
        self.counter += 1
        request_id = f"req-{self.counter}"
        line = json.dumps({"id": request_id, "type": command_type, **fields}) + "\n"
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode())
        self.proc.stdin.flush()
        return request_id

    def wait_response(self, request_id: str) -> Any:
        while True:
            record = self._next()
            if record.get("type") == "response" and record.get("id") == request_id:
                if not record["success"]:
                    raise RpcFailed(record["error"])
                return record.get("data")
            self.events.append(record)

    def request(self, command_type: str, **fields: Any) -> Any:
        return self.wait_response(self.send(command_type, **fields))

    def wait_event(self, event_type: str) -> dict[str, Any]:
        while True:
            record = self._next()
            if record.get("type") != "response":
                self.events.append(record)
            if record.get("type") == event_type:
                return record

    def prompt_and_settle(self, message: str) -> list[dict[str, Any]]:
        start = len(self.events)
        self.request("prompt", message=message)
        self.wait_event("agent_settled")
        return self.events[start:]

    def stop(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        code = self.proc.wait(timeout=30)
        self.reader.join(timeout=5)
        assert self.proc.stdout is not None
        self.proc.stdout.close()
        return code


SLOW = " ".join(f"word{i}" for i in range(80))


def test_a_client_built_from_the_protocol_docs(tmp_path: Path, agent_dir: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (agent_dir / "settings.json").write_text(json.dumps({"compaction": {"keepRecentTokens": 40}}))
    fake = FakeLLM()
    fake.script(
        [
            Reply([tool_call("bash", {"command": "echo tool-ran > out.txt"})]),
            Reply([text("Wrote out.txt.")]),
            Reply([text(SLOW)], frame_delay=0.02),
            Reply([text("Steered.")]),
            Reply([text(SLOW * 4)], frame_delay=0.05),
        ]
    )
    fake.responder = lambda _request: Reply([text("Summary: wrote out.txt, was steered, was aborted.")])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        client = PiRpcClient(
            [sys.executable, "-m", "pi_tui", "--mode", "rpc", "--model", "fake-openai/gpt-fake"], work
        )
        try:
            # a prompt with a tool call
            events = client.prompt_and_settle("write out.txt")
            ends = [e for e in events if e["type"] == "tool_execution_end"]
            assert [e["toolName"] for e in ends] == ["bash"] and ends[0]["isError"] is False
            assert (work / "out.txt").read_text() == "tool-ran\n"
            assert client.request("get_last_assistant_text") == {"text": "Wrote out.txt."}

            # steer while the answer streams
            client.request("prompt", message="count")
            client.wait_event("message_update")
            client.request("steer", message="change of plan")
            client.wait_event("agent_settled")
            roles = [
                (m["role"], json.dumps(m.get("content"))) for m in client.request("get_messages")["messages"]
            ]
            steer_at = next(
                i for i, (role, content) in enumerate(roles) if role == "user" and "change of plan" in content
            )
            assert roles[steer_at - 1][0] == "assistant" and roles[steer_at + 1][0] == "assistant"
            assert client.request("get_last_assistant_text") == {"text": "Steered."}

            # abort
            client.request("prompt", message="go on and on")
            client.wait_event("message_update")
            client.request("abort")
            state = client.request("get_state")
            assert state["isStreaming"] is False
            last = client.request("get_messages")["messages"][-1]
            assert last["role"] == "assistant" and last["stopReason"] == "aborted"

            # compact
            compacted = client.request("compact")
            assert compacted["summary"].startswith("Summary:") and compacted["tokensBefore"] > 0
            assert isinstance(compacted["firstKeptEntryId"], str)

            # fork at the first prompt, then switch back to the original session
            original = state["sessionFile"]
            forkable = client.request("get_fork_messages")["messages"]
            assert forkable[0]["text"] == "write out.txt"
            forked = client.request("fork", entryId=forkable[0]["entryId"])
            assert forked == {"text": "write out.txt", "cancelled": False}
            fork_state = client.request("get_state")
            # the recorded prompt stays before the first prompt: pi counts it too
            assert fork_state["sessionFile"] != original and fork_state["messageCount"] == 1
            assert client.request("switch_session", sessionPath=original) == {"cancelled": False}
            back = client.request("get_state")
            assert back["sessionFile"] == original and back["messageCount"] > 0
            assert client.stop() == 0
        finally:
            if client.proc.poll() is None:
                client.proc.kill()
                client.proc.wait(timeout=10)
            for stream in (client.proc.stdin, client.proc.stdout):
                if stream is not None and not stream.closed:
                    stream.close()
    assert fake.violations == []
    saved = Path(original).read_text().splitlines()
    assert any('"change of plan"' in line for line in saved)
