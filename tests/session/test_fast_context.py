from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from bench.big_sessions import big_session_lines
from pi_tui.agent.convert import convert_to_llm, transform_messages
from pi_tui.ai.providers import (
    _bedrock_request,
    _google_request,
    anthropic,
    azure_openai_responses,
    mistral,
    openai_codex_responses,
    openai_completions,
    openai_responses,
)
from pi_tui.ai.providers._history import prepare_messages
from pi_tui.ai.providers._openai_compat import resolve_compat
from pi_tui.ai.providers._wire_cache import dumps
from pi_tui.ai.stream import LlmRequest, StreamOptions
from pi_tui.ai.types import AssistantMessage, Model, TextContent, ToolDefinition, Usage, UserMessage
from pi_tui.session.context import build_session_context
from pi_tui.session.fast_context import calls_of, read_plain_path, split_path
from pi_tui.session.fast_wire import (
    anthropic_history,
    chat_history,
    encode_wire,
    prefix_builder,
    responses_history,
)
from pi_tui.session.fast_wire_bedrock import bedrock_history
from pi_tui.session.fast_wire_google import google_history
from pi_tui.session.fast_wire_mistral import mistral_history
from pi_tui.session.loader import line_decoder
from pi_tui.session.manager import SessionManager
from tests.shared_fixtures import PI_SESSIONS

FIXTURES = PI_SESSIONS
TOOLS = [
    ToolDefinition(name="read", description="Read a file", parameters={"type": "object", "properties": {}})
]
ANTHROPIC = Model(
    id="bench-model", api="anthropic-messages", provider="bench", reasoning=True, context_window=200_000
)
CHAT = Model(id="gpt-x", api="openai-completions", provider="bench", reasoning=True, context_window=200_000)
RESPONSES = Model(
    id="gpt-r", api="openai-responses", provider="bench", reasoning=True, context_window=200_000
)
BEDROCK = Model(
    id="us.anthropic.claude-opus-4-6-v1",
    api="bedrock-converse-stream",
    provider="bench",
    reasoning=True,
    context_window=200_000,
)
MISTRAL = Model(
    id="mistral-same", api="mistral-conversations", provider="bench", reasoning=True, context_window=200_000
)
GEMINI = Model(
    id="gemini-3-pro", api="google-generative-ai", provider="bench", reasoning=True, context_window=200_000
)


def _header() -> dict[str, Any]:
    return {
        "type": "session",
        "version": 3,
        "id": "0b6f3d0e-1111-4222-8333-444455556666",
        "timestamp": "2025-06-01T00:00:00.000Z",
        "cwd": "/tmp",
    }


class _Builder:
    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = [_header()]
        self.leaf: str | None = None
        self.ms = 1_750_000_000_000

    def entry(self, record: dict[str, Any], parent: str | None = None) -> str:
        entry_id = f"{len(self.lines):08x}"
        self.lines.append(
            {
                "type": record.pop("type"),
                "id": entry_id,
                "parentId": self.leaf if parent is None else parent,
                "timestamp": "2025-06-01T00:00:01.000Z",
                **record,
            }
        )
        self.leaf = entry_id
        return entry_id

    def message(self, message: dict[str, Any]) -> str:
        self.ms += 1000
        return self.entry({"type": "message", "message": {"timestamp": self.ms, **message}})

    def user(self, content: Any) -> str:
        return self.message({"role": "user", "content": content})

    def answer(
        self,
        content: list[dict[str, Any]],
        *,
        stop: str = "stop",
        model: str = "bench-model",
        api: str = "anthropic-messages",
        provider: str = "bench",
        total: int = 1234,
    ) -> str:
        usage = {
            "input": 10,
            "output": 20,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": total,
            "cost": {"input": 0.0, "output": 0.001, "cacheRead": 0, "cacheWrite": 0, "total": 0.001},
        }
        return self.message(
            {
                "role": "assistant",
                "content": content,
                "api": api,
                "provider": provider,
                "model": model,
                "usage": usage,
                "stopReason": stop,
            }
        )

    def result(self, call_id: str, texts: list[str], *, error: bool = False) -> str:
        return self.message(
            {
                "role": "toolResult",
                "toolCallId": call_id,
                "toolName": "read",
                "content": [{"type": "text", "text": t} for t in texts],
                "isError": error,
            }
        )

    def write(self, path: Path) -> Path:
        path.write_text("".join(json.dumps(line) + "\n" for line in self.lines))
        return path


