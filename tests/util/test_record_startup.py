from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pi_tui.ai.types import AssistantMessage, TextContent, ToolCall, ToolResultMessage, UserMessage
from pi_tui.session.manager import SessionManager
from pi_tui.testing import FakeLLM, Reply, text

pytestmark = pytest.mark.slow

_DUMP_MODULES = """
import atexit, json, runpy, sys
out = sys.argv.pop(1)
atexit.register(lambda: open(out, "w").write(json.dumps(sorted(sys.modules))))
sys.argv[0] = "pi-tui"
runpy.run_module("pi_tui", run_name="__main__", alter_sys=True)
"""


def _session(path: Path, cwd: Path) -> None:
    manager = SessionManager.create(cwd, session_dir=path.parent)
    manager.append_model_change("wire", "wire-model")
    manager.append_thinking_level_change("low")
    manager.append_message(UserMessage(content=[TextContent(text="list the files")]))
    call = ToolCall(id="c1", name="ls", arguments={"path": "."})
    manager.append_message(
        AssistantMessage(content=[call], stop_reason="toolUse", provider="wire", model="m")
    )
    manager.append_message(
        ToolResultMessage(tool_call_id="c1", tool_name="ls", content=[TextContent(text="a")])
    )
    manager.append_message(
        AssistantMessage(content=[TextContent(text="one file")], provider="wire", model="m")
    )
    manager.close()
    assert manager.path is not None
    manager.path.rename(path)


def test_resuming_a_session_and_answering_never_imports_pydantic(tmp_path: Path, agent_dir: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    session = tmp_path / "sessions" / "old.jsonl"
    session.parent.mkdir()
    _session(session, repo)
    fake = FakeLLM()
    fake.script([Reply([text("Still one file.")])])
    dump = tmp_path / "modules.json"
    with fake.serve() as server:
        config = {
            "providers": {
                "wire": {
                    "baseUrl": server.anthropic_base_url,
                    "api": "anthropic-messages",
                    "apiKey": "k",
                    "models": [{"id": "wire-model", "contextWindow": 200_000, "maxTokens": 8192}],
                }
            }
        }
        (agent_dir / "models.json").write_text(json.dumps(config))
        run = subprocess.run(
            [sys.executable, "-c", _DUMP_MODULES, str(dump), "--session", str(session)]
            + ["--model", "wire/wire-model", "-p", "And now?"],
            cwd=repo,
            env=dict(os.environ),
            capture_output=True,
            text=True,
            timeout=50,
        )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "Still one file."
    # the resumed history really went out: the earlier tool call is in the request
    assert "c1" in json.dumps(fake.requests[-1].body)
    loaded = {name.split(".")[0] for name in json.loads(dump.read_text())}
    assert "pydantic" not in loaded and "pydantic_core" not in loaded
