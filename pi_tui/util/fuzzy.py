"""The project's one fuzzy matcher: every picker and completion ranks with it.

Semantics follow pi's ``fuzzyMatch``/``fuzzyFilter`` so that ``/model``, ``@file``, ``/resume`` and
slash completion rank the way pi users expect:

* A query is split into tokens on whitespace and ``/``; a candidate must match every token.
* A token matches when its characters appear in order in the candidate (a subsequence),
  case-insensitively. The first occurrence of each character is taken, left to right.
* Contiguous runs, matches at a word start (after whitespace, ``-``, ``_``, ``.``, ``/``, ``:`` or at
  the beginning) and early matches score better; gaps cost. A token equal to the whole candidate gets a
  large bonus. ``gpt4`` also finds ``4gpt`` (letters and digits swapped), ranked a little lower.

Why not a library scorer: rapidfuzz's ratios (``WRatio``, ``partial_ratio``) are edit-distance
similarities, so ``abc`` would match ``acb`` and a typo would outrank a clean word-start match; neither
is what pi does. rapidfuzz is still used, as a C-speed subsequence test (``LCSseq``: a token is a
subsequence exactly when the longest common subsequence is the whole token), so only real matches reach
the Python scorer. It is imported on first use, never on the ``-p`` path.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["fuzzy_filter", "fuzzy_match", "fuzzy_match_lowered", "fuzzy_score"]

_TOKEN_SPLIT = re.compile(r"[\s/]+")
_BOUNDARY_CHARS = frozenset("-_./:")
_LETTERS_DIGITS = re.compile(r"([a-z]+)([0-9]+)")
_DIGITS_LETTERS = re.compile(r"([0-9]+)([a-z]+)")

# Below this many candidates the plain loop is as fast as handing the list to rapidfuzz.
_PREFILTER_MIN = 256


def _cost(token: str, text: str) -> float | None:
    """pi's cost of ``token`` in ``text`` (both lower-case): lower is better, None when no match."""
    if not token:
        return 0.0
    if len(token) > len(text):
        return None
    cost = 0.0
    last = -1
    run = 0
    find = text.find
    for char in token:
        index = find(char, last + 1)
        if index < 0:
            return None
        if index == last + 1:
            # pi counts a first match at position 0 as continuing a run, too.
            run += 1
            cost -= run * 5
        else:
            run = 0
            if last >= 0:
                cost += (index - last - 1) * 2
        if index == 0 or text[index - 1] in _BOUNDARY_CHARS or text[index - 1].isspace():
            cost -= 10
        cost += index * 0.1
        last = index
    if token == text:
        cost -= 100
    return cost


def _swapped(token: str) -> str | None:
    """``gpt4`` → ``4gpt`` and ``4gpt`` → ``gpt4``; None for any other shape."""
    match = _LETTERS_DIGITS.fullmatch(token) or _DIGITS_LETTERS.fullmatch(token)
    return match.group(2) + match.group(1) if match else None


def _token_cost(token: str, text: str) -> float | None:
    cost = _cost(token, text)
    if cost is not None:
        return cost
    swapped = _swapped(token)
    if swapped is None:
        return None
    cost = _cost(swapped, text)
    return None if cost is None else cost + 5


def _tokens(query: str) -> list[str]:
    return [token for token in _TOKEN_SPLIT.split(query.strip().lower()) if token]


def fuzzy_match(token: str, text: str) -> float | None:
    """pi's ``fuzzyMatch`` for one token (no splitting on whitespace or ``/``): higher is better.

    None when ``token`` is not a case-insensitive subsequence of ``text`` (nor, for ``gpt4``-shaped
    tokens, with letters and digits swapped). For pickers that tokenize queries their own way, such as
    the session search with its quoted phrases.
    """
    cost = _token_cost(token.lower(), text.lower())
    return None if cost is None else (-cost if cost else 0.0)


def fuzzy_match_lowered(token: str, lowered: str) -> float | None:
    """`fuzzy_match` on a text already in lower case (a long one is not lowered again per call)."""
    cost = _token_cost(token.lower(), lowered)
    return None if cost is None else (-cost if cost else 0.0)


def fuzzy_score(query: str, text: str) -> float | None:
    """How well ``text`` matches ``query``: higher is better, None when it does not match.

    An empty (or all-whitespace) query matches everything with score 0.
    """
    total = 0.0
    lowered = text.lower()
    for token in _tokens(query):
        cost = _token_cost(token, lowered)
        if cost is None:
            return None
        total += cost
    return -total if total else 0.0


def _possible(tokens: list[str], lowered: list[str]) -> Sequence[int]:
    """Indexes of candidates that can match every token (C-speed subsequence test via rapidfuzz).

    A token that also matches with letters and digits swapped keeps the candidates either form finds,
    so nothing the exact scorer would accept is dropped here.
    """
    # A one-character token rejects a candidate at its first ``find`` anyway: no gain in prefiltering.
    tokens = [token for token in tokens if len(token) > 1]
    if len(lowered) < _PREFILTER_MIN or not tokens:
        return range(len(lowered))
    from rapidfuzz import process
    from rapidfuzz.distance import LCSseq

    keep: set[int] | None = None
    for token in sorted(tokens, key=len, reverse=True):
        pool: Sequence[str] | dict[int, str] = lowered if keep is None else {i: lowered[i] for i in keep}
        hits: set[int] = set()
        for form in filter(None, (token, _swapped(token))):
            hits.update(
                index
                for _, _, index in process.extract_iter(
                    form, pool, scorer=LCSseq.similarity, score_cutoff=len(form)
                )
            )
        keep = hits
        if not keep:
            return []
    return sorted(keep) if keep is not None else range(len(lowered))


def fuzzy_filter(
    query: str, candidates: Sequence[str], *, limit: int | None = None
) -> list[tuple[int, float]]:
    """Filter and rank ``candidates`` against ``query`` the way pi's pickers do.

    Args:
        query: What the user typed. Whitespace and ``/`` separate tokens; every token must match.
        candidates: The texts to search (e.g. ``"provider id"``, relative paths, command names).
        limit: Keep at most this many results (the best ones); None keeps all.

    Returns:
        ``(index into candidates, score)`` pairs, best first; higher scores are better. Equal scores
        keep the candidates' original order. An empty query returns every candidate, in order, with
        score 0.
    """
    tokens = _tokens(query)
    if not tokens:
        every = [(index, 0.0) for index in range(len(candidates))]
        return every if limit is None else every[: max(limit, 0)]
    lowered = [text.lower() for text in candidates]
    results: list[tuple[int, float]] = []
    for index in _possible(tokens, lowered):
        text = lowered[index]
        total = 0.0
        for token in tokens:
            cost = _token_cost(token, text)
            if cost is None:
                break
            total += cost
        else:
            results.append((index, -total if total else 0.0))
    results.sort(key=lambda pair: -pair[1])
    return results if limit is None else results[: max(limit, 0)]
