"""A worker cancelled before it ran leaves no coroutine that never ran.

The chat started its window's worker with a coroutine made at once; when the worker was cancelled before
its first step (the app closing right after a window was mounted: the session shown as the app quits),
the coroutine was dropped unstarted and Python warned "coroutine ... was never awaited" whenever it was
collected, in a later test under pytest (an error there) or on the terminal. Workers are given the
coroutine function, which Textual calls only when the worker runs."""

from __future__ import annotations

import gc
import warnings

from textual.app import App, ComposeResult

from pi_tui.ai.types import UserMessage
from pi_tui.modes.interactive.chat import ChatLog
from pi_tui.modes.interactive.theme import variable_defaults


class Host(App[None]):
    def get_theme_variable_defaults(self) -> dict[str, str]:
        return {**super().get_theme_variable_defaults(), **variable_defaults()}

    def compose(self) -> ComposeResult:
        yield ChatLog()


async def test_a_window_mounted_as_the_app_closes_leaves_no_coroutine_never_awaited() -> None:
    app = Host()
    async with app.run_test(size=(60, 20)) as pilot:
        chat = app.query_one(ChatLog)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            chat.load([UserMessage(content="hello"), UserMessage(content="again")])  # its worker, made now
            app.workers.cancel_node(chat)  # what the app's exit does, here before the worker ran
            await pilot.pause()
            gc.collect()
        never_ran = [str(w.message) for w in caught if "never awaited" in str(w.message)]
        assert never_ran == []
        assert len(chat.mounted_blocks()) == 2  # the window itself was mounted