def _varied() -> _Builder:
    """Every plain shape the fast path handles, including other models' turns and odd texts."""
    b = _Builder()
    b.entry({"type": "model_change", "provider": "bench", "modelId": "bench-model"})
    _pad(b)
    b.entry({"type": "thinking_level_change", "thinkingLevel": "high"})
    b.entry({"type": "label", "targetId": b.lines[3]["id"], "label": "start"})
    b.entry({"type": "session_info", "name": "varied"})
    b.message(_PI_TUI_PROMPT)  # pi-tui's recorded prompt: no message of the conversation
    b.user("a plain string prompt — é ✓")
    b.answer(
        [
            {"type": "thinking", "thinking": "hmm", "thinkingSignature": "sig-1"},
            {"type": "text", "text": "  "},
            {
                "type": "toolCall",
                "id": "call.with|odd chars",
                "name": "read",
                "arguments": {"path": "a", "n": 1.5},
            },
            {"type": "toolCall", "id": "toolu_2", "name": "read", "arguments": {}},
        ],
        stop="toolUse",
    )
    b.result("call.with|odd chars", ["line one", "line two"])
    b.result("toolu_2", [], error=True)
    b.user(
        [
            {"type": "text", "text": "blocks"},
            {"type": "text", "text": ""},
            {"type": "text", "text": "half \ud83d pair"},
        ]
    )
    b.answer(
        [
            {"type": "thinking", "thinking": "from another model", "thinkingSignature": "reasoning_content"},
            {"type": "text", "text": "foreign"},
            {"type": "toolCall", "id": "fc_1", "name": "read", "arguments": {"q": "x"}},
        ],
        stop="toolUse",
        model="gpt-x",
        api="openai-completions",
        provider="bench",
    )
    b.result("fc_1", ["ok"])
    b.user("try a tool")
    failed = [{"type": "toolCall", "id": "lost", "name": "read", "arguments": {}, "partialJson": "{"}]
    b.answer(failed, stop="aborted")  # dropped with its result, its unknown key kept aside
    b.result("lost", ["never sent"])
    b.answer([{"type": "text", "text": "oops"}], stop="error")
    b.lines[-1]["message"]["errorMessage"] = "overloaded"
    b.answer(
        [
            {"type": "thinking", "thinking": "", "thinkingSignature": "opaque", "redacted": True},
            {"type": "thinking", "thinking": "unsigned thought"},
            {"type": "text", "text": "done"},
        ]
    )
    b.user("   ")
    b.answer([{"type": "text", "text": "blank prompt answered"}], stop="length")
    b.message({"role": "system", "content": "", "sections": {"environment": "Current date: 2025-06-02"}})
    b.user([{"type": "text", "text": "last question"}])
    b.lines[-1]["message"]["surprise"] = {"kept": "aside"}
    b.answer([{"type": "text", "text": "last answer", "textSignature": "t"}], total=5000)
    b.entry({"type": "label", "targetId": b.leaf, "label": None})
    b.entry({"type": "session_info"})
    return b


_TOOL_DECLARATION = {"name": "read", "description": "Read a file", "parameters": {"type": "object"}}
_PI_TUI_PROMPT: dict[str, Any] = {
    "role": "system",
    "content": "",
    "sections": {"preamble": "You are terse.", "environment": "Current date: 2025-06-01"},
    "toolsAdded": [_TOOL_DECLARATION],
}


def _pad(b: _Builder) -> None:
    """Turns enough for over a megabyte: a file `SessionManager.open` reads the fast way."""
    for turn in range(1_000):
        b.user(f"question {turn} " + "x" * 1_000)
        b.answer([{"type": "text", "text": f"answer {turn}"}])


def _responses_turns() -> _Builder:
    """Turns answered over the Responses API (the model `RESPONSES` and another of its API): reasoning
    replayed from signatures (one holding a float, one not a reasoning item), text ids with phases and
    without, long ids, ``call|item`` tool-call ids."""
    b = _Builder()
    _pad(b)
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA=="}
    for model in ("gpt-r", "gpt-other"):
        b.user(f"ask {model}")
        b.answer(
            [
                {"type": "thinking", "thinking": "t", "thinkingSignature": json.dumps(reasoning)},
                {"type": "thinking", "thinking": "odd", "thinkingSignature": '{"type": "other"}'},
                {
                    "type": "thinking",
                    "thinking": "x",
                    "thinkingSignature": json.dumps({**reasoning, "n": 1.5}),
                },
                {"type": "text", "text": "one", "textSignature": '{"v":1,"id":"msg_a","phase":"commentary"}'},
                {"type": "text", "text": "two", "textSignature": "msg_" + "b" * 70},
                {"type": "text", "text": "three"},
                {"type": "toolCall", "id": "call_1|fc_1", "name": "read", "arguments": {"path": "é"}},
                {"type": "toolCall", "id": "call_2|rs_x", "name": "read", "arguments": {}},
            ],
            stop="toolUse",
            model=model,
            api="openai-responses",
            provider="bench",
        )
        b.result("call_1|fc_1", ["a", "b"])
        b.result("call_2|rs_x", [])
    b.user([{"type": "text", "text": ""}])
    b.user([])
    b.answer([], model="gpt-r", api="openai-responses", provider="bench")
    b.user("last")
    b.answer([{"type": "text", "text": "done"}], model="gpt-r", api="openai-responses", provider="bench")
    return b


