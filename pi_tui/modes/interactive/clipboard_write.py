"""Text to the system clipboard (``/copy``, a copied selection), the way pi 0.87.1 decides.

A native writer runs first when the session has one: ``pbcopy`` on macOS, ``clip`` on Windows, and on Linux
``termux-clipboard-set`` (Termux), ``wl-copy`` (Wayland) or ``xclip``/``xsel`` (X11), chosen by the
environment and tried in that order. The terminal's OSC 52 sequence is sent as well over SSH/mosh (it is the
only way to reach the clipboard of the machine the user sits at), and instead where nothing else can work:
a Linux session with no display at all (a container, a console). On a desktop with a display the sequence
cannot be checked, so a missing or failing writer is reported rather than hidden behind it. Under WSL the
Windows clipboard is written through PowerShell (or OSC 52 in Windows Terminal) when no Linux writer did.

Every helper process has a time limit and is killed when it runs over, so a stuck clipboard never hangs
the app.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import sys
import tempfile
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path

__all__ = ["ClipboardUnavailable", "copy_text", "native_writers"]

MAX_OSC52_ENCODED = 100_000
"""The largest OSC 52 payload (base64 characters) sent; terminals drop or truncate longer ones."""

WRITER_TIMEOUT = 5.0
"""Seconds a clipboard writer may take before it is killed and counted as failed."""


class ClipboardUnavailable(Exception):
    """No way to put the text on the clipboard worked; the message says what to install or check."""


def native_writers(env: Mapping[str, str], platform: str) -> list[list[str]]:
    """The clipboard writer commands to try, in order, for this platform and environment."""
    if platform == "darwin":
        return [["pbcopy"]]
    if platform == "win32":
        return [["clip"]]
    writers: list[list[str]] = []
    if env.get("TERMUX_VERSION"):
        writers.append(["termux-clipboard-set"])
    if env.get("WAYLAND_DISPLAY"):
        writers.append(["wl-copy"])
    if env.get("DISPLAY"):
        writers += [["xclip", "-selection", "clipboard"], ["xsel", "--clipboard", "--input"]]
    return writers


def _is_remote(env: Mapping[str, str]) -> bool:
    return bool(env.get("SSH_CONNECTION") or env.get("SSH_CLIENT") or env.get("MOSH_CONNECTION"))


def _is_wsl(env: Mapping[str, str]) -> bool:
    if env.get("WSL_DISTRO_NAME") or env.get("WSLENV"):
        return True
    try:
        release = Path("/proc/version").read_text(encoding="utf-8", errors="replace").lower()
    except OSError:
        return False
    return "microsoft" in release or "wsl" in release


async def _run(
    argv: list[str], stdin: bytes | None, *, timeout: float, env: Mapping[str, str]
) -> bytes | None:
    """Run ``argv`` feeding it ``stdin``; its output when it exits 0 in time, else None.

    A writer is given no output pipe (``xclip`` and ``wl-copy`` leave a process behind that owns the
    selection, and it would hold a pipe open); only a command that reads (no ``stdin``) gets one.
    """
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL if stdin is not None else asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env=dict(env),
        )
    except OSError:  # not installed, not executable
        return None
    try:
        output, _ = await asyncio.wait_for(process.communicate(stdin), timeout)
    except (TimeoutError, BrokenPipeError, ConnectionResetError):
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()
        return None
    return (output or b"") if process.returncode == 0 else None


async def _copy_via_windows(text: str, env: Mapping[str, str]) -> bool:
    """WSL without a Linux display: PowerShell sets the Windows clipboard from a UTF-8 file (piped text
    would be decoded with the console code page and lose non-ASCII characters)."""
    path = Path(tempfile.gettempdir()) / f"pi-wsl-clip-{uuid.uuid4()}.txt"
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        converted = await _run(["wslpath", "-w", str(path)], None, timeout=1.0, env=env)
        windows_path = converted.decode("utf-8", "replace").strip() if converted else ""
        if not windows_path:
            return False
        quoted = windows_path.replace("'", "''")
        script = (
            f"Set-Clipboard -Value ([System.IO.File]::ReadAllText('{quoted}', [System.Text.Encoding]::UTF8))"
        )
        done = await _run(["powershell.exe", "-NoProfile", "-Command", script], b"", timeout=5.0, env=env)
        return done is not None
    except OSError:
        return False
    finally:
        with contextlib.suppress(OSError):
            path.unlink()


async def copy_text(
    text: str,
    send_osc52: Callable[[str], None],
    *,
    env: Mapping[str, str] | None = None,
    platform: str | None = None,
    timeout: float = WRITER_TIMEOUT,
) -> None:
    """Put ``text`` on the system clipboard.

    Args:
        text: What to copy.
        send_osc52: Writes the OSC 52 sequence for a text to the terminal (called only when it is used).
        env: The environment that decides the route (default: this process's).
        platform: ``sys.platform`` to decide for (default: this one).
        timeout: Seconds each helper process may take.

    Raises:
        ClipboardUnavailable: Nothing could take the text; the message names what to install or check.
    """
    env = os.environ if env is None else env
    platform = sys.platform if platform is None else platform
    linux = platform.startswith("linux")
    encoded_size = len(base64.b64encode(text.encode("utf-8")))
    payload = text.encode("utf-8")

    copied = False
    for argv in native_writers(env, platform):
        if await _run(argv, payload, timeout=timeout, env=env) is not None:
            copied = True
            break

    def osc52() -> bool:
        if encoded_size > MAX_OSC52_ENCODED:
            return False
        send_osc52(text)
        return True

    osc52_sent = False
    if not copied and linux and _is_wsl(env):
        # Windows Terminal reads OSC 52, which is quicker than the PowerShell round trip.
        if env.get("WT_SESSION"):
            osc52_sent = osc52()
        copied = osc52_sent or await _copy_via_windows(text, env)

    headless = (
        linux and not env.get("DISPLAY") and not env.get("WAYLAND_DISPLAY") and not env.get("TERMUX_VERSION")
    )
    too_large = False
    if not osc52_sent and (_is_remote(env) or (not copied and headless)):
        if osc52():
            copied = True
        else:
            too_large = True
    if copied:
        return
    if too_large:
        raise ClipboardUnavailable(
            "Clipboard unavailable: the text is too large for the terminal's OSC 52 copy"
        )
    if linux and env.get("TERMUX_VERSION"):
        raise ClipboardUnavailable(
            "Clipboard unavailable: install the Termux:API app and the termux-api package"
        )
    if linux and env.get("WAYLAND_DISPLAY"):
        raise ClipboardUnavailable(
            "Clipboard unavailable: install wl-clipboard (wl-copy) or check Wayland access"
        )
    if linux and env.get("DISPLAY"):
        raise ClipboardUnavailable("Clipboard unavailable: install xclip or xsel, or check X11 access")
    raise ClipboardUnavailable("Clipboard unavailable")
