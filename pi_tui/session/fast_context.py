"""Resuming a big session: its first request made from the file's decoded lines, the typed history after.

The typed path (entries → tree → replay → `convert_to_llm` → `transform_messages` → the provider's
`prepare_messages` and converter) handles every shape a session can hold. Most big sessions hold only
plain conversation, for which that path's result is a simple function of the JSON records. So
`read_deferred` reads such a file into its decoded records, cuts its active path (`split_path`) into
an old part, which a first request sends as wire messages made from the records
(`pi_tui.session.fast_wire`), and a short end, which is built as typed entries at once; the rest of
the typed history is built once that request is written, while the server reads it
(`SessionManager.complete_history`). See docs/performance.md, "Resuming a big session".

One rule keeps it safe: anything outside the plain shapes makes `read_plain_path`, `split_path` or a
wire builder return None, and the caller takes the typed path. Plain means:

- a v3 file with entries of the types ``message``, ``model_change``, ``thinking_level_change``,
  ``label`` and ``session_info`` only (the last two carry nothing a request sends), unique ids, and a ``parentId`` key on each, so the leaf is the last entry. Damage the loading
  repairs the same way whatever the entries hold is allowed, and reported as it reports it: lines that
  do not decode (unless a complete entry may be glued after the broken bytes, which the loading
  recovers), lines that are no entry, a second header, a torn or unterminated last line, and a
  ``parentId`` naming no earlier entry (the entry hangs off the one before it in the file, as the
  tree attaches it). Every line stays in the file as it is;
- on the active path, user messages of text blocks (or a string), assistant turns of text, thinking
  and tool calls, tool results of text blocks; every field of the exact JSON type the typed records
  take without conversion (a key they do not know is kept aside, as they keep it);
- tool calls answered by results right after their turn, in call order; no failed or aborted turn;
- system messages (the prompt and tools pi-tui records, `pi_tui.session.system`) of pi-tui's own
  prompt only: they add no message, and the request is built from pi-tui's own prompt anyway. Like
  model changes, those before the cut are typed with the end, so the replay sees every one of them.

"""

from __future__ import annotations

import operator
import os
import time
from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from pi_tui.ai.providers._history import sanitize_surrogates
from pi_tui.session.entries import RawEntry, SessionEntry, SessionHeader, parse_entry, parse_header
from pi_tui.session.migrate import header_version
from pi_tui.session.report import LoadReport, ReattachedEntry, SkippedLine, TornTail
from pi_tui.session.system import SystemState
from pi_tui.util.collector import collector_paused
from pi_tui.util.json_safe import JsonTooDeepError

__all__ = [
    "DeferredHistory",
    "DeferredOpen",
    "JsonObject",
    "PlainPath",
    "SplitPath",
    "calls_of",
    "read_deferred",
    "read_plain_path",
    "split_path",
]

JsonObject = dict[str, object]
_TIMESTAMP = operator.itemgetter("timestamp")

_ENTRY_TYPES = frozenset({"message", "model_change", "thinking_level_change", "label", "session_info"})
_ENTRY_KEYS = frozenset({"type", "id", "parentId", "timestamp", "message"})
_STATE_KEYS = {
    "model_change": frozenset({"type", "id", "parentId", "timestamp", "provider", "modelId"}),
    "thinking_level_change": frozenset({"type", "id", "parentId", "timestamp", "thinkingLevel"}),
}
# Entries no request carries (a label of an entry, the session's name): their fields, and the one
# each must hold as a string (None: none)
_ASIDE_KEYS = {
    "label": (frozenset({"type", "id", "parentId", "timestamp", "targetId", "label"}), "targetId"),
    "session_info": (frozenset({"type", "id", "parentId", "timestamp", "name"}), None),
}
_OPTIONAL_STRING = {"label": "label", "session_info": "name"}
_USER_KEYS = frozenset({"role", "content", "timestamp"})
_SYSTEM_KEYS = frozenset({"role", "content", "sections", "timestamp", "toolsAdded", "toolsRemoved"})
_ASSISTANT_KEYS = frozenset(
    {
        "role",
        "content",
        "api",
        "provider",
        "model",
        "usage",
        "stopReason",
        "errorMessage",
        "timestamp",
        "responseId",
        "rawStopReason",
    }
)
_RESULT_KEYS = frozenset({"role", "toolCallId", "toolName", "content", "details", "isError", "timestamp"})
_TEXT_KEYS = frozenset({"type", "text", "textSignature"})
_THINKING_KEYS = frozenset({"type", "thinking", "thinkingSignature", "redacted"})
_CALL_KEYS = frozenset({"type", "id", "name", "arguments", "thoughtSignature"})
_USAGE_KEYS = frozenset({"input", "output", "cacheRead", "cacheWrite", "totalTokens", "cost"})
_ASSISTANT_STRINGS = ("api", "provider", "model")
_ASSISTANT_OPTIONAL_STRINGS = ("errorMessage", "responseId", "rawStopReason")
_EMPTY: JsonObject = {}
_COST_KEYS = frozenset({"input", "output", "cacheRead", "cacheWrite", "total"})
_STOPS = frozenset({"stop", "length", "toolUse", "error", "aborted", "deferred"})
_NOT_REPLAYED = frozenset({"error", "aborted", "deferred"})  # `pi_tui.ai.types.NOT_REPLAYED`


