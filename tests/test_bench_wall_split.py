"""`bench.wall_split` splits a real resume's wall time at the moment the fake server decides."""

from __future__ import annotations

import sys

import pytest

from bench.targets import PI_TUI
from bench.wall_split import split_once


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_resume_is_split_into_the_programs_time_the_servers_and_the_exit() -> None:
    row = split_once("1k", PI_TUI)
    assert row["client_cpu"] > 0  # the program's threads were found and read
    assert row["server_cpu"] > 0
    assert 0 < row["decided_at"] < row["wall"]
    assert row["after"] == pytest.approx(row["wall"] - row["decided_at"])
    # the threads read are the program's own: their time on a CPU is within its whole CPU (loosely:
    # the two counts are kept differently by the kernel)
    assert row["client_cpu"] <= row["cpu"] * 1.5 + 0.1
