from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_tui.testing import FakeLLM

from ..e2e.helpers import write_models_json

CODEX_TOKEN = "e30.eyJodHRwczovL2FwaS5vcGVuYWkuY29tL2F1dGgiOnsiY2hhdGdwdF9hY2NvdW50X2lkIjoiZmFrZSJ9fQ.c2ln"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


@pytest.fixture
def fake(agent_dir: Path) -> Iterator[FakeLLM]:
    """The fake LLM server with tests/e2e/helpers.py's providers plus ``fake-google`` (the Gemini API), so
    the runtime's provider-failure, abort and persistence tests run on Gemini too; and ``fake-bedrock``
    (Bedrock's ConverseStream); ``fake-mistral``, ``fake-azure`` and ``fake-codex`` (Mistral's chat API,
    Azure OpenAI and the ChatGPT Codex backend)."""
    llm = FakeLLM()
    with llm.serve() as server:
        write_models_json(agent_dir, server)
        path = agent_dir / "models.json"
        config = json.loads(path.read_text())
        config["providers"]["fake-google"] = {
            "baseUrl": server.gemini_base_url,
            "api": "google-generative-ai",
            "apiKey": "test-key",
            "models": [{"id": "gemini-3-fake", "contextWindow": 200_000, "maxTokens": 8192}],
        }
        # Bedrock's ConverseStream, with a bearer key (the fake checks SigV4 only when given AWS keys).
        config["providers"]["fake-bedrock"] = {
            "baseUrl": server.bedrock_base_url,
            "api": "bedrock-converse-stream",
            "apiKey": "test-key",
            "models": [
                {"id": "anthropic.claude-sonnet-4-5-fake", "contextWindow": 200_000, "maxTokens": 8192}
            ],
        }
        model = {"contextWindow": 200_000, "maxTokens": 8192}
        config["providers"]["fake-mistral"] = {
            "baseUrl": server.mistral_base_url,
            "api": "mistral-conversations",
            "apiKey": "test-key",
            "models": [{"id": "mistral-fake", **model}],
        }
        config["providers"]["fake-azure"] = {
            "baseUrl": server.azure_base_url,
            "api": "azure-openai-responses",
            "apiKey": "test-key",
            "models": [{"id": "gpt-azure-fake", **model}],
        }
        # Codex takes a ChatGPT login's access token: a JWT whose claim names the account.
        config["providers"]["fake-codex"] = {
            "baseUrl": server.url,
            "api": "openai-codex-responses",
            "apiKey": CODEX_TOKEN,
            "models": [{"id": "gpt-codex-fake", **model}],
        }
        path.write_text(json.dumps(config, indent=2))
        yield llm
