from __future__ import annotations

from typing import Any

import anthropic
import openai

from pi_tui.testing import FakeLLM

ANTHROPIC_MODEL = "claude-sonnet-4-6"
OPENAI_MODEL = "gpt-5"
API_KEY = "test-key-123456"


def anthropic_for(fake: FakeLLM, **options: Any) -> anthropic.Anthropic:
    assert fake.server is not None
    settings: dict[str, Any] = {
        "api_key": API_KEY,
        "max_retries": 0,
        "timeout": anthropic.Timeout(10, connect=5),
    }
    settings.update(options)
    return anthropic.Anthropic(
        base_url=fake.server.anthropic_base_url, _strict_response_validation=True, **settings
    )


def openai_for(fake: FakeLLM, **options: Any) -> openai.OpenAI:
    assert fake.server is not None
    settings: dict[str, Any] = {"max_retries": 0, "timeout": openai.Timeout(10, connect=5)}
    settings.update(options)
    return openai.OpenAI(
        api_key=API_KEY, base_url=fake.server.openai_base_url, _strict_response_validation=True, **settings
    )


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}
