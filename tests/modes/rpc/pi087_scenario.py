"""One RPC session, driven the same way against the real pi 0.87.1 (to record
``fixtures/pi087-rpc.jsonl``) and against pi-tui (``test_rpc_pi087.py``).

Every step waits for what it caused (a response, ``agent_settled``, the first streamed delta) before the
next one, so both programs see the same commands at the same points of their runs. Re-record with::

    .venv/bin/python -m tests.modes.rpc.pi087_scenario [--pi-dir PREFIX]

(default: the pi that tests/pi087.py provides, installed into its cache on first use).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from pi_tui.testing import FakeLLM, Reply, text, tool_call
from tests.e2e.helpers import write_models_json

from .rpc_client import Record, RpcProcess

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "pi087-rpc.jsonl"
MODEL = "fake-anthropic/claude-fake"
SLOW = " ".join(f"w{i}" for i in range(60))


def prepare(root: Path, fake: FakeLLM) -> tuple[Path, Path]:
    """The project folder and agent dir (settings, files); returns ``(project, agent_dir)``."""
    project = root / "proj"
    project.mkdir()
    (project / "a.txt").write_text("alpha\n")
    (project / "b.txt").write_text("beta\n")
    agent_dir = root / "agent"
    agent_dir.mkdir()
    (agent_dir / "settings.json").write_text(json.dumps({"compaction": {"keepRecentTokens": 50}}))
    fake.script(
        [
            Reply(
                [
                    text("Reading both."),
                    tool_call("read", {"path": "a.txt"}),
                    tool_call("read", {"path": "b.txt"}),
                ]
            ),
            Reply([text("Both read.")]),
            Reply([text(SLOW)], frame_delay=0.02),
            Reply([text("after steer")]),
            Reply([text(SLOW * 5)], frame_delay=0.05),
        ]
    )
    fake.responder = lambda _request: Reply([text("## Goal\nRead files.")])  # compaction summaries
    return project, agent_dir


def drive(rpc: RpcProcess, project: Path) -> None:
    def call(command: dict[str, Any]) -> Record:
        response, _ = rpc.response(rpc.send(command), timeout=30)
        return response

    state = call({"type": "get_state"})
    first_file = state["data"]["sessionFile"]
    call({"type": "prompt", "message": "read a.txt and b.txt"})
    rpc.event("agent_settled")

    call({"type": "prompt", "message": "count slowly"})
    rpc.wait_for(lambda r: r.get("assistantMessageEvent", {}).get("type") == "text_delta")
    call({"type": "steer", "message": "stop counting"})
    rpc.event("agent_settled")

    call({"type": "prompt", "message": "write a lot"})
    rpc.wait_for(lambda r: r.get("assistantMessageEvent", {}).get("type") == "text_delta")
    call({"type": "abort"})

    call({"type": "bash", "command": "echo hi"})
    call({"type": "set_session_name", "name": "oracle"})
    call({"type": "follow_up", "message": "later"})
    call({"type": "clear_queue"})
    for command in (
        {"type": "get_session_stats"},
        {"type": "get_last_assistant_text"},
        {"type": "get_messages"},
        {"type": "get_entries"},
        {"type": "get_tree"},
        {"type": "get_commands"},
        {"type": "get_available_models"},
        {"type": "get_available_thinking_levels"},
        {"type": "cycle_thinking_level"},
        {"type": "set_thinking_level", "level": "high"},
        {"type": "set_model", "provider": "fake-openai", "modelId": "gpt-fake"},
        {"type": "set_model", "provider": "nope", "modelId": "x"},
        {"type": "cycle_model"},
        {"type": "set_model", "provider": "fake-anthropic", "modelId": "claude-fake"},
        {"type": "set_steering_mode", "mode": "all"},
        {"type": "set_follow_up_mode", "mode": "all"},
        {"type": "set_auto_compaction", "enabled": True},
        {"type": "set_auto_retry", "enabled": True},
        {"type": "abort_retry"},
        {"type": "abort_bash"},
        {"type": "export_html", "outputPath": str(project / "out.html")},
        {"type": "set_session_name", "name": ""},
        {"type": "teleport"},
    ):
        call(command)
    rpc.send_raw(b"{not json\n")
    rpc.wait_for(lambda r: r.get("command") == "parse")

    call({"type": "compact"})
    forks = call({"type": "get_fork_messages"})["data"]["messages"]
    call({"type": "fork", "entryId": forks[0]["entryId"]})
    call({"type": "get_state"})
    call({"type": "switch_session", "sessionPath": first_file})
    call({"type": "new_session"})
    call({"type": "clone"})
    call({"type": "get_state"})


def record(pi_dir: Path | None) -> None:
    from tests.pi087 import Pi087, install

    pi = Pi087.at(pi_dir) if pi_dir is not None else install()
    with tempfile.TemporaryDirectory() as tmp:
        fake = FakeLLM()
        project, agent_dir = prepare(Path(tmp), fake)
        with fake.serve() as server:
            write_models_json(agent_dir, server)
            env = dict(os.environ, HOME=tmp, PI_CODING_AGENT_DIR=str(agent_dir), PI_OFFLINE="1")
            rpc = RpcProcess(project, "--model", MODEL, program=pi.argv(), env=env)
            try:
                drive(rpc, project)
                assert rpc.close() == 0
            finally:
                rpc.kill()
        assert fake.violations == [], fake.violations
    FIXTURE.parent.mkdir(exist_ok=True)
    FIXTURE.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rpc.records))
    print(f"wrote {len(rpc.records)} records to {FIXTURE}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pi-dir", type=Path, default=None)
    record(parser.parse_args().pi_dir)
