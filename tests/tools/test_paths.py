from __future__ import annotations

import unicodedata
from pathlib import Path

from pi_tui.tools.paths import normalize_path_input, resolve_read_path, resolve_to_cwd


def test_relative_paths_resolve_against_cwd(tmp_path: Path) -> None:
    assert resolve_to_cwd("src/a.py", tmp_path) == tmp_path / "src" / "a.py"
    assert resolve_to_cwd("src/../b.py", tmp_path) == tmp_path / "b.py"


def test_absolute_paths_ignore_cwd(tmp_path: Path) -> None:
    assert resolve_to_cwd("/etc/hosts", tmp_path) == Path("/etc/hosts")


def test_leading_at_sign_is_stripped(tmp_path: Path) -> None:
    assert resolve_to_cwd("@notes.md", tmp_path) == tmp_path / "notes.md"


def test_tilde_expands_to_home(isolated_home: Path, tmp_path: Path) -> None:
    assert resolve_to_cwd("~", tmp_path) == isolated_home
    assert resolve_to_cwd("~/x.txt", tmp_path) == isolated_home / "x.txt"
    assert resolve_to_cwd("@~/x.txt", tmp_path) == isolated_home / "x.txt"


def test_unicode_spaces_become_plain_spaces() -> None:
    for space in ("\u00a0", "\u2003", "\u202f", "\u3000"):
        assert normalize_path_input(f"my{space}file.txt") == "my file.txt"


def test_file_urls_become_paths() -> None:
    assert normalize_path_input("file:///tmp/a%20b.txt") == "/tmp/a b.txt"


def test_read_path_prefers_the_exact_file(tmp_path: Path) -> None:
    (tmp_path / "plain.txt").write_text("x")
    assert resolve_read_path("plain.txt", tmp_path) == tmp_path / "plain.txt"


def test_read_path_finds_macos_narrow_nbsp_before_am_pm(tmp_path: Path) -> None:
    on_disk = tmp_path / "Screenshot 2024-01-02 at 10.11.12\u202fAM.png"
    on_disk.write_bytes(b"x")
    assert resolve_read_path("Screenshot 2024-01-02 at 10.11.12 AM.png", tmp_path) == on_disk


def test_read_path_finds_decomposed_unicode_names(tmp_path: Path) -> None:
    on_disk = tmp_path / unicodedata.normalize("NFD", "café.txt")
    on_disk.write_text("x")
    assert resolve_read_path(unicodedata.normalize("NFC", "café.txt"), tmp_path) == on_disk


def test_read_path_finds_curly_apostrophes(tmp_path: Path) -> None:
    on_disk = tmp_path / "Capture d\u2019ecran.png"
    on_disk.write_bytes(b"x")
    assert resolve_read_path("Capture d'ecran.png", tmp_path) == on_disk


def test_read_path_finds_decomposed_names_with_curly_apostrophes(tmp_path: Path) -> None:
    on_disk = tmp_path / unicodedata.normalize("NFD", "Capture d\u2019écran.png")
    on_disk.write_bytes(b"x")
    assert resolve_read_path("Capture d'écran.png", tmp_path) == on_disk


def test_read_path_falls_back_to_the_plain_resolution(tmp_path: Path) -> None:
    assert resolve_read_path("missing it's.txt", tmp_path) == tmp_path / "missing it's.txt"
