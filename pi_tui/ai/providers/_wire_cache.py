"""Per-message wire form, converted and JSON-encoded once per message instead of once per request.

A long tool loop sends the same history again with every request; converting each stored message to the
provider's wire shape and encoding it to JSON again costs O(history) per request. `ConversionCache`
keeps, per message object (by identity, dropped when the message is garbage-collected) and conversion
key (the model), the converted wire parts and their JSON text; `encode_body` splices those texts into
the request body instead of encoding them again.

Only the cached region of a request (the durable history, which is never mutated in place: envelopes
are values) goes through the cache. A part the provider must change for one request (the moving cache
breakpoint) is copied first, so the cached parts are never modified.

A wire message whose values are all strings, booleans, integers and nulls in lists and string-keyed
objects (the converter says so: `json_plain`) is not encoded when it is converted: `encode_body` encodes
a long run of such messages (a resumed session's whole history) with one ``orjson`` call, which writes
exactly the bytes the stdlib writes for such values and is several times faster than one stdlib call
per message. Anything else (a float, whose text the two libraries write differently; a lone surrogate,
which orjson refuses) goes through the stdlib as before.

A first conversion of a long history (a resumed session's first request) keeps its conversions only
once the request's body has been written (`keep_deferred`, called by the HTTP layer): the body needs
the wire parts and which of them are plain, not their weak references and kept JSON, which only later
requests use; that bookkeeping then runs while the server reads the body. Until then the parts are
held in a pending list (so no id the encoder relies on can be reused), and a request built meanwhile
converts what it does not find, as any cache miss does.
"""

from __future__ import annotations

import bisect
import json
import operator
import re
import weakref
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from pi_tui.util.json_types import JsonArray, JsonObject, JsonValue

if TYPE_CHECKING:
    from ..stream import LlmRequest
    from ..types import LlmMessage, Model

__all__ = [
    "ConversionCache",
    "Converter",
    "PrefixMemo",
    "dumps",
    "encode_body",
    "json_plain",
    "keep_deferred",
]

_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False)
_SURROGATE = re.compile("[\ud800-\udfff]")


def _c_encoder() -> Callable[[Any, int], Any] | None:
    """The stdlib's C encoder with `_ENCODER`'s settings, built once: `JSONEncoder.encode` builds a new
    one on every call, which cost more than encoding a typical message."""
    from json import encoder

    make = getattr(encoder, "c_make_encoder", None)  # the _json accelerator, absent from the type stubs
    if make is None:  # an interpreter without it
        return None
    built: Callable[[Any, int], Any] = make(
        None, _ENCODER.default, encoder.encode_basestring, None, ":", ",", False, False, True
    )
    return built


_C_ENCODE = _c_encoder()


