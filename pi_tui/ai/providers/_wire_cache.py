"""Per-message wire form, converted and JSON-encoded once per message instead of once per request.

A long tool loop sends the same history again with every request; converting each stored message to the
provider's wire shape and encoding it to JSON again costs O(history) per request. `ConversionCache`
keeps, per message object (by identity, dropped when the message is garbage-collected) and conversion
key (the model), the converted wire parts and their JSON text; `encode_body` splices those texts into
the request body instead of encoding them again.

Only the cached region of a request (the durable history, which is never mutated in place: envelopes
are values) goes through the cache. A part the provider must change for one request (the moving cache
breakpoint) is copied first, so the cached parts are never modified.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Callable, Hashable
from typing import Any

__all__ = ["ConversionCache", "dumps", "encode_body"]

_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
dumps = _ENCODER.encode  # the wire encoding: compact, UTF-8 text kept as is


class ConversionCache:
    """Wire parts per (message object, key), and the JSON text of every part it handed out."""

    def __init__(self) -> None:
        self._entries: dict[int, tuple[weakref.ref[Any], Hashable, list[Any]]] = {}
        self.json: dict[int, str] = {}  # id(part) -> its JSON, for parts this cache keeps alive

    def parts(self, message: Any, key: Hashable, convert: Callable[[], list[Any]]) -> list[Any]:
        """The converted parts of ``message`` (a list the caller must not modify, nor its items)."""
        slot = id(message)
        entry = self._entries.get(slot)
        if entry is not None and entry[0]() is message and entry[1] == key:
            return entry[2]
        if entry is not None:
            self._forget(slot)
        converted = convert()
        try:
            ref = weakref.ref(message, lambda _ref, slot=slot: self._forget(slot))  # type: ignore[misc]
        except TypeError:  # not weak-referenceable: convert every time
            return converted
        self._entries[slot] = (ref, key, converted)
        texts = [dumps(part) for part in converted]
        for part, text in zip(converted, texts, strict=True):
            self.json[id(part)] = text
        self.json[id(converted)] = "[" + ",".join(texts) + "]"
        return converted

    def _forget(self, slot: int) -> None:
        entry = self._entries.pop(slot, None)
        if entry is not None:
            self.json.pop(id(entry[2]), None)
            for part in entry[2]:
                self.json.pop(id(part), None)

    def __len__(self) -> int:
        return len(self._entries)


def encode_body(body: dict[str, Any], field: str, known: dict[int, str]) -> bytes:
    """``body`` as compact UTF-8 JSON, with the list ``body[field]`` (messages or input items) spliced
    from known texts: an item, or the ``content`` list of a ``{role, content}`` item, whose ``id`` is in
    ``known`` is not encoded again. Everything else is encoded by the C encoder as usual."""
    items = body.get(field)
    if not isinstance(items, list):
        return dumps(body).encode()
    texts: list[str] = []
    for item in items:
        text = known.get(id(item))
        if text is None:
            content = item.get("content") if type(item) is dict and len(item) == 2 else None
            if isinstance(content, list) and "role" in item:
                listed = known.get(id(content))
                if listed is None:
                    listed = "[" + ",".join(known.get(id(b)) or dumps(b) for b in content) + "]"
                text = '{"role":' + dumps(item["role"]) + ',"content":' + listed + "}"
            else:
                text = dumps(item)
        texts.append(text)
    rest = dumps({k: v for k, v in body.items() if k != field})
    spliced = "{" + dumps(field) + ":[" + ",".join(texts) + "]"
    return (spliced + ("," + rest[1:] if rest != "{}" else "}")).encode()
