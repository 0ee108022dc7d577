from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_tui.testing import FakeLLM
from tests.e2e.helpers import write_models_json


@pytest.fixture
def fake(agent_dir: Path) -> Iterator[FakeLLM]:
    llm = FakeLLM()
    with llm.serve() as server:
        write_models_json(agent_dir, server)
        yield llm


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path
