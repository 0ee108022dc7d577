from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# Planted hangs, run by a pytest of their own under tests/timeouts.py with a 2 s limit (8 s for the Textual
# app: on a busy machine its start alone may take seconds, and the limit must strike in the handler). The
# limits are what this test waits for, on one of the suite's two workers: keep them short.
HANGS = """
from __future__ import annotations

import asyncio
import contextlib
import time

import pytest
from textual import events
from textual.app import App


class StuckOnKey(App[None]):
    def on_key(self, event: events.Key) -> None:
        while True:  # a handler that never returns, in the app's own task
            time.sleep(0.01)


@pytest.mark.timeout(8)
async def test_textual_handler_stuck() -> None:
    async with StuckOnKey().run_test() as pilot:
        await pilot.press("a")


async def test_awaits_forever() -> None:
    await asyncio.Event().wait()


def test_swallows_the_timeout() -> None:
    with contextlib.suppress(BaseException):
        time.sleep(30)


def test_after_the_hangs_runs_as_usual() -> None:
    assert True
"""

NEVER_ENDS = """
import time


def test_never_ends() -> None:
    while True:
        try:
            time.sleep(0.05)
        except BaseException:
            pass
"""


def _run_pytest(
    folder: Path, limit: int, grace: int, *args: str
) -> tuple[subprocess.CompletedProcess[str], float]:
    (folder / "conftest.py").write_text('pytest_plugins = ["tests.timeouts"]\n')
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("PYTEST_XDIST_WORKER", None)
    start = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "--rootdir", str(folder),
         "-o", "asyncio_mode=auto", "-o", f"timeout={limit}", "-o", f"timeout_grace={grace}", *args],
        cwd=folder, env=env, capture_output=True, text=True, timeout=100, check=False,
    )  # fmt: skip
    return result, time.monotonic() - start


@pytest.mark.slow
@pytest.mark.timeout(120)  # three planted hangs of 2-8 s each in a pytest of their own
def test_a_hung_test_fails_at_its_limit_with_where_it_was_stuck(tmp_path: Path) -> None:
    (tmp_path / "test_hangs.py").write_text(HANGS)
    # a grace long enough for the failed teardown to be reported on a busy machine
    result, _ = _run_pytest(tmp_path, 2, 10, "--junitxml", str(tmp_path / "report.xml"), "test_hangs.py")
    output = result.stdout + result.stderr
    cases = {case.get("name"): case for case in ET.parse(tmp_path / "report.xml").getroot().iter("testcase")}
    for name, limit in (
        ("test_textual_handler_stuck", 8),
        ("test_awaits_forever", 2),
        ("test_swallows_the_timeout", 2),
    ):
        case = cases[name]
        failure = case.find("failure")
        assert failure is not None, f"{name} did not fail:\n{output[-4000:]}"
        assert f"test_hangs.py::{name} ran past its time limit of {limit} s" in (
            failure.get("message") or ""
        ), output
        # the limit, not a later wait (a Textual pilot gives up after 30 s), ended it
        assert float(case.get("time") or 0) < limit + 5, f"{name} took {case.get('time')} s"
    stuck = cases["test_textual_handler_stuck"].find("failure")
    assert stuck is not None
    assert re.search(r"main thread: \S*test_hangs\.py:\d+ in on_key", stuck.text or ""), stuck.text
    forever = cases["test_awaits_forever"].find("failure")
    assert forever is not None
    assert re.search(r"task \S+: \S*test_hangs\.py:\d+ in test_awaits_forever", forever.text or ""), (
        forever.text
    )
    assert cases["test_after_the_hangs_runs_as_usual"].find("failure") is None, output[-4000:]


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_a_test_that_keeps_running_past_its_limit_ends_its_process(tmp_path: Path) -> None:
    (tmp_path / "test_never.py").write_text(NEVER_ENDS)
    result, took = _run_pytest(tmp_path, 1, 1, "test_never.py")
    assert result.returncode != 0
    assert "test_never.py::test_never_ends ran past its time limit of 1 s" in result.stderr, result.stderr
    assert "did not end within its grace; ending this process" in result.stderr
    # the limit (1 s) and the grace (1 s) after it, plus pytest's start-up (seconds on a busy machine)
    assert took < 45, took
