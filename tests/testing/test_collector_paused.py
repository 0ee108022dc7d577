"""The fake server holds Python's cyclic collector off while it decodes and checks a request: a big
body (a resumed session's history) makes hundreds of thousands of containers that all stay in the
request log, and collections walking them again and again cost more than the checks themselves."""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest

from pi_tui.testing import FakeLLM, Reply

HEADERS = {"x-api-key": "k", "anthropic-version": "2023-06-01", "content-type": "application/json"}


@pytest.fixture
def collections() -> Iterator[list[int]]:
    """The generations of the cyclic collections that start while the test runs."""
    seen: list[int] = []

    def record(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            seen.append(info["generation"])

    gc.callbacks.append(record)
    try:
        yield seen
    finally:
        gc.callbacks.remove(record)


def _long_history_body(turns: int) -> bytes:
    """An Anthropic request with ``turns`` tool calls and their results (valid for the fake's checks)."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": [{"type": "text", "text": "start"}]}]
    for i in range(turns):
        use = {"type": "tool_use", "id": f"toolu_{i}", "name": "read", "input": {"path": f"f{i}.py"}}
        result = {"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": [{"type": "text", "text": "x"}]}
        messages += [{"role": "assistant", "content": [use]}, {"role": "user", "content": [result]}]
    body = {"model": "claude-sonnet-4-6", "max_tokens": 1024, "stream": True, "messages": messages}
    return json.dumps(body).encode()


def test_no_collection_runs_while_the_engine_decodes_and_checks(collections: list[int]) -> None:
    seen_by_then: list[int] = []

    def answer(request: Any) -> Reply:
        # Called once the body is decoded and checked; an int is taken, which starts no collection.
        seen_by_then.append(len(collections))
        return Reply("ok")

    fake = FakeLLM(context_window=10_000_000, responder=answer)
    raw = _long_history_body(3_000)  # ~30,000 containers: dozens of young collections with the collector on
    gc.collect()
    collections.clear()
    fake.engine.handle("POST", "/v1/messages", HEADERS, raw)

    assert seen_by_then == [0], f"collections of generations {collections} ran while the engine worked"
    assert gc.isenabled()
    assert fake.violations == []
    request = fake.last_request
    assert request.body is not None and len(request.body["messages"]) == 6_001


def test_a_request_over_http_is_answered_and_the_collector_is_back_afterwards() -> None:
    fake = FakeLLM(context_window=10_000_000, responder=lambda r: Reply("ok"))
    with fake.serve() as server, httpx2.Client() as client:
        response = client.post(
            f"{server.url}/v1/messages", content=_long_history_body(500), headers=HEADERS, timeout=10
        )
        fake.wait_for_delivery()
    assert response.status_code == 200
    assert "ok" in response.text
    assert gc.isenabled()
    assert fake.violations == []
