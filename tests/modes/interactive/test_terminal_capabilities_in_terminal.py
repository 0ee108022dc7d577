"""What pi-tui writes to the terminal for pi's terminal settings, read from the raw bytes of a real pty:
``terminal.showTerminalProgress`` (OSC 9;4 around a run, cleared after), ``terminal.hyperlinks`` /
``PI_HYPERLINKS`` (OSC 8 links instead of the address in parentheses, and a read card's path linked to
its ``file://`` address) and ``terminal.trueColor`` /
``PI_TRUE_COLOR`` (24-bit colour sequences or 256-colour ones, whatever ``COLORTERM`` says)."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

from bench.pty_screen import PtyScreen
from pi_tui.testing import FakeLLM, Reply, text, tool_call

from .test_real_terminal import _env

pytestmark = pytest.mark.slow

ACTIVE = b"\x1b]9;4;3\x07"
CLEAR = b"\x1b]9;4;0\x07"
URL = "https://example.com/guide"
ANSWER = f"Read the [guide]({URL}) first, then finish."
LINK = b"\x1b]8;id="  # Textual writes an id with each OSC 8 link
TRUE_COLOR = b"38;2;"  # a 24-bit foreground colour
READ_PATH = "notes dir/été.md"  # pi's address for it: the absolute path, %20 for the space, é as UTF-8 bytes
ENCODED = "/notes%20dir/%C3%A9t%C3%A9.md"


def _run(home: Path, project: Path, settings: Mapping[str, object], extra_env: dict[str, str]) -> tuple[bytes, str]:
    """Start pi-tui with ``settings`` and ``extra_env``, ask one question, wait for the answer and the
    run's end, quit; the bytes written and the screen with the answer."""
    agent_dir = home / ".pi" / "agent"
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "settings.json").write_text(json.dumps(settings))
    fake = FakeLLM()
    (project / "notes dir").mkdir()
    (project / READ_PATH).write_text("notes\n")
    fake.script([Reply([tool_call("read", {"path": READ_PATH})]), Reply([text(ANSWER)])])
    with fake.serve() as server:
        env = {**_env(home, agent_dir, server), **extra_env}
        argv = [sys.executable, "-m", "pi_tui", "--provider", "fake", "--model", "claude-fake"]
        with PtyScreen(argv, cwd=project, env=env, columns=100, lines=30) as term:
            term.wait_for("claude-fake", timeout=30)
            term.send("go")
            term.wait_for("go")
            term.send("\r")
            term.wait_for("then finish.", timeout=30)
            term.wait_for(lambda s: "Working" not in s, timeout=20)  # the run is over
            screen = term.text()
            term.send("\x04")
            assert term.wait_exit(timeout=20) == 0
            return bytes(term.transcript), screen


def test_settings_turn_on_progress_links_and_true_colour(tmp_path: Path, isolated_home: Path) -> None:
    settings = {"terminal": {"showTerminalProgress": True, "hyperlinks": True, "trueColor": True}}
    # The environment says the opposite: the settings win over it, as in pi.
    out, screen = _run(isolated_home, tmp_path, settings, {"PI_HYPERLINKS": "0", "PI_TRUE_COLOR": "0"})
    first_active = out.find(ACTIVE)
    assert first_active != -1, "no OSC 9;4;3 while the agent worked"
    assert out.find(CLEAR, first_active) != -1, "the progress indicator was never cleared"
    assert out.rfind(CLEAR) > out.rfind(ACTIVE)  # its last state is "cleared"
    assert LINK in out and URL.encode() in out  # the link is an OSC 8 link ...
    assert f"({URL})" not in screen  # ... so its address is not written after its text
    # The read card's path is a link to the file: OSC 8 with its file:// address, then the path as shown
    file_link = f";file://{tmp_path}{ENCODED}\x1b\\".encode()
    at = out.find(file_link)
    assert at != -1 and out.rfind(LINK, 0, at) > at - 40, "the read card's path is no OSC 8 link"
    linked = out[at + len(file_link) : out.find(b"\x1b]8;;\x1b\\", at)]  # up to the link's end
    assert re.sub(rb"\x1b\[[0-9;]*m", b"", linked) == READ_PATH.encode(), out[at : at + 200]  # colours aside
    assert f"read {READ_PATH}" in screen
    assert TRUE_COLOR in out  # TERM=xterm-256color without COLORTERM would mean 256 colours


def test_without_settings_the_variables_decide_and_progress_stays_off(tmp_path: Path, isolated_home: Path) -> None:
    # COLORTERM says 24-bit colour; PI_TRUE_COLOR=0 overrides it. No link unless PI_HYPERLINKS says so.
    out, screen = _run(isolated_home, tmp_path, {}, {"COLORTERM": "truecolor", "PI_TRUE_COLOR": "0"})
    assert b"\x1b]9;4;" not in out  # terminal progress is off by default
    assert LINK not in out and b"file://" not in out  # nor is the read card's path a link
    assert f"read {READ_PATH}" in screen
    assert f"guide ({URL})" in screen  # pi's way without OSC 8: the address after the text
    assert TRUE_COLOR not in out and b"38;5;" in out  # 256 colours
