"""Side by side with pi 0.87.1 on a Claude subscription login: pi and pi-tui, each with the same
``anthropic`` OAuth login in ``auth.json`` (an ``sk-ant-oat`` token), answer the same prompt and script
(a tool call, its result, the answer) against two identical fakes. Both must speak as Claude Code: the same
Bearer auth and identity headers, the two subscription betas first, the identity system block first, and
the tools (and the replayed tool call) in Claude Code's casing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pi_tui.testing import FakeLLM, Reply, text, tool_call

from ..pi087 import Pi087

pytestmark = pytest.mark.slow

TOKEN = "sk-ant-oat01-side-by-side-token"
PROMPT = "What does hello.txt say?"
IDENTITY = "You are Claude Code, Anthropic's official CLI for Claude."


def _run(argv: list[str], root: Path, fake: FakeLLM) -> subprocess.CompletedProcess[str]:
    assert fake.server is not None
    home = root / "home"
    agent = home / ".pi" / "agent"
    agent.mkdir(parents=True)
    project = root / "project"
    project.mkdir()
    (project / "hello.txt").write_text("hello world\n")
    (agent / "models.json").write_text(
        json.dumps({"providers": {"anthropic": {"baseUrl": fake.server.anthropic_base_url}}})
    )
    login = {
        "type": "oauth",
        "refresh": "rt-unused",
        "access": TOKEN,
        "expires": int(time.time() * 1000) + 86_400_000,
    }
    (agent / "auth.json").write_text(json.dumps({"anthropic": login}, indent=2))
    env = {
        k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST" and not k.lower().endswith("_proxy")
    }
    env |= {"HOME": str(home), "PI_CODING_AGENT_DIR": str(agent), "PI_OFFLINE": "1"}
    args = ["--provider", "anthropic", "--model", "claude-sonnet-4-6", "--thinking", "off", "-p", PROMPT]
    return subprocess.run([*argv, *args], cwd=project, env=env, capture_output=True, text=True, timeout=50)


def _script() -> list[Reply]:
    return [
        Reply([text("Let me read it."), tool_call("Read", {"path": "hello.txt"})]),
        Reply([text("It says hello world.")]),
    ]


def test_pi_and_pi_tui_speak_as_claude_code_with_a_subscription_login(pi087: Pi087, tmp_path: Path) -> None:
    pi_fake, tui_fake = FakeLLM(api_key=TOKEN), FakeLLM(api_key=TOKEN)
    pi_fake.script(_script())
    tui_fake.script(_script())
    with pi_fake.serve(), tui_fake.serve():
        pi_run = _run(pi087.argv(), tmp_path / "pi", pi_fake)
        tui_run = _run([sys.executable, "-m", "pi_tui"], tmp_path / "tui", tui_fake)
    assert pi_run.returncode == 0, pi_run.stderr
    assert tui_run.returncode == 0, tui_run.stderr
    assert pi_run.stdout.strip() == tui_run.stdout.strip() == "It says hello world."
    assert len(pi_fake.requests) == len(tui_fake.requests) == 2
    for theirs, ours in zip(pi_fake.requests, tui_fake.requests, strict=True):
        for name in ("user-agent", "x-app", "anthropic-dangerous-direct-browser-access", "anthropic-version"):
            assert ours.headers[name] == theirs.headers[name], name
        assert "authorization" in ours.headers and "x-api-key" not in ours.headers
        assert "authorization" in theirs.headers and "x-api-key" not in theirs.headers
        assert (
            ours.headers["anthropic-beta"].split(",")[:2] == theirs.headers["anthropic-beta"].split(",")[:2]
        )
        assert theirs.headers["anthropic-beta"].startswith("claude-code-20250219,oauth-2025-04-20")
        assert ours.body is not None and theirs.body is not None
        assert ours.body["system"][0] == theirs.body["system"][0]
        assert ours.body["system"][0]["text"] == IDENTITY
        assert [t["name"] for t in ours.body["tools"]] == [t["name"] for t in theirs.body["tools"]]
    replayed = [
        [
            b["name"]
            for m in r.body["messages"]
            for b in m["content"]
            if isinstance(b, dict) and b.get("type") == "tool_use"
        ]
        for r in (pi_fake.requests[1], tui_fake.requests[1])
        if r.body is not None
    ]
    assert replayed == [["Read"], ["Read"]]
    assert pi_fake.violations == [] and tui_fake.violations == []
