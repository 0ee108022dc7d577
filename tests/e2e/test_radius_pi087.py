"""Side by side with pi 0.87.1 on Radius (pi's own ``pi-messages`` protocol): the same prompt and script
(thinking, text, two parallel tool calls, their results, the answer) against two identical fakes, the
built-in ``radius`` provider pointed there by a ``models.json`` that only overrides its base URL, the key
from ``RADIUS_API_KEY``. The requests must be equivalent: the same path and bearer key, the same body
fields and options (the thinking level as the model clamps it), the same transcript (the replayed
assistant message with its signatures, usage and response id, the tool results), the same tools.

Deliberate differences, listed in docs/providers.md: pi 0.87.1 sends its system prompt as named
``sections`` of the leading system message, pi-tui as its ``content``; tool descriptions; the session
id; message timestamps (each run makes its own); the prompt tokens the fake counted in the replayed
answer's usage (each counts its own system prompt).
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from pi_tui.testing import FakeLLM

from ..pi087 import Pi087
from .side_by_side import READ_BOTH_ANSWER, read_both_script, run_in_home, run_pair, without_descriptions

pytestmark = pytest.mark.slow

KEY = "radius-side-by-side"
PROMPT = "What do hello.txt and bye.txt say?"
# (model, level): the default model, whose map has no "medium" (clamped up to "high"), and one that
# maps every level; "off" on a model that cannot turn thinking off is clamped to its lowest level
CASES = [("balanced", "medium"), ("cheap", "low"), ("balanced", "off")]


def _run(
    argv: list[str], root: Path, fake: FakeLLM, model: str, level: str
) -> subprocess.CompletedProcess[str]:
    assert fake.server is not None
    return run_in_home(
        argv,
        root,
        providers={"radius": {"baseUrl": fake.server.pi_messages_base_url}},
        args=["--provider", "radius", "--model", model, "--thinking", level, "-p", PROMPT],
        env={"RADIUS_API_KEY": KEY},
    )


def _comparable(body: dict[str, Any]) -> dict[str, Any]:
    messages = [dict(m) for m in body["context"]["messages"]]
    system = messages[0]
    assert system["role"] == "system"
    messages[0] = {"role": "system", "toolsAdded": without_descriptions(system.get("toolsAdded"))}
    for message in messages[1:]:
        message.pop("timestamp")
        if message["role"] == "assistant":  # the fake counts each one's own (different) system prompt
            usage = dict(message["usage"])
            usage.pop("input"), usage.pop("totalTokens")
            message["usage"] = usage
    options = dict(body["options"])
    assert isinstance(options.pop("sessionId"), str)
    return {**body, "context": {"messages": messages}, "options": options}


@pytest.mark.parametrize(("model", "level"), CASES, ids=[f"{m}-{lv}" for m, lv in CASES])
def test_pi_and_pi_tui_send_equivalent_radius_requests(
    tmp_path: Path, pi087: Pi087, model: str, level: str
) -> None:
    pi_fake, pi_run, tui_fake, tui_run = run_pair(
        pi087,
        tmp_path,
        lambda: FakeLLM(api_key=KEY, context_window=2_000_000, max_output_tokens=400_000),
        read_both_script,
        lambda argv, root, fake: _run(argv, root, fake, model, level),
    )
    assert pi_run.returncode == 0, pi_run.stderr
    assert tui_run.returncode == 0, tui_run.stderr
    assert READ_BOTH_ANSWER in pi_run.stdout and READ_BOTH_ANSWER in tui_run.stdout
    assert pi_fake.violations == [] and tui_fake.violations == []
    assert len(pi_fake.requests) == len(tui_fake.requests) == 2
    for theirs, ours in zip(pi_fake.requests, tui_fake.requests, strict=True):
        assert ours.path == theirs.path == "/pi/v1/messages"
        for name in ("accept", "content-type"):
            assert ours.headers[name] == theirs.headers[name]
        assert list(ours.body) == list(theirs.body) == ["model", "context", "options"]
        assert _diff(_comparable(ours.body), _comparable(theirs.body)) == []
    replay = tui_fake.requests[1].body["context"]["messages"]
    assert [m["role"] for m in replay[1:]] == ["user", "assistant", "toolResult", "toolResult"]
    assert [b["type"] for b in replay[2]["content"]] == ["thinking", "text", "toolCall", "toolCall"]
    assert replay[2]["responseId"] == "resp_fake_0001"


def _diff(a: Any, b: Any, path: str = "") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                out.append(f"{path}.{k}: {a.get(k, '<missing>')!r:.200} vs {b.get(k, '<missing>')!r:.200}")
            else:
                out += _diff(a[k], b[k], f"{path}.{k}")
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in _diff(x, y, f"{path}[{i}]")]
    return [] if a == b else [f"{path}: {a!r:.300} vs {b!r:.300}"]
