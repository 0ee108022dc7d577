"""Oracle tests for Bedrock's wire pieces: botocore decodes and signs, pi-tui must agree.

- The binary event stream: frames built by pi-tui's encoder (what the fake server sends) are decoded by
  botocore's ``EventStreamBuffer`` and by ours into the same headers and payloads; damaged frames are
  refused by both.
- SigV4: for the same request (path with an encoded model id, query, session token, custom headers)
  botocore's ``SigV4Auth`` and ours produce the same ``Authorization`` header.
"""

from __future__ import annotations

import json
import struct
import uuid
import zlib
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from urllib.parse import urlsplit

import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.eventstream import EventStreamBuffer, ParserError

from pi_tui.ai.providers._aws_eventstream import (
    EventStreamDecoder,
    EventStreamError,
    encode_message,
)
from pi_tui.ai.providers._sigv4 import AwsCredentials, sign_request


def _event(event_type: str, payload: dict[str, object]) -> bytes:
    return encode_message(
        {":event-type": event_type, ":content-type": "application/json", ":message-type": "event"},
        json.dumps(payload).encode(),
    )


RECORDED = b"".join(
    [
        _event("messageStart", {"p": "abc", "role": "assistant"}),
        _event(
            "contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Hé 漢字 \U0001f600"}, "p": "x"}
        ),
        _event("contentBlockStop", {"contentBlockIndex": 0}),
        _event(
            "contentBlockStart",
            {"contentBlockIndex": 1, "start": {"toolUse": {"toolUseId": "tooluse_1", "name": "read"}}},
        ),
        _event("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"toolUse": {"input": '{"path"'}}}),
        _event("messageStop", {"stopReason": "tool_use"}),
        _event("metadata", {"usage": {"inputTokens": 3, "outputTokens": 4, "cacheReadInputTokens": 9}}),
        encode_message(
            {
                ":exception-type": "throttlingException",
                ":content-type": "application/json",
                ":message-type": "exception",
            },
            b'{"message":"Too many requests"}',
        ),
    ]
)


def _botocore_messages(data: bytes, step: int) -> list[tuple[dict[str, object], bytes]]:
    buffer = EventStreamBuffer()
    out = []
    for i in range(0, len(data), step):
        buffer.add_data(data[i : i + step])
        out.extend((dict(m.headers), m.payload) for m in buffer)
    return out


def _our_messages(data: bytes, step: int) -> list[tuple[dict[str, object], bytes]]:
    decoder = EventStreamDecoder()
    out = []
    for i in range(0, len(data), step):
        out.extend((dict(m.headers), m.payload) for m in decoder.feed(data[i : i + step]))
    assert decoder.pending == 0
    return out


@pytest.mark.parametrize("step", [1, 7, 4096])
def test_recorded_stream_decodes_the_same_as_botocore(step: int) -> None:
    ours = _our_messages(RECORDED, step)
    assert ours == _botocore_messages(RECORDED, step)
    assert len(ours) == 8
    assert ours[-1][0][":exception-type"] == "throttlingException"


def test_every_header_type_decodes_as_botocore_reads_it() -> None:
    ident = uuid.UUID("12345678-1234-5678-1234-567812345678")
    frame = encode_message(
        {"yes": True, "no": False, "n": -42, "blob": b"\x00\xff", "s": "wörd", "id": ident}, b"payload"
    )
    # Hand-made headers botocore knows: byte (2), short (3), long (5), timestamp (8).
    extra = b"\x01b\x02\xfe" + b"\x01h\x03\x01\x00" + b"\x01l\x05" + (2**40).to_bytes(8, "big")
    extra += b"\x01t\x08" + (1_700_000_000_000).to_bytes(8, "big")
    headers = frame[12 : 12 + struct.unpack(">I", frame[4:8])[0]] + extra
    payload = b"payload"
    total = 12 + len(headers) + len(payload) + 4
    prelude = struct.pack(">II", total, len(headers))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    body = prelude + headers + payload
    frame = body + struct.pack(">I", zlib.crc32(body))
    [(ours_headers, ours_payload)] = _our_messages(frame, 5)
    [(boto_headers, boto_payload)] = _botocore_messages(frame, 5)
    assert ours_payload == boto_payload == payload
    assert ours_headers["id"] == ident and boto_headers["id"] == ident.bytes
    ours_headers["id"] = ident.bytes
    assert ours_headers == boto_headers
    assert ours_headers["b"] == -2 and ours_headers["h"] == 256 and ours_headers["l"] == 2**40


@pytest.mark.parametrize("where", ["prelude", "payload", "message_crc"])
def test_a_damaged_frame_is_refused_by_both(where: str) -> None:
    frame = bytearray(_event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "hello"}}))
    index = {"prelude": 2, "payload": len(frame) - 8, "message_crc": len(frame) - 1}[where]
    frame[index] ^= 0x01
    with pytest.raises(ParserError):
        _botocore_messages(bytes(frame), 4096)
    with pytest.raises(EventStreamError):
        _our_messages(bytes(frame), 4096)


ACCESS_KEY = "AKIDEXAMPLE"
SECRET = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"

# --- SigV4 ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "token", "extra"),
    [
        (
            "https://bedrock-runtime.us-east-1.amazonaws.com/model/"
            "us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream",
            None,
            {},
        ),
        (
            "http://127.0.0.1:8123/model/arn%3Aaws%3Abedrock%3Aeu-west-1%3A123%3A"
            "application-inference-profile%2Fabc/converse-stream?b=2&a=1%20x",
            "session-token/with+chars==",
            {"x-custom": "  two   spaces  ", "anthropic-beta": "a,b"},
        ),
    ],
)
def test_signature_matches_botocore_sigv4auth(url: str, token: str | None, extra: dict[str, str]) -> None:
    body = json.dumps({"messages": [{"role": "user", "content": [{"text": "hi ü"}]}]}).encode()
    headers = {"content-type": "application/json", **extra}
    region = "eu-west-1"
    boto_request = AWSRequest(method="POST", url=url, data=body, headers=dict(headers))
    SigV4Auth(Credentials(ACCESS_KEY, SECRET, token), "bedrock", region).add_auth(boto_request)
    amz_date = boto_request.headers["X-Amz-Date"]
    parts = urlsplit(url)
    ours = sign_request(
        method="POST",
        host=parts.netloc,
        path=parts.path,
        query=parts.query,
        headers=headers,
        body=body,
        credentials=AwsCredentials(ACCESS_KEY, SECRET, token),
        region=region,
        service="bedrock",
        now=datetime.strptime(amz_date, "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC),
    )
    assert ours["authorization"] == boto_request.headers["Authorization"]
    assert ours.get("x-amz-security-token") == boto_request.headers.get("X-Amz-Security-Token")


async def test_a_stream_cut_inside_a_frame_is_an_error_the_agent_retries() -> None:
    from pi_tui.ai.errors import is_retryable_error
    from pi_tui.ai.providers._aws_eventstream import decode_stream
    from pi_tui.ai.types import AssistantMessage

    async def chunks() -> AsyncIterator[bytes]:
        yield RECORDED[:40]

    with pytest.raises(EventStreamError) as caught:
        async for _ in decode_stream(chunks()):
            pass
    message = AssistantMessage(api="bedrock-converse-stream", provider="p", model="m", stop_reason="error")
    message.error_message = str(caught.value)
    assert is_retryable_error(message)
