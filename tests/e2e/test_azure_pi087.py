"""Side by side with pi 0.87.1 on Azure OpenAI: the same prompt and script (reasoning, text, two parallel
tool calls, their results, the answer) against two identical fakes that know one deployment, the built-in
``azure-openai-responses`` provider pointed there by a ``models.json`` ``baseUrl`` and its key in
``AZURE_OPENAI_API_KEY``. The model id is mapped to the deployment with
``AZURE_OPENAI_DEPLOYMENT_NAME_MAP``. The requests must be equivalent: the same path and api-version,
``api-key`` header, deployment, input items (the replayed reasoning item with its encrypted content, the
message and function-call items with their ids, the outputs), tool schemas (strict where the tool asks
for it), output cap, reasoning and cache fields.

Deliberate differences, listed in docs/providers.md: the system prompt's text, tool descriptions, the
session id (each run makes its own) in ``prompt_cache_key``, and the order of the body's keys (pi-tui
writes ``input`` first).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pi_tui.testing import FakeLLM, Reply, text, thinking, tool_call

from ..pi087 import Pi087

pytestmark = pytest.mark.slow

KEY = "azure-side-by-side"
PROMPT = "What do hello.txt and bye.txt say?"
DEPLOYMENT = "team-gpt54"
MODEL = "gpt-5.4"  # the provider's default


def _script() -> list[Reply]:
    return [
        Reply(
            [
                thinking("I should read both files."),
                text("Let me read them."),
                tool_call("read", {"path": "hello.txt"}),
                tool_call("read", {"path": "bye.txt"}),
            ]
        ),
        Reply([text("They say hello world and bye.")]),
    ]


def _run(argv: list[str], root: Path, fake: FakeLLM, level: str) -> subprocess.CompletedProcess[str]:
    assert fake.server is not None
    home = root / "home"
    agent = home / ".pi" / "agent"
    agent.mkdir(parents=True)
    project = root / "project"
    project.mkdir()
    (project / "hello.txt").write_text("hello world\n")
    (project / "bye.txt").write_text("bye\n")
    config = {"providers": {"azure-openai-responses": {"baseUrl": fake.server.azure_base_url}}}
    (agent / "models.json").write_text(json.dumps(config))
    env = {
        k: v
        for k, v in os.environ.items()
        if k != "PYTEST_CURRENT_TEST" and not k.lower().endswith("_proxy") and not k.startswith("AZURE_")
    }
    env |= {
        "HOME": str(home),
        "PI_CODING_AGENT_DIR": str(agent),
        "PI_OFFLINE": "1",
        "AZURE_OPENAI_API_KEY": KEY,
        "AZURE_OPENAI_DEPLOYMENT_NAME_MAP": f"gpt-4o=other, {MODEL}={DEPLOYMENT}",
    }
    args = ["--provider", "azure-openai-responses", "--model", MODEL, "--thinking", level, "-p", PROMPT]
    return subprocess.run([*argv, *args], cwd=project, env=env, capture_output=True, text=True, timeout=50)


def _without_descriptions(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_descriptions(v) for k, v in value.items() if k != "description"}
    if isinstance(value, list):
        return [_without_descriptions(v) for v in value]
    return value


def _comparable(body: dict[str, Any]) -> dict[str, Any]:
    out = dict(body)
    items = [dict(i) for i in body["input"]]
    assert items[0]["role"] in ("developer", "system")
    items[0]["content"] = "<instructions>"
    out["input"] = items
    out["tools"] = _without_descriptions(body.get("tools"))
    out.pop("prompt_cache_key", None)
    return out


@pytest.mark.parametrize("level", ["high", "off"])
def test_pi_and_pi_tui_send_equivalent_azure_requests(tmp_path: Path, pi087: Pi087, level: str) -> None:
    pi_fake = FakeLLM(api_key=KEY, azure_deployments={DEPLOYMENT})
    tui_fake = FakeLLM(api_key=KEY, azure_deployments={DEPLOYMENT})
    pi_fake.script(_script())
    tui_fake.script(_script())
    with pi_fake.serve(), tui_fake.serve():
        pi_run = _run(pi087.argv(), tmp_path / "pi", pi_fake, level)
        tui_run = _run([sys.executable, "-m", "pi_tui"], tmp_path / "tui", tui_fake, level)
    assert pi_run.returncode == 0, pi_run.stderr
    assert tui_run.returncode == 0, tui_run.stderr
    assert "They say hello world and bye." in pi_run.stdout
    assert "They say hello world and bye." in tui_run.stdout
    assert pi_fake.violations == [] and tui_fake.violations == []
    assert len(pi_fake.requests) == len(tui_fake.requests) == 2
    for theirs, ours in zip(pi_fake.requests, tui_fake.requests, strict=True):
        assert ours.path == theirs.path == "/openai/v1/responses?api-version=v1"
        assert "api-key" in ours.headers and "api-key" in theirs.headers
        assert "authorization" not in ours.headers
        assert ours.body["model"] == theirs.body["model"] == DEPLOYMENT
        assert sorted(ours.body) == sorted(theirs.body)
        assert ("prompt_cache_key" in ours.body) == ("prompt_cache_key" in theirs.body)
        assert _comparable(ours.body) == _comparable(theirs.body)
    replay = tui_fake.requests[1].body["input"]
    outputs = [i for i in replay if i.get("type") == "function_call_output"]
    assert [o["output"] for o in outputs] == ["hello world\n", "bye\n"]
