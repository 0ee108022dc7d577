"""A notice about an untrusted project says what the user can do in the mode they are in: ``/trust`` in
the full-screen app (pi's wording), the command-line flags in print, JSON, RPC and the line mode."""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_tui.args import parse_args
from pi_tui.extensions.setup import untrusted_notice
from pi_tui.resources.trust_hint import COMMAND_HINT, FLAG_HINT, full_screen, trust_hint


@pytest.mark.parametrize(
    ("argv", "app"),
    [([], True), (["-p", "hi"], False), (["--mode", "rpc"], False), (["--mode", "json"], False), (["--plain"], False)],
)
def test_only_the_full_screen_app_is_told_to_use_slash_trust(argv: list[str], app: bool) -> None:
    args = parse_args(argv)
    assert full_screen(args) is app
    assert trust_hint(full_screen(args)) == (COMMAND_HINT if app else FLAG_HINT)


def test_the_skipped_extensions_notice_names_what_the_mode_offers(tmp_path: Path) -> None:
    skipped = [tmp_path / ".pi" / "extensions" / "evil.py"]
    in_app = untrusted_notice(tmp_path, skipped, True)
    assert "evil.py" in in_app and "Use /trust to save a trust decision, then restart pi-tui." in in_app
    assert "--" not in in_app
    elsewhere = untrusted_notice(tmp_path, skipped, False)
    assert "--approve" in elsewhere and "--trust-project" in elsewhere and "/trust " not in elsewhere
