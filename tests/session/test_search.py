from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from pi_tui.session import SessionInfo, parse_query, search_sessions


def _row(sid: str, first: str, *, name: str | None = None, cwd: str = "/p", day: int = 1) -> SessionInfo:
    when = datetime(2025, 1, day, tzinfo=UTC)
    return SessionInfo(
        path=Path(f"/s/{sid}.jsonl"),
        id=sid,
        cwd=cwd,
        name=name,
        parent_session_path=None,
        created=when,
        modified=when,
        message_count=2,
        first_message=first,
        size=10,
        mtime=0.0,
    )


ROWS = [
    _row("aaaa1111", "fix the login bug in auth.py", day=3),
    _row("bbbb2222", "write docs for the CLI", name="Docs sprint", day=2),
    _row("cccc3333", "node   CVE  upgrade", cwd="/work/backend", day=1),
]


def _ids(rows: list[SessionInfo]) -> list[str]:
    return [r.id for r in rows]


def test_empty_query_keeps_everything_in_order() -> None:
    assert _ids(search_sessions(ROWS, "  ")) == ["aaaa1111", "bbbb2222", "cccc3333"]


def test_tokens_are_fuzzy_and_all_required() -> None:
    assert _ids(search_sessions(ROWS, "lgn bug")) == ["aaaa1111"]
    assert _ids(search_sessions(ROWS, "login docs")) == []
    assert _ids(search_sessions(ROWS, "backend")) == ["cccc3333"]  # cwd is searched
    assert _ids(search_sessions(ROWS, "sprint")) == ["bbbb2222"]  # and the name
    assert _ids(search_sessions(ROWS, "BBBB")) == ["bbbb2222"]  # and the id


def test_quoted_phrase_is_an_exact_whitespace_normalised_substring() -> None:
    assert _ids(search_sessions(ROWS, '"node cve"')) == ["cccc3333"]
    assert _ids(search_sessions(ROWS, '"cve node"')) == []


def test_regex_mode_and_invalid_regex() -> None:
    assert _ids(search_sessions(ROWS, r"re:LOGIN|cli\b")) == ["aaaa1111", "bbbb2222"]
    assert _ids(search_sessions(ROWS, r"re:auth\.py\s")) == ["aaaa1111"]
    assert _ids(search_sessions(ROWS, "re:(unclosed")) == []
    assert parse_query("re:").error == "empty regular expression"


def test_unclosed_quote_falls_back_to_plain_tokens() -> None:
    parsed = parse_query('"node cve')
    assert parsed.tokens == (("fuzzy", '"node'), ("fuzzy", "cve"))


def test_relevance_ranks_closer_matches_first_and_recent_keeps_order() -> None:
    rows = [_row("r1", "a long list of docs", day=1), _row("r2", "docs", day=2)]
    assert _ids(search_sessions(rows, "docs")) == ["r2", "r1"]
    assert _ids(search_sessions(rows, "docs", sort="recent")) == ["r1", "r2"]


def test_named_only_filter() -> None:
    assert _ids(search_sessions(ROWS, "", named_only=True)) == ["bbbb2222"]
