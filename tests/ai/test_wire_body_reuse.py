"""`encode_body` reuses the pieces of the previous body for the same leading items (issue #12).

Each body must still be byte-for-byte what the plain encoder gives, whatever the sequence of bodies:
extended, cut back, changed in the middle, emptied, or another field.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from pi_tui.ai.providers._wire_cache import ConversionCache, encode_body


def _plain(body: dict[str, Any], field: str = "messages") -> bytes:
    """The plain compact encoding, with the spliced list first (where `encode_body` puts it)."""
    ordered = {field: body[field], **{k: v for k, v in body.items() if k != field}}
    return json.dumps(ordered, ensure_ascii=False, separators=(",", ":")).encode()


def _item(n: int) -> dict[str, Any]:
    return {"role": "user" if n % 2 else "assistant", "content": [{"type": "text", "text": f"é {n}"}]}


@pytest.mark.parametrize("seed", range(12))
def test_every_body_of_a_sequence_equals_the_plain_encoding(seed: int) -> None:
    rng = random.Random(seed)
    cache = ConversionCache()
    pool = [_item(n) for n in range(60)]
    items: list[Any] = []
    for step in range(40):
        roll = rng.random()
        if roll < 0.5:
            items = items + pool[len(items) : len(items) + rng.randint(1, 4)]  # the usual: extended
        elif roll < 0.65:
            items = items[: rng.randint(0, len(items))]  # another branch
        elif roll < 0.8 and items:
            at = rng.randrange(len(items))
            items = [*items[:at], {"role": "user", "content": f"new {step}"}, *items[at + 1 :]]
        elif roll < 0.9:
            items = list(items)  # a new list of the same objects
        field = "input" if rng.random() < 0.1 else "messages"
        body = {"model": "m", field: items, "stream": True}
        if rng.random() < 0.2:
            body = {field: items}  # nothing after the list
        assert encode_body(body, field, cache) == _plain(body, field), (seed, step)


def test_the_kept_pieces_are_not_changed_by_the_tail() -> None:
    cache = ConversionCache()
    items = [_item(n) for n in range(3)]
    first = encode_body({"messages": items, "max_tokens": 1}, "messages", cache)
    kept = list(cache.last_chunks)
    second = encode_body({"messages": items, "max_tokens": 2}, "messages", cache)
    assert cache.last_chunks == kept  # the tail is joined in, never stored with the items
    assert first != second and second == _plain({"messages": items, "max_tokens": 2})
