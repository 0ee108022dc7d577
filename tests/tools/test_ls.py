from __future__ import annotations

from pathlib import Path

from pi_tui.tools.ls import create_ls_tool

from .helpers import run, run_error, run_text


async def test_entries_are_sorted_case_insensitively_with_dotfiles_and_dir_slashes(tmp_path: Path) -> None:
    for name in ("b", "A", "c", ".hidden"):
        (tmp_path / name).write_text("")
    (tmp_path / "Dir").mkdir()
    assert await run_text(create_ls_tool(tmp_path), {}) == ".hidden\nA\nb\nc\nDir/"


async def test_ls_shows_gitignored_entries(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("secret\n")
    (tmp_path / "secret").write_text("")
    assert await run_text(create_ls_tool(tmp_path), {"path": "."}) == ".gitignore\nsecret"


async def test_an_empty_directory(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    assert await run_text(create_ls_tool(tmp_path), {"path": "empty"}) == "(empty directory)"


async def test_a_missing_path_is_an_error(tmp_path: Path) -> None:
    error = await run_error(create_ls_tool(tmp_path), {"path": "nope"})
    assert str(error) == f"Path not found: {tmp_path / 'nope'}"


async def test_a_file_is_not_a_directory(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("")
    error = await run_error(create_ls_tool(tmp_path), {"path": "f.txt"})
    assert str(error) == f"Not a directory: {tmp_path / 'f.txt'}"


async def test_entry_limit_with_notice(tmp_path: Path) -> None:
    for name in ("a", "b", "c"):
        (tmp_path / name).write_text("")
    result = await run(create_ls_tool(tmp_path), {"limit": 2})
    assert result.content[0].text == "a\nb\n\n[2 entries limit reached. Use limit=4 for more]"
    assert result.details == {"entryLimitReached": 2}


async def test_exactly_limit_entries_is_not_a_limit_hit(tmp_path: Path) -> None:
    for name in ("a", "b"):
        (tmp_path / name).write_text("")
    assert await run_text(create_ls_tool(tmp_path), {"limit": 2}) == "a\nb"


async def test_symlinks_to_directories_get_a_slash_and_broken_links_are_left_out(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    (tmp_path / "broken").symlink_to(tmp_path / "nowhere")
    assert await run_text(create_ls_tool(tmp_path), {}) == "link/\nreal/"
