"""`encode_body` reuses the pieces of the previous body for the same leading items (issue #12).

Each body must still be byte-for-byte what the plain encoder gives, whatever the sequence of bodies:
extended, cut back, changed in the middle, emptied, or another field.
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

import pytest

from pi_tui.ai.providers._wire_cache import ConversionCache, encode_body


def _plain(body: dict[str, Any], field: str = "messages") -> bytes:
    """The plain compact encoding, with the spliced list first (where `encode_body` puts it), and a lone
    surrogate written as its ``\\u`` escape (UTF-8 cannot carry it)."""
    ordered = {field: body[field], **{k: v for k, v in body.items() if k != field}}
    text = json.dumps(ordered, ensure_ascii=False, separators=(",", ":"))
    return re.sub("[\ud800-\udfff]", lambda m: f"\\u{ord(m.group()):04x}", text).encode()


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


def _plain_item(n: int, rng: random.Random) -> dict[str, Any]:
    """A message of plain values (what a converter marks plain), sometimes with what orjson refuses."""
    text = rng.choice(["é ü", '\u2028 \x00 \x1f \\ "q"', "😀", "plain"])
    value: Any = rng.choice([n, -(2**63), 2**64 - 1, True, None, [], {}, {"k": [1, "x"]}])
    if rng.random() < 0.003:  # a lone surrogate, an integer beyond 64 bits: orjson refuses the run
        text, value = rng.choice([("a\ud800b", 0), ("big", 2**64)])
    return {"role": "user", "content": [{"type": "text", "text": f"{text} {n}", "v": value}]}


@pytest.mark.parametrize("seed", range(12))
def test_runs_of_plain_messages_are_encoded_as_the_stdlib_encodes_them(seed: int) -> None:
    rng = random.Random(seed)
    cache = ConversionCache()
    pool = [_plain_item(n, rng) for n in range(400)]
    others = [_item(n) for n in range(400)]  # not marked: encoded one by one
    for n, item in enumerate(pool):
        if rng.random() < 0.995:
            cache.plain.add(id(item))
        else:
            pool[n] = others[n]
    items: list[Any] = []
    runs: list[int] = []
    for step in range(30):
        roll = rng.random()
        if roll < 0.6:
            items = items + pool[len(items) : len(items) + rng.choice([1, 3, 70, 200])]
        elif roll < 0.8:
            items = items[: rng.randint(0, len(items))]
        elif items:
            at = rng.randrange(len(items))
            items = [*items[:at], {"role": "user", "content": f"new {step}"}, *items[at + 1 :]]
        body = {"model": "m", "messages": items, "max_tokens": step}
        assert encode_body(body, "messages", cache) == _plain(body), (seed, step)
        ends = cache.last_ends
        runs.append(max((b - a for a, b in zip(ends, ends[1:], strict=False)), default=0))
    assert max(runs) >= 64  # some bodies had a run encoded at once
