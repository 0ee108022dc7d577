"""Markdown of a short answer is parsed where it is mounted, not in a thread.

Textual's ``Markdown.update`` hands every parse to the event loop's default executor, a thread. For
an answer of a few paragraphs the parse takes well under a millisecond, but the hand-over does not:
the thread has to get the interpreter lock from the busy UI thread (up to the 5 ms switch interval),
its result comes back through the loop's wake-up pipe, and only then are the answer's blocks mounted
and laid out. Reading a long session upwards mounts several answers per key press, so each press
waited for several such round trips, and on a loaded machine each one for the scheduler besides. The
parse holds the interpreter lock all along in either thread, so running it in the loop's thread costs
the UI nothing it did not already pay.

`InlineShortParses` is the loop's default executor in the full-screen app: a markdown-it parse of a
text up to ``INLINE_CHARS`` long runs at once in the calling thread; anything else (a long document,
``asyncio.to_thread`` work) goes to the thread pool as before.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from types import MethodType
from typing import ParamSpec, TypeVar

__all__ = ["INLINE_CHARS", "InlineShortParses", "install_inline_parses"]

INLINE_CHARS = 20_000
"""The longest text parsed in the loop's thread (~5 ms of parsing; a longer one goes to the thread)."""

_T = TypeVar("_T")
_P = ParamSpec("_P")


def _short_parse(fn: object, args: tuple[object, ...]) -> bool:
    """Whether ``fn(*args)`` is a markdown-it parse of a short text (markdown-it is not imported here:
    no parse can come before something else has imported it)."""
    markdown_it = sys.modules.get("markdown_it")
    return (
        markdown_it is not None
        and isinstance(fn, MethodType)
        and fn.__func__ is markdown_it.MarkdownIt.parse
        and len(args) == 1
        and isinstance(args[0], str)
        and len(args[0]) <= INLINE_CHARS
    )


class InlineShortParses(ThreadPoolExecutor):
    """A thread pool that runs short markdown parses at once in the thread that submits them."""

    def submit(self, fn: Callable[_P, _T], /, *args: _P.args, **kwargs: _P.kwargs) -> Future[_T]:
        if kwargs or not _short_parse(fn, args):
            return super().submit(fn, *args, **kwargs)
        done: Future[_T] = Future()
        try:
            done.set_result(fn(*args, **kwargs))
        except BaseException as error:  # handed to the awaiting code, as the pool would
            done.set_exception(error)
        return done


def install_inline_parses() -> None:
    """Make `InlineShortParses` the running loop's default executor (call from the app's loop)."""
    asyncio.get_running_loop().set_default_executor(InlineShortParses(thread_name_prefix="pi-tui-pool"))
