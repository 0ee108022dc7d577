"""Side by side with pi 0.87.1 on Gemini: the same prompt and script (thinking, a tool call, its result,
more thinking, the answer) against two identical fakes, pointed there by a ``models.json`` that only overrides
the base URL of the built-in provider ``google`` (the Gemini API) or ``google-vertex`` (Vertex AI with an
API key): both use their own catalog's ``gemini-3.1-pro-preview``. The requests must be equivalent: the same path and key header, the same
``contents`` (thought signatures, call ids and the tool result included), ``generationConfig`` (output
cap, thinking), ``toolConfig`` and tool schemas, and no cache fields on either side.

Deliberate differences, listed in docs/providers.md: the system prompt's text, and the words of tool
and parameter descriptions (pi-tui's own prompt and tools); headers the SDK adds (``x-goog-api-client``).
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

KEY = "gemini-side-by-side"
PROMPT = "What does hello.txt say?"
MODEL_ID = "gemini-3.1-pro-preview"  # both catalogs' model; the default of both providers


def _script() -> list[Reply]:
    return [
        Reply(
            [
                thinking("I should read the file first."),
                text("Let me read it."),
                tool_call("read", {"path": "hello.txt"}),
            ]
        ),
        Reply([thinking("The file holds a greeting."), text("It says hello world.")]),
    ]


# provider -> (wire API, key variable, base URL attribute of the fake server, request path)
PROVIDERS = {
    "google": (
        "google-generative-ai",
        "GEMINI_API_KEY",
        "gemini_base_url",
        "/v1beta/models/gemini-3.1-pro-preview:streamGenerateContent?alt=sse",
    ),
    "google-vertex": (
        "google-vertex",
        "GOOGLE_CLOUD_API_KEY",
        "url",
        "/v1/publishers/google/models/gemini-3.1-pro-preview:streamGenerateContent?alt=sse",
    ),
}


def _setup(root: Path, fake: FakeLLM, provider: str) -> tuple[Path, dict[str, str]]:
    assert fake.server is not None
    home = root / "home"
    agent = home / ".pi" / "agent"
    agent.mkdir(parents=True)
    project = root / "project"
    project.mkdir()
    (project / "hello.txt").write_text("hello world\n")
    variable, base_url = PROVIDERS[provider][1:3]
    config = {"providers": {provider: {"baseUrl": getattr(fake.server, base_url)}}}
    (agent / "models.json").write_text(json.dumps(config, indent=2))
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}
    env |= {"HOME": str(home), "PI_CODING_AGENT_DIR": str(agent), "PI_OFFLINE": "1", variable: KEY}
    return project, env


def _run(argv: list[str], root: Path, fake: FakeLLM, provider: str) -> subprocess.CompletedProcess[str]:
    project, env = _setup(root, fake, provider)
    args = ["--provider", provider, "--model", MODEL_ID, "-p", PROMPT]
    return subprocess.run([*argv, *args], cwd=project, env=env, capture_output=True, text=True, timeout=50)


def _without_descriptions(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: _without_descriptions(v) for k, v in schema.items() if k != "description"}
    if isinstance(schema, list):
        return [_without_descriptions(v) for v in schema]
    return schema


def _tools(body: dict[str, Any]) -> list[tuple[str, Any]]:
    declarations = body["tools"][0]["functionDeclarations"]
    return [(d["name"], _without_descriptions(d["parametersJsonSchema"])) for d in declarations]


@pytest.mark.parametrize("provider", list(PROVIDERS))
def test_pi_and_pi_tui_send_equivalent_gemini_requests_through_a_tool_loop(
    tmp_path: Path, pi087: Pi087, provider: str
) -> None:
    pi_fake, tui_fake = FakeLLM(api_key=KEY), FakeLLM(api_key=KEY)
    pi_fake.script(_script())
    tui_fake.script(_script())
    with pi_fake.serve(), tui_fake.serve():
        pi_run = _run(pi087.argv(), tmp_path / "pi", pi_fake, provider)
        tui_run = _run([sys.executable, "-m", "pi_tui"], tmp_path / "tui", tui_fake, provider)
    assert pi_run.returncode == 0, pi_run.stderr
    assert tui_run.returncode == 0, tui_run.stderr
    assert "It says hello world." in pi_run.stdout and "It says hello world." in tui_run.stdout
    assert pi_fake.violations == [] and tui_fake.violations == []
    pi_requests, tui_requests = pi_fake.requests, tui_fake.requests
    assert len(pi_requests) == len(tui_requests) == 2

    for theirs, ours in zip(pi_requests, tui_requests, strict=True):
        assert ours.path == theirs.path == PROVIDERS[provider][3]
        assert "x-goog-api-key" in ours.headers and "x-goog-api-key" in theirs.headers
        a, b = theirs.body, ours.body
        assert list(b) == list(a)  # contents, systemInstruction, tools, toolConfig, generationConfig
        assert b["contents"] == a["contents"]
        assert b["generationConfig"] == a["generationConfig"]
        assert b["toolConfig"] == a["toolConfig"] == {"functionCallingConfig": {"mode": "VALIDATED"}}
        assert _tools(b) == _tools(a)
        assert b["systemInstruction"]["role"] == a["systemInstruction"]["role"] == "user"
        assert "cachedContent" not in a and "cachedContent" not in b

    # The second request replays the first answer: thought, text and signed call, then the result.
    replayed = tui_requests[1].body["contents"]
    assert replayed[1]["role"] == "model" and replayed[1]["parts"][0]["thought"] is True
    assert "thoughtSignature" in replayed[1]["parts"][2]
    assert replayed[2]["parts"][0]["functionResponse"]["response"] == {"output": "hello world\n"}
