"""The reasoning tokens a provider reports are kept in the answer's usage as pi 0.87.1 keeps them
(``usage.reasoning``): Chat Completions' ``completion_tokens_details.reasoning_tokens``, the Responses API's
``output_tokens_details.reasoning_tokens`` and Gemini's ``thoughtsTokenCount`` (0 when the details are
missing), Anthropic's ``output_tokens_details.thinking_tokens`` only when sent. Anthropic's answers also
carry ``cacheWrite1h``, the 1-hour part of the cache writes (0 when not split). ``--mode json`` shows them,
and the session file keeps them for pi.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pi_tui.testing import FakeLLM, Reply, text, thinking

from .helpers import MODEL_COST, run_cli, write_models_json

pytestmark = pytest.mark.slow

THOUGHT = "I should think about the answer first."


def _final_usage(stdout: str) -> dict[str, Any]:
    ends = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    answers = [
        e["message"] for e in ends if e["type"] == "message_end" and e["message"]["role"] == "assistant"
    ]
    usage: dict[str, Any] = answers[-1]["usage"]
    return usage


def _add_gemini(agent_dir: Path, server: Any) -> None:
    path = agent_dir / "models.json"
    config = json.loads(path.read_text())
    config["providers"]["fake-gemini"] = {
        "baseUrl": server.gemini_base_url,
        "api": "google-generative-ai",
        "apiKey": "test-key",
        "models": [{"id": "gemini-fake", "reasoning": True, "contextWindow": 200_000, "cost": MODEL_COST}],
    }
    path.write_text(json.dumps(config))


@pytest.mark.parametrize(
    ("model", "reported"),
    [
        ("fake-openai/gpt-fake", True),
        ("fake-responses/gpt-fake-r", True),
        ("fake-gemini/gemini-fake", True),
        ("fake-anthropic/claude-fake", False),  # the Messages API sends no thinking count here
    ],
)
def test_reasoning_tokens_are_in_the_usage(
    tmp_path: Path, agent_dir: Path, model: str, reported: bool
) -> None:
    fake = FakeLLM()
    fake.script([Reply([thinking(THOUGHT), text("done")])])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        _add_gemini(agent_dir, server)
        run = run_cli(["--model", model, "--mode", "json", "hi"], tmp_path)
    assert run.returncode == 0, run.stderr
    usage = _final_usage(run.stdout)
    if not reported:
        assert "reasoning" not in usage
        assert usage["cacheWrite1h"] == 0
        return
    assert "cacheWrite1h" not in usage
    assert usage["reasoning"] > 0
    assert usage["output"] >= usage["reasoning"]  # a part of the output, not added to it
    assert usage["totalTokens"] == usage["input"] + usage["output"] + usage["cacheRead"] + usage["cacheWrite"]
    session = next((agent_dir / "sessions").rglob("*.jsonl"))
    stored = [
        json.loads(line)["message"]
        for line in session.read_text().splitlines()
        if '"role":"assistant"' in line.replace(" ", "")
    ]
    assert stored[-1]["usage"]["reasoning"] == usage["reasoning"]
