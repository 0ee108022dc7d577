"""`workers_done`, the tests' wait for the app's work: a worker replaced by a newer one of its exclusive
group is no error (Textual's ``wait_for_complete`` raised ``WorkerCancelled`` for it, as it did in the
screens' tests whenever the machine was slow enough for a search or a read of rows to be started again),
and a worker that failed still fails the wait."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from textual.app import App
from textual.worker import Worker, WorkerCancelled, WorkerFailed

from .helpers import workers_done


class Searching(App[None]):
    """An app with one exclusive group of workers, each of which waits until the test lets it finish."""

    def __init__(self) -> None:
        super().__init__()
        self.finished: list[str] = []

    def search(self, name: str, go: asyncio.Event) -> Worker[None]:
        async def work() -> None:
            await go.wait()
            self.finished.append(name)

        return self.run_worker(work(), group="search", exclusive=True, exit_on_error=False)


async def _replaced_while_waited_for(app: Searching, wait: Any) -> None:
    first_go, second_go = asyncio.Event(), asyncio.Event()
    app.search("first", first_go)
    waiting = asyncio.ensure_future(wait())
    await asyncio.sleep(0)  # the wait has begun with the first search running
    app.search("second", second_go)  # typed on: the first search is cancelled
    second_go.set()
    await asyncio.wait_for(waiting, 30)


async def test_textual_wait_for_complete_raises_when_a_worker_it_waits_for_is_replaced() -> None:
    app = Searching()
    async with app.run_test():
        with pytest.raises(WorkerCancelled):
            await _replaced_while_waited_for(app, app.workers.wait_for_complete)


async def test_workers_done_waits_for_the_newer_worker_of_the_group() -> None:
    app = Searching()
    async with app.run_test():
        await _replaced_while_waited_for(app, lambda: workers_done(app))
        assert app.finished == ["second"]


async def test_workers_done_fails_when_a_worker_failed() -> None:
    app = Searching()
    async with app.run_test():

        async def broken() -> None:
            raise ValueError("the read failed")

        app.run_worker(broken(), exit_on_error=False)
        with pytest.raises(WorkerFailed, match="the read failed"):
            await workers_done(app)
