"""`keep_large_buffers`: growing megabyte buffers stop faulting in fresh pages (glibc only)."""

from __future__ import annotations

import platform
import subprocess
import sys
from pathlib import Path

import pytest

import pi_tui

# Builds 60 buffers of a megabyte and more, each a little larger than the last (as the request bodies of
# a growing conversation are) and freed before the next, and prints the page faults that took.
_GROWING = """
import resource, sys
sys.path.insert(0, {root!r})
if {tune}:
    from pi_tui.util.large_buffers import keep_large_buffers
    assert keep_large_buffers()
parts = [b"x" * 4096] * 256
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for n in range(60):
    body = b"".join(parts + [b"y" * (n * 8192)])
    del body
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""

glibc = pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc", reason="glibc's malloc only"
)


def _faults(tune: bool) -> int:
    root = str(Path(pi_tui.__file__).resolve().parent.parent)
    script = _GROWING.format(root=root, tune=tune)
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=30
    )
    return int(done.stdout.strip())


@glibc
def test_growing_buffers_reuse_the_heap_once_tuned() -> None:
    plain, tuned = _faults(False), _faults(True)
    # Untuned: ~260 faults per buffer (every page of each fresh mapping). Tuned: the freed block is reused.
    assert plain > 60 * 200, plain
    assert tuned < plain // 10, (plain, tuned)
