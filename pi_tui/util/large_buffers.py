"""Keep large buffers in the heap, so a long conversation's request bodies stop costing page faults.

Every request of a long run builds a body of the whole conversation (a megabyte or more) and the HTTP
layer copies it a few times. glibc serves an allocation above its mmap threshold with fresh pages from
the kernel and hands them back on free; it raises that threshold to the size of a freed block, but a
conversation only grows, so every new body is a little larger than the last and again gets fresh pages:
each request pays a page fault (and the kernel zeroing a page) per 4 KiB of body, several times over.
Measured on a 400-call tool loop: 95,000 page faults, 12,600 with the thresholds fixed, and the late
requests' body encoding ~2× cheaper.

`keep_large_buffers` fixes the mmap threshold at glibc's ceiling (32 MiB) and keeps up to as much free
memory at the top of the heap (instead of trimming at 128 KiB), so freed bodies are reused. It is called
once the requests get large (see `LARGE_REQUEST_TOKENS`), so a short run never loads ``ctypes``. On
anything but glibc it does nothing.
"""

from __future__ import annotations

import sys

__all__ = ["LARGE_REQUEST_TOKENS", "keep_large_buffers"]

# A request of this many estimated tokens has a body of ~128 KiB, glibc's initial mmap threshold.
LARGE_REQUEST_TOKENS = 32_000

_M_TRIM_THRESHOLD = -1  # glibc's mallopt parameter numbers (malloc.h)
_M_MMAP_THRESHOLD = -3
_THRESHOLD = 32 * 1024 * 1024  # glibc's DEFAULT_MMAP_THRESHOLD_MAX on 64-bit systems

_state: list[bool] = []  # [result] once tried


def keep_large_buffers() -> bool:
    """Make glibc keep large freed blocks for reuse (once per process).

    Returns:
        True when glibc accepted the thresholds (now or on an earlier call), False elsewhere.
    """
    if _state:
        return _state[0]
    _state.append(_tune())
    return _state[0]


def _tune() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # no C library to ask, or one without mallopt
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    # mallopt returns 1 on success; musl's stub returns 0 and changes nothing.
    return bool(mallopt(_M_MMAP_THRESHOLD, _THRESHOLD) == 1 and mallopt(_M_TRIM_THRESHOLD, _THRESHOLD) == 1)
