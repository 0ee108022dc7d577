"""Inside tmux with extended-keys off, the app warns about modified Enter keys, as pi 0.87 does."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from pi_tui.modes.interactive.tmux import tmux_keys_warning

Setup = Callable[..., dict[str, str]]


def fake_tmux(tmp_path: Path, extended: str, key_format: str = "csi-u", code: int = 0) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "tmux"
    script.write_text(
        "#!/bin/sh\n"
        f'[ "$1 $2" = "show -gv" ] || exit 2\n'
        f'case "$3" in extended-keys) echo {extended};; extended-keys-format) echo {key_format};; esac\n'
        f"exit {code}\n"
    )
    script.chmod(0o755)
    return {"PATH": f"{bin_dir}:{os.environ.get('PATH', '')}", "TMUX": "/tmp/tmux-1000/default,1,0"}


@pytest.fixture
def in_tmux(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Setup:
    def setup(extended: str, key_format: str = "csi-u", code: int = 0) -> dict[str, str]:
        env = fake_tmux(tmp_path, extended, key_format, code)
        monkeypatch.setenv("PATH", env["PATH"])
        return env

    return setup


async def test_extended_keys_off_gives_pis_advice(in_tmux: Setup) -> None:
    warning = await tmux_keys_warning(in_tmux("off"))
    assert warning is not None
    assert "extended-keys is off" in warning and "set -g extended-keys on" in warning


async def test_xterm_format_gives_the_csi_u_advice(in_tmux: Setup) -> None:
    warning = await tmux_keys_warning(in_tmux("on", "xterm"))
    assert warning is not None and "set -g extended-keys-format csi-u" in warning


async def test_good_settings_outside_tmux_or_no_answer_say_nothing(in_tmux: Setup) -> None:
    env = in_tmux("always")
    assert await tmux_keys_warning(env) is None
    assert await tmux_keys_warning({k: v for k, v in env.items() if k != "TMUX"}) is None


async def test_a_tmux_that_fails_says_nothing(in_tmux: Setup) -> None:
    assert await tmux_keys_warning(in_tmux("off", code=1)) is None
