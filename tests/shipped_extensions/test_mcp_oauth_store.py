from __future__ import annotations

from pathlib import Path

import pytest
from pi_tui.bundled_extensions.mcp.oauth_store import Login, StoreError, TokenStore


def test_a_deeply_nested_store_file_is_a_clear_error_and_is_left_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "mcp-oauth.json"
    deep = "[" * 100_000 + "]" * 100_000
    path.write_text(deep)
    store = TokenStore(path)
    assert store.get("https://example.com/mcp") is None
    with pytest.raises(StoreError, match="not valid JSON"):
        store.put("https://example.com/mcp", Login(server="docs"))
    assert path.read_text() == deep
