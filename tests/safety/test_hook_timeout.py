from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from pi_tui.testing import FakeLLM, Reply, text, tool_call
from tests.e2e.helpers import run_cli, write_models_json

from .helpers import MODEL

pytestmark = pytest.mark.slow

HANGER = """
import asyncio

def register(pi):
    @pi.on("before_agent_start")
    async def hang(event, ctx):
        await asyncio.Event().wait()  # never set

    @pi.on("tool_call")
    async def hang_too(event, ctx):
        await asyncio.Event().wait()
"""


def test_a_hanging_hook_is_reported_by_name_and_the_run_finishes_within_its_budget(
    tmp_path: Path, agent_dir: Path
) -> None:
    (agent_dir / "settings.json").write_text(json.dumps({"extensionHookTimeout": 1}))
    hanger = tmp_path / "hanger.py"
    hanger.write_text(HANGER)
    fake = FakeLLM()
    fake.script([Reply([tool_call("bash", {"command": "touch ran.txt"})]), Reply([text("finished anyway")])])
    started = time.monotonic()
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        run = run_cli([*MODEL, "-e", str(hanger), "-p", "go"], tmp_path, timeout=30)
    elapsed = time.monotonic() - started

    assert run.returncode == 0, run.stderr
    assert run.stdout == "finished anyway\n"
    assert (
        'Extension "hanger" failed in before_agent_start: HookTimeoutError: extension "hanger" did not finish its '
        "before_agent_start handler within 1s (setting extensionHookTimeout); it was cancelled"
    ) in run.stderr
    assert "did not finish its tool_call handler within 1s" in run.stderr
    assert not (tmp_path / "ran.txt").exists()  # a tool_call handler that overran blocks the call
    (blocked,) = fake.requests[1].tool_results()
    assert blocked.is_error and 'the tool_call handler of extension "hanger" failed' in blocked.content
    assert elapsed < 20


CONTEXT_HANGER = """
import asyncio

def register(pi):
    @pi.on("context")
    async def hang(event, ctx):
        await asyncio.Event().wait()
"""


def test_a_hanging_context_handler_fails_its_request_within_the_budget(
    tmp_path: Path, agent_dir: Path
) -> None:
    (agent_dir / "settings.json").write_text(json.dumps({"extensionHookTimeout": 1}))
    hanger = tmp_path / "ctxhang.py"
    hanger.write_text(CONTEXT_HANGER)
    fake = FakeLLM()
    started = time.monotonic()
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        run = run_cli([*MODEL, "-e", str(hanger), "-p", "go"], tmp_path, timeout=30)

    assert run.returncode == 1
    assert 'extension "ctxhang" did not finish its context handler within 1s' in run.stderr, run.stderr
    assert fake.requests == []
    assert time.monotonic() - started < 20
