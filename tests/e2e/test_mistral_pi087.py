"""Side by side with pi 0.87.1 on Mistral: the same prompt and script (thinking, text, two parallel tool
calls, their results, the answer) against two identical fakes, the built-in ``mistral`` provider pointed
there by a ``models.json`` that only overrides its base URL (so both use their own catalog's model
entry). The requests must be equivalent: the same path, bearer key, fields in the same order, messages
(the replayed thinking chunk, Mistral's nine-character call ids, the tool messages), tool schemas,
output cap, thinking field and cache fields.

Deliberate differences, listed in docs/providers.md: the system prompt's text, tool and parameter
descriptions, and the session id (each run makes its own) in ``prompt_cache_key`` and ``x-affinity``;
where the model's output maximum fills its window (devstral), ``max_tokens`` is cut by the room left,
which differs by the two system prompts' lengths.
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

KEY = "mistral-side-by-side"
PROMPT = "What do hello.txt and bye.txt say?"
# (model, what it tests): the provider's default (no reasoning, text only); a prompt_mode model;
# a reasoning_effort model with image input
CASES = [
    ("devstral-medium-latest", "off"),
    ("magistral-medium-latest", "high"),
    ("mistral-small-latest", "medium"),
]


def _run(
    argv: list[str], root: Path, fake: FakeLLM, model: str, level: str
) -> subprocess.CompletedProcess[str]:
    assert fake.server is not None
    return run_in_home(
        argv,
        root,
        providers={"mistral": {"baseUrl": fake.server.mistral_base_url}},
        args=["--provider", "mistral", "--model", model, "--thinking", level, "-p", PROMPT],
        env={"MISTRAL_API_KEY": KEY},
    )


def _comparable(body: dict[str, Any]) -> dict[str, Any]:
    out = dict(body)
    messages = [dict(m) for m in body["messages"]]
    assert messages[0]["role"] == "system"
    messages[0]["content"] = "<instructions>"
    out["messages"] = messages
    out["tools"] = without_descriptions(body.get("tools"))
    out.pop("prompt_cache_key", None)
    # The cap is the model's maximum cut to the room the window has left, which depends on the length
    # of each one's own system prompt and tool descriptions; compared apart.
    out.pop("max_tokens", None)
    return out


@pytest.mark.parametrize(("model", "level"), CASES, ids=[m for m, _ in CASES])
def test_pi_and_pi_tui_send_equivalent_mistral_requests(
    tmp_path: Path, pi087: Pi087, model: str, level: str
) -> None:
    pi_fake, pi_run, tui_fake, tui_run = run_pair(
        pi087,
        tmp_path,
        lambda: FakeLLM(api_key=KEY),
        read_both_script,
        lambda argv, root, fake: _run(argv, root, fake, model, level),
    )
    assert pi_run.returncode == 0, pi_run.stderr
    assert tui_run.returncode == 0, tui_run.stderr
    assert "They say hello world and bye." in pi_run.stdout
    assert "They say hello world and bye." in tui_run.stdout
    assert pi_fake.violations == [] and tui_fake.violations == []
    assert len(pi_fake.requests) == len(tui_fake.requests) == 2
    for theirs, ours in zip(pi_fake.requests, tui_fake.requests, strict=True):
        assert ours.path == theirs.path == "/mistral/v1/chat/completions"
        assert ours.headers["accept"] == theirs.headers["accept"] == "text/event-stream"
        assert ("x-affinity" in ours.headers) == ("x-affinity" in theirs.headers)
        assert list(ours.body) == list(theirs.body)  # the same fields in the same order
        assert _comparable(ours.body) == _comparable(theirs.body)
        if ours.body["max_tokens"] != theirs.body["max_tokens"]:  # both cut by the window: close
            assert abs(ours.body["max_tokens"] - theirs.body["max_tokens"]) < 5000
    replay = tui_fake.requests[1].body["messages"]
    assert replay[2]["content"][0]["type"] == "thinking"
    assert [m["role"] for m in replay[-2:]] == ["tool", "tool"]
    assert replay[-2]["content"] == [{"type": "text", "text": "hello world"}]