def _google_turns() -> _Builder:
    """Turns answered over the Gemini API (the model `GEMINI` and another of its API): thought
    signatures base64 and not, signed empty parts, redacted thinking, parallel calls whose results
    share a content, call ids Gemini rejects, an error and an empty result."""
    b = _Builder()
    _pad(b)
    good, bad = "c2lnbmF0dXJl", "not base64!"
    for model in ("gemini-3-pro", "gemini-other"):
        b.user(f"ask {model}")
        b.answer(
            [
                {"type": "thinking", "thinking": "plan", "thinkingSignature": good},
                {"type": "thinking", "thinking": "more", "thinkingSignature": bad},
                {"type": "thinking", "thinking": "", "thinkingSignature": good},
                {"type": "thinking", "thinking": "hidden", "thinkingSignature": good, "redacted": True},
                {"type": "text", "text": "one é", "textSignature": good},
                {"type": "text", "text": "", "textSignature": good},
                {"type": "text", "text": " ", "textSignature": bad},
                {
                    "type": "toolCall",
                    "id": "call.1|x",
                    "name": "read",
                    "arguments": {"path": "a"},
                    "thoughtSignature": good,
                },
                {
                    "type": "toolCall",
                    "id": "call_2",
                    "name": "read",
                    "arguments": {},
                    "thoughtSignature": bad,
                },
            ],
            stop="toolUse",
            model=model,
            api="google-generative-ai",
            provider="bench",
        )
        b.result("call.1|x", ["a", "b"])
        b.result("call_2", [], error=True)
        b.answer([{"type": "text", "text": "so"}], model=model, api="google-generative-ai", provider="bench")
    b.user([{"type": "text", "text": ""}])
    b.user("last")
    b.answer(
        [{"type": "text", "text": "done"}], model="gemini-3-pro", api="google-generative-ai", provider="bench"
    )
    return b


def _bedrock_turns() -> _Builder:
    """Turns answered over Bedrock by the Claude model `BEDROCK`: signed, unsigned, redacted and blank
    thinking, blank texts, parallel calls (an argument under an empty key), an error and an empty result."""
    b = _Builder()
    _pad(b)
    model = "us.anthropic.claude-opus-4-6-v1"
    for turn in range(2):
        b.user(f"ask {turn}")
        b.answer(
            [
                {"type": "thinking", "thinking": "plan", "thinkingSignature": "sig"},
                {"type": "thinking", "thinking": "unsigned"},
                {"type": "thinking", "thinking": "", "thinkingSignature": "sig"},
                {"type": "thinking", "thinking": "x", "thinkingSignature": "enc", "redacted": True},
                {"type": "thinking", "thinking": "y", "redacted": True},
                {"type": "text", "text": " "},
                {"type": "text", "text": "one é"},
                {"type": "toolCall", "id": f"call.{turn}|x", "name": "read", "arguments": {"path": "a", "": 1}},
                {"type": "toolCall", "id": f"call_{turn}", "name": "read", "arguments": {}},
            ],
            stop="toolUse",
            model=model,
            api="bedrock-converse-stream",
            provider="bench",
        )
        b.result(f"call.{turn}|x", ["a", " "])
        b.result(f"call_{turn}", [], error=True)
    b.user([{"type": "text", "text": " "}])
    b.user("last")
    b.answer([{"type": "text", "text": "done"}], model=model, api="bedrock-converse-stream", provider="bench")
    return b


def _mistral_turns() -> _Builder:
    """Turns answered over Mistral's API by the model `MISTRAL` (nine-character call ids), one by another
    model without tool calls (its thinking becomes text), with blank parts, an error and an empty result."""
    b = _Builder()
    _pad(b)
    for turn in range(3):
        b.user(f"ask {turn} é")
        b.answer(
            [
                {"type": "thinking", "thinking": "plan"},
                {"type": "thinking", "thinking": " "},
                {"type": "text", "text": "one"},
                {"type": "text", "text": ""},
                {"type": "toolCall", "id": f"abcdefgh{turn}", "name": "read", "arguments": {"path": "a"}},
                {"type": "toolCall", "id": f"bcdefghi{turn}", "name": "read", "arguments": {}},
            ],
            stop="toolUse",
            model="mistral-same",
            api="mistral-conversations",
            provider="bench",
        )
        b.result(f"abcdefgh{turn}", ["a ", " b"])
        b.result(f"bcdefghi{turn}", [], error=True)
        b.answer(
            [{"type": "thinking", "thinking": "mine"}, {"type": "text", "text": "so"}],
            model="other",
            api="mistral-conversations",
            provider="bench",
        )
    b.user([{"type": "text", "text": ""}])
    b.user("last")
    b.answer(
        [{"type": "text", "text": "done"}], model="mistral-same", api="mistral-conversations", provider="bench"
    )
    return b


def _newer_branch() -> _Builder:
    """A path whose last answer is older than a message before it in the file, off the path: an
    abandoned branch written with a clock ahead (only the path's messages count for the cut)."""
    b = _Builder()
    _pad(b)
    b.user("q")
    kept = b.answer([{"type": "text", "text": "a"}])
    b.entry({"type": "message", "message": {"role": "user", "content": "gone", "timestamp": b.ms * 2}})
    b.leaf = kept
    b.user("next")
    b.answer([{"type": "text", "text": "b"}])
    return b


def _typed_history(path: Path) -> list[Any]:
    manager = SessionManager.open(path, read_only=True)
    return transform_messages(convert_to_llm(manager.build_context().messages))


