"""pi-tui's providers replay a history exactly as pi-ai 0.87.1 does, checked against pi-ai itself.

Each case is a history in pi's JSON form. ``pi087_payload.mjs`` hands it to pi-ai's own ``stream`` and
captures the body pi would send; pi-tui builds its body from the same messages. The message lists must be
equal (Anthropic's cache markers aside: pi-tui places its breakpoint itself) for every API.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pi_tui.ai.providers import anthropic, openai_completions, openai_responses
from pi_tui.ai.stream import LlmRequest, StreamOptions
from pi_tui.ai.types import Model, load_messages

from ..pi087 import Pi087
from ..runtime.helpers import without_cache_control

SCRIPT = Path(__file__).with_name("pi087_payload.mjs")
PNG = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
USAGE = {
    "input": 1,
    "output": 1,
    "cacheRead": 0,
    "cacheWrite": 0,
    "totalTokens": 2,
    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
}
BUILDERS = {
    "anthropic-messages": (anthropic.build_request, "messages"),
    "openai-completions": (openai_completions.build_request, "messages"),
    "openai-responses": (openai_responses.build_request, "input"),
}
PROVIDERS = {"anthropic-messages": "anthropic", "openai-completions": "openai", "openai-responses": "openai"}


def _model(api: str, *, vision: bool = True, compat: dict[str, Any] | None = None) -> dict[str, Any]:
    model_id = "m-1"
    return {
        **({"compat": compat} if compat else {}),
        "id": model_id,
        "name": model_id,
        "api": api,
        "provider": PROVIDERS[api],
        "baseUrl": "http://127.0.0.1:9/v1",
        "reasoning": False,
        "input": ["text", "image"] if vision else ["text"],
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
        "contextWindow": 100_000,
        "maxTokens": 1000,
    }


def user(content: Any) -> dict[str, Any]:
    return {"role": "user", "content": content, "timestamp": 1}


def said(
    *content: dict[str, Any], api: str, stop: str = "toolUse", provider: str = "", model: str = "m-1"
) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": list(content),
        "api": api,
        "provider": provider or PROVIDERS[api],
        "model": model,
        "usage": USAGE,
        "stopReason": stop,
        "timestamp": 1,
    }


def result(call_id: str, *content: dict[str, Any], error: bool = False) -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": "read",
        "content": list(content),
        "isError": error,
        "timestamp": 1,
    }


def txt(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def call(call_id: str, **arguments: Any) -> dict[str, Any]:
    return {"type": "toolCall", "id": call_id, "name": "read", "arguments": arguments}


def think(value: str, signature: str | None = None, *, redacted: bool = False) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "thinking", "thinking": value}
    if signature is not None:
        block["thinkingSignature"] = signature
    if redacted:
        block["redacted"] = True
    return block


def _tool_loop(api: str) -> list[dict[str, Any]]:
    return [
        user([txt("go")]),
        said(txt("Reading."), call("c1", path="a"), api=api),
        result("c1", txt("line 1\nline 2"), txt("more")),
        said(call("c2", path="p.png"), call("c3", path="q.png"), api=api),
        result("c2", txt("Read image file [image/png]"), PNG),
        result("c3", PNG),
        said(call("c4", path="gone"), api=api),
        result("c4", error=True),
        said(txt("Done."), api=api, stop="stop"),
        user([txt("next")]),
    ]


def _thinking(api: str) -> list[dict[str, Any]]:
    signed = {
        "anthropic-messages": "sig-1",
        "openai-completions": "reasoning_content",
        "openai-responses": json.dumps(
            {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "plan"}]}
        ),
    }[api]
    # A second block from another reasoning field: pi sends all thinking in the first block's field.
    extra = [think("more plan", "reasoning")] if api == "openai-completions" else []
    return [
        user([txt("think")]),
        said(think("plan", signed), *extra, txt("I will read."), call("c1", path="a"), api=api),
        result("c1", txt("A")),
        said(think("unsigned thoughts"), think("   "), txt("Done."), api=api, stop="stop"),
        user([txt("again")]),
    ]


def _other_models(api: str) -> list[dict[str, Any]]:
    return [
        user([txt("q")]),
        said(
            think("their plan", "sig-x"),
            think("", "opaque", redacted=True),
            txt("from another provider"),
            call("call_1|fc_abc+/=="),
            api="openai-responses" if api != "openai-responses" else "anthropic-messages",
            provider="elsewhere",
            model="other",
        ),
        result("call_1|fc_abc+/==", txt("r1")),
        said(
            txt("same provider, other model"), call("tool.id:with spaces " + "x" * 70), api=api, model="m-0"
        ),
        result("tool.id:with spaces " + "x" * 70, txt("r2")),
        user([txt("and now")]),
    ]


def _broken(api: str) -> list[dict[str, Any]]:
    return [
        user([txt("q")]),
        said(txt("partial"), call("c0", path="half"), api=api, stop="error"),
        said(txt("cut short"), api=api, stop="aborted"),
        said(call("c1", path="a"), call("c2", path="b"), api=api),
        result("c1", txt("only one answered")),
        user([txt("interrupting")]),
        said(call("c3", path="c"), api=api),
    ]


def _text_edges(api: str) -> list[dict[str, Any]]:
    return [
        user("a plain string prompt"),
        said(txt("ok"), api=api, stop="stop"),
        user([txt("half an emoji \ud83d here"), txt("   "), txt("x")]),
        said(txt("lone \udc00 low"), call("c1", note="\ud83d"), api=api),
        result("c1", txt("out \ud83d put")),
        user([txt("look"), PNG, PNG, txt("and"), PNG]),
    ]


# Chat Completions servers that want thinking as text, tool names on results and an assistant turn
# between tool results and the next prompt (the other APIs ignore these flags).
CHAT_QUIRKS = {
    "requiresThinkingAsText": True,
    "requiresToolResultName": True,
    "requiresAssistantAfterToolResult": True,
}
CASES: dict[str, tuple[Any, bool, dict[str, Any] | None]] = {
    "tool_loop": (_tool_loop, True, None),
    "tool_loop_blind": (_tool_loop, False, None),
    "tool_loop_quirks": (_tool_loop, True, CHAT_QUIRKS),
    "thinking": (_thinking, True, None),
    "thinking_quirks": (_thinking, True, CHAT_QUIRKS),
    "thinking_empty_signature": (_thinking, True, {"allowEmptySignature": True}),
    "other_models": (_other_models, True, None),
    "broken": (_broken, True, None),
    "text_edges": (_text_edges, True, None),
    "text_edges_blind": (_text_edges, False, None),
}


def _system(case: str) -> str:
    return "You are a test \ud83d." if case.startswith("text_edges") else "You are a test."


def _pi_bodies(pi: Pi087, cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    run = subprocess.run(
        [str(pi.node), str(SCRIPT), str(pi.pi_ai_dist)],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        timeout=30,
        env=pi.env(),
    )
    assert run.returncode == 0, run.stderr
    bodies: list[dict[str, Any]] = json.loads(run.stdout)
    return bodies


@pytest.fixture(scope="module")
def pi_bodies(pi087: Pi087) -> dict[tuple[str, str], dict[str, Any]]:
    keys, cases = [], []
    for api in BUILDERS:
        for name, (history, vision, compat) in CASES.items():
            system = {"role": "system", "content": _system(name), "timestamp": 0}
            keys.append((api, name))
            model = _model(api, vision=vision, compat=compat)
            cases.append({"model": model, "context": {"messages": [system, *history(api)]}})
    return dict(zip(keys, _pi_bodies(pi087, cases), strict=True))


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("api", list(BUILDERS))
def test_the_history_is_sent_as_pi_0_87_1_sends_it(
    api: str, case: str, pi_bodies: dict[tuple[str, str], dict[str, Any]]
) -> None:
    history, vision, compat = CASES[case]
    model = Model.model_validate(_model(api, vision=vision, compat=compat))
    build, field = BUILDERS[api]
    body = build(model, LlmRequest(_system(case), load_messages(history(api))), StreamOptions())
    theirs = pi_bodies[(api, case)]
    assert without_cache_control(body[field]) == without_cache_control(theirs[field])
    if api == "anthropic-messages":
        assert without_cache_control(body["system"]) == without_cache_control(theirs["system"])
