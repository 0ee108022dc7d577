"""Problems found while loading resources, kept for the UI instead of being raised."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

DiagnosticKind = Literal["warning", "collision"]


@dataclass(frozen=True)
class ResourceDiagnostic:
    """One problem with a resource file.

    Attributes:
        kind: ``"warning"`` for a file that loaded with problems or was skipped, ``"collision"`` when
            a second resource with an already-used name was dropped.
        message: What is wrong, in words a user can act on.
        path: The file the problem is about, when there is one.
        resource_type: ``"skill"``, ``"prompt"``, ``"context"``, ``"settings"``, ``"system"``.
        winner_path: For collisions, the file that was kept.
    """

    kind: DiagnosticKind
    message: str
    path: Path | None = None
    resource_type: str = ""
    winner_path: Path | None = None

    def __str__(self) -> str:
        where = f"{self.path}: " if self.path is not None else ""
        text = f"{where}{self.message}"
        if self.kind == "collision" and self.winner_path is not None:
            text += f" (kept {self.winner_path})"
        return text
