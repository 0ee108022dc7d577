"""Side by side with pi 0.87.1 on OpenAI-compatible providers of the catalog: pi and pi-tui answer the same
prompt and script (thinking, a tool call, its result, the answer) against two identical fakes, the
provider's built-in models pointed there by a ``models.json`` ``baseUrl`` override (so both use the
catalog's own model entry: its compat flags, limits and thinking map). The request bodies must be
equivalent: the same fields, messages (the replayed thinking in the provider's field included), tool
schemas (strict where the provider takes strict tools), output cap, thinking/reasoning fields and cache
fields.

The same for the Responses API on xAI and Meta, and the Messages API on Kimi For Coding. Deliberate
differences, listed in docs/providers.md: the system prompt's text, tool descriptions, the session id (each
run makes its own) where it is sent, and an output cap cut by the context window (estimated from each
agent's own prompt text).
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from pi_tui.testing import FakeLLM

from ..pi087 import Pi087
from .side_by_side import read_one_script, run_in_home, run_pair, without_descriptions

pytestmark = pytest.mark.slow

KEY = "compat-side-by-side"
PROMPT = "What does hello.txt say?"


def _run(
    argv: list[str],
    root: Path,
    fake: FakeLLM,
    provider: str,
    variable: str,
    model: str,
    *,
    anthropic: bool = False,
    extra: tuple[str, ...] = (),
) -> subprocess.CompletedProcess[str]:
    assert fake.server is not None
    base = fake.server.anthropic_base_url if anthropic else fake.server.openai_base_url
    return run_in_home(
        argv,
        root,
        providers={provider: {"baseUrl": base}},
        args=["--provider", provider, "--model", model, *extra, "-p", PROMPT],
        files={"hello.txt": "hello world\n"},
        env={variable: KEY},
    )


def _instructions_text(message: dict[str, Any]) -> str:
    content = message["content"]
    return content if isinstance(content, str) else "".join(p["text"] for p in content if p["type"] == "text")


def _comparable(body: dict[str, Any]) -> dict[str, Any]:
    """The body with what legitimately differs set aside: the system prompt's words and tool descriptions."""
    out = dict(body)
    messages = [dict(m) for m in body["messages"]]
    first = messages[0]
    assert first["role"] in ("system", "developer")
    if isinstance(first["content"], list):  # cache-marked instructions: keep the marker, drop the words
        first["content"] = [{k: v for k, v in p.items() if k != "text"} for p in first["content"]]
    else:
        first["content"] = "<instructions>"
    out["messages"] = messages
    out["tools"] = without_descriptions(body.get("tools"))
    out.pop("prompt_cache_key", None)  # a session id: each run has its own
    return out


CASES = [
    # (provider, key variable, model): one per thinking format and quirk family
    ("openrouter", "OPENROUTER_API_KEY", "moonshotai/kimi-k2.6"),  # reasoning {effort}, x-session-id
    ("openrouter", "OPENROUTER_API_KEY", "anthropic/claude-sonnet-4.6:batch"),  # cache_control pass-through
    ("groq", "GROQ_API_KEY", "openai/gpt-oss-120b"),  # strict tools, store, developer role
    ("deepseek", "DEEPSEEK_API_KEY", "deepseek-v4-pro"),  # thinking {type}, max_tokens, reasoning_content
    ("zai", "ZAI_API_KEY", "glm-5.3"),  # thinking with clear_thinking, tool_stream
]


