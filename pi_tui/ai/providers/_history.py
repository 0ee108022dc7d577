"""Making a stored history safe to replay to a given model.

Both APIs reject a tool call without its result (or a result without its call), signatures that another
model issued, and tool-call ids outside ``[a-zA-Z0-9_-]``. pi stores whatever happened, including failed
and aborted turns, so every provider runs `prepare_messages` before converting the history.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from typing import Any

from ..types import (
    NOT_REPLAYED,
    AssistantMessage,
    ImageContent,
    LlmMessage,
    Model,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
)

__all__ = [
    "TOOL_IMAGE_PLACEHOLDER",
    "USER_IMAGE_PLACEHOLDER",
    "Preparer",
    "images_as_placeholders",
    "prepare_messages",
    "sanitize_surrogates",
    "sanitize_tool_call_id",
    "short_hash",
]

_ID_CHARS = re.compile(r"[^a-zA-Z0-9_-]")
# What pi sends in place of images for a model without image input (one per run of adjacent images).
USER_IMAGE_PLACEHOLDER = "(image omitted: model does not support images)"
TOOL_IMAGE_PLACEHOLDER = "(tool image omitted: model does not support images)"
_SURROGATE = re.compile("[\ud800-\udfff]")
_LONE_SURROGATE = re.compile("[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]")


def sanitize_surrogates(text: str) -> str:
    """``text`` without unpaired UTF-16 surrogates, which cannot be sent as UTF-8 (pi drops them too).

    A session line may carry them as JSON escapes (a tool printed half an emoji); an escaped pair that
    JSON decoding left as two code points is joined into the character it stands for, as pi sends it.
    """
    if text.isascii() or _SURROGATE.search(text) is None:  # isascii is O(1): the usual answer
        return text
    kept = _LONE_SURROGATE.sub("", text)
    return kept.encode("utf-16", "surrogatepass").decode("utf-16")


def short_hash(text: str) -> str:
    """pi's ``shortHash``: a deterministic 64-bit string hash in base 36, used where pi shortens ids
    (over UTF-16 code units, as JavaScript strings count them)."""
    mask = 0xFFFFFFFF
    h1, h2 = 0xDEADBEEF, 0x41C6CE57
    units = text.encode("utf-16-le", "surrogatepass")
    for i in range(0, len(units), 2):
        unit = units[i] | (units[i + 1] << 8)
        h1 = ((h1 ^ unit) * 2654435761) & mask
        h2 = ((h2 ^ unit) * 1597334677) & mask
    h1 = (((h1 ^ (h1 >> 16)) * 2246822507) & mask) ^ (((h2 ^ (h2 >> 13)) * 3266489909) & mask)
    h2 = (((h2 ^ (h2 >> 16)) * 2246822507) & mask) ^ (((h1 ^ (h1 >> 13)) * 3266489909) & mask)
    return _base36(h2) + _base36(h1)


def _base36(value: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        value, rest = divmod(value, 36)
        out = digits[rest] + out
        if value == 0:
            return out


def images_as_placeholders(content: Iterable[Any], placeholder: str) -> list[Any]:
    """``content`` with each run of adjacent images replaced by one ``placeholder`` text block, for a
    model without image input (a placeholder already there absorbs the images right after it)."""
    out: list[Any] = []
    after_placeholder = False
    for block in content:
        if isinstance(block, ImageContent):
            if not after_placeholder:
                out.append(TextContent(text=placeholder))
            after_placeholder = True
            continue
        out.append(block)
        after_placeholder = isinstance(block, TextContent) and block.text == placeholder
    return out


def sanitize_tool_call_id(call_id: str, max_len: int = 64) -> str:
    """Map any id to ``[a-zA-Z0-9_-]{1,max_len}``, deterministically (ids must match across turns).

    Over-long ids keep a prefix plus a hash of the whole id, so two ids that share a long prefix stay
    distinct.
    """
    clean = _ID_CHARS.sub("_", call_id) or "call"
    if len(clean) <= max_len:
        return clean
    digest = hashlib.sha1(call_id.encode()).hexdigest()[:12]
    return f"{clean[: max_len - 13]}_{digest}"


def _same_model(message: AssistantMessage, model: Model) -> bool:
    return message.provider == model.provider and message.api == model.api and message.model == model.id


def prepare_messages(
    messages: list[LlmMessage], model: Model, boundary: int | None, paired: bool = False
) -> tuple[list[LlmMessage], int]:
    """Make a history replayable to ``model``; returns the new list and the cache boundary mapped onto it.

    - Failed turns (``stop_reason`` error/aborted) are dropped: their partial content confuses the API;
      so are ``deferred`` ones (only a handle to an answer that never arrived in this history).
    - Thinking from another model becomes plain text (its signature would be rejected); redacted thinking
      from another model is dropped.
    - For a model without image input, images become pi's placeholder texts (`images_as_placeholders`).
    - Every tool call gets a result before the next assistant/user turn ("No result provided", error);
      tool results with no matching call are dropped. Both APIs reject either mismatch.

    ``paired`` says the list already follows those pairing rules (`LlmRequest.paired`), so the
    bookkeeping is skipped (`Preparer.feed_paired`); the result is the same.
    """
    end = len(messages) if boundary is None else max(0, min(boundary, len(messages)))
    prepared = Preparer(model)
    feed = prepared.feed_paired if paired else prepared.feed
    feed(messages[:end])
    mapped_boundary = len(prepared.out)
    feed(messages[end:])
    if prepared.pending and end == len(messages):
        # A trailing tool call without results only happens in a broken history; keep the API happy.
        prepared.close_pending()
        mapped_boundary = len(prepared.out)
    else:
        prepared.close_pending()
    return prepared.out, mapped_boundary


class Preparer:
    """`prepare_messages` as a fold that can be copied and extended by more messages.

    ``out`` holds the prepared messages so far; tool calls still waiting for their results are in
    ``pending`` until the next assistant or user turn (or `close_pending`) closes them.
    """

    __slots__ = ("model", "out", "pending", "answered")

    def __init__(self, model: Model) -> None:
        self.model = model
        self.out: list[LlmMessage] = []
        self.pending: dict[str, str] = {}  # tool call id -> tool name, awaiting results
        self.answered: set[str] = set()

    def copy(self) -> Preparer:
        twin = Preparer(self.model)
        twin.out = list(self.out)
        twin.pending = dict(self.pending)
        twin.answered = set(self.answered)
        return twin

    def close_pending(self) -> None:
        for call_id, name in self.pending.items():
            if call_id not in self.answered:
                self.out.append(
                    ToolResultMessage(
                        tool_call_id=call_id,
                        tool_name=name,
                        content=[TextContent(text="No result provided")],
                        is_error=True,
                    )
                )
        self.pending.clear()
        self.answered.clear()

    def feed(self, messages: Iterable[LlmMessage]) -> None:
        out, pending, answered, model = self.out, self.pending, self.answered, self.model
        blind = "image" not in model.input
        for message in messages:
            if blind and not isinstance(message, AssistantMessage):
                message = _without_images(message)
            if isinstance(message, ToolResultMessage):
                call_id = message.tool_call_id
                if call_id in pending and call_id not in answered:
                    answered.add(call_id)
                    out.append(message)
            elif isinstance(message, AssistantMessage):
                if message.stop_reason in NOT_REPLAYED:
                    continue
                if pending:
                    self.close_pending()
                converted = _convert_assistant(message, model)
                out.append(converted)
                for part in converted.content:
                    if isinstance(part, ToolCall):
                        pending[part.id] = part.name
            else:
                if pending:
                    self.close_pending()
                out.append(message)

    def feed_paired(self, messages: Iterable[LlmMessage]) -> None:
        """`feed` for messages that already follow the pairing rules (`LlmRequest.paired`): each is
        converted on its own (another model's assistant turn), with no pairing bookkeeping, which
        would keep every message and add none. The result is the one `feed` gives on such messages.

        Tool calls still pending from messages fed before (by `feed`) take `feed`.
        """
        model = self.model
        if self.pending:
            self.feed(messages)
            return
        append = self.out.append
        provider, api, model_id = model.provider, model.api, model.id
        blind = "image" not in model.input
        for message in messages:
            if isinstance(message, AssistantMessage):
                if message.model != model_id or message.provider != provider or message.api != api:
                    message = _convert_assistant(message, model)
            elif blind and type(message.content) is not str:
                for part in message.content:  # the image test inline: most messages have none
                    if isinstance(part, ImageContent):
                        message = _without_images(message)
                        break
            append(message)


def _without_images(message: LlmMessage) -> LlmMessage:
    """For a model without image input: images become pi's placeholders (a copy; others unchanged)."""
    if isinstance(message, AssistantMessage) or isinstance(message.content, str):
        return message
    for part in message.content:
        if isinstance(part, ImageContent):
            break
    else:  # no image (the usual case, decided without a generator)
        return message
    placeholder = TOOL_IMAGE_PLACEHOLDER if isinstance(message, ToolResultMessage) else USER_IMAGE_PLACEHOLDER
    return message.model_copy(update={"content": images_as_placeholders(message.content, placeholder)})


def _convert_assistant(message: AssistantMessage, model: Model) -> AssistantMessage:
    if _same_model(message, model):
        return message
    content: list[Any] = []
    for block in message.content:
        if isinstance(block, ThinkingContent):
            if block.redacted or not block.thinking.strip():
                continue
            content.append(TextContent(text=block.thinking))
        elif isinstance(block, TextContent):
            content.append(TextContent(text=block.text))
        elif isinstance(block, ToolCall):
            content.append(ToolCall(id=block.id, name=block.name, arguments=block.arguments))
        else:
            content.append(block)
    return message.model_copy(update={"content": content})