@dataclass(frozen=True)
class PlainPath:
    """The active path of a plain session file (see the module docstring)."""

    header: JsonObject
    records: list[JsonObject]
    """Every entry of the file, in file order, as decoded."""
    path: list[JsonObject]
    """The entries of the active path, root first (the leaf is the file's last entry)."""
    messages: list[JsonObject]
    """The ``message`` objects of the path's message entries, root first."""
    ids: dict[str, int]
    """Where each entry's id is in ``records``."""
    message_at: list[int]
    """Where each of ``messages`` is in ``path``."""
    state_at: list[int]
    """Where the other entries are in ``path`` (model and thinking-level changes, system messages,
    labels, names)."""
    newest: list[int]
    """For each of ``records``, the newest message timestamp up to it (it included; 0 before the first
    message): kept while each line is read, when its message is at hand, so that the cut seldom has to
    look at every message of the path again (`split_path`)."""
    problems: LineProblems
    synthetic: int
    """Where in ``messages`` pairing adds its first synthetic result (`_replayed`)."""


@dataclass
class LineProblems:
    """What the reading found and the loading would report (`read_plain_path`): lines skipped, entries
    attached to the one before them, the last line's state. ``torn`` is the line number and length of
    an incomplete last line."""

    lines: int = 0
    """Non-blank lines read."""
    skipped: list[SkippedLine] = field(default_factory=list)
    reattached: list[ReattachedEntry] = field(default_factory=list)
    torn: tuple[int, int] | None = None
    unterminated: bool = False

    def report(self, path: Path, entries: int, size: int) -> LoadReport:
        """The `LoadReport` the loading of the whole file gives (``size``: the bytes read)."""
        torn = None
        if self.torn is not None:
            line_no, length = self.torn
            torn = TornTail(line_no=line_no, offset=size - length, length=length)
        return LoadReport(
            path=path,
            lines=self.lines,
            entries=entries,
            skipped=self.skipped,
            reattached=self.reattached,
            torn_tail=torn,
            unterminated_tail=self.unterminated,
        )


def _known(value: JsonObject, allowed: frozenset[str]) -> bool:
    """Whether every key of ``value`` is a field the typed record knows, or one it keeps aside as it is
    (any key but a Python field name such as ``tool_call_id``, which it would read as that field)."""
    keys = value.keys()
    return keys <= allowed or not any("_" in key for key in keys - allowed)


def _text_blocks(content: list[object]) -> bool:
    """Whether every block is a text block of the typed record's fields and types."""
    for block in content:
        if (
            type(block) is not dict
            or not _known(block, _TEXT_KEYS)
            or block.get("type") != "text"
            or type(block.get("text")) is not str
        ):
            return False
        signature = block.get("textSignature")
        if signature is not None and type(signature) is not str:
            return False
    return True


def _usage(value: object) -> bool:
    if type(value) is not dict or not _known(value, _USAGE_KEYS):
        return False
    for key, item in value.items():
        if key == "cost":
            if type(item) is not dict or not _known(item, _COST_KEYS):
                return False
            for amount in item.values():
                if type(amount) is not int and type(amount) is not float:
                    return False
        elif type(item) is not int:
            return False
    return True


