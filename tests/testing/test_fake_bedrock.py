"""The fake speaks Bedrock ConverseStream: botocore (with Bedrock's own service model) reads the answers it
sends into the same events pi-tui's decoder reads, it verifies SigV4 with the test's secret, validates
requests and simulates cache points."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import botocore.session
import pytest
from botocore.eventstream import EventStream
from botocore.exceptions import EventStreamError
from botocore.parsers import EventStreamJSONParser

from pi_tui.ai.providers._aws_eventstream import EventStreamDecoder
from pi_tui.ai.providers._sigv4 import AwsCredentials, sign_request
from pi_tui.testing import FakeLLM, Fault, Reply, fake_signature, text, thinking, tool_call

KEY_ID, SECRET = "AKIDFAKE", "fake-secret"
MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
PATH = "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream"


@pytest.fixture
def fake() -> Iterator[FakeLLM]:
    fake = FakeLLM(aws_credentials={KEY_ID: SECRET}, min_cacheable_tokens=10)
    with fake.serve():
        yield fake


def _post(fake: FakeLLM, body: dict[str, Any], secret: str = SECRET) -> tuple[int, dict[str, str], bytes]:
    assert fake.server is not None
    return _post_to(fake.server.port, body, secret)


def _post_to(port: int, body: dict[str, Any], secret: str) -> tuple[int, dict[str, str], bytes]:
    """A signed request over a plain socket; returns status, headers and the raw body bytes."""
    import http.client

    raw = json.dumps(body).encode()
    host = f"127.0.0.1:{port}"
    headers = {"content-type": "application/json"}
    headers |= sign_request(
        method="POST",
        host=host,
        path=PATH,
        headers=headers,
        body=raw,
        credentials=AwsCredentials(KEY_ID, secret),
        region="us-west-2",
        service="bedrock",
        now=datetime.now(UTC),
    )
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("POST", PATH, body=raw, headers=headers)
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def _botocore_events(data: bytes) -> list[dict[str, Any]]:
    model = botocore.session.get_session().get_service_model("bedrock-runtime")
    shape = model.operation_model("ConverseStream").output_shape.members["stream"]

    class _Raw:
        def stream(self) -> Iterator[bytes]:
            for i in range(0, len(data), 13):  # odd-sized reads cross frame boundaries
                yield data[i : i + 13]

    return list(EventStream(_Raw(), shape, EventStreamJSONParser(), "ConverseStream"))


def _our_events(data: bytes) -> list[dict[str, Any]]:
    out = []
    for message in EventStreamDecoder().feed(data):
        payload = json.loads(message.payload)
        payload.pop("p", None)  # Bedrock's padding field, not in the model
        out.append({message.header(":event-type"): payload})
    return out


def _user(text_value: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"text": text_value}]}


def test_botocore_reads_the_fakes_answer_as_we_do(fake: FakeLLM) -> None:
    fake.script(
        [
            Reply(
                [
                    thinking("consider it"),
                    thinking("opaque", redacted=True),
                    text("Reading two files."),
                    tool_call("read", {"path": "a"}),
                    tool_call("read", {"path": "b"}),
                ]
            )
        ]
    )
    status, headers, data = _post(fake, {"messages": [_user("go")]})
    assert status == 200 and headers["content-type"] == "application/vnd.amazon.eventstream"
    theirs, ours = _botocore_events(data), _our_events(data)
    for event in theirs:  # blobs come back decoded from base64
        delta = event.get("contentBlockDelta", {}).get("delta", {}).get("reasoningContent", {})
        if "redactedContent" in delta:
            delta["redactedContent"] = base64.b64encode(delta["redactedContent"]).decode()
    assert theirs == ours
    kinds = [next(iter(e)) for e in ours]
    assert kinds[0] == "messageStart" and kinds[-2:] == ["messageStop", "metadata"]
    assert ours[-2] == {"messageStop": {"stopReason": "tool_use"}}
    signature = [
        e["contentBlockDelta"]["delta"]["reasoningContent"]["signature"]
        for e in ours
        if "signature" in e.get("contentBlockDelta", {}).get("delta", {}).get("reasoningContent", {})
    ]
    assert signature == [fake_signature("consider it")]
    starts = [e["contentBlockStart"]["start"]["toolUse"]["name"] for e in ours if "contentBlockStart" in e]
    assert starts == ["read", "read"]


def test_an_in_stream_exception_is_a_modelled_error_for_botocore(fake: FakeLLM) -> None:
    fake.script([Fault("stream_error", after_frames=2, error_type="rate_limit_error")])
    status, _, data = _post(fake, {"messages": [_user("go")]})
    assert status == 200
    with pytest.raises(EventStreamError) as caught:
        _botocore_events(data)
    assert caught.value.response["Error"]["Code"] == "throttlingException"
    messages = list(EventStreamDecoder().feed(data))
    assert messages[-1].header(":exception-type") == "throttlingException"


def test_a_wrong_secret_gets_awss_403(fake: FakeLLM) -> None:
    status, headers, data = _post(fake, {"messages": [_user("go")]}, secret="not-it")
    assert status == 403
    assert headers["x-amzn-errortype"].startswith("InvalidSignatureException:")
    assert json.loads(data)["message"].startswith("The request signature we calculated does not match")
    assert fake.requests[-1].response is not None and fake.requests[-1].response.kind == "auth"


@pytest.mark.parametrize(
    ("messages", "rule"),
    [
        ([{"role": "user", "content": []}], "bedrock.empty_content"),
        ([{"role": "user", "content": [{"text": "  "}]}], "bedrock.empty_text"),
        ([{"role": "system", "content": [{"text": "x"}]}], "bedrock.invalid_role"),
        (
            [
                _user("go"),
                {
                    "role": "assistant",
                    "content": [{"toolUse": {"toolUseId": "t1", "name": "read", "input": {}}}],
                },
                _user("no results"),
            ],
            "bedrock.tool_result_missing",
        ),
        (
            [
                _user("go"),
                {
                    "role": "assistant",
                    "content": [
                        {"reasoningContent": {"reasoningText": {"text": "hm", "signature": "forged"}}}
                    ],
                },
                _user("again"),
            ],
            "bedrock.thinking_signature",
        ),
        (
            [{"role": "user", "content": [{"text": "a"}, *([{"cachePoint": {"type": "default"}}] * 5)]}],
            "bedrock.cache_point_limit",
        ),
    ],
)
def test_rule_breaks_get_a_validation_exception(
    fake: FakeLLM, messages: list[dict[str, Any]], rule: str
) -> None:
    status, headers, data = _post(fake, {"messages": messages})
    assert status == 400
    assert headers["x-amzn-errortype"].startswith("ValidationException:")
    assert [v.rule for v in fake.violations] == [rule]
    assert json.loads(data)["message"] == fake.violations[0].message


def test_cache_points_write_then_read_the_prefix(fake: FakeLLM) -> None:
    fake.script([Reply([text("one")]), Reply([text("two")])])
    system = [{"text": "You are a careful assistant. " * 10}, {"cachePoint": {"type": "default"}}]
    first = {
        "system": system,
        "messages": [
            _user("question " * 10),
        ],
    }
    first["messages"][0]["content"].append({"cachePoint": {"type": "default"}})
    _post(fake, first)
    second = {
        "system": system,
        "messages": [
            first["messages"][0],
            {"role": "assistant", "content": [{"text": "one"}]},
            {"role": "user", "content": [{"text": "more"}, {"cachePoint": {"type": "default"}}]},
        ],
    }
    _, _, data = _post(fake, second)
    usage = _our_events(data)[-1]["metadata"]["usage"]
    written = fake.requests[0].cache
    assert written is not None and written.cache_write > 0
    assert usage["cacheReadInputTokens"] == written.cache_write
    assert usage["cacheWriteInputTokens"] > 0
    # Changing the system text (as sent) misses the cache.
    system[0] = {"text": "You are a different assistant. " * 10}
    fake.script([Reply([text("three")])])
    _, _, data = _post(fake, second)
    assert "cacheReadInputTokens" not in _our_events(data)[-1]["metadata"]["usage"]


def test_the_server_command_checks_signatures_with_the_given_credentials(tmp_path: Path) -> None:
    import subprocess
    import sys

    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [{"parts": ["signed ok"]}]}), encoding="utf-8")
    command = [sys.executable, "-m", "pi_tui.testing.server", "--script", str(script)]
    process = subprocess.Popen(
        [*command, "--aws-credentials", f"{KEY_ID}:{SECRET}"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        port = int(process.stdout.readline().strip().rsplit(":", 1)[1])
        wrong, _, _ = _post_to(port, {"messages": [_user("go")]}, "not-the-secret")
        right, _, data = _post_to(port, {"messages": [_user("go")]}, SECRET)
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()
    assert (wrong, right) == (403, 200)
    assert _our_events(data)[1] == {
        "contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "signed "}}
    }
