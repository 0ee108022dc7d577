"""Searching session rows with pi's query syntax.

- whitespace-separated tokens, all required, each matched fuzzily with the project's one matcher,
  `pi_tui.util.fuzzy.fuzzy_match` (pi's ``fuzzyMatch``: its characters in order, case-insensitive);
- ``"a quoted phrase"`` must appear as is (case-insensitive, whitespace runs treated as one space);
- ``re:<pattern>`` is a case-insensitive regular expression; an invalid one matches nothing;
- an unclosed quote falls back to plain tokens.

The searched text is the session's id, name, first message and cwd.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from pi_tui.session.listing import SessionInfo
from pi_tui.util.fuzzy import fuzzy_match

__all__ = ["ParsedQuery", "parse_query", "match_score", "search_sessions"]


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


def match_score(info: SessionInfo, parsed: ParsedQuery) -> float | None:
    """None when ``info`` does not match; otherwise a score, lower is better."""
    if parsed.error is not None:
        return None
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
) -> list[SessionInfo]:
    """Filter (and for ``relevance``, rank) sessions. ``recent`` keeps the incoming order."""
    rows = [s for s in sessions if not named_only or (s.name or "").strip()]
    parsed = parse_query(query)
    if parsed.is_empty:
        return rows
    scored = [(score, s) for s in rows if (score := match_score(s, parsed)) is not None]
    if sort == "recent":
        return [s for _, s in scored]
    scored.sort(key=lambda pair: (pair[0], -pair[1].modified.timestamp()))
    return [s for _, s in scored]