def _assistant_blocks(content: list[object]) -> bool:
    for block in content:
        if type(block) is not dict:
            return False
        kind = block.get("type")
        if kind == "text":
            if not _known(block, _TEXT_KEYS) or type(block.get("text")) is not str:
                return False
            signature = block.get("textSignature")
        elif kind == "thinking":
            if not _known(block, _THINKING_KEYS) or type(block.get("thinking")) is not str:
                return False
            redacted = block.get("redacted")
            if redacted is not None and type(redacted) is not bool:
                return False
            signature = block.get("thinkingSignature")
        elif kind == "toolCall":
            if (
                not _known(block, _CALL_KEYS)
                or type(block.get("id")) is not str
                or type(block.get("name")) is not str
                or type(block.get("arguments", _EMPTY)) is not dict
            ):
                return False
            signature = block.get("thoughtSignature")
        else:
            return False
        if signature is not None and type(signature) is not str:
            return False
    return True


def _plain_system(message: JsonObject) -> bool:
    """Whether a ``role: "system"`` message has the shape pi-tui writes (`pi_tui.session.system`)."""
    if not _known(message, _SYSTEM_KEYS) or type(message.get("timestamp")) is not int:
        return False
    if type(message.get("content")) is not str:
        return False
    sections = message.get("sections", _EMPTY)
    if not isinstance(sections, dict) or not all(type(text) is str or text is None for text in sections.values()):
        return False
    return all(
        type(tools := message.get(key, [])) is list and all(type(tool) is dict for tool in tools)
        for key in ("toolsAdded", "toolsRemoved")
    )


def _plain_message(message: object) -> bool:
    """Whether ``message`` is a user, assistant or tool-result message of the plain shapes: every
    field one the typed record knows, of the JSON type it takes without conversion."""
    if type(message) is not dict or type(message.get("timestamp")) is not int:
        return False  # without a timestamp the typed record would take the time it was read
    role = message.get("role")
    content = message.get("content")
    if role == "assistant":
        if not _known(message, _ASSISTANT_KEYS) or type(content) is not list:
            return False
        for key in _ASSISTANT_STRINGS:
            if key in message and type(message[key]) is not str:
                return False
        for key in _ASSISTANT_OPTIONAL_STRINGS:
            value = message.get(key)
            if value is not None and type(value) is not str:
                return False
        if message.get("stopReason", "stop") not in _STOPS:
            return False
        return ("usage" not in message or _usage(message["usage"])) and _assistant_blocks(content)
    if role == "user":
        if not _known(message, _USER_KEYS):
            return False
        return type(content) is str or (type(content) is list and _text_blocks(content))
    if role == "toolResult":
        return (
            _known(message, _RESULT_KEYS)
            and type(message.get("toolCallId")) is str
            and type(message.get("toolName")) is str
            and type(message.get("isError", False)) is bool
            and type(content) is list
            and _text_blocks(content)
        )
    return False


