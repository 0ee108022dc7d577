"""Oracle tests for Azure OpenAI: the ``openai`` SDK's ``AzureOpenAI`` client and pi-tui's agree on where a
request goes and what comes back.

The Responses stream itself is the one the OpenAI oracle (tests/ai/test_wire_oracle.py) checks; what Azure
adds is the URL (``{base}/responses?api-version=…``), the ``api-key`` header and Azure's error bodies. Each
case sends the same body through ``AzureOpenAI`` to one fake and through our Azure client to a twin: the
request line and key header must match, the streamed events must be the same, and a refusal (unknown
deployment, api-version, key) must carry the same status and error object.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import openai
import pytest

from pi_tui.ai.providers._common import END_OF_STREAM
from pi_tui.ai.providers.azure_openai_responses import azure_client
from pi_tui.ai.providers.openai_completions import decode_event
from pi_tui.ai.stream import StreamOptions
from pi_tui.ai.types import Model
from pi_tui.ai.wire import HttpStatusError, encode_body
from pi_tui.testing import FakeLLM, Reply, text, thinking, tool_call

KEY = "oracle-key"
DEPLOYMENT = "oracle-deployment"
BODY: dict[str, Any] = {
    "model": DEPLOYMENT,
    "input": [{"role": "user", "content": [{"type": "input_text", "text": "hello"}]}],
    "stream": True,
    "store": False,
    "reasoning": {"effort": "low", "summary": "auto"},
    "include": ["reasoning.encrypted_content"],
}
# case -> (api-version, key, deployment)
CASES = {
    "answer": ("v1", KEY, DEPLOYMENT),
    "unknown_deployment": ("v1", KEY, "nope"),
    "old_api_version": ("2024-10-21", KEY, DEPLOYMENT),
    "wrong_key": ("v1", "wrong", DEPLOYMENT),
}


@pytest.fixture(autouse=True)
def _no_azure_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AZURE_OPENAI_BASE_URL", "AZURE_OPENAI_RESOURCE_NAME", "AZURE_OPENAI_DEPLOYMENT_NAME_MAP"):
        monkeypatch.delenv(name, raising=False)


def _serve() -> Iterator[FakeLLM]:
    fake = FakeLLM(api_key=KEY, azure_deployments={DEPLOYMENT})
    fake.script([Reply([thinking("hmm"), text("Reading."), tool_call("read", {"path": "a"})])])
    with fake.serve():
        yield fake


fake = pytest.fixture(_serve)
twin = pytest.fixture(_serve)


async def _sdk(fake: FakeLLM, version: str, key: str, body: dict[str, Any]) -> tuple[list[Any], Any]:
    assert fake.server is not None
    client = openai.AsyncAzureOpenAI(
        api_key=key, api_version=version, base_url=fake.server.azure_base_url, max_retries=0
    )
    events: list[Any] = []
    try:
        stream = await client.responses.create(**body)
        async for event in stream:
            events.append(event.model_dump(mode="json", exclude_none=True))
        return events, None
    except openai.APIStatusError as exc:
        return events, exc
    finally:
        await client.close()


async def _ours(twin: FakeLLM, version: str, key: str, body: dict[str, Any]) -> tuple[list[Any], Any]:
    assert twin.server is not None
    model = Model(
        id="m",
        api="azure-openai-responses",
        provider="azure-openai-responses",
        base_url=twin.server.azure_base_url,
    )
    client = await azure_client(model, StreamOptions(api_key=key))
    events: list[Any] = []
    try:
        stream = await client.stream(f"/responses?api-version={version}", encode_body(body))
        try:
            async for name, data in stream:
                event = decode_event(name, data, stream)
                if event is END_OF_STREAM:
                    break
                events.append(json.loads(json.dumps(event)))
        finally:
            await stream.close()
        return events, None
    except HttpStatusError as exc:
        return events, exc
    finally:
        await client.close()


def _without_nones(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_nones(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nones(v) for v in value]
    return value


@pytest.mark.parametrize("case", list(CASES))
async def test_azure_sdk_and_wire_client_agree(fake: FakeLLM, twin: FakeLLM, case: str) -> None:
    version, key, deployment = CASES[case]
    body = {**BODY, "model": deployment}
    sdk_events, sdk_error = await _sdk(fake, version, key, body)
    our_events, our_error = await _ours(twin, version, key, body)
    theirs, ours = fake.requests[0], twin.requests[0]
    assert ours.path == theirs.path == f"/openai/v1/responses?api-version={version}"
    assert "api-key" in ours.headers and "api-key" in theirs.headers
    assert "authorization" not in ours.headers and "authorization" not in theirs.headers
    assert [_without_nones(e) for e in our_events] == sdk_events
    assert (sdk_error is None) == (our_error is None)
    if sdk_error is not None:
        assert our_error.status_code == sdk_error.status_code
        assert our_error.body["error"] == sdk_error.body
