"""The CLI holds the cyclic collector off during start-up, then freezes what start-up built (issue #12).

A one-turn answer must end with the collector on again (a long run needs it) and start-up's objects
frozen; an embedding caller's ``main(argv)`` leaves the caller's collector alone.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

# Runs pi-tui the way the console script does (``main()`` with no argv), or as an embedding caller
# would (``main(argv)``), and reports from an atexit hook, after the answer, whether the collector is
# on and how many objects are frozen. The console script's print run ends the process inside
# ``main()`` once the hooks have run (`pi_tui.util.quick_exit`): its status is the process's.
_RUN = """
import atexit, gc, json, sys
from pi_tui.cli import main
seen = {}
atexit.register(lambda: print(json.dumps({"enabled": gc.isenabled(), "frozen": gc.get_freeze_count(), **seen})))
sys.argv = ["pi-tui", *sys.argv[1:]]
if {embedded}:
    code = main(sys.argv[1:])
else:
    code = main()
seen["code"] = code
"""


def _run(tmp_path: Path, embedded: bool) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}
    done = subprocess.run(
        [sys.executable, "-c", _RUN.replace("{embedded}", str(embedded)), "--provider", "faux", "-p", "hi"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=50,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    result.setdefault("code", done.returncode)
    return result


def test_a_print_run_freezes_start_up_and_collects_again_afterwards(tmp_path: Path) -> None:
    result = _run(tmp_path, embedded=False)
    assert result["code"] == 0
    assert result["enabled"] is True
    assert isinstance(result["frozen"], int) and result["frozen"] > 10_000  # modules, classes, settings, ...


def test_an_embedding_caller_keeps_its_collector_as_it_was(tmp_path: Path) -> None:
    result = _run(tmp_path, embedded=True)
    assert result["code"] == 0
    assert result["enabled"] is True and result["frozen"] == 0