def read_plain_path(
    lines: Iterable[bytes],
    decode: Callable[[bytes], object],
    decoded: list[object] | None = None,
    *,
    typed: bool = True,
) -> PlainPath | None:
    """The active path of a session file given as its lines, or None when the file is not plain.

    ``decode`` must be the loader's line decoder (`pi_tui.session.loader.line_decoder`), so a line
    decodes to what the typed path reads, and a line it refuses is skipped as the loading skips it
    (`PlainPath.problems`). ``decoded`` gets the value of every non-blank line decoded, in order, up
    to the first line refused, so that the typed path need not decode them again when the file is
    not plain (`pi_tui.session.loader.load_session_file`). With ``typed`` (and msgspec installed), an
    entry line is first decoded and checked at once by `pi_tui.session.plain_decode`; a line that
    decoder does not take goes through ``decode`` and the checks here, so the result is the same.
    """
    from pi_tui.session.loader import (
        REASON_INVALID_JSON,
        REASON_NOT_ENTRY,
        REASON_SECOND_HEADER,
        REASON_TOO_DEEP,
        REASON_TORN,
        holds_glued_entry,
    )

    records: list[JsonObject] = []
    index: dict[str, int] = {}
    header: JsonObject = {}
    first = True
    newest: list[int] = []
    top = 0
    parent_at: list[int] = []  # where each entry's parent is in ``records`` (-1 for a root)
    problems = LineProblems()
    skipped = problems.skipped
    blank = 0
    line_no = 0
    decode_plain = _plain_decoder() if typed else None
    for line_no, raw in enumerate(lines, 1):
        typed_entry = None
        if decode_plain is not None and not first:
            try:
                typed_entry = decode_plain(raw)
            except ValueError:
                pass  # read the usual way below (damaged, not plain, or decoded differently by msgspec)
        if typed_entry is not None:
            # A plain entry, every field checked (`plain_decode`): only what concerns other lines is left.
            record, entry_id, parent, stamp = typed_entry
            if decoded is not None:
                decoded.append(record)
            if raw[-1:] != b"\n":
                problems.unterminated = True
        else:
            if raw[:1] != b"{" and not raw.strip():
                blank += 1
                continue
            try:
                value = decode(raw)
            except ValueError as exc:
                if first:
                    return None  # no header: the typed path writes one
                if not raw.endswith(b"\n"):  # an interrupted write: only a last line lacks its newline
                    problems.torn = (line_no, len(raw))
                    skipped.append(SkippedLine(line_no, REASON_TORN))
                elif holds_glued_entry(raw):
                    return None  # the typed path recovers the entry after the broken bytes
                else:
                    deep = isinstance(exc, JsonTooDeepError)
                    skipped.append(SkippedLine(line_no, REASON_TOO_DEEP if deep else REASON_INVALID_JSON))
                    decoded = None  # the values after it would answer the wrong lines of the typed reading
                continue
            if decoded is not None:
                decoded.append(value)
            if not raw.endswith(b"\n"):
                problems.unterminated = True
            if type(value) is not dict:
                if first:
                    return None
                skipped.append(SkippedLine(line_no, REASON_NOT_ENTRY))
                continue
            record = value
            if first:
                first = False
                if parse_header(record) is None or header_version(record) != 3:
                    return None
                header = record
                continue
            kind = record.get("type")
            if type(kind) is not str:
                skipped.append(SkippedLine(line_no, REASON_NOT_ENTRY))
                continue
            if kind not in _ENTRY_TYPES:
                if kind == "session":
                    skipped.append(SkippedLine(line_no, REASON_SECOND_HEADER))
                    continue
                return None
            some_id = record.get("id")
            some_parent = record.get("parentId", False)  # a missing key is a repair the tree makes: not plain
            if type(some_id) is not str or (some_parent is not None and type(some_parent) is not str):
                return None
            entry_id, parent = some_id, some_parent
            stamp = _plain_entry_stamp(record, kind)
            if stamp < 0:
                return None
        if entry_id in index:
            return None
        if parent is None:
            up = -1
        elif (up := index.get(parent, -1)) < 0:
            # a parent never seen: the tree attaches the entry to the one before it (or makes it a root)
            up = len(records) - 1
            attached = cast(str, records[up]["id"]) if up >= 0 else None
            problems.reattached.append(ReattachedEntry(entry_id, parent, attached))
        if stamp > top:
            top = stamp
        index[entry_id] = len(records)
        records.append(record)
        newest.append(top)
        parent_at.append(up)
    problems.lines = line_no - blank
    if first or not records:
        return None  # an empty file, or a header alone
    # The path from the leaf up, by the parents' places noted while reading: no record is looked into
    # again (long after it was read, each look would wait on memory).
    on_path: list[int] = []
    at = len(records) - 1
    while at >= 0:
        on_path.append(at)
        at = parent_at[at]
    on_path.reverse()
    path = list(map(records.__getitem__, on_path))
    replayed = _replayed(path)
    if replayed is None:
        return None
    message_at, messages, state_at, synthetic = replayed
    return PlainPath(
        header, records, path, messages, index, message_at, state_at, newest, problems, synthetic
    )


def _plain_entry_stamp(record: JsonObject, kind: str) -> int:
    """Whether an entry read the usual way (its type one of `_ENTRY_TYPES`, its id and parent's id
    checked) is plain: its message's timestamp, 0 for an entry that is no message; -1 when not plain."""
    if type(record.get("timestamp", "")) is not str:
        return -1
    if kind == "message":
        message = record.get("message")
        if type(message) is dict and message.get("role") == "system":
            # pi-tui's recorded prompt (msgspec's plain shapes leave it to this reading): no message a
            # request replays, so its time counts as an entry's that is no message
            return 0 if _known(record, _ENTRY_KEYS) and _plain_system(message) else -1
        if not _known(record, _ENTRY_KEYS) or not _plain_message(message):
            return -1
        return cast(int, cast(JsonObject, message)["timestamp"])
    if kind in _ASIDE_KEYS:
        keys, needed = _ASIDE_KEYS[kind]
        optional = record.get(_OPTIONAL_STRING[kind])
        if (
            not _known(record, keys)
            or (needed is not None and type(record.get(needed)) is not str)
            or (optional is not None and type(optional) is not str)
        ):
            return -1
        return 0
    if not _known(record, _STATE_KEYS[kind]) or not all(
        type(record.get(key)) is str for key in _STATE_KEYS[kind] - {"type", "id", "parentId", "timestamp"}
    ):
        return -1
    return 0


