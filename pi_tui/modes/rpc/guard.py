"""Keep stdout for protocol records only.

RPC clients parse every stdout line as JSON, so anything else written there (an extension's
``print()``, a library's warning, a child process that inherited the descriptor) would corrupt the
stream. `guard_stdout` moves the real stdout to a private descriptor for the protocol writer and points
descriptor 1 and ``sys.stdout`` at stderr, where stray output does no harm.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["guard_stdout"]


@contextmanager
def guard_stdout() -> Iterator[int]:
    """Yield the descriptor protocol records go to; stray stdout writes go to stderr meanwhile."""
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        pass
    protocol_fd = os.dup(1)
    saved_fd = os.dup(1)
    saved_stdout = sys.stdout
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        yield protocol_fd
    finally:
        try:
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        sys.stdout = saved_stdout
        os.dup2(saved_fd, 1)
        os.close(saved_fd)
        os.close(protocol_fd)
