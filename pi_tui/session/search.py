"""Searching session rows with pi's query syntax.

- whitespace-separated tokens, all required, each matched fuzzily with the project's one matcher,
  `pi_tui.util.fuzzy.fuzzy_match` (pi's ``fuzzyMatch``: its characters in order, case-insensitive);
- ``"a quoted phrase"`` must appear as is (case-insensitive, whitespace runs treated as one space);
- ``re:<pattern>`` is a case-insensitive regular expression; an invalid one matches nothing;
- an unclosed quote falls back to plain tokens.

The searched text is the session's id, name, the text of its conversation and cwd, as pi searches.
The conversation (every user and assistant message's text, `pi_tui.session.text_index`) is searched
when the caller has it (``texts``); for a session it has not read yet, the first user message stands in,
which the listing reads. With the conversation, the text is matched the way the index keeps it:
lower-case, each run of whitespace one space (for a regular expression too).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pi_tui.session.listing import SessionInfo
from pi_tui.util.fuzzy import fuzzy_match, fuzzy_match_lowered

__all__ = ["ParsedQuery", "parse_query", "match_score", "search_sessions", "full_text"]


@dataclass(frozen=True, slots=True)
class ParsedQuery:
    tokens: tuple[tuple[Literal["fuzzy", "phrase"], str], ...] = ()
    regex: re.Pattern[str] | None = None
    error: str | None = None  # a query that cannot match anything (bad or empty regex)

    @property
    def is_empty(self) -> bool:
        return not self.tokens and self.regex is None and self.error is None


def _squash(text: str) -> str:
    return " ".join(text.lower().split())


def parse_query(query: str) -> ParsedQuery:
    text = query.strip()
    if not text:
        return ParsedQuery()
    if text.startswith("re:"):
        pattern = text[3:].strip()
        if not pattern:
            return ParsedQuery(error="empty regular expression")
        try:
            return ParsedQuery(regex=re.compile(pattern, re.IGNORECASE))
        except re.error as exc:
            return ParsedQuery(error=str(exc))
    if text.count('"') % 2:
        return ParsedQuery(tokens=tuple(("fuzzy", t) for t in text.split()))
    tokens: list[tuple[Literal["fuzzy", "phrase"], str]] = []
    for i, part in enumerate(text.split('"')):
        if i % 2:  # inside quotes
            if part.strip():
                tokens.append(("phrase", part.strip()))
        else:
            tokens.extend(("fuzzy", t) for t in part.split())
    return ParsedQuery(tokens=tuple(tokens))


def _search_text(info: SessionInfo) -> str:
    return f"{info.id} {info.name or ''} {info.first_message} {info.cwd}"


def full_text(info: SessionInfo, conversation: str) -> str:
    """pi's searched text of a session: id, name, conversation, cwd; normalized like the index's
    ``conversation`` (lower-case, whitespace runs as one space)."""
    parts = (_squash(f"{info.id} {info.name or ''}"), conversation, _squash(info.cwd))
    return " ".join(part for part in parts if part)


def _full_score(text: str, parsed: ParsedQuery) -> float | None:
    """`match_score` on a `full_text`: already lower-case and squashed, so nothing is copied."""
    if parsed.regex is not None:
        found = parsed.regex.search(text)
        return found.start() * 0.1 if found else None
    total = 0.0
    for kind, value in parsed.tokens:
        if kind == "phrase":
            index = text.find(_squash(value))
            if index < 0:
                return None
            total += index * 0.1
        else:
            score = fuzzy_match_lowered(value, text)
            if score is None:
                return None
            total -= score
    return total


def match_score(info: SessionInfo, parsed: ParsedQuery, conversation: str | None = None) -> float | None:
    """None when ``info`` does not match; otherwise a score, lower is better.

    Args:
        info: the session's row.
        parsed: the query.
        conversation: the session's conversation text as `pi_tui.session.text_index` keeps it; None
            searches the row's first message instead.
    """
    if parsed.error is not None:
        return None
    if conversation is not None:
        return _full_score(full_text(info, conversation), parsed)
    text = _search_text(info)
    if parsed.regex is not None:
        found = parsed.regex.search(text)
        return found.start() * 0.1 if found else None
    total = 0.0
    squashed: str | None = None
    for kind, value in parsed.tokens:
        if kind == "phrase":
            squashed = squashed if squashed is not None else _squash(text)
            index = squashed.find(_squash(value))
            if index < 0:
                return None
            total += index * 0.1
        else:
            score = fuzzy_match(value, text)
            if score is None:
                return None
            total -= score  # pi's fuzzyMatch score: lower is better, the opposite of ours
    return total


def search_sessions(
    sessions: Iterable[SessionInfo],
    query: str,
    *,
    sort: Literal["relevance", "recent"] = "relevance",
    named_only: bool = False,
    texts: Mapping[Path, str] | None = None,
    stop: Callable[[], bool] | None = None,
) -> list[SessionInfo]:
    """Filter (and for ``relevance``, rank) sessions. ``recent`` keeps the incoming order.

    Args:
        sessions: the rows, in the order ``recent`` keeps.
        query: what the user typed (see the module docstring).
        sort: ``relevance`` ranks by score (ties: most recently modified first).
        named_only: only sessions with a name.
        texts: conversation texts by session path (`pi_tui.session.text_index`); a session without
            one is searched by its first message.
        stop: asked between sessions: True gives up (the result is then incomplete; a caller whose
            query changed meanwhile discards it).
    """
    rows = [s for s in sessions if not named_only or (s.name or "").strip()]
    parsed = parse_query(query)
    if parsed.is_empty:
        return rows
    known = texts or {}
    scored: list[tuple[float, SessionInfo]] = []
    for session in rows:
        if stop is not None and stop():
            break
        score = match_score(session, parsed, known.get(session.path))
        if score is not None:
            scored.append((score, session))
    if sort == "recent":
        return [s for _, s in scored]
    scored.sort(key=lambda pair: (pair[0], -pair[1].modified.timestamp()))
    return [s for _, s in scored]
