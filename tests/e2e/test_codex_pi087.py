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
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from pi_tui.testing import FakeLLM, Reply, text, thinking, tool_call

from ..pi087 import Pi087

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
    (agent / "models.json").write_text(
        json.dumps({"providers": {"openai-codex": {"baseUrl": fake.server.url}}})
    )
    login = {
        "type": "oauth",
        "access": TOKEN,
        "refresh": "refresh-token-not-used",
        "expires": int(time.time() * 1000) + 86_400_000,
        "accountId": ACCOUNT,
    }
    auth = agent / "auth.json"
    auth.write_text(json.dumps({"openai-codex": login}))
    auth.chmod(0o600)
    env = {
        k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST" and not k.lower().endswith("_proxy")
    }
    env |= {"HOME": str(home), "PI_CODING_AGENT_DIR": str(agent), "PI_OFFLINE": "1"}
    args = ["--provider", "openai-codex", "--model", MODEL, "--thinking", level, "-p", PROMPT]
    return subprocess.run([*argv, *args], cwd=project, env=env, capture_output=True, text=True, timeout=50)


def _without_descriptions(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_descriptions(v) for k, v in value.items() if k != "description"}
    if isinstance(value, list):
        return [_without_descriptions(v) for v in value]
    return value


def _comparable(body: dict[str, Any]) -> dict[str, Any]:
    out = dict(body)
    assert isinstance(out.pop("instructions"), str)
    out["tools"] = _without_descriptions(body.get("tools"))
    out.pop("prompt_cache_key", None)
    return out


@pytest.mark.parametrize("level", ["high", "off"])
def test_pi_and_pi_tui_send_equivalent_codex_requests(tmp_path: Path, pi087: Pi087, level: str) -> None:
    pi_fake, tui_fake = FakeLLM(api_key=TOKEN), FakeLLM(api_key=TOKEN)
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
