"""The request bytes of a resumed big session, pinned: speed work on conversion and encoding must not
change a byte of what is sent (a changed byte loses the session's prompt cache, here and in pi).

A generated session (`bench.big_sessions`, deterministic) is opened, its history sent as the first
request of a process would send it, then extended by one exchange as the next request of the same
process sends it (the cached, spliced path). Each body must equal the plain encoding of a body built
without any cache, and its message list must hash to the digest recorded before the conversion and
encoding were made faster. When a deliberate change to the wire form changes a digest, check the new
bytes against pi and record the new digest here.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from bench.big_sessions import write_big_session
from pi_tui.agent.convert import convert_to_llm, transform_messages
from pi_tui.ai.providers import _bedrock_request, _google_request, anthropic, mistral, openai_completions
from pi_tui.ai.stream import LlmRequest, StreamOptions
from pi_tui.ai.types import (
    AssistantMessage,
    Model,
    TextContent,
    ToolCall,
    ToolDefinition,
    ToolResultMessage,
    UserMessage,
)
from pi_tui.session.manager import SessionManager

MODELS = {
    "anthropic": Model(
        id="bench-model",
        api="anthropic-messages",
        provider="bench",
        reasoning=True,
        context_window=50_000_000,
    ),
    "chat": Model(
        id="bench-model",
        api="openai-completions",
        provider="bench",
        reasoning=True,
        context_window=50_000_000,
    ),
    "google": Model(
        id="bench-model",
        api="google-generative-ai",
        provider="bench",
        reasoning=True,
        context_window=50_000_000,
    ),
    "mistral": Model(
        id="bench-model",
        api="mistral-conversations",
        provider="bench",
        reasoning=True,
        context_window=50_000_000,
    ),
    # a Claude model: signed reasoning replayed, cache points placed
    "bedrock": Model(
        id="us.anthropic.claude-opus-4-6-v1",
        api="bedrock-converse-stream",
        provider="bench",
        reasoning=True,
        context_window=50_000_000,
    ),
}
MODULES: dict[str, Any] = {
    "anthropic": anthropic,
    "chat": openai_completions,
    "google": _google_request,
    "mistral": mistral,
    "bedrock": _bedrock_request,
}
# The encoder each provider's stream sends its body with, and the body's history field.
ENCODERS: dict[str, Any] = {
    "anthropic": anthropic._encode,
    "chat": openai_completions._encode,
    "google": _google_request.encode_request,
    "mistral": mistral._encode,
    "bedrock": _bedrock_request.encode_request,
}
# None: the body is sent in its own key order (pi's, for Mistral), not with the history first.
FIELDS: dict[str, str | None] = {"google": "contents", "mistral": None}
TOOLS = [
    ToolDefinition(name="read", description="Read a file", parameters={"type": "object", "properties": {}})
]
# sha256 of the "messages" array as sent: (first request, the next request of the same process)
DIGESTS = {
    "anthropic": (
        "1c14b9fbfcecd6c5536b2cebed6935e28c2ed5ad86cdf1c556ed7d1659606062",
        "0a8dbad64538b6edf518299b4c78458ac0d3f9754ae0a23c2c7c6e9adc823128",
    ),
    "chat": (
        "575bac9941cff30b9afc1ed54a7064134a821bd1cc589f4f332dc3122f0e3e8d",
        "21618f2e18c5b7426fd7a33f166511b9eb7d7c19ee4f40ac458a4100ba20a093",
    ),
    "google": (
        "d36ab324908c43e7901d82eb485b3253bb8af32e73b5149d3e01dff38ea87cfb",
        "4800e64575cf946853eadc85f53afc5bc64bf0968e02f89956ef1cdb654bddd8",
    ),
    "mistral": (
        "b1f4e62830409b020dd0315a538a66d566683dab76502853fc63b7c4518f1288",
        "bd031625c6a9479e4d08f02ef088e2b8fb0c18fba07ae946628593016c884c86",
    ),
    # (the next request's lone surrogate in tool arguments could not be encoded before the body was
    # spliced from the cache: it is now the \u escape JSON.stringify writes, as for the other APIs)
    "bedrock": (
        "c0114948c31d8bcad182a74724932cb738ee9b60e25c79d2e7e68c24303b6db0",
        "9a022ea4373894bc04b406bd34a3d9352b9d7dc0ab12bcfdf46fe98b16b974af",
    ),
}


def _history(tmp_path: Path) -> list[Any]:
    path = write_big_session(tmp_path / "big.jsonl", 3_000, tmp_path)
    manager = SessionManager.open(path, read_only=True)
    return transform_messages(convert_to_llm(manager.build_context().messages))


def _plain(body: dict[str, Any], field: str | None = "messages") -> bytes:
    """The stdlib's compact encoding, message list first (where the provider's encoder puts it) unless
    ``field`` is None, with a lone surrogate written as its ``\\u`` escape (UTF-8 cannot carry it)."""
    ordered = body if field is None else {field: body[field], **{k: v for k, v in body.items() if k != field}}
    text = json.dumps(ordered, ensure_ascii=False, separators=(",", ":"))
    return re.sub("[\ud800-\udfff]", lambda m: f"\\u{ord(m.group()):04x}", text).encode()


def _messages_digest(sent: bytes) -> str:
    start = sent.index(b"[")
    decoder = json.JSONDecoder()
    _, end = decoder.raw_decode(sent.decode(), start)
    return hashlib.sha256(sent[start:end]).hexdigest()


def _send(api: str, request: LlmRequest) -> bytes:
    module = MODULES[api]
    sent: bytes = ENCODERS[api](module.build_request(MODELS[api], request, StreamOptions(thinking="medium")))
    fresh = module.build_request(
        MODELS[api], request, StreamOptions(thinking="medium", on_payload=lambda body: None)
    )
    assert sent == _plain(fresh, FIELDS.get(api, "messages"))
    return sent


@pytest.mark.parametrize("api", list(MODELS))
def test_a_resumed_big_session_sends_the_recorded_bytes(api: str, tmp_path: Path) -> None:
    history = _history(tmp_path)
    assert len(history) > 2_900
    first = _send(
        api, LlmRequest("You are terse.", [*history, UserMessage(content="hi")], TOOLS, len(history))
    )
    # The next exchange carries what the encoder must escape or keep: non-ASCII text, a line separator,
    # and a lone surrogate in tool arguments (sent as a \u escape, as JSON.stringify writes it).
    answer = AssistantMessage(
        content=[
            TextContent(text="Done — é\u2028"),
            ToolCall(id="toolu_x", name="read", arguments={"path": "a\ud800b"}),
        ],
        api=MODELS[api].api,
        provider="bench",
        model="bench-model",
        stop_reason="toolUse",
    )
    result = ToolResultMessage(tool_call_id="toolu_x", tool_name="read", content=[TextContent(text="ü")])
    grown = [*history, UserMessage(content="hi"), answer, result]
    second = _send(
        api, LlmRequest("You are terse.", [*grown, UserMessage(content="more")], TOOLS, len(grown))
    )
    assert (_messages_digest(first), _messages_digest(second)) == DIGESTS[api]


# sha256 of the "messages" array of the damaged session's first request (see the test below)
DAMAGED_DIGESTS = {
    "anthropic": "294101a73e45a192f72a18d2a06a2484ac35aeb1880d532e10f2d771c0c3db93",
    "chat": "6c9fe379ab42e2ce6c9658b4d8842aef181930ab4e804f41291e0004450e4499",
    "google": "5d8dc63a546a19efab98dae9d9d4f0d302009d3cd0fe0e5aaed748f728c6f9cc",
    "mistral": "6a542e1bdfbc71868405dbba8be9febd832c219005a94ae2e9c80625b53e817e",
    "bedrock": "7002b4e1e6c1dc94cc0680ef8b292be797752ed734d36dd9254242af157d4c57",
}


def _first_body(api: str, path: Path) -> bytes:
    history = transform_messages(
        convert_to_llm(SessionManager.open(path, read_only=True).build_context().messages)
    )
    return _send(
        api, LlmRequest("You are terse.", [*history, UserMessage(content="hi")], TOOLS, len(history))
    )


@pytest.mark.parametrize("api", list(MODELS))
def test_lines_a_resume_cannot_read_add_nothing_to_its_request(api: str, tmp_path: Path) -> None:
    """Damaged lines in the middle of a big session and a torn last line change its first request
    exactly as deleting those lines would (the tree reattaches what hung off them the same way): any
    faster way of building that request has to agree with this on damaged files too."""
    lines = (
        write_big_session(tmp_path / "clean.jsonl", 3_000, tmp_path).read_bytes().splitlines(keepends=True)
    )
    cut_short = {1_001, 2_203}  # a tool result and an assistant turn of the path, each losing its second half
    kinds = {json.loads(lines[at])["message"]["role"] for at in cut_short}
    assert kinds == {"toolResult", "assistant"}
    damaged = [line[: len(line) // 2] + b"\n" if at in cut_short else line for at, line in enumerate(lines)]
    damaged.insert(1_500, b"\xff\xfe not UTF-8 {{\n")
    damaged.insert(2_600, b'["an array, not an entry"]\n')
    torn = lines[-1][:60]  # an entry whose write was cut off: no newline
    (tmp_path / "damaged.jsonl").write_bytes(b"".join(damaged) + torn)
    kept = [line for at, line in enumerate(lines) if at not in cut_short]
    (tmp_path / "deleted.jsonl").write_bytes(b"".join(kept))

    body = _first_body(api, tmp_path / "damaged.jsonl")
    assert _messages_digest(body) == DAMAGED_DIGESTS[api]
    assert body == _first_body(api, tmp_path / "deleted.jsonl")
    assert body != _first_body(api, tmp_path / "clean.jsonl")  # the damage did reach the path
    assert (tmp_path / "damaged.jsonl").read_bytes() == b"".join(damaged) + torn  # opening wrote nothing
