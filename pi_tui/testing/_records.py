"""What the fake remembers about each request: the log entry, its violations and cache numbers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from pi_tui.util.json_types import JsonObject

from ._script import Turn

__all__ = [
    "CacheStats",
    "CacheUsage",
    "RecordedRequest",
    "RequestCacheStats",
    "ResponseSummary",
    "ToolResultView",
    "Violation",
]


@dataclass(frozen=True)
class Violation:
    """A request that broke one of the provider's rules.

    Attributes:
        rule: stable rule id, e.g. ``"anthropic.tool_result_missing"`` (list in `pi_tui.testing`).
        message: the provider's error text, as sent back to the client.
        api: ``"anthropic"``, ``"openai-chat"`` or ``"openai-responses"``.
        request_seq: `RecordedRequest.seq` of the offending request.
        status: the HTTP status the provider answers with.
        param: OpenAI's ``param`` field, when there is one.
        code: OpenAI's ``code`` field, when there is one.
    """

    rule: str
    message: str
    api: str
    request_seq: int
    status: int = 400
    param: str | None = None
    code: str | None = None


@dataclass
class CacheUsage:
    """The prompt-cache simulation's result for one request (all in fake tokens).

    ``input + cache_read + cache_write == total`` always holds.
    """

    input: int = 0
    cache_read: int = 0
    cache_write: int = 0
    total: int = 0
    cache_write_5m: int = 0
    cache_write_1h: int = 0
    breakpoints: list[int] = field(default_factory=list)
    """Anthropic: flattened block indices with a breakpoint; OpenAI: the token boundaries looked up."""
    hit: int | None = None
    """Anthropic: the block index the read ended at; OpenAI: the cached token boundary."""
    blocks: int = 0


@dataclass
class ResponseSummary:
    """How the fake answered.

    Attributes:
        status: the HTTP status.
        kind: ``"reply"``, ``"fault"``, ``"violation"``, ``"exhausted"``, ``"responder_error"``,
            ``"auth"``, ``"bad_request"`` or ``"info"`` (count_tokens).
        fault: the fault kind, for ``kind == "fault"``.
        stop_reason: the API's own stop reason / finish reason / status that was sent.
        usage: the reported usage in neutral keys ``input``, ``output``, ``cache_read``, ``cache_write``.
        frames_planned: SSE frames the full reply renders to (0 for JSON answers), before any fault cut.
        frames_sent: SSE frames actually written.
        aborted_at_frame: the frame at which the client went away, if it did.
        message: error text, for error answers.
        tool_call_ids: ids of the tool calls sent, in order.
        delivered: set once the server finished sending (or the client went away).
    """

    status: int
    kind: str
    fault: str | None = None
    stop_reason: str | None = None
    usage: dict[str, int] | None = None
    frames_planned: int = 0
    frames_sent: int = 0
    aborted_at_frame: int | None = None
    message: str | None = None
    tool_call_ids: list[str] = field(default_factory=list)
    delivered: bool = False


@dataclass(frozen=True)
class ToolResultView:
    """A tool result found in a request, in provider-neutral form."""

    tool_call_id: str
    content: str
    is_error: bool = False


@dataclass
class RecordedRequest:
    """One request the fake received.

    Attributes:
        seq: 1-based sequence number across the fake's lifetime (until `FakeLLM.reset`).
        api: ``"anthropic"``, ``"anthropic-count-tokens"``, ``"openai-chat"``, ``"openai-responses"``,
            ``"gemini"`` (both Gemini APIs), ``"mistral"``, ``"bedrock"`` or ``"google-token"`` (the fake token endpoint; ``body`` is the form).
        method: HTTP method.
        path: request path.
        headers: lower-cased headers with credentials redacted.
        body: the parsed JSON body (``None`` if it did not parse).
        model: the requested model.
        stream: whether an SSE stream was requested.
        prompt_tokens: the fake token count of the prompt.
        cache: prompt-cache simulation details (zeros when the request never reached the model).
        violations: rules the request broke.
        response: how it was answered.
        turn: the script turn used, if any.
        turn_index: 0-based index of that turn in the script (``None`` for responder answers).
        time: the fake clock when the request arrived.
    """

    seq: int
    api: str
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    model: str | None = None
    stream: bool = False
    prompt_tokens: int = 0
    cache: CacheUsage = field(default_factory=CacheUsage)
    violations: list[Violation] = field(default_factory=list)
    response: ResponseSummary | None = None
    turn: Turn | None = None
    turn_index: int | None = None
    time: float = 0.0

    # -- provider-neutral views, handy for dynamic responders ------------------------------------

    @property
    def messages(self) -> list[Any]:
        """The raw message / input-item list of the request."""
        if not isinstance(self.body, dict):
            return []
        field = {"openai-responses": "input", "gemini": "contents"}.get(self.api, "messages")
        items = self.body.get(field)
        if isinstance(items, str):
            return [{"role": "user", "content": items}]
        return items if isinstance(items, list) else []

    @property
    def tool_names(self) -> list[str]:
        """Names of the tools offered."""
        names: list[str] = []
        tools = self.body.get("tools") if isinstance(self.body, dict) else None
        if (
            self.api == "bedrock"
            and isinstance(self.body, dict)
            and isinstance(self.body.get("toolConfig"), dict)
        ):
            tools = self.body["toolConfig"].get("tools")
        for tool in tools if isinstance(tools, list) else []:
            if isinstance(tool, dict) and isinstance(tool.get("toolSpec"), dict):  # Bedrock
                name = tool["toolSpec"].get("name")
                names += [name] if isinstance(name, str) else []
            elif isinstance(tool, dict) and isinstance(tool.get("functionDeclarations"), list):
                names += [d["name"] for d in tool["functionDeclarations"] if isinstance(d.get("name"), str)]
            elif isinstance(tool, dict):
                function = tool.get("function")
                name = function.get("name") if isinstance(function, dict) else tool.get("name")
                if isinstance(name, str):
                    names.append(name)
        return names

    @property
    def system(self) -> str:
        """The system prompt text (Anthropic ``system``, OpenAI system/developer messages, ``instructions``)."""
        body = self.body if isinstance(self.body, dict) else {}
        if self.api == "gemini":
            instruction = body.get("systemInstruction")
            return _text_of(instruction.get("parts")) if isinstance(instruction, dict) else ""
        if self.api == "openai-responses":
            parts = [body["instructions"]] if isinstance(body.get("instructions"), str) else []
            parts += [
                _text_of(m.get("content")) for m in self.messages if _role(m) in ("system", "developer")
            ]
            return "\n".join(parts)
        if self.api in ("openai-chat", "mistral"):
            return "\n".join(
                _text_of(m.get("content")) for m in self.messages if _role(m) in ("system", "developer")
            )
        return _text_of(body.get("system"))

    def tool_results(self) -> list[ToolResultView]:
        """Every tool result in the request, oldest first."""
        found: list[ToolResultView] = []
        for message in self.messages:
            if not isinstance(message, dict):
                continue
            if self.api in ("openai-chat", "mistral") and message.get("role") == "tool":
                found.append(
                    ToolResultView(str(message.get("tool_call_id", "")), _text_of(message.get("content")))
                )
            elif self.api == "openai-responses" and message.get("type") == "function_call_output":
                found.append(ToolResultView(str(message.get("call_id", "")), _text_of(message.get("output"))))
            elif self.api == "gemini" and isinstance(message.get("parts"), list):
                for part in message["parts"]:
                    response = part.get("functionResponse") if isinstance(part, dict) else None
                    if isinstance(response, dict):
                        raw = response.get("response")
                        value: JsonObject = raw if isinstance(raw, dict) else {}
                        is_error = "error" in value
                        output = value.get("error" if is_error else "output")
                        call = str(response.get("id") or response.get("name") or "")
                        found.append(ToolResultView(call, _text_of(output), is_error))
            elif self.api == "bedrock" and isinstance(message.get("content"), list):
                for block in message["content"]:
                    result = block.get("toolResult") if isinstance(block, dict) else None
                    if isinstance(result, dict):
                        found.append(
                            ToolResultView(
                                str(result.get("toolUseId", "")),
                                _text_of(result.get("content")),
                                result.get("status") == "error",
                            )
                        )
            elif self.api.startswith("anthropic") and isinstance(message.get("content"), list):
                for block in message["content"]:
                    if isinstance(block, dict) and block.get("type") == "tool_result":
                        found.append(
                            ToolResultView(
                                str(block.get("tool_use_id", "")),
                                _text_of(block.get("content")),
                                bool(block.get("is_error", False)),
                            )
                        )
        return found

    def last_tool_result(self) -> ToolResultView | None:
        """The newest tool result, or ``None``."""
        results = self.tool_results()
        return results[-1] if results else None

    def last_user_text(self) -> str:
        """Text of the newest user message ("" when there is none)."""
        for message in reversed(self.messages):
            if self.api == "bedrock" and isinstance(message, dict) and message.get("role") == "user":
                texts = [b for b in message.get("content") or [] if isinstance(b, dict) and "text" in b]
                if texts:
                    return _text_of(texts)
                continue
            if self.api == "gemini" and isinstance(message, dict) and message.get("role") == "user":
                texts = [p for p in message.get("parts") or [] if isinstance(p, dict) and "text" in p]
                if texts:
                    return _text_of(texts)
                continue
            if isinstance(message, dict) and _role(message) == "user":
                return _text_of(message.get("content"))
        return ""

    def to_dict(self) -> JsonObject:
        """A JSON-ready form (used by ``GET /_fake/log``)."""
        data = asdict(self)
        data["turn"] = None if self.turn is None else type(self.turn).__name__
        return data


def _role(message: Any) -> str | None:
    if not isinstance(message, dict):
        return None
    if message.get("type", "message") != "message":
        return None
    role = message.get("role")
    return role if isinstance(role, str) else None


def _text_of(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                texts.append(part["text"])
        return "\n".join(texts)
    return str(content)


@dataclass(frozen=True)
class RequestCacheStats:
    """Reported usage of one generation request, in fake tokens."""

    seq: int
    api: str
    input: int
    cache_read: int
    cache_write: int
    total: int


@dataclass(frozen=True)
class CacheStats:
    """Prompt-cache numbers over all answered generation requests.

    ``hit_ratio = Σcache_read / Σ(input + cache_read + cache_write)``;
    ``write_ratio = Σcache_write / Σtotal``.
    """

    requests: Sequence[RequestCacheStats]
    input: int
    cache_read: int
    cache_write: int
    total: int

    @property
    def hit_ratio(self) -> float:
        return self.cache_read / self.total if self.total else 0.0

    @property
    def write_ratio(self) -> float:
        return self.cache_write / self.total if self.total else 0.0

    def to_dict(self) -> JsonObject:
        data = asdict(self)
        data["hit_ratio"] = self.hit_ratio
        data["write_ratio"] = self.write_ratio
        return data

    @classmethod
    def from_requests(cls, records: Sequence[RecordedRequest]) -> CacheStats:
        rows = []
        for record in records:
            usage = record.response.usage if record.response else None
            if usage is None or record.api == "anthropic-count-tokens":
                continue
            read, write, inp = usage.get("cache_read", 0), usage.get("cache_write", 0), usage.get("input", 0)
            rows.append(RequestCacheStats(record.seq, record.api, inp, read, write, inp + read + write))
        return cls(
            rows,
            sum(r.input for r in rows),
            sum(r.cache_read for r in rows),
            sum(r.cache_write for r in rows),
            sum(r.total for r in rows),
        )