def _plain_decoder() -> Callable[[bytes], tuple[JsonObject, str, str | None, int]] | None:
    """`pi_tui.session.plain_decode.decode_plain`, or None without msgspec (imported on first use: only
    a big file is read this way)."""
    try:
        from pi_tui.session.plain_decode import decode_plain
    except ImportError:
        return None
    return decode_plain


def _replayed(path: list[JsonObject]) -> tuple[list[int], list[JsonObject], list[int], int] | None:
    """The messages a request replays and where they are on ``path``, paired as `transform_messages`
    pairs them: failed and aborted turns are left out, and so is every tool result that answers no
    call still open (a failed turn's, a stray one, a second one). Third, where the other entries
    (model and thinking-level changes) are. Fourth, where in the messages pairing adds its first
    synthetic result (a call left unanswered; the number of messages when it adds none): made at
    request time and stamped then, so no answer after it is the one pi's estimate starts from
    (`split_path`). None for a turn whose calls share an id."""
    kept_at: list[int] = []
    states: list[int] = []
    kept: list[JsonObject] = []
    synthetic = -1
    unanswered: set[object] = set()  # the calls of the last kept turn still to be answered
    system: SystemState | None = None
    for at, record in enumerate(path):
        if record["type"] != "message":
            states.append(at)
            continue
        message = cast(JsonObject, record["message"])
        role = message["role"]
        if role == "system":
            states.append(at)
            system = system or SystemState()
            system.apply(message)
            continue
        if role == "toolResult":
            call_id = message["toolCallId"]
            if call_id in unanswered:
                unanswered.discard(call_id)
                kept_at.append(at)
                kept.append(message)
            continue
        if unanswered:
            if synthetic < 0:
                synthetic = len(kept)
            unanswered = set()
        if role == "assistant":
            if message.get("stopReason", "stop") in _NOT_REPLAYED:
                continue
            calls = [block["id"] for block in cast(list[JsonObject], message["content"]) if block["type"] == "toolCall"]
            if calls:
                unanswered = set(calls)
                if len(unanswered) != len(calls):
                    return None
        kept_at.append(at)
        kept.append(message)
    if unanswered and synthetic < 0:
        synthetic = len(kept)
    if system is not None and not system.own:
        return None  # a prompt pi persisted: requests send it, which the typed replay sees to
    return kept_at, kept, states, synthetic if synthetic >= 0 else len(kept)


@dataclass(frozen=True)
class SplitPath:
    """A plain path cut for a first request: the old part as wire messages, the rest to be typed.

    ``tail`` holds the path's entries from the last user prompt before the last answer that reported
    its usage (the answer pi's context estimate starts from), after every model and thinking-level
    change that comes before it: the typed session built from them restores the same model and level,
    estimates the same context, and converts the same request tail. ``prefix`` are the messages before.
    """

    plain: PlainPath
    prefix: list[JsonObject]
    tail: list[JsonObject]


def _usage_total(message: Mapping[str, object]) -> int:
    """pi's measure of an answer's usage: ``totalTokens``, else the sum of its parts."""
    usage = cast(dict[str, int], message.get("usage", _EMPTY))
    total = usage.get("totalTokens", 0)
    if total:
        return total
    return (
        usage.get("input", 0)
        + usage.get("output", 0)
        + usage.get("cacheRead", 0)
        + usage.get("cacheWrite", 0)
    )


def _prompt_text(message: Mapping[str, object]) -> bool:
    """Whether a user message sends a non-blank text (so it is a wire message of its own)."""
    content = message["content"]
    if type(content) is str:
        return bool(sanitize_surrogates(content).strip())
    assert type(content) is list
    return any(sanitize_surrogates(str(block["text"])).strip() for block in content)