def _escaped(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def dumps(value: JsonValue) -> str:
    """The wire encoding: compact, UTF-8 text kept as is, and a lone UTF-16 surrogate (which UTF-8
    cannot carry) written as a ``\\uXXXX`` escape, as JavaScript's ``JSON.stringify`` writes it."""
    text = "".join(_C_ENCODE(value, 0)) if _C_ENCODE is not None else _ENCODER.encode(value)
    if text.isascii():  # no surrogate can be there (the usual case, answered without a scan)
        return text
    return text if _SURROGATE.search(text) is None else _SURROGATE.sub(_escaped, text)


def json_plain(value: JsonValue) -> bool:
    """Whether ``value`` holds only strings, booleans, integers and nulls, in lists and objects with
    string keys: values orjson writes byte for byte as the stdlib does (floats are written differently)."""
    kind = type(value)
    if kind is str or kind is bool or kind is int or value is None:
        return True
    if kind is dict:
        return all(type(key) is str and json_plain(item) for key, item in value.items())
    if kind is list:
        return all(json_plain(item) for item in value)
    return False


class _Ref(weakref.ref[Any]):
    """A weak reference that knows its cache slot: one shared callback instead of a closure per message."""

    __slots__ = ("slot",)
    slot: int


class ConversionCache:
    """Wire parts per (message object, key), and the JSON (UTF-8 bytes) of what it handed out."""

    def __init__(self) -> None:
        self._entries: dict[int, tuple[_Ref, Hashable, Any]] = {}
        # id(part, or whole wire message) -> its JSON, for the objects this cache keeps alive
        self.json: dict[int, bytes] = {}
        # ids of kept wire messages of plain values (`json_plain`), encoded by `encode_body` in runs
        self.plain: set[int] = set()
        # The items of the last body encoded and their JSON: the next body repeats most of them.
        self.last_field = ""
        self.last_items: JsonArray = []
        # The last body's pieces: the head, then the items' JSON each led by its comma (one piece for a
        # run encoded at once); last_ends[j] is how many items the pieces up to j hold.
        self.last_chunks: list[bytes] = []
        self.last_ends: list[int] = []
        # While True, what is converted is handed out but kept only by `keep_pending` (see the module
        # docstring): the messages, their keys and what they were converted to, in the order converted
        # (three lists of references: a tuple per message cost more memory than the keeping it defers).
        self.deferring = False
        self._pending_messages: list[object] = []
        self._pending_keys: list[Hashable] = []
        self._pending_converted: list[Any] = []
        # Leading items of the next body whose JSON is already made (a history prefix in wire shape,
        # `LlmRequest.wire_prefix`): the items and their JSON, comma-joined without brackets. Used
        # only when the body's list starts with these very objects, or holds them after its first.
        self.lead_items: JsonArray = []
        self.lead_json = b""

    def _hit(self, message: object, key: Hashable) -> Any:
        entry = self._entries.get(id(message))
        if entry is None:
            return None
        if entry[0]() is message and entry[1] == key:
            return entry[2]
        self._forget(id(message))
        return None

    def _keep(self, message: object, key: Hashable, converted: Any) -> bool:
        """Remember ``converted`` for ``message`` until it is garbage-collected (False: it cannot be)."""
        try:
            ref = _Ref(message, self._dead)
        except TypeError:  # not weak-referenceable: converted every time
            return False
        ref.slot = id(message)
        self._entries[ref.slot] = (ref, key, converted)
        return True

    def parts(
        self,
        message: object,
        key: Hashable,
        convert: Callable[[], list[Any]],
        plain: bool | Callable[[list[Any]], bool] = False,
    ) -> list[Any]:
        """The converted parts of ``message``, each an item of the body whose JSON is kept (a list the
        caller must not modify, nor its items). With ``plain`` (True: the caller's conversion makes
        plain values only, `json_plain`; or a test of the parts) the JSON is left to `encode_body`,
        which encodes runs at once."""
        converted: list[Any] | None = self._hit(message, key)
        if converted is not None:
            return converted
        converted = convert()
        if self.deferring:
            if plain is True or (callable(plain) and plain(converted)):
                self.plain.update(map(id, converted))
            self._defer(message, key, converted)
            return converted
        if self._keep(message, key, converted):
            if plain is True or (callable(plain) and plain(converted)):
                self.plain.update(map(id, converted))
            else:
                json_of = self.json
                for part in converted:
                    json_of[id(part)] = dumps(part).encode()
        return converted

    def message(
        self,
        message: object,
        key: Hashable,
        role: str,
        convert: Callable[[Any], list[Any]],
        plain: Callable[[list[Any]], bool] | None = None,
    ) -> JsonObject:
        """``{"role": role, "content": convert(message)}``, the same object while ``message`` lives: a
        message the caller must not modify, nor its content. Its JSON is kept too, unless ``plain`` says
        the content holds only plain values (`json_plain`): then `encode_body` encodes it with its
        neighbours."""
        # `_hit` and `_keep`, written out: a first request converts every message of a long history here
        slot = id(message)
        entry = self._entries.get(slot)
        if entry is not None:
            if entry[0]() is message and entry[1] == key:
                found: JsonObject = entry[2]
                return found
            self._forget(slot)
        content = convert(message)
        wire = {"role": role, "content": content}
        if self.deferring:
            if plain is not None and plain(content):
                self.plain.add(id(wire))
            self._defer(message, key, wire)
            return wire
        try:
            ref = _Ref(message, self._dead)
        except TypeError:  # not weak-referenceable: converted every time
            return wire
        ref.slot = slot
        self._entries[slot] = (ref, key, wire)
        if plain is not None and plain(content):
            self.plain.add(id(wire))
        else:
            self.json[id(wire)] = dumps(wire).encode()
        return wire

    def _defer(self, message: object, key: Hashable, converted: Any) -> None:
        if not self._pending_messages:
            _DEFERRED.append(self)
        self._pending_messages.append(message)
        self._pending_keys.append(key)
        self._pending_converted.append(converted)

    @property
    def pending(self) -> int:
        """How many conversions wait for `keep_pending`."""
        return len(self._pending_messages)

    def keep_pending(self) -> None:
        """Keep what the deferred conversions handed out, as `message` and `parts` keep it at once.

        A conversion is marked plain (`plain`) from the moment it is handed out; the pending lists hold
        it until then, so no other object can take its id meanwhile."""
        messages, keys, converted_all = self._pending_messages, self._pending_keys, self._pending_converted
        self._pending_messages, self._pending_keys, self._pending_converted = [], [], []
        entries, json_of, plain_ids, dead = self._entries, self.json, self.plain, self._dead
        for message, key, converted in zip(messages, keys, converted_all, strict=True):
            slot = id(message)
            entry = entries.get(slot)
            if entry is not None and entry[0]() is message and entry[1] == key:
                # converted again and kept meanwhile (a request built before this ran): keep that one
                self._unmark(converted)
                continue
            try:
                ref = _Ref(message, dead)
            except TypeError:  # not weak-referenceable: nothing keeps it, so nothing may stay marked
                self._unmark(converted)
                continue
            if entry is not None:
                self._forget(slot)
            ref.slot = slot
            entries[slot] = (ref, key, converted)
            if type(converted) is dict:  # a whole wire message (`message`)
                if id(converted) not in plain_ids:
                    json_of[id(converted)] = dumps(converted).encode()
            elif converted and id(converted[0]) not in plain_ids:  # parts, all marked or none
                for part in converted:
                    json_of[id(part)] = dumps(part).encode()

    def _unmark(self, converted: Any) -> None:
        if type(converted) is dict:
            self.plain.discard(id(converted))
        else:
            for part in converted:
                self.plain.discard(id(part))

    def _dead(self, ref: _Ref) -> None:
        entry = self._entries.get(ref.slot)
        if entry is not None and entry[0] is ref:
            self._forget(ref.slot)

    def _forget(self, slot: int) -> None:
        entry = self._entries.pop(slot, None)
        if entry is not None:
            converted = entry[2]
            self.json.pop(id(converted), None)
            self.plain.discard(id(converted))
            if isinstance(converted, list):
                for part in converted:
                    self.json.pop(id(part), None)
                    self.plain.discard(id(part))

    def __len__(self) -> int:
        return len(self._entries)


# The caches with conversions waiting for `keep_deferred`.
_DEFERRED: list[ConversionCache] = []


def keep_deferred() -> None:
    """Keep every deferred conversion (`ConversionCache.keep_pending`): called once a request's body
    has been written, so the work runs while the server reads it."""
    while _DEFERRED:
        _DEFERRED.pop().keep_pending()


_RUN_MIN = 64  # plain messages in a row encoded by one orjson call (fewer: one stdlib call each)


def encode_body(body: JsonObject, field: str, cache: ConversionCache, keep_order: bool = False) -> bytes:
    """``body`` as compact UTF-8 JSON, with the list ``body[field]`` (messages or input items) spliced
    from the cache: an item, a ``{role, content}`` message or its ``content`` list that the cache holds
    is not encoded again, and a run of plain messages (`ConversionCache.message`) is encoded at once.
    Everything else is encoded by the stdlib's C encoder as usual. The list is written first, unless
    ``keep_order`` (the body's keys in their own order, the ones before ``field`` written first).

    The pieces of the last body are kept (``cache.last_chunks``: the head, then the items' JSON);
    a body that repeats the last one's leading items (the same objects) reuses the pieces that hold
    only those, so the work is for the new items, and the one O(body) step is the final join (a copy
    in C).
    """
    items = body.get(field)
    if not isinstance(items, list):
        return dumps(body).encode()
    known, plain = cache.json, cache.plain
    head = b"{" + dumps(field).encode() + b":["
    before: JsonObject = {}
    if keep_order:
        for key in body:
            if key == field:
                break
            before[key] = body[key]
        if before:
            head = dumps(before).encode()[:-1] + b"," + head[1:]
    # Items are never modified once built, so the same objects as last time have the same JSON.
    last = cache.last_items
    same = 0
    if cache.last_field == field and cache.last_chunks and cache.last_chunks[0] == head:
        limit = min(len(items), len(last))
        if all(map(operator.is_, items[:limit], last[:limit])):  # the usual case, checked in C
            same = limit
        else:
            while items[same] is last[same]:
                same += 1
    lead, lead_json = cache.lead_items, cache.lead_json
    cache.lead_items, cache.lead_json = [], b""
    lead_used = False
    if same:
        keep = bisect.bisect_right(cache.last_ends, same)  # the pieces holding only repeated items
        chunks, ends = cache.last_chunks[:keep], cache.last_ends[:keep]
    else:
        chunks, ends = [head], [0]
        # the lead starts the list, or follows its first item (Chat Completions' instructions)
        at = 0 if lead and items and items[0] is lead[0] else 1
        if lead and len(lead) + at <= len(items) and all(map(operator.is_, lead, items[at:])):
            if at:
                chunks.append(dumps(items[0]).encode() + b",")
                ends.append(1)
            chunks.append(lead_json)
            ends.append(at + len(lead))
            lead_used = True
    index, count = ends[-1], len(items)
    start = index
    # Which of the new items are plain, found in C (a Python loop over 100,000 items cost ~40 ms).
    flags = list(map(plain.__contains__, map(id, items[start:]))) if plain else []
    one_by_one = index  # items before this go one by one (a run orjson refused)
    while index < count:
        item = items[index]
        if index >= one_by_one and flags and flags[index - start]:
            try:
                run = start + flags.index(False, index - start)
            except ValueError:  # plain to the end
                run = count
            listed = _encode_plain(items[index:run]) if run - index >= _RUN_MIN else None
            if listed is not None:  # "[...]": its brackets make way for the comma
                chunks.append(b"," + memoryview(listed)[1:-1] if index else listed[1:-1])
                ends.append(run)
                index = run
                continue
            one_by_one = run
        text = known.get(id(item))
        if text is None and type(item) is dict and len(item) == 2 and "role" in item:
            content = item.get("content")
            if isinstance(content, list):
                listed = known.get(id(content))
                if listed is None:
                    listed = b"[" + b",".join(known.get(id(b)) or dumps(b).encode() for b in content) + b"]"
                text = b'{"role":' + dumps(item["role"]).encode() + b',"content":' + listed + b"}"
        if text is None:
            text = dumps(item).encode()
        chunks.append(b"," + text if index else text)
        index += 1
        ends.append(index)
    if lead_used:
        # A history sent once as it was read (`LlmRequest.wire_prefix`): the next body converts it
        # anew, so none of it is kept (its JSON is most of the body).
        cache.last_field, cache.last_items, cache.last_chunks, cache.last_ends = "", [], [], []
    else:
        cache.last_field, cache.last_items, cache.last_chunks, cache.last_ends = (
            field,
            list(items),
            chunks,
            ends,
        )
    rest = dumps({k: v for k, v in body.items() if k != field and k not in before}).encode()
    # One join (one copy of a body that may be megabytes), with the tail appended for it only.
    chunks.append(b"]," + rest[1:] if rest != b"{}" else b"]}")
    try:
        return b"".join(chunks)
    finally:
        chunks.pop()


def _encode_plain(items: JsonArray) -> bytes | None:
    """``items`` (plain values only) as one JSON array by orjson, or None to leave them to the stdlib
    (orjson missing, or a value it refuses: a lone surrogate, an integer beyond 64 bits)."""
    try:
        import orjson
    except ImportError:  # a dependency, but the stdlib path needs nothing else
        return None
    try:
        return orjson.dumps(items)
    except TypeError:  # orjson.JSONEncodeError
        return None


class Converter(Protocol):
    """A provider's message conversion as a fold: copyable, extended by prepared messages."""

    def copy(self: _C) -> _C: ...

    def feed(self, messages: list[LlmMessage], cached: bool) -> None: ...


_C = TypeVar("_C", bound=Converter)


_SLICE = 256  # messages prepared, then converted, at a time
# A first conversion this long keeps its conversions after the body is written (`keep_deferred`).
DEFER_KEEPING_FROM = 1_024
_NO_TIME = float("-inf")
_timestamp = operator.attrgetter("timestamp")


class PrefixMemo:
    """`prepare_messages` + a provider's conversion, with the previous request's cached region reused.

    A request usually repeats the previous one's cached messages (the very same objects) and adds a
    few: only those few are prepared and converted; the state after the cached region is kept for the
    next request. The result equals the plain functions on the same input (tests compare them).
    """

    def __init__(self) -> None:
        self._key: Hashable = None
        self._sources: list[LlmMessage] = []
        self._state: tuple[Any, Any] | None = None  # (Preparer, converter) after the sources
        self._paired = False  # whether they were fed as an already paired list (`LlmRequest.paired`)
        # The newest timestamp of the sources up to the end of each slice fed (ends ascending), found
        # while the slice's messages were in the CPU's caches; and the request list they belong to.
        self._ends: list[int] = []
        self._newest: list[float] = []
        self._messages: list[LlmMessage] | None = None

    def convert(
        self,
        model: Model,
        request: LlmRequest,
        key: Hashable,
        fresh: Callable[[], _C],
        cache: ConversionCache | None = None,
    ) -> _C:
        """The converter after every message of ``request`` (the cached region fed as cached).

        With ``cache`` (the one the converter keeps its conversions in), a cached region of at least
        `DEFER_KEEPING_FROM` messages still to convert is kept only after the body is written
        (`keep_deferred`)."""
        from ._history import Preparer

        messages = request.messages
        boundary = request.cache_boundary
        end = len(messages) if boundary is None else max(0, min(boundary, len(messages)))
        state = self._state
        paired = request.paired
        if (
            state is not None
            and self._key == key
            and self._paired == paired
            and len(self._sources) <= end
            and all(map(operator.is_, self._sources, messages))
        ):
            preparer, converter, start = state[0].copy(), state[1].copy(), len(self._sources)
            ends, newest = self._ends, self._newest
        else:
            preparer, converter, start = Preparer(model), fresh(), 0
            ends, newest = [], []
        feed = preparer.feed_paired if paired else preparer.feed
        # A long first conversion: its keeping waits for the body to be written (`keep_deferred`).
        deferring = cache if cache is not None and end - start >= DEFER_KEEPING_FROM else None
        if deferring is not None:
            deferring.deferring = True
        try:
            # In slices, so a message is converted while its objects are still in the CPU's caches:
            # over a 100,000-message history, a second pass found them all evicted (most of its cost).
            for low in range(start, end, _SLICE):
                high = min(end, low + _SLICE)
                chunk = messages[low:high]
                before = len(preparer.out)
                feed(chunk)
                converter.feed(preparer.out[before:], cached=True)
                newest.append(max(newest[-1] if newest else _NO_TIME, max(map(_timestamp, chunk))))
                ends.append(high)
        finally:
            if deferring is not None:
                deferring.deferring = False
        self._ends, self._newest, self._messages = ends, newest, messages
        self._key, self._sources, self._state = key, list(messages[:end]), (preparer.copy(), converter.copy())
        self._paired = paired
        before = len(preparer.out)
        feed(messages[end:])
        if preparer.pending and end == len(messages):
            preparer.close_pending()  # synthetic results of a broken history belong to the cached region
            converter.feed(preparer.out[before:], cached=True)
        else:
            preparer.close_pending()
            converter.feed(preparer.out[before:], cached=False)
        return converter

    def newest_before(self, messages: list[LlmMessage], index: int) -> float:
        """The newest timestamp of ``messages[:index]`` (-inf for none): from the slices of the last
        `convert` when ``messages`` is its request's list (the history's pass over 100,000 messages
        made again from the end would find them all evicted from the CPU's caches), else counted."""
        low, newest = 0, _NO_TIME
        if messages is self._messages and self._ends:
            slice_index = bisect.bisect_right(self._ends, index) - 1
            if slice_index >= 0:
                low, newest = self._ends[slice_index], self._newest[slice_index]
        return max(newest, max(map(_timestamp, messages[low:index]), default=_NO_TIME))
