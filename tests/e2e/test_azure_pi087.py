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

import subprocess
from pathlib import Path
from typing import Any

import pytest

from pi_tui.testing import FakeLLM

from ..pi087 import Pi087
from .side_by_side import read_both_script, run_in_home, run_pair, without_descriptions

pytestmark = pytest.mark.slow

KEY = "azure-side-by-side"
PROMPT = "What do hello.txt and bye.txt say?"
DEPLOYMENT = "team-gpt54"
MODEL = "gpt-5.4"  # the provider's default


def _run(argv: list[str], root: Path, fake: FakeLLM, level: str) -> subprocess.CompletedProcess[str]:
    assert fake.server is not None
    return run_in_home(
        argv,
        root,
        providers={"azure-openai-responses": {"baseUrl": fake.server.azure_base_url}},
        args=["--provider", "azure-openai-responses", "--model", MODEL, "--thinking", level, "-p", PROMPT],
        env={
            "AZURE_OPENAI_API_KEY": KEY,
            "AZURE_OPENAI_DEPLOYMENT_NAME_MAP": f"gpt-4o=other, {MODEL}={DEPLOYMENT}",
        },
        drop_env_prefix="AZURE_",
    )


def _comparable(body: dict[str, Any]) -> dict[str, Any]:
    out = dict(body)
    items = [dict(i) for i in body["input"]]
    assert items[0]["role"] in ("developer", "system")
    items[0]["content"] = "<instructions>"
    out["input"] = items
    out["tools"] = without_descriptions(body.get("tools"))
    out.pop("prompt_cache_key", None)
    return out


@pytest.mark.parametrize("level", ["high", "off"])
def test_pi_and_pi_tui_send_equivalent_azure_requests(tmp_path: Path, pi087: Pi087, level: str) -> None:
    pi_fake, pi_run, tui_fake, tui_run = run_pair(
        pi087,
        tmp_path,
        lambda: FakeLLM(api_key=KEY, azure_deployments={DEPLOYMENT}),
        read_both_script,
        lambda argv, root, fake: _run(argv, root, fake, level),
    )
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
