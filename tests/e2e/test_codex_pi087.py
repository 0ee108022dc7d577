"""Side by side with pi 0.87.1 on OpenAI Codex (the ChatGPT subscription backend): the same prompt and script
(reasoning, text, two parallel tool calls, their results, the answer) against two identical fakes, the
built-in ``openai-codex`` provider pointed there by a ``models.json`` ``baseUrl``, and the login in
``auth.json`` in pi's shape (an OAuth access token whose claim names the ChatGPT account). pi tries a
WebSocket first, which the fake refuses, and falls back to SSE with a zstd-compressed body; pi-tui speaks
SSE only. The requests must be equivalent: the same path, bearer token, ``chatgpt-account-id``,
``originator``, ``OpenAI-Beta`` and session headers, and the same body (``instructions``, input items with
the replayed reasoning item, ``text``, ``include``, ``tool_choice``, ``parallel_tool_calls``, tools with
``strict`` true or null, ``reasoning``).

Deliberate differences, listed in docs/providers.md: the instructions' text, tool descriptions, the session
id (each run makes its own), the order of the body's keys, and pi's zstd compression of the body.
"""

from __future__ import annotations

import base64
import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from pi_tui.testing import FakeLLM

from ..pi087 import Pi087
from .side_by_side import read_both_script, run_in_home, run_pair, without_descriptions

pytestmark = pytest.mark.slow

PROMPT = "What do hello.txt and bye.txt say?"
ACCOUNT = "acct-side-by-side"
MODEL = "gpt-5.5"  # the provider's default


def _token() -> str:
    def part(value: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")

    claims = {"https://api.openai.com/auth": {"chatgpt_account_id": ACCOUNT}, "exp": int(time.time()) + 86400}
    return f"{part({'alg': 'RS256', 'typ': 'JWT'})}.{part(claims)}.c2lnbmF0dXJl"


TOKEN = _token()


def _run(argv: list[str], root: Path, fake: FakeLLM, level: str) -> subprocess.CompletedProcess[str]:
    assert fake.server is not None
    login = {
        "type": "oauth",
        "access": TOKEN,
        "refresh": "refresh-token-not-used",
        "expires": int(time.time() * 1000) + 86_400_000,
        "accountId": ACCOUNT,
    }
    return run_in_home(
        argv,
        root,
        providers={"openai-codex": {"baseUrl": fake.server.url}},
        args=["--provider", "openai-codex", "--model", MODEL, "--thinking", level, "-p", PROMPT],
        auth={"openai-codex": login},
    )


def _comparable(body: dict[str, Any]) -> dict[str, Any]:
    out = dict(body)
    assert isinstance(out.pop("instructions"), str)
    out["tools"] = without_descriptions(body.get("tools"))
    out.pop("prompt_cache_key", None)
    return out


@pytest.mark.parametrize("level", ["high", "off"])
def test_pi_and_pi_tui_send_equivalent_codex_requests(tmp_path: Path, pi087: Pi087, level: str) -> None:
    pi_fake, pi_run, tui_fake, tui_run = run_pair(
        pi087,
        tmp_path,
        lambda: FakeLLM(api_key=TOKEN),
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
        assert ours.path == theirs.path == "/codex/responses"
        for name in ("chatgpt-account-id", "originator", "openai-beta", "accept"):
            assert ours.headers[name] == theirs.headers[name], name
        assert ours.headers["chatgpt-account-id"] == ACCOUNT
        assert theirs.headers.get("content-encoding") == "zstd"  # the fake read pi's compressed body
        assert ("session-id" in ours.headers) == ("session-id" in theirs.headers)
        assert sorted(ours.body) == sorted(theirs.body)
        assert _comparable(ours.body) == _comparable(theirs.body)
    replay = tui_fake.requests[1].body["input"]
    assert any(item.get("type") == "reasoning" and item.get("encrypted_content") for item in replay)
    outputs = [i for i in replay if i.get("type") == "function_call_output"]
    assert [o["output"] for o in outputs] == ["hello world\n", "bye\n"]