def _pi_v3(tmp_path: Path) -> Path:
    """pi's large fixture session (v1, aborted and failed turns, another API's answers, 103 thinking
    level changes) as its first write leaves it: v3, with a name and labels, then one more exchange
    (which takes it over a megabyte, so a deferred open reads it)."""
    path = tmp_path / "pi-large-v3.jsonl"
    path.write_bytes((FIXTURES / "large-session.jsonl").read_bytes())
    manager = SessionManager.open(path)
    manager.append_session_info("resumed")
    branch = manager.get_branch()
    manager.append_label(branch[len(branch) // 2].id, "middle")
    manager.append_message(UserMessage(content="one more " + "é" * 40_000))
    manager.append_message(
        AssistantMessage(
            content=[TextContent(text="ok")],
            api="anthropic-messages",
            provider="anthropic",
            model="claude-sonnet-4-5",
            usage=Usage(input=10, output=2, total_tokens=12),
        )
    )
    manager.close()
    return path


def _sources(tmp_path: Path) -> list[Path]:
    big = tmp_path / "big.jsonl"
    big.write_text("\n".join(big_session_lines(3_000, tmp_path)) + "\n")
    return [
        *sorted(FIXTURES.glob("*.jsonl")),
        _pi_v3(tmp_path),
        big,
        _varied().write(tmp_path / "varied.jsonl"),
        _responses_turns().write(tmp_path / "responses.jsonl"),
        _google_turns().write(tmp_path / "google.jsonl"),
        _mistral_turns().write(tmp_path / "mistral.jsonl"),
        _bedrock_turns().write(tmp_path / "bedrock.jsonl"),
        _newer_branch().write(tmp_path / "newer_branch.jsonl"),
        *_paired(tmp_path),
        *_damaged(tmp_path).values(),
    ]


class _Sources:
    """The sessions the wire tests read (`_sources`), with each one's typed history read once."""

    def __init__(self, paths: list[Path]) -> None:
        self.paths = paths
        self._typed: dict[Path, list[Any]] = {}

    def typed_history(self, path: Path) -> list[Any]:
        """`_typed_history` of ``path``, shared by the tests (they copy or slice it, never change it)."""
        if path not in self._typed:
            self._typed[path] = _typed_history(path)
        return self._typed[path]


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> _Sources:
    """`_sources`, written and read once for this file's tests, which only read them (it took ~0.7 s of
    each test, and the request test runs once per API case). Under a home of its own, as every test;
    dropped with the module, so the histories do not stay in the worker for the rest of the run."""
    home = tmp_path_factory.mktemp("sources-home")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("HOME", str(home))
        env.setenv("PI_CODING_AGENT_DIR", str(home / ".pi" / "agent"))
        return _Sources(_sources(tmp_path_factory.mktemp("sources")))


def _paired(tmp_path: Path) -> list[Path]:
    """Paths that pairing changes (`transform_messages`): a stray result and the results of a failed
    turn dropped, calls left unanswered (a synthetic result added where the flow breaks and at the
    end), results in another order than their calls."""
    b = _Builder()
    _pad(b)
    b.user("q")
    b.answer([{"type": "text", "text": "a"}])
    b.result("nobody", ["stray"])
    b.answer(
        [
            {"type": "toolCall", "id": "c1", "name": "read", "arguments": {}},
            {"type": "toolCall", "id": "c2", "name": "read", "arguments": {"p": 1}},
        ],
        stop="toolUse",
    )
    b.result("c2", ["second first"])
    b.result("c1", ["then the first"])
    b.result("c1", ["again"])
    b.user("go on")
    b.answer([{"type": "text", "text": "b"}])
    late = _Builder()
    late.lines, late.leaf, late.ms = [dict(line) for line in b.lines], b.leaf, b.ms
    b.answer([{"type": "toolCall", "id": "c3", "name": "read", "arguments": {}}], stop="toolUse")
    b.answer([{"type": "text", "text": "partial"}], stop="aborted")  # pairing adds a result before it
    b.result("c3", ["too late: the flow broke"])
    b.user("go on")
    b.answer([{"type": "text", "text": "c"}])
    late.answer([{"type": "toolCall", "id": "c4", "name": "read", "arguments": {}}], stop="toolUse")
    return [b.write(tmp_path / "paired.jsonl"), late.write(tmp_path / "unanswered_last.jsonl")]


def _damaged(tmp_path: Path) -> dict[str, Path]:
    """The generated session with every kind of damage the loading repairs without looking into the
    entries: lines that do not decode (not UTF-8, nested too deep), lines that are no entry, a second
    header, two entries of the path cut short (what hung off them is attached to the entry before),
    and a torn last line; and the same with a whole last line that only lacks its newline."""
    lines = [line.encode() + b"\n" for line in big_session_lines(3_000, tmp_path)]
    cut_short = {2_203, 2_601}  # an assistant turn and a tool result of the path (a call left unanswered)
    assert {json.loads(lines[at])["message"]["role"] for at in cut_short} == {"toolResult", "assistant"}
    damaged = [line[: len(line) // 2] + b"\n" if at in cut_short else line for at, line in enumerate(lines)]
    damaged.insert(2_500, b'["an array, not an entry"]\n')
    damaged.insert(2_000, b'{"no": "type"}\n')
    damaged.insert(1_500, b"\xff\xfe not UTF-8 {{\n")
    damaged.insert(1_200, b"[" * 300 + b"]" * 300 + b"\n")
    damaged.insert(700, lines[0])  # a second header
    torn = tmp_path / "damaged.jsonl"
    torn.write_bytes(b"".join(damaged) + lines[-1][:60])
    unterminated = tmp_path / "unterminated.jsonl"
    unterminated.write_bytes(b"".join(lines)[:-1])
    return {"damaged": torn, "unterminated": unterminated}


def _plain(path: Path) -> Any:
    with open(path, "rb") as handle:
        return read_plain_path(handle, line_decoder(fast=True))


def test_every_source_either_falls_back_or_matches_the_typed_wire_byte_for_byte(sources: _Sources) -> None:
    matched = []
    mistral_matched: list[str] = []
    for path in sources.paths:
        plain = _plain(path)
        if plain is None:
            continue
        # up to the last prompt before pairing adds a synthetic result (made at request time; the typed
        # end of a first request has it): no call is open there
        end = plain.synthetic
        while plain.messages[end - 1]["role"] != "user":
            end -= 1
        history = sources.typed_history(path)[:end]
        messages = plain.messages[:end]
        prepared, _ = prepare_messages(history, ANTHROPIC, None)
        typed = anthropic.convert_messages(prepared, ANTHROPIC, len(prepared), None)
        fast = anthropic_history(messages, ANTHROPIC)
        assert fast is not None
        assert encode_wire(fast) == b",".join(dumps(m).encode() for m in typed), path.name
        compat = resolve_compat(CHAT)
        prepared, _ = prepare_messages(history, CHAT, None)
        typed = openai_completions.convert_messages(prepared, CHAT, "", compat)
        chat = chat_history(messages, CHAT, compat)
        assert chat is not None
        assert dumps(chat) == dumps(typed), path.name
        for model in (RESPONSES, RESPONSES.model_copy(update={"provider": "openai"})):
            prepared, _ = prepare_messages(history, model, None)
            converter = openai_responses._Converter(model, "", None)
            converter.feed(prepared, cached=False)
            items, emitted = responses_history(messages, model)
            assert dumps(items) == dumps(converter.finish()), path.name
            assert emitted == converter.emitted, path.name
        for model in (GEMINI, GEMINI.model_copy(update={"id": "gemini-2.5-pro"})):  # ids sent, and not
            prepared, _ = prepare_messages(history, model, None)
            contents = google_history(messages, model)
            assert encode_wire(contents) == b",".join(
                dumps(c).encode() for c in _google_request.convert_messages(prepared, model)
            ), path.name
        for model in (BEDROCK, BEDROCK.model_copy(update={"id": "meta.llama3-70b", "provider": "bench"})):
            prepared, _ = prepare_messages(history, model, None)
            typed_bedrock = _bedrock_request.convert_messages(prepared, model, StreamOptions(cache_retention="none"))
            assert dumps(bedrock_history(messages, model)) == dumps(typed_bedrock), path.name
        prepared, _ = prepare_messages(history, MISTRAL, None)
        said = mistral_history(messages, MISTRAL)
        if said is None:  # another model's tool calls: left to the typed path
            assert any(m["role"] == "assistant" and m["model"] != MISTRAL.id and calls_of(m) for m in messages)
        else:
            assert dumps(said) == dumps(mistral.convert_messages(prepared, MISTRAL, "")), path.name
            mistral_matched.append(path.name)
        matched.append(path.name)
    # pi's fixtures hold compactions: left to the typed path
    assert matched == [
        "pi-large-v3.jsonl",
        "big.jsonl",
        "varied.jsonl",
        "responses.jsonl",
        "google.jsonl",
        "mistral.jsonl",
        "bedrock.jsonl",
        "newer_branch.jsonl",
        "paired.jsonl",
        "unanswered_last.jsonl",
        "damaged.jsonl",
        "unterminated.jsonl",
    ]
    assert "mistral.jsonl" in mistral_matched and "big.jsonl" not in mistral_matched


_REQUEST_CASES: dict[str, tuple[str, int, dict[str, Any]]] = {
    # API, context window (12,000: the output cap is cut to what the window leaves), model fields
    "anthropic": ("anthropic-messages", 200_000, {}),
    "anthropic, a small window": ("anthropic-messages", 12_000, {}),
    "anthropic, a model that reads images": ("anthropic-messages", 200_000, {"input": ["text", "image"]}),
    "chat, a small window": ("openai-completions", 12_000, {}),
    "chat, a server wanting names and a turn after results": (
        "openai-completions",
        200_000,
        {"compat": {"requiresToolResultName": True, "requiresAssistantAfterToolResult": True}},
    ),
    "chat, no instructions role": ("openai-completions", 200_000, {"reasoning": False}),
    "responses": ("openai-responses", 200_000, {"id": "gpt-r"}),
    "responses, a small window": ("openai-responses", 12_000, {}),
    "responses, OpenAI's call ids, no developer role": (
        "openai-responses",
        200_000,
        {"id": "gpt-r", "provider": "openai", "reasoning": False},
    ),
    # Azure's and Codex's Responses APIs send the same input items, their providers OpenAI's call ids
    "azure responses": (
        "azure-openai-responses",
        200_000,
        {"provider": "azure-openai-responses", "base_url": "https://bench.openai.azure.com/openai/v1"},
    ),
    "codex responses": ("openai-codex-responses", 200_000, {"provider": "openai-codex"}),
    "gemini": ("google-generative-ai", 200_000, {"id": "gemini-3-pro"}),
    "gemini, no ids, a small window": ("google-generative-ai", 12_000, {"id": "gemini-2.5-pro"}),
    "vertex": ("google-vertex", 200_000, {"id": "gemini-3-pro"}),
    "bedrock, a Claude model": ("bedrock-converse-stream", 200_000, {"id": "us.anthropic.claude-opus-4-6-v1"}),
    "bedrock, another model, a small window": ("bedrock-converse-stream", 12_000, {"id": "meta.llama3-70b"}),
    "mistral": ("mistral-conversations", 200_000, {"id": "mistral-same"}),
    "mistral, a small window": ("mistral-conversations", 12_000, {"id": "mistral-same"}),
}


@pytest.mark.parametrize("case", list(_REQUEST_CASES))
def test_a_first_request_with_the_wire_prefix_sends_the_bytes_of_the_whole_history(
    sources: _Sources, case: str
) -> None:
    api, window, fields = _REQUEST_CASES[case]
    model = Model(
        **{
            "id": "bench-model",
            "api": api,
            "provider": "bench",
            "reasoning": True,
            "context_window": window,
            "max_tokens": 8192,
            **fields,
        }
    )
    module: Any = {
        "anthropic-messages": anthropic,
        "openai-completions": openai_completions,
        "openai-responses": openai_responses,
        "azure-openai-responses": azure_openai_responses,
        "openai-codex-responses": openai_codex_responses,
        "google-generative-ai": _google_request,
        "google-vertex": _google_request,
        "mistral-conversations": mistral,
        "bedrock-converse-stream": _bedrock_request,
    }[api]
    if "responses" in api:
        encode = openai_responses.encode_request
    elif "google" in api:
        encode = _google_request.encode_request
    elif api == "bedrock-converse-stream":
        encode = _bedrock_request.encode_request
    else:
        encode = module._encode
    build = prefix_builder(api)  # the one the session uses
    assert build is not None
    sent_fast = 0
    for path in sources.paths:
        plain = _plain(path)
        if plain is None:
            continue
        split = split_path(plain)
        assert split is not None
        prefix = build(split, model)
        if prefix is None:
            # Chat Completions: a history ending in a tool result, on such a server; Mistral: another
            # model's tool calls
            assert (api == "openai-completions" and fields.get("compat")) or api == "mistral-conversations"
            continue
        history = sources.typed_history(path)
        manager = SessionManager.open(path, read_only=True, defer_history=True)
        assert manager.deferred_history is not None
        kept = build_session_context([], path=manager.get_kept_branch()).messages
        tail = transform_messages(convert_to_llm(kept))
        assert len(tail) < len(history)
        prompt = UserMessage(content="hi")
        whole = LlmRequest("You are terse.", [*history, prompt], TOOLS, len(history) + 1, paired=True)
        cut = LlmRequest(
            "You are terse.", [*tail, prompt], TOOLS, len(tail) + 1, paired=True, wire_prefix=prefix
        )
        options = StreamOptions(thinking="medium", session_id="s-1")
        sent = encode(module.build_request(model, cut, options))
        assert sent == encode(module.build_request(model, whole, options)), path.name
        manager.close()
        sent_fast += 1
    assert sent_fast >= (1 if api == "mistral-conversations" else 6)


def _fallback_cases() -> dict[str, _Builder]:
    cases: dict[str, _Builder] = {}

    def base() -> _Builder:
        b = _Builder()
        _pad(b)
        b.user("q")
        b.answer([{"type": "text", "text": "a"}])
        return b

    b = base()
    b.entry({"type": "compaction", "summary": "s", "firstKeptEntryId": b.leaf, "tokensBefore": 5})
    cases["compaction"] = b
    b = base()
    b.entry({"type": "branch_summary", "fromId": b.leaf, "summary": "s"})
    cases["branch summary"] = b
    b = base()
    b.message({"role": "system", "content": "", "sections": {"preamble": "P", "cwd": "<cwd>\n/p\n</cwd>"}})
    cases["a prompt pi persisted (requests send it)"] = b
    b = base()
    b.message({**_PI_TUI_PROMPT, "tools_added": []})
    cases["a system message with a field under its Python name"] = b
    b = base()
    b.message({**_PI_TUI_PROMPT, "toolsAdded": {"name": "read"}})
    cases["tools that are not a list"] = b
    b = base()
    b.entry({"type": "custom_message", "customType": "x", "content": "c", "display": True})
    cases["custom message"] = b
    b = base()
    b.entry({"type": "label", "targetId": 7, "label": "l"})
    cases["a label of a number"] = b
    b = base()
    b.entry({"type": "session_info", "name": ["n"]})
    cases["a name that is a list"] = b
    b = base()
    b.message(
        {
            "role": "bashExecution",
            "command": "ls",
            "output": "",
            "exitCode": 0,
            "cancelled": False,
            "truncated": False,
        }
    )
    cases["bash execution"] = b
    b = base()
    b.user([{"type": "image", "data": "AAAA", "mimeType": "image/png"}])
    cases["image"] = b
    b = base()
    b.answer(
        [
            {"type": "toolCall", "id": "c1", "name": "read", "arguments": {}},
            {"type": "toolCall", "id": "c1", "name": "read", "arguments": {}},
        ],
        stop="toolUse",
    )
    b.result("c1", ["one"])
    cases["two calls of one id"] = b
    b = base()
    b.lines[-1]["message"]["stop_reason"] = "stop"
    cases["a field under its Python name"] = b
    b = base()
    del b.lines[-1]["message"]["timestamp"]
    cases["no timestamp"] = b
    b = base()
    b.lines[-1]["message"]["usage"]["input"] = "10"
    cases["a string where a number goes"] = b
    b = base()
    b.lines[-1]["id"] = b.lines[1]["id"]
    cases["duplicate id"] = b
    b = base()
    b.lines[-1]["id"] = b.leaf = ""
    b.user("x")
    del b.lines[-1]["parentId"]
    cases["no parent key, and an entry whose id is empty"] = b
    b = base()
    b.lines[0]["version"] = 2
    cases["old version"] = b
    return cases


@pytest.mark.parametrize("case", list(_fallback_cases()))
def test_shapes_the_fast_path_does_not_handle_take_the_typed_path(case: str, tmp_path: Path) -> None:
    path = _fallback_cases()[case].write(tmp_path / "s.jsonl")
    assert path.stat().st_size > 1 << 20
    assert _plain(path) is None
    manager = SessionManager.open(path, read_only=True, defer_history=True)
    assert manager.deferred_history is None  # the typed path, as without the flag
    assert _loaded(manager) == _loaded(SessionManager.open(path, read_only=True))


def _loaded(manager: SessionManager) -> tuple[Any, ...]:
    """What a load gave: every entry as its line would be written, the leaf, the report's summary."""
    from pi_tui.session.entries import entry_to_line

    # (a message without its own time gets the time it is read at: those are masked)
    lines = [re.sub(r'"timestamp":\d+', "", entry_to_line(e)) for e in manager.get_entries()]
    return lines, manager.get_leaf_id(), manager.load_report.summary(), len(manager.load_report.skipped)


def test_a_line_holding_an_entry_after_broken_bytes_takes_the_typed_path(tmp_path: Path) -> None:
    """The loading recovers such an entry (a write cut off, then the next one): left to it."""
    lines = [line.encode() + b"\n" for line in big_session_lines(3_000, tmp_path)]
    lines[1_500] = lines[1_500][:40] + lines[1_501]
    path = tmp_path / "glued.jsonl"
    path.write_bytes(b"".join(lines))
    assert _plain(path) is None
    manager = SessionManager.open(path, read_only=True, defer_history=True)
    assert manager.deferred_history is None
    assert manager.load_report.salvaged == [1_501]


@pytest.mark.parametrize("case", ["damaged", "unterminated"])
def test_damaged_lines_and_a_torn_tail_are_read_as_the_loading_reads_them_and_kept(
    case: str, tmp_path: Path
) -> None:
    path = _damaged(tmp_path)[case]
    original = path.read_bytes()
    typed = SessionManager.open(path, read_only=True)
    deferred = SessionManager.open(path, defer_history=True)
    assert deferred.deferred_history is not None
    expected = typed.load_report
    report = deferred.load_report
    assert report.summary() == expected.summary()
    assert (report.lines, report.entries) == (expected.lines, expected.entries)
    assert report.skipped == expected.skipped
    assert report.reattached == expected.reattached
    assert (report.torn_tail, report.unterminated_tail) == (expected.torn_tail, expected.unterminated_tail)
    if case == "damaged":
        assert len(report.skipped) == 8 and len(report.reattached) == 2 and report.torn_tail is not None
    else:
        assert report.unterminated_tail and not report.has_problems
    assert deferred.restore_state() == typed.restore_state()
    entry = deferred.append_message(UserMessage(content="hi"))
    deferred.complete_history()
    assert _loaded(deferred)[0][:-1] == _loaded(typed)[0]
    assert [e.id for e in deferred.get_branch()] == [*(e.id for e in typed.get_branch()), entry.id]
    deferred.append_message(UserMessage(content="again"))  # written once the session has an answer:
    deferred.append_message(AssistantMessage(content=[TextContent(text="ok")]))  # (pi's rule)
    deferred.close()
    written = path.read_bytes()
    assert written.startswith(original)  # every line as it was, the unreadable ones too
    assert written[len(original) : len(original) + 1] == b"\n"  # the last line ended first
    reopened = SessionManager.open(path, read_only=True)
    assert [e.id for e in reopened.get_branch()][-4:] == [typed.get_leaf_id(), entry.id, *_last_two(reopened)]
    assert reopened.load_report.torn_tail is None and not reopened.load_report.unterminated_tail


def _last_two(manager: SessionManager) -> list[str | None]:
    return [e.id for e in manager.get_branch()][-2:]


def test_a_deferred_session_completes_into_the_tree_a_plain_open_gives_with_appends_after(
    tmp_path: Path,
) -> None:
    path = tmp_path / "big.jsonl"
    path.write_text("\n".join(big_session_lines(3_000, tmp_path)) + "\n")
    plain = SessionManager.open(path, read_only=True)
    expected = [(e.id, e.parent_id, e.type) for e in plain.get_entries()]
    branch = [e.id for e in plain.get_branch()]
    state = plain.restore_state()
    plain.close()
    deferred = SessionManager.open(path, defer_history=True)
    assert deferred.deferred_history is not None
    assert deferred.restore_state() == state
    assert deferred.get_leaf_id() == branch[-1]
    entry = deferred.append_message(UserMessage(content="hi"))
    assert entry.parent_id == branch[-1]
    assert deferred.deferred_history is not None  # appending did not build it
    deferred.complete_history()
    assert deferred.deferred_history is None
    assert [(e.id, e.parent_id, e.type) for e in deferred.get_entries()] == [
        *expected,
        (entry.id, branch[-1], "message"),
    ]
    assert [e.id for e in deferred.get_branch()] == [*branch, entry.id]
    deferred.close()
    last = json.loads(path.read_text().splitlines()[-1])
    assert (last["id"], last["parentId"]) == (entry.id, branch[-1])
    reopened = SessionManager.open(path, read_only=True)
    assert [e.id for e in reopened.get_branch()] == [*branch, entry.id]


def test_any_other_use_of_the_tree_builds_the_deferred_history_first(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    path.write_text("\n".join(big_session_lines(3_000, tmp_path)) + "\n")
    count = len(SessionManager.open(path, read_only=True).get_entries())
    deferred = SessionManager.open(path, read_only=True, defer_history=True)
    assert deferred.deferred_history is not None
    assert len(deferred.get_entries()) == count
    assert deferred.deferred_history is None


@pytest.mark.parametrize("case", ["an answer older than a message before it", "no usage reported"])
def test_a_path_no_cut_keeps_exact_is_read_whole(case: str, tmp_path: Path) -> None:
    b = _Builder()
    _pad(b)
    b.user("q")
    if case == "no usage reported":
        b.answer([{"type": "text", "text": "a"}], total=0)
        for line in b.lines[1:]:
            message = line["message"]
            if message["role"] == "assistant":
                message["usage"] = {
                    "input": 0,
                    "output": 0,
                    "cacheRead": 0,
                    "cacheWrite": 0,
                    "totalTokens": 0,
                }
    else:
        b.answer([{"type": "text", "text": "a"}])
        b.lines[-1]["message"]["timestamp"] = 1  # the clock went back: pi's estimate looks further
    path = b.write(tmp_path / "s.jsonl")
    plain = _plain(path)
    assert plain is not None and split_path(plain) is None
    manager = SessionManager.open(path, read_only=True, defer_history=True)
    assert manager.deferred_history is None
    assert _loaded(manager) == _loaded(SessionManager.open(path, read_only=True))


@pytest.mark.parametrize(
    "arguments",
    [
        {"path": "a", "n": 1},
        {"path": "a", "n": 1e-07},
        {"path": "a", "deep": {"n": [1, {"x": 2.5e-07}]}},
        {"path": "a", "deep": {"n": [1, {"x": None}], "ok": True}},
        {},
    ],
    ids=["flat", "float", "nested-float", "nested-plain", "empty"],
)
def test_a_prefix_encodes_tool_inputs_as_the_stdlib_does(arguments: dict[str, Any]) -> None:
    """Floats are written differently by orjson: wherever one sits in a tool input, the prefix's JSON
    is the stdlib's, message by message."""
    call = {"type": "toolCall", "id": "toolu_1", "name": "read", "arguments": arguments}
    messages: list[dict[str, object]] = [
        {"role": "user", "content": "go", "timestamp": 1},
        {
            "role": "assistant",
            "content": [call],
            "api": ANTHROPIC.api,
            "provider": ANTHROPIC.provider,
            "model": ANTHROPIC.id,
            "stopReason": "toolUse",
            "timestamp": 2,
        },
        {
            "role": "toolResult",
            "toolCallId": "toolu_1",
            "toolName": "read",
            "content": [{"type": "text", "text": "ok"}],
            "isError": False,
            "timestamp": 3,
        },
    ]
    wire = anthropic_history(messages, ANTHROPIC)
    assert wire is not None
    expected = b",".join(dumps(message).encode() for message in wire)
    assert encode_wire(wire) == expected
    inputs: list[object] = []
    assert anthropic_history(messages, ANTHROPIC, inputs) == wire
    assert inputs == [arguments]


def test_a_file_found_not_plain_after_a_skipped_line_loads_as_the_typed_path_loads_it(tmp_path: Path) -> None:
    """The values decoded before the reading gave up go to the typed reading, which must not take a
    value of one line for another's after a line that did not decode."""
    b = _fallback_cases()["compaction"]
    lines = [json.dumps(line).encode() + b"\n" for line in b.lines]
    lines.insert(500, b"\xff\xfe not UTF-8 {{\n")
    lines.insert(900, b'["an array"]\n')
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(lines))
    deferred = SessionManager.open(path, read_only=True, defer_history=True)
    assert deferred.deferred_history is None
    typed = SessionManager.open(path, read_only=True)
    assert _loaded(deferred) == _loaded(typed)
    assert len(typed.load_report.skipped) == 2
