"""Fixtures for the TUI tests: snapshots must not depend on where the checkout lives or on the day."""

from __future__ import annotations

import datetime as _real_dt
from collections.abc import Iterator
from pathlib import Path

import pytest


class _FixedDate(_real_dt.date):
    @classmethod
    def today(cls) -> _FixedDate:
        return cls(2026, 1, 15)


class _FixedDt:
    date = _FixedDate
    datetime = _real_dt.datetime


@pytest.fixture(autouse=True)
def _stable_system_prompt(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """For snapshot tests: fixed docs paths and date in the system prompt.

    The prompt names this checkout's README.md/docs and today's date, and the footer and /context show
    its token count, so a clone at another path (or another day) drew different numbers.
    """
    if "snap_compare" in request.fixturenames:
        from pi_tui.resources import system_prompt

        monkeypatch.setattr(
            system_prompt,
            "default_docs_paths",
            lambda: [Path("/opt/pi-tui/README.md"), Path("/opt/pi-tui/docs")],
        )
        monkeypatch.setattr(system_prompt, "_dt", _FixedDt)
    yield
