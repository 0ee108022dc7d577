from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from pi_tui.testing import FakeLLM
from tests.e2e.helpers import write_models_json


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


@pytest.fixture
def serve(agent_dir: Path) -> Iterator[Callable[..., FakeLLM]]:
    """Start a fake LLM whose window is ``context_window`` and point models.json at it.

    ``model_window`` is what models.json tells pi-tui (default: the same window).
    """
    with ExitStack() as stack:

        def start(
            context_window: int = 200_000, model_window: int | None = None, **kwargs: object
        ) -> FakeLLM:
            fake = FakeLLM(context_window=context_window, **kwargs)  # type: ignore[arg-type]
            server = stack.enter_context(fake.serve())
            write_models_json(agent_dir, server, context_window=model_window or context_window)
            return fake

        yield start
