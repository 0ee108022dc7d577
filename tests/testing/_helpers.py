from __future__ import annotations

import ssl
from functools import cache
from typing import Any

import anthropic
import httpx2
import openai

from pi_tui.testing import FakeLLM

ANTHROPIC_MODEL = "claude-sonnet-4-6"
OPENAI_MODEL = "gpt-5"
API_KEY = "test-key-123456"


@cache
def _ssl_context() -> ssl.SSLContext:
    return ssl.create_default_context()


def http_client(**options: Any) -> httpx2.Client:
    # Loading the CA bundle costs ~100 ms per SDK client; the fake is plain HTTP, so share one context.
    return httpx2.Client(verify=_ssl_context(), **options)


def _settings(timeout: object, options: dict[str, Any]) -> dict[str, Any]:
    settings: dict[str, Any] = {"api_key": API_KEY, "max_retries": 0, "timeout": timeout}
    settings.update(options)
    settings.setdefault("http_client", http_client())
    return settings


def anthropic_for(fake: FakeLLM, **options: Any) -> anthropic.Anthropic:
    assert fake.server is not None
    settings = _settings(anthropic.Timeout(10, connect=5), options)
    return anthropic.Anthropic(
        base_url=fake.server.anthropic_base_url, _strict_response_validation=True, **settings
    )


def openai_for(fake: FakeLLM, **options: Any) -> openai.OpenAI:
    assert fake.server is not None
    settings = _settings(openai.Timeout(10, connect=5), options)
    return openai.OpenAI(base_url=fake.server.openai_base_url, _strict_response_validation=True, **settings)


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}
