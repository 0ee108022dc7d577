"""Every writer of a user's file under the agent directory replaces it through `pi_tui.util.atomic_file`.

What that buys, checked here for each of them: the write is whole or not at all, a temporary file that a
killed write left behind (the name pattern and age `remove_stale_temps` knows) is removed by the next
write of the same file, nothing else is left next to the file, and the file's mode is kept.
"""

from __future__ import annotations

import json
import os
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from pi_tui.bundled_extensions.mcp.config import save_enabled
from pi_tui.bundled_extensions.mcp.oauth_store import Login, TokenStore

from pi_tui.ai.radius_catalog import STORE_FILE, store_radius_models
from pi_tui.modes.prompt_history import PromptHistory
from pi_tui.resources.trust_store import ProjectTrustStore
from pi_tui.session.importing import import_session_file
from pi_tui.session.listing_cache import CACHE_NAME, ListingCache
from pi_tui.session.text_index import INDEX_NAME, TextIndex
from pi_tui.util.atomic_file import STALE_TEMP_SECONDS, new_temp_path

_HEADER = '{"type":"session","version":3,"id":"0190a0a0-0000-7000-8000-000000000001","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/tmp"}\n'


@dataclass
class Writer:
    """One writer: where it writes under ``root``, what it finds there first, and the write itself."""

    name: str
    target: Callable[[Path], Path]
    prepare: Callable[[Path], None]
    write: Callable[[Path], None]


def _none(root: Path) -> None:
    return None


def _mcp_config(root: Path) -> None:
    (root / "mcp.json").write_text('{\n  "mcpServers": {\n    "docs": {"command": "docs-server"}\n  }\n}\n')


def _history(root: Path) -> None:
    history = PromptHistory(root / "prompt-history.jsonl", limit=1)
    history.add("first")
    history.add("second")  # two lines on disk: the next add rewrites the file


def _session_source(root: Path) -> None:
    (root / "elsewhere").mkdir()
    (root / "elsewhere" / "s.jsonl").write_text(_HEADER)


def _listed(root: Path) -> None:
    # Big enough for the cache to keep a row of it (smaller files are read each time instead).
    message = {"role": "user", "content": "x" * 300_000, "timestamp": 1}
    entry = {"type": "message", "id": "a1", "parentId": None, "timestamp": "2026-01-01T00:00:01.000Z"}
    (root / "sessions").mkdir()
    (root / "sessions" / "s.jsonl").write_text(_HEADER + json.dumps({**entry, "message": message}) + "\n")


def _list_and_save(root: Path) -> None:
    cache = ListingCache(root / "sessions")
    cache.info(root / "sessions" / "s.jsonl")
    cache.save()


def _index_and_save(root: Path) -> None:
    index = TextIndex(root / "sessions")
    index.update(root / "sessions" / "s.jsonl")
    index.save()


WRITERS = [
    Writer("trust.json", lambda r: r / "trust.json", _none, lambda r: ProjectTrustStore(r).set(r, True)),
    Writer(
        "models-store.json",
        lambda r: r / STORE_FILE,
        _none,
        lambda r: store_radius_models(r, [{"id": "m1", "provider": "radius"}]),
    ),
    Writer(
        "prompt history",
        lambda r: r / "prompt-history.jsonl",
        _history,
        lambda r: PromptHistory(r / "prompt-history.jsonl", limit=1).add("third"),
    ),
    Writer(
        "mcp.json",
        lambda r: r / "mcp.json",
        _mcp_config,
        lambda r: save_enabled(r / "mcp.json", "docs", False),
    ),
    Writer(
        "mcp-oauth.json",
        lambda r: r / "mcp-oauth.json",
        _none,
        lambda r: TokenStore(r / "mcp-oauth.json").put(
            "https://example.com/mcp", Login(server="docs", access="a")
        ),
    ),
    Writer(
        "imported session",
        lambda r: r / "sessions" / "s.jsonl",
        _session_source,
        lambda r: import_session_file(r / "elsewhere" / "s.jsonl", r / "sessions"),
    ),
    Writer("session listing cache", lambda r: r / "sessions" / CACHE_NAME, _listed, _list_and_save),
    Writer("session text index", lambda r: r / "sessions" / INDEX_NAME, _listed, _index_and_save),
]


def _temps(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith((".tmp", ".importing")))


@pytest.mark.parametrize("writer", WRITERS, ids=[w.name for w in WRITERS])
def test_a_killed_writes_temporary_file_is_removed_by_the_next_write_and_nothing_else_is_left(
    tmp_path: Path, writer: Writer
) -> None:
    writer.prepare(tmp_path)
    target = writer.target(tmp_path)
    target.parent.mkdir(parents=True, exist_ok=True)
    # What a write killed between creating its temporary file and renaming it leaves: half the content.
    leftover = new_temp_path(target)
    leftover.write_text('{"half": ')
    old = time.time() - STALE_TEMP_SECONDS - 60
    os.utime(leftover, (old, old))

    writer.write(tmp_path)

    assert not leftover.exists()
    assert _temps(target.parent) == []
    text = target.read_text(encoding="utf-8")
    assert text and "half" not in text
    for line in text.splitlines() if target.suffix in (".jsonl", ".ndjson") else [text]:
        json.loads(line)


@pytest.mark.parametrize("writer", [w for w in WRITERS if w.name != "imported session"], ids=lambda w: w.name)
def test_a_rewrite_keeps_the_files_mode(tmp_path: Path, writer: Writer) -> None:
    writer.prepare(tmp_path)
    target = writer.target(tmp_path)
    target.parent.mkdir(parents=True, exist_ok=True)
    writer.write(tmp_path)  # the file exists now, whatever it started as
    target.chmod(0o640)

    writer.write(tmp_path)

    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert _temps(target.parent) == []


def test_a_new_mcp_token_store_is_readable_by_its_owner_only(tmp_path: Path) -> None:
    store = TokenStore(tmp_path / "mcp-oauth.json")
    store.put("https://example.com/mcp", Login(server="docs", access="secret"))
    assert stat.S_IMODE((tmp_path / "mcp-oauth.json").stat().st_mode) == 0o600


def test_a_models_store_that_is_not_an_object_is_a_clear_error_and_is_left_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / STORE_FILE
    path.write_text('["the user put a list here"]\n')
    with pytest.raises(OSError, match="does not hold a JSON object; move it away"):
        store_radius_models(tmp_path, [{"id": "m1"}])
    assert path.read_text() == '["the user put a list here"]\n'
    assert _temps(tmp_path) == []


def test_a_models_store_that_is_not_json_is_a_clear_error_and_is_left_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / STORE_FILE
    path.write_text('{"openai": ')
    with pytest.raises(OSError, match="is not valid JSON"):
        store_radius_models(tmp_path, [{"id": "m1"}])
    assert path.read_text() == '{"openai": '
