from __future__ import annotations

from collections.abc import Iterator

import anthropic
import httpx2
import openai
import pytest

from pi_tui.testing import FakeLLM
from pi_tui.testing.pytest_plugin import fake_llm  # noqa: F401  (the fixture under test)

from ._helpers import anthropic_for, http_client, openai_for


@pytest.fixture
def claude(fake_llm: FakeLLM) -> Iterator[anthropic.Anthropic]:  # noqa: F811
    client = anthropic_for(fake_llm)
    yield client
    client.close()


@pytest.fixture
def gpt(fake_llm: FakeLLM) -> Iterator[openai.OpenAI]:  # noqa: F811
    client = openai_for(fake_llm)
    yield client
    client.close()


@pytest.fixture
def raw(fake_llm: FakeLLM) -> Iterator[httpx2.Client]:  # noqa: F811
    assert fake_llm.server is not None
    client = http_client(base_url=fake_llm.server.url, timeout=10)
    yield client
    client.close()
