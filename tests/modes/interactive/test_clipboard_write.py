"""Copying to the system clipboard as pi 0.87.1 does: the session's native writer first (found by the
environment and PATH), the terminal's OSC 52 over SSH or where there is no display, a clear error otherwise,
and never a hang on a writer that does not finish."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import pytest

from pi_tui.modes.interactive.clipboard_write import ClipboardUnavailable, copy_text


def fake_tool(bin_dir: Path, name: str, body: str) -> Path:
    """A stand-in clipboard command: a shell script that records its arguments and stdin next to itself."""
    bin_dir.mkdir(exist_ok=True)
    record = bin_dir / f"{name}.stdin"
    script = bin_dir / name
    script.write_text(f'#!/bin/sh\necho "$@" > "{record}.args"\n{body.format(record=record)}\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return record


RECORDS = 'cat > "{record}"'


def env_with(bin_dir: Path, **extra: str) -> dict[str, str]:
    return {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": os.environ["HOME"], **extra}


async def test_wayland_copies_with_wl_copy_and_sends_no_osc52(tmp_path: Path) -> None:
    record = fake_tool(tmp_path / "bin", "wl-copy", RECORDS)
    sent: list[str] = []
    await copy_text("héllo\nworld", sent.append, env=env_with(tmp_path / "bin", WAYLAND_DISPLAY="wayland-0"))
    assert record.read_text(encoding="utf-8") == "héllo\nworld"
    assert sent == []  # the terminal cannot race the native writer


async def test_x11_copies_with_xclip_to_the_clipboard_selection(tmp_path: Path) -> None:
    record = fake_tool(tmp_path / "bin", "xclip", RECORDS)
    sent: list[str] = []
    await copy_text("answer", sent.append, env=env_with(tmp_path / "bin", DISPLAY=":0"))
    assert record.read_text() == "answer"
    assert Path(f"{record}.args").read_text().split() == ["-selection", "clipboard"]
    assert sent == []


async def test_a_failing_xclip_falls_back_to_xsel(tmp_path: Path) -> None:
    fake_tool(tmp_path / "bin", "xclip", "exit 1")
    record = fake_tool(tmp_path / "bin", "xsel", RECORDS)
    await copy_text("answer", [].append, env=env_with(tmp_path / "bin", DISPLAY=":0"))
    assert record.read_text() == "answer"


async def test_over_ssh_the_native_copy_and_osc52_both_happen(tmp_path: Path) -> None:
    record = fake_tool(tmp_path / "bin", "xclip", RECORDS)
    sent: list[str] = []
    env = env_with(tmp_path / "bin", DISPLAY="localhost:10.0", SSH_CONNECTION="10.0.0.2 5555 10.0.0.1 22")
    await copy_text("answer", sent.append, env=env)
    assert record.read_text() == "answer"
    assert sent == ["answer"]  # the user's own machine gets it through the terminal


async def test_without_a_display_osc52_is_the_route(tmp_path: Path) -> None:
    sent: list[str] = []
    await copy_text("answer", sent.append, env=env_with(tmp_path / "bin"), platform="linux")
    assert sent == ["answer"]


async def test_a_display_without_a_writer_is_reported_not_hidden_behind_osc52(tmp_path: Path) -> None:
    sent: list[str] = []
    with pytest.raises(ClipboardUnavailable, match="install xclip or xsel"):
        await copy_text("answer", sent.append, env=env_with(tmp_path / "bin", DISPLAY=":0"), platform="linux")
    with pytest.raises(ClipboardUnavailable, match="wl-clipboard"):
        await copy_text(
            "answer", sent.append, env=env_with(tmp_path / "bin", WAYLAND_DISPLAY="w"), platform="linux"
        )
    assert sent == []


async def test_osc52_too_large_for_the_terminal_is_an_error_not_a_silent_loss(tmp_path: Path) -> None:
    sent: list[str] = []
    with pytest.raises(ClipboardUnavailable, match="too large"):
        await copy_text("x" * 80_000, sent.append, env=env_with(tmp_path / "bin"), platform="linux")
    assert sent == []


async def test_a_writer_that_never_finishes_is_killed_and_the_next_one_tried(tmp_path: Path) -> None:
    fake_tool(tmp_path / "bin", "xclip", "exec sleep 30")
    record = fake_tool(tmp_path / "bin", "xsel", RECORDS)
    started = time.monotonic()
    await copy_text("answer", [].append, env=env_with(tmp_path / "bin", DISPLAY=":0"), timeout=0.5)
    assert time.monotonic() - started < 10
    assert record.read_text() == "answer"


async def test_a_writer_that_leaves_a_process_owning_the_selection_returns_at_once(tmp_path: Path) -> None:
    # xclip and wl-copy fork a child that keeps the selection (and the parent's descriptors) alive
    record = fake_tool(tmp_path / "bin", "wl-copy", 'cat > "{record}"; (sleep 30 &) ; exit 0')
    started = time.monotonic()
    await copy_text("answer", [].append, env=env_with(tmp_path / "bin", WAYLAND_DISPLAY="w"), timeout=20)
    assert time.monotonic() - started < 10
    assert record.read_text() == "answer"
