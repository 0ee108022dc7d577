"""Side by side with pi 0.87.1: the request headers that are not the body: Anthropic's ``anthropic-beta``
list (fine-grained tool streaming where the model's compat turns eager input streaming off, interleaved
thinking when thinking is on and the model is not forced to adaptive thinking) and the session-affinity
headers providers use to keep a conversation on one prompt cache (``x-session-affinity`` for Fireworks'
Messages API, ``x-session-id`` for OpenRouter, ``session_id`` + ``x-client-request-id`` on the Responses
API, only ``x-client-request-id`` for OpenCode's). Session ids differ per run: their presence is compared,
and that each equals the run's own session id.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from pi_tui.testing import FakeLLM

from ..pi087 import Pi087
from .side_by_side import read_one_script, run_in_home, run_pair

pytestmark = pytest.mark.slow

KEY = "session-headers-key"
_SESSION = ("x-session-affinity", "x-session-id", "session_id", "x-client-request-id")
# (provider, its key variable, the fake's base URL attribute, model, thinking level)
CASES = [
    ("anthropic", "ANTHROPIC_API_KEY", "anthropic_base_url", "claude-sonnet-4-5", "off"),
    ("anthropic", "ANTHROPIC_API_KEY", "anthropic_base_url", "claude-opus-4-7", "high"),
    ("kimi-coding", "KIMI_API_KEY", "anthropic_base_url", "kimi-for-coding", "high"),
    ("fireworks", "FIREWORKS_API_KEY", "anthropic_base_url", "accounts/fireworks/models/kimi-k2p6", "high"),
    ("openai", "OPENAI_API_KEY", "openai_base_url", "gpt-5.5", "medium"),
    ("xai", "XAI_API_KEY", "openai_base_url", "grok-4.7", "off"),
    ("opencode", "OPENCODE_API_KEY", "openai_base_url", "gpt-5.4", "low"),
    ("openrouter", "OPENROUTER_API_KEY", "openai_base_url", "moonshotai/kimi-k2.6", "medium"),
]


def _run(
    argv: list[str], root: Path, fake: FakeLLM, case: tuple[str, str, str, str, str]
) -> subprocess.CompletedProcess[str]:
    provider, variable, base, model, level = case
    assert fake.server is not None
    return run_in_home(
        argv,
        root,
        providers={provider: {"baseUrl": getattr(fake.server, base)}},
        args=[
            "--provider",
            provider,
            "--model",
            model,
            "--thinking",
            level,
            "-p",
            "What does hello.txt say?",
        ],
        env={variable: KEY},
    )


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}/{c[3]}-{c[4]}" for c in CASES])
def test_betas_and_session_headers_match_pi(
    tmp_path: Path, pi087: Pi087, case: tuple[str, str, str, str, str]
) -> None:
    pi_fake, pi_run, tui_fake, tui_run = run_pair(
        pi087,
        tmp_path,
        lambda: FakeLLM(api_key=KEY, context_window=2_000_000, max_output_tokens=400_000),
        read_one_script,
        lambda argv, root, fake: _run(argv, root, fake, case),
    )
    assert pi_run.returncode == 0, pi_run.stderr
    assert tui_run.returncode == 0, tui_run.stderr
    assert len(pi_fake.requests) == len(tui_fake.requests) == 2
    for theirs, ours in zip(pi_fake.requests, tui_fake.requests, strict=True):
        assert ours.headers.get("anthropic-beta") == theirs.headers.get("anthropic-beta")
        assert [h for h in _SESSION if h in ours.headers] == [h for h in _SESSION if h in theirs.headers]
        body_session = ours.body.get("prompt_cache_key") if ours.body else None
        for name in _SESSION:
            if name in ours.headers and body_session is not None:
                assert ours.headers[name] == body_session  # the run's own session id
