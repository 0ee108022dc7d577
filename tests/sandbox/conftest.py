from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .helpers import Box


@pytest.fixture
def box(tmp_path: Path) -> Iterator[Box]:
    project = tmp_path / "project"
    outside = tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    (outside / "keep.txt").write_text("precious\n")
    made = Box(project, outside)
    yield made
    made.sandbox.close()
