"""``PI_CACHE_RETENTION=long`` side by side with pi 0.87.1: pi's switch for long prompt caching gives the
same cache fields in the same places: Anthropic's ``cache_control`` markers with ``ttl: "1h"`` (not where
the model's compat sets ``supportsLongCacheRetention: false``: Fireworks), ``prompt_cache_options: {ttl: "30m"}`` on
OpenAI's models with the explicit cache mode (GPT-5.6+), ``prompt_cache_retention: "24h"`` on other
Responses and Chat Completions models that allow it, nothing where they do not (xAI). Without the variable no long-cache
field is sent at all."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from pi_tui.testing import FakeLLM

from ..pi087 import Pi087
from .side_by_side import read_one_script, run_in_home, run_pair

pytestmark = pytest.mark.slow

KEY = "cache-retention-key"
# (provider, key variable, the fake's base URL attribute, model)
CASES = [
    ("anthropic", "ANTHROPIC_API_KEY", "anthropic_base_url", "claude-sonnet-4-5"),
    ("fireworks", "FIREWORKS_API_KEY", "anthropic_base_url", "accounts/fireworks/models/kimi-k2p6"),
    ("openai", "OPENAI_API_KEY", "openai_base_url", "gpt-5.5"),
    ("openai", "OPENAI_API_KEY", "openai_base_url", "gpt-5.6-luna"),  # explicit prompt-cache mode
    ("xai", "XAI_API_KEY", "openai_base_url", "grok-4.7"),
    ("openrouter", "OPENROUTER_API_KEY", "openai_base_url", "moonshotai/kimi-k2.6"),
]
_FIELDS = ("prompt_cache_retention", "prompt_cache_options")


def _cache_markers(value: Any) -> list[Any]:
    """Every ``cache_control`` in a body, in order."""
    if isinstance(value, dict):
        found = [value["cache_control"]] if "cache_control" in value else []
        return found + [m for k, v in value.items() if k != "cache_control" for m in _cache_markers(v)]
    if isinstance(value, list):
        return [m for item in value for m in _cache_markers(item)]
    return []


def _run(
    argv: list[str], root: Path, fake: FakeLLM, case: tuple[str, str, str, str], long: bool
) -> subprocess.CompletedProcess[str]:
    provider, variable, base, model = case
    assert fake.server is not None
    env = {variable: KEY, **({"PI_CACHE_RETENTION": "long"} if long else {})}
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
            "off",
            "-p",
            "What does hello.txt say?",
        ],
        env=env,
    )


@pytest.mark.parametrize("long", [True, False], ids=["long", "default"])
@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}/{c[3]}" for c in CASES])
def test_cache_fields_follow_pi_cache_retention(
    tmp_path: Path, pi087: Pi087, case: tuple[str, str, str, str], long: bool
) -> None:
    pi_fake, pi_run, tui_fake, tui_run = run_pair(
        pi087,
        tmp_path,
        lambda: FakeLLM(api_key=KEY, context_window=2_000_000, max_output_tokens=400_000),
        read_one_script,
        lambda argv, root, fake: _run(argv, root, fake, case, long),
    )
    assert pi_run.returncode == 0, pi_run.stderr
    assert tui_run.returncode == 0, tui_run.stderr
    assert len(pi_fake.requests) == len(tui_fake.requests) == 2
    for theirs, ours in zip(pi_fake.requests, tui_fake.requests, strict=True):
        assert _cache_markers(ours.body) == _cache_markers(theirs.body)
        assert {k: ours.body.get(k) for k in _FIELDS} == {k: theirs.body.get(k) for k in _FIELDS}
    if long and case[0] == "anthropic":
        assert {"type": "ephemeral", "ttl": "1h"} in _cache_markers(tui_fake.requests[0].body)
    if long and case[3] == "gpt-5.5":
        assert tui_fake.requests[0].body["prompt_cache_retention"] == "24h"
    if long and case[3] == "gpt-5.6-luna":
        assert tui_fake.requests[0].body["prompt_cache_options"] == {"ttl": "30m"}
