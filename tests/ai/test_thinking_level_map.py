"""models.json ``thinkingLevelMap`` (pi 0.72): the value sent per level, and null hides a level."""

from __future__ import annotations

import json
from pathlib import Path

from pi_tui.ai.model_registry import ModelRegistry
from pi_tui.ai.providers import openai_completions
from pi_tui.ai.stream import LlmRequest, StreamOptions
from pi_tui.ai.thinking import available_thinking_levels, clamp_thinking_level
from pi_tui.ai.types import UserMessage

MAP = {"minimal": None, "low": "low", "high": "max-effort"}


def _registry(agent_dir: Path) -> ModelRegistry:
    providers = {
        "local": {
            "baseUrl": "http://127.0.0.1:9/v1",
            "api": "openai-completions",
            "apiKey": "none",
            "models": [{"id": "r1", "reasoning": True, "thinkingLevelMap": MAP}],
        },
        "openai": {"modelOverrides": {"gpt-5.4": {"thinkingLevelMap": {"xhigh": None}}}},
    }
    (agent_dir / "models.json").write_text(json.dumps({"providers": providers}))
    return ModelRegistry()


def test_null_levels_are_not_offered(agent_dir: Path) -> None:
    registry = _registry(agent_dir)
    assert registry.errors == [] and registry.warnings == []
    model = registry.find("local", "r1")
    assert model is not None
    assert "minimal" not in available_thinking_levels(model)
    assert clamp_thinking_level(model, "minimal") == "low"
    gpt = registry.find("openai", "gpt-5.4")
    assert gpt is not None and "xhigh" not in available_thinking_levels(gpt)


def test_mapped_values_are_what_the_request_sends(agent_dir: Path) -> None:
    model = _registry(agent_dir).find("local", "r1")
    assert model is not None
    request = LlmRequest("sys", [UserMessage(content="hi")])
    body = openai_completions.build_request(model, request, StreamOptions(thinking="high"))
    assert body["reasoning_effort"] == "max-effort"
    body = openai_completions.build_request(model, request, StreamOptions(thinking="medium"))
    assert body["reasoning_effort"] == "medium"  # unmapped levels are sent as they are