def split_path(plain: PlainPath) -> SplitPath | None:
    """Cut ``plain`` for a first request (see `SplitPath`); None when no cut keeps every figure the
    whole history gives (no answer with usage, an answer older than a message before it, no prompt),
    or when the cut leaves more than half of the messages to be typed at once."""
    messages = plain.messages
    # An answer after a synthetic result is older than it (made and stamped at request time): pi's
    # estimate starts from one before it.
    answer = plain.synthetic - 1
    if plain.synthetic < len(messages) and plain.newest[-1] >= time.time() * 1000:
        return None  # a message stamped in the future may be newer than a synthetic result
    while answer >= 0:
        message = messages[answer]
        if message["role"] == "assistant" and _usage_total(message) > 0:
            break
        answer -= 1
    if answer < 0:
        return None
    stamp = cast(int, messages[answer]["timestamp"])
    # Every message before the answer on the path is before it in the file too (a parent comes before
    # its children): when no message of the file before it is newer, none of those is.
    at_file = plain.ids[cast(str, plain.path[plain.message_at[answer]]["id"])]
    if at_file > 0 and plain.newest[at_file - 1] > stamp:
        newest = max(map(_TIMESTAMP, messages[:answer]), default=0)
        if cast(int, newest) > stamp:
            return None  # pi's estimate would start from an older answer: leave it to the typed path
    cut = answer - 1
    while cut > 0:
        message = messages[cut]
        if message["role"] == "user" and _prompt_text(message):
            break
        cut -= 1
    if cut <= 0 or cut < len(messages) // 2:
        # (an end this long typed before the request costs more than the plain checks save)
        return None
    at = plain.message_at[cut]  # where the prompt is on the path
    states = [plain.path[state] for state in plain.state_at if state < at]
    return SplitPath(plain=plain, prefix=messages[:cut], tail=[*states, *plain.path[at:]])


def calls_of(message: Mapping[str, object]) -> list[JsonObject]:
    return [block for block in cast(list[JsonObject], message["content"]) if block["type"] == "toolCall"]


@dataclass(frozen=True)
class DeferredHistory:
    """A history kept as decoded records while only its end is typed (`SessionManager.open`'s
    ``defer_history``)."""

    split: SplitPath
    ids: Container[str]
    """Every id of the file (what a new entry's id must not be)."""

    def release(self) -> list[JsonObject]:
        """The decoded records, every other list of them emptied: the caller's list is then the only
        one holding them, so each can be freed as soon as it is typed. The history is unusable after."""
        split, plain = self.split, self.split.plain
        for held in (split.prefix, split.tail, plain.path, plain.messages, plain.newest):
            held.clear()
        records = list(plain.records)
        plain.records.clear()
        return records


@dataclass(frozen=True)
class DeferredOpen:
    """What `read_deferred` read: a session ready to answer from the end of its path."""

    header: SessionHeader
    entries: Sequence[SessionEntry]
    """The kept end of the path as typed entries, chained one after the other (the first a root)."""
    deferred: DeferredHistory
    size: int
    """The bytes read (what the first append checks the file against)."""
    report: LoadReport
    """What the loading of the whole file would report (lines skipped, entries reattached, the tail)."""


def read_deferred(path: Path, min_bytes: int, decoded: list[object]) -> DeferredOpen | None:
    """Read a session file of at least ``min_bytes`` the deferred way; None when it is smaller, not
    plain, or not cut for a first request (then `SessionManager.open` reads it as usual, taking the
    lines read so far from ``decoded``, which gets their values; it is left empty otherwise)."""
    from pi_tui.session.loader import line_decoder

    try:
        with open(path, "rb") as handle:
            if os.fstat(handle.fileno()).st_size < min_bytes:
                return None
            with collector_paused():
                plain = read_plain_path(handle, line_decoder(fast=True), decoded)
            size = handle.tell()  # the bytes read (the file may have grown since its size was taken)
    except OSError:
        return None  # the usual reading says what is wrong
    split = split_path(plain) if plain is not None else None
    header = parse_header(plain.header) if plain is not None else None
    if plain is None or split is None or header is None:
        return None
    with collector_paused():
        parsed = [parse_entry(record, "") for record in split.tail]
    entries = [entry for entry in parsed if not isinstance(entry, RawEntry)]
    if len(entries) != len(parsed):
        return None
    decoded.clear()  # the records are the deferred history's now
    previous: str | None = None
    for entry in entries:  # the kept end as one line of entries: its first has no parent kept
        entry.parent_id = previous
        previous = entry.id
    report = plain.problems.report(path, len(plain.records), size)
    return DeferredOpen(header, entries, DeferredHistory(split, plain.ids), size, report)