@pytest.mark.parametrize(("provider", "variable", "model"), CASES, ids=[f"{p}/{m}" for p, _, m in CASES])
def test_pi_and_pi_tui_send_equivalent_chat_requests(
    tmp_path: Path, pi087: Pi087, provider: str, variable: str, model: str
) -> None:
    # the fakes accept only KEY, so no violation means both sent the catalog variable's key
    pi_fake, pi_run, tui_fake, tui_run = run_pair(
        pi087,
        tmp_path,
        lambda: FakeLLM(api_key=KEY),
        read_one_script,
        lambda argv, root, fake: _run(argv, root, fake, provider, variable, model),
    )
    assert pi_run.returncode == 0, pi_run.stderr
    assert tui_run.returncode == 0, tui_run.stderr
    assert "It says hello world." in pi_run.stdout and "It says hello world." in tui_run.stdout
    assert pi_fake.violations == [] and tui_fake.violations == []
    assert len(pi_fake.requests) == len(tui_fake.requests) == 2
    for theirs, ours in zip(pi_fake.requests, tui_fake.requests, strict=True):
        assert ours.path == theirs.path == "/v1/chat/completions"
        assert sorted(ours.body) == sorted(theirs.body)
        assert ("prompt_cache_key" in ours.body) == ("prompt_cache_key" in theirs.body)
        assert _comparable(ours.body) == _comparable(theirs.body)
        if provider == "openrouter":
            assert "x-session-id" in ours.headers and "x-session-id" in theirs.headers
    replay = tui_fake.requests[1].body["messages"]
    assert replay[-1]["role"] == "tool" and _instructions_text(replay[-1]) == "hello world\n"
    if (
        "anthropic/" in model
    ):  # OpenRouter passes Anthropic cache markers through: pi-tui sends them as pi does
        assert replay[-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
        assert tui_fake.requests[1].body["tools"][-1]["cache_control"] == {"type": "ephemeral"}


RESPONSES_CASES = [
    (
        "xai",
        "XAI_API_KEY",
        "grok-4.7",
    ),  # output cap cut by the window (estimates differ by the prompts' words)
    ("meta", "META_API_KEY", "muse-spark-1.3"),  # output cap = the model's maximum
    ("openai", "OPENAI_API_KEY", "gpt-5.5"),  # strict tools (compat supportsStrictMode), reasoning replayed
]


def _comparable_responses(body: dict[str, Any]) -> dict[str, Any]:
    out = dict(body)
    items = [dict(item) for item in body["input"]]
    assert items[0]["role"] in ("system", "developer")
    items[0]["content"] = "<instructions>"
    out["input"] = items
    out["tools"] = without_descriptions(body.get("tools"))
    out.pop("prompt_cache_key", None)
    out.pop("max_output_tokens", None)
    return out


@pytest.mark.parametrize(
    ("provider", "variable", "model"), RESPONSES_CASES, ids=[f"{p}/{m}" for p, _, m in RESPONSES_CASES]
)
def test_pi_and_pi_tui_send_equivalent_responses_requests(
    tmp_path: Path, pi087: Pi087, provider: str, variable: str, model: str
) -> None:
    pi_fake, pi_run, tui_fake, tui_run = run_pair(
        pi087,
        tmp_path,
        lambda: FakeLLM(api_key=KEY),
        read_one_script,
        lambda argv, root, fake: _run(argv, root, fake, provider, variable, model),
    )
    assert pi_run.returncode == 0, pi_run.stderr
    assert tui_run.returncode == 0, tui_run.stderr
    assert pi_fake.violations == [] and tui_fake.violations == []
    assert len(pi_fake.requests) == len(tui_fake.requests) == 2
    for theirs, ours in zip(pi_fake.requests, tui_fake.requests, strict=True):
        assert ours.path == theirs.path == "/v1/responses"
        assert sorted(ours.body) == sorted(theirs.body)
        assert _comparable_responses(ours.body) == _comparable_responses(theirs.body)
        # pi cuts the cap to the window by a character estimate of its own prompt; ours differs by the
        # prompts' words only
        assert ours.body["max_output_tokens"] == pytest.approx(theirs.body["max_output_tokens"], rel=0.01)


def _comparable_messages_api(body: dict[str, Any]) -> dict[str, Any]:
    """Set aside what docs/providers.md lists as deliberate on the Messages API: the prompt's words and
    tool descriptions. The output cap and the last tool's cache marker must be pi's."""
    out = dict(body)
    out["system"] = [{k: v for k, v in block.items() if k != "text"} for block in body["system"]]
    out["tools"] = [without_descriptions(tool) for tool in body["tools"]]
    return out


def test_pi_and_pi_tui_send_equivalent_messages_requests_to_kimi_for_coding(
    tmp_path: Path, pi087: Pi087
) -> None:
    provider, variable, model = "kimi-coding", "KIMI_API_KEY", "kimi-for-coding"
    pi_fake, pi_run, tui_fake, tui_run = run_pair(
        pi087,
        tmp_path,
        lambda: FakeLLM(api_key=KEY),
        read_one_script,
        lambda argv, root, fake: _run(argv, root, fake, provider, variable, model, anthropic=True),
    )
    assert pi_run.returncode == 0, pi_run.stderr
    assert tui_run.returncode == 0, tui_run.stderr
    assert pi_fake.violations == [] and tui_fake.violations == []
    assert len(pi_fake.requests) == len(tui_fake.requests) == 2
    for theirs, ours in zip(pi_fake.requests, tui_fake.requests, strict=True):
        assert ours.path.split("?")[0] == theirs.path.split("?")[0] == "/v1/messages"
        assert sorted(ours.body) == sorted(theirs.body)
        # adaptive thinking with the effort of Kimi's thinkingLevelMap (the catalog's forceAdaptiveThinking)
        assert ours.body["thinking"] == {"type": "adaptive", "display": "summarized"} and ours.body[
            "output_config"
        ] == {"effort": "high"}
        assert _comparable_messages_api(ours.body) == _comparable_messages_api(theirs.body)
        assert ours.body["max_tokens"] == theirs.body["max_tokens"] == 32_768  # the model's maximum
        assert ours.body["tools"][-1]["cache_control"] == {"type": "ephemeral"}


CLAUDE_CASES = [
    ("claude-sonnet-4-5", "off"),  # thinking: disabled, the model's maximum as the cap
    ("claude-sonnet-4-5", "high"),  # budget thinking inside the model's maximum
    ("claude-opus-4-6", "medium"),  # adaptive thinking
    ("claude-opus-4-7", "max"),  # pi 0.80.6's level above xhigh: effort max
    ("claude-sonnet-4-6", "xhigh"),  # maps only max above high: xhigh is clamped up to it
]


@pytest.mark.parametrize(("model", "level"), CLAUDE_CASES, ids=[f"{m}-{t}" for m, t in CLAUDE_CASES])
def test_pi_and_pi_tui_send_equivalent_messages_requests_to_claude(
    tmp_path: Path, pi087: Pi087, model: str, level: str
) -> None:
    provider, variable = "anthropic", "ANTHROPIC_API_KEY"
    extra = ("--thinking", level)
    pi_fake, pi_run, tui_fake, tui_run = run_pair(
        pi087,
        tmp_path,
        lambda: FakeLLM(api_key=KEY),
        read_one_script,
        lambda argv, root, fake: _run(
            argv, root, fake, provider, variable, model, anthropic=True, extra=extra
        ),
    )
    assert pi_run.returncode == 0, pi_run.stderr
    assert tui_run.returncode == 0, tui_run.stderr
    assert pi_fake.violations == [] and tui_fake.violations == []
    assert len(pi_fake.requests) == len(tui_fake.requests) == 2
    for theirs, ours in zip(pi_fake.requests, tui_fake.requests, strict=True):
        assert sorted(ours.body) == sorted(theirs.body)
        assert _comparable_messages_api(ours.body) == _comparable_messages_api(theirs.body)
    assert tui_fake.requests[0].body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    if level in ("max", "xhigh"):  # both reach pi 0.80.6's level above xhigh
        assert tui_fake.requests[0].body["output_config"] == {"effort": "max"}
