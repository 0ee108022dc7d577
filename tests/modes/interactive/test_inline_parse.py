"""Short markdown is parsed in the UI thread, not handed to a thread and back (each hand-over made a key
press that mounts answers wait for the thread to get the interpreter lock and for the loop's wake-up)."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from textual.widgets import Markdown

from pi_tui.modes.interactive.inline_parse import INLINE_CHARS, InlineShortParses

from .helpers import make_app, until


def _recording_parser(threads: list[int]) -> MarkdownIt:
    """A parser that notes the thread each parse runs in."""
    parser = MarkdownIt("gfm-like")

    def record(_state: StateCore) -> None:
        threads.append(threading.get_ident())

    parser.core.ruler.push("record_thread", record)
    return parser


async def test_the_app_parses_a_short_answer_in_its_own_thread(tmp_path: Path, agent_dir: Path) -> None:
    threads: list[int] = []
    parser = _recording_parser(threads)
    app = make_app(tmp_path, agent_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        block = Markdown("Some *short* answer.", parser_factory=lambda: parser)
        await app.chat.mount(block)
        await until(pilot, lambda: bool(block.children))
        assert threads == [threading.get_ident()]  # was a thread of the pool


async def test_long_texts_and_other_work_still_go_to_the_pool() -> None:
    threads: list[int] = []
    parser = _recording_parser(threads)
    loop = asyncio.get_running_loop()
    with InlineShortParses(max_workers=1) as pool:
        here = threading.get_ident()
        await loop.run_in_executor(pool, parser.parse, "x" * INLINE_CHARS)
        await loop.run_in_executor(pool, parser.parse, "x" * (INLINE_CHARS + 1))
        worker = await loop.run_in_executor(pool, threading.get_ident)
        assert threads == [here, worker]
        assert worker != here


async def test_a_parse_that_fails_raises_where_it_is_awaited() -> None:
    parser = MarkdownIt("gfm-like")

    def broken(_state: StateCore) -> None:
        raise ValueError("bad rule")

    parser.core.ruler.push("broken", broken)
    with InlineShortParses(max_workers=1) as pool, pytest.raises(ValueError, match="bad rule"):
        await asyncio.get_running_loop().run_in_executor(pool, parser.parse, "text")
