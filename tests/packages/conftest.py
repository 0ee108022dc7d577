from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


@pytest.fixture(autouse=True)
def forget_package_imports(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Packages put their folders on sys.path and import from tmp_path: undo both after each test."""
    import sys

    path_before = list(sys.path)
    yield
    sys.path[:] = path_before
    root = str(tmp_path_factory.getbasetemp())
    for name, module in list(sys.modules.items()):
        if (getattr(module, "__file__", None) or "").startswith(root):
            del sys.modules[name]
