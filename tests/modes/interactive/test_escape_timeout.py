"""``PI_TUI_ESC_TIMEOUT`` (pi's variable) sets Textual's lone-Escape wait, without leaking ``ESCDELAY``."""

from __future__ import annotations

import json
import os
import subprocess
import sys

PROBE = """
import json, os
from pi_tui.modes.interactive.escape_timeout import apply_escape_timeout
applied = apply_escape_timeout()
import textual.constants
print(json.dumps([applied, textual.constants.ESCAPE_DELAY, os.environ.get("ESCDELAY")]))
"""


def _probe(value: str | None) -> list[object]:
    env = {k: v for k, v in os.environ.items() if k not in ("ESCDELAY", "PI_TUI_ESC_TIMEOUT")}
    if value is not None:
        env["PI_TUI_ESC_TIMEOUT"] = value
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=50)
    assert out.returncode == 0, out.stderr
    result: list[object] = json.loads(out.stdout)
    return result


def test_the_variable_sets_the_wait_and_leaves_no_escdelay_behind() -> None:
    assert _probe("250") == [True, 0.25, None]


def test_unset_or_unusable_values_keep_textuals_default() -> None:
    assert _probe(None) == [False, 0.1, None]
    assert _probe("soon") == [False, 0.1, None]
