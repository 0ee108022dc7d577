"""Side by side with pi 0.87.1 on Amazon Bedrock: the same prompt and script (thinking, text, two parallel
tool calls, their results, the answer) against two identical fakes that verify SigV4 with the test's
secret; the built-in ``amazon-bedrock`` provider is pointed there by a ``models.json`` that only
overrides its base URL, and static test keys (with a session token) are in the environment. The
requests must be equivalent: the same path (the model id percent-encoded), signed headers and session
token, and body fields (messages with the replayed signed reasoning and the grouped tool results,
cache points, tool specs, inference config, thinking fields).

pi's AWS SDK talks HTTP/2 by default; ``AWS_BEDROCK_FORCE_HTTP1=1`` (pi's own switch) makes it speak
HTTP/1.1 to the fake. Deliberate differences, listed in docs/providers.md: the system prompt's text and
tool descriptions; ``maxTokens`` could differ where a model's maximum fills its window (pi cuts it by its
estimate of the room left); the SDK's own headers (``x-amz-content-sha256``, ``amz-sdk-*``,
``x-amz-user-agent``) are not sent.
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

KEY_ID = "AKIDSIDEBYSIDE"
SECRET = "side/by+side=secret"
TOKEN = "session-token/for+the=test"
PROMPT = "What do hello.txt and bye.txt say?"
# (model, level): the provider's default (adaptive thinking, cache points); a budget-thinking Claude with
# an encoded ':' in its id; a model that is not Claude (no cache points, no thinking fields)
CASES = [
    ("us.anthropic.claude-opus-4-6-v1", "high"),
    ("eu.anthropic.claude-sonnet-4-5-20250929-v1:0", "medium"),
    ("amazon.nova-pro-v1:0", "off"),
]


def _run(
    argv: list[str], root: Path, fake: FakeLLM, model: str, level: str
) -> subprocess.CompletedProcess[str]:
    assert fake.server is not None
    return run_in_home(
        argv,
        root,
        providers={"amazon-bedrock": {"baseUrl": fake.server.bedrock_base_url}},
        args=["--provider", "amazon-bedrock", "--model", model, "--thinking", level, "-p", PROMPT],
        env={
            "AWS_ACCESS_KEY_ID": KEY_ID,
            "AWS_SECRET_ACCESS_KEY": SECRET,
            "AWS_SESSION_TOKEN": TOKEN,
            "AWS_REGION": "us-west-2",
            "AWS_BEDROCK_FORCE_HTTP1": "1",
        },
        drop_env_prefix="AWS_",
    )


def _comparable(body: dict[str, Any]) -> dict[str, Any]:
    out = dict(body)
    system = [dict(b) for b in body.get("system") or []]
    assert system and "text" in system[0]
    system[0]["text"] = "<instructions>"
    out["system"] = system
    out["toolConfig"] = without_descriptions(body.get("toolConfig"))
    inference = dict(body.get("inferenceConfig") or {})
    inference.pop("maxTokens", None)  # compared apart: pi cuts it by its estimate of the window left
    out["inferenceConfig"] = inference
    return out


@pytest.mark.parametrize(("model", "level"), CASES, ids=[m for m, _ in CASES])
def test_pi_and_pi_tui_send_equivalent_bedrock_requests(
    tmp_path: Path, pi087: Pi087, model: str, level: str
) -> None:
    pi_fake, pi_run, tui_fake, tui_run = run_pair(
        pi087,
        tmp_path,
        lambda: FakeLLM(aws_credentials={KEY_ID: SECRET}),
        lambda: read_both_script(level != "off"),
        lambda argv, root, fake: _run(argv, root, fake, model, level),
    )
    assert pi_run.returncode == 0, pi_run.stderr + pi_run.stdout
    assert tui_run.returncode == 0, tui_run.stderr + tui_run.stdout
    assert "They say hello world and bye." in pi_run.stdout
    assert "They say hello world and bye." in tui_run.stdout
    assert pi_fake.violations == [] and tui_fake.violations == []
    assert len(pi_fake.requests) == len(tui_fake.requests) == 2
    for theirs, ours in zip(pi_fake.requests, tui_fake.requests, strict=True):
        assert ours.path == theirs.path
        assert ours.model == theirs.model == model
        for name in ("x-amz-security-token", "content-type"):
            assert ours.headers.get(name) == theirs.headers.get(name), name
        assert list(ours.body) == list(theirs.body)  # the same fields in the same order
        assert _comparable(ours.body) == _comparable(theirs.body)
        ours_max, theirs_max = (
            ours.body["inferenceConfig"]["maxTokens"],
            theirs.body["inferenceConfig"]["maxTokens"],
        )
        assert abs(ours_max - theirs_max) < 5000  # equal unless the window is nearly full
        # Both signatures were verified by the fake; pi's SDK also signs a payload hash header.
        assert {"authorization", "x-amz-date", "x-amz-security-token"} <= set(ours.headers)
    replay = tui_fake.requests[1].body["messages"]
    assert [m["role"] for m in replay] == ["user", "assistant", "user"]
    assert [list(b)[0] for b in replay[2]["content"]][:2] == ["toolResult", "toolResult"]
