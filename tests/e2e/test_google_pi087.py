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

import subprocess
from pathlib import Path
from typing import Any

import pytest

from pi_tui.testing import FakeLLM

from ..pi087 import Pi087
from .side_by_side import read_one_script, run_in_home, run_pair, without_descriptions

KEY = "gemini-side-by-side"
PROMPT = "What does hello.txt say?"
MODEL_ID = "gemini-3.1-pro-preview"  # both catalogs' model; the default of both providers


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


def _run(argv: list[str], root: Path, fake: FakeLLM, provider: str) -> subprocess.CompletedProcess[str]:
    assert fake.server is not None
    variable, base_url = PROVIDERS[provider][1:3]
    return run_in_home(
        argv,
        root,
        providers={provider: {"baseUrl": getattr(fake.server, base_url)}},
        args=["--provider", provider, "--model", MODEL_ID, "-p", PROMPT],
        files={"hello.txt": "hello world\n"},
        env={variable: KEY},
    )


def _tools(body: dict[str, Any]) -> list[tuple[str, Any]]:
    declarations = body["tools"][0]["functionDeclarations"]
    return [(d["name"], without_descriptions(d["parametersJsonSchema"])) for d in declarations]


@pytest.mark.parametrize("provider", list(PROVIDERS))
def test_pi_and_pi_tui_send_equivalent_gemini_requests_through_a_tool_loop(
    tmp_path: Path, pi087: Pi087, provider: str
) -> None:
    pi_fake, pi_run, tui_fake, tui_run = run_pair(
        pi087,
        tmp_path,
        lambda: FakeLLM(api_key=KEY),
        lambda: read_one_script("The file holds a greeting."),
        lambda argv, root, fake: _run(argv, root, fake, provider),
    )
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
