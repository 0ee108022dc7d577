"""Submitted prompts, remembered per project across runs (the editor's Up/Down history).

Shared by every interactive front end (the Textual TUI and the ``--plain`` line mode), so a prompt typed in
one is recalled in the other. pi keeps the last 100 prompts in memory only; we keep them on disk per project.

File (the format the TUI editor's history uses, so both read and write the same file):
``<agent dir>/prompt-history/<first 16 hex digits of sha1(str(cwd))>.jsonl``, one JSON string per line,
oldest first. Consecutive duplicates are not stored. Lines that do not parse are skipped, so a torn last
line (a crash mid-write) loses only that prompt. The file is rewritten down to `MAX_ENTRIES` when it grows
past twice that.
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path

from pi_tui.util import json_safe

__all__ = ["PromptHistory", "MAX_ENTRIES", "history_path"]

log = logging.getLogger(__name__)

MAX_ENTRIES = 100
"""How many prompts are recalled (pi's in-memory limit)."""


def history_path(cwd: str | Path, agent_dir: Path | None = None) -> Path:
    """Where the prompt history of the project at ``cwd`` lives (not created here)."""
    from pi_tui.ai.paths import agent_dir as default_agent_dir

    base = agent_dir if agent_dir is not None else default_agent_dir()
    digest = hashlib.sha1(str(cwd).encode()).hexdigest()[:16]
    return base / "prompt-history" / f"{digest}.jsonl"


class PromptHistory:
    """The prompts submitted in one project, oldest first.

    Args:
        path: The JSONL file (see `history_path`); None keeps the history in memory only
            (``--no-session`` runs, tests).
        limit: How many prompts to keep.
    """

    def __init__(self, path: Path | None, *, limit: int = MAX_ENTRIES) -> None:
        self.path = path
        self.limit = limit
        self._lines_on_disk = 0
        self.entries: list[str] = self._load()

    @classmethod
    def for_project(cls, cwd: str | Path, agent_dir: Path | None = None) -> PromptHistory:
        """The history of the project at ``cwd``."""
        return cls(history_path(cwd, agent_dir))

    def _load(self) -> list[str]:
        try:
            return self._read()[-self.limit :]
        except OSError as exc:
            log.warning("cannot read prompt history %s: %s", self.path, exc)
            return []

    def _read(self) -> list[str]:
        """Every prompt in the file, oldest first (counting its lines). Raises OSError but for a missing file."""
        if self.path is None:
            return []
        try:
            raw = self.path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return []
        entries: list[str] = []
        for line in raw.splitlines():
            self._lines_on_disk += 1
            try:
                text = json_safe.loads(line)
            except ValueError:
                continue
            if isinstance(text, str) and text and (not entries or entries[-1] != text):
                entries.append(text)
        return entries

    def add(self, text: str) -> bool:
        """Remember a submitted prompt; False when it was empty or repeats the last one."""
        if not text.strip() or (self.entries and self.entries[-1] == text):
            return False
        self.entries.append(text)
        del self.entries[: -self.limit]
        if self.path is not None:
            self._append(text)
        return True

    def _append(self, text: str) -> None:
        assert self.path is not None
        from pi_tui.util.dir_lock import directory_lock  # writers only: off start-up

        line = json.dumps(text, ensure_ascii=False) + "\n"
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # Another pi-tui in the same project appends and rewrites the same file: one at a time, so
            # no line lands in a file that a rewrite is replacing.
            with directory_lock(self.path.parent):
                if self._lines_on_disk + 1 > 2 * self.limit:
                    self._rewrite(text)
                    return
                with self.path.open("a", encoding="utf-8") as f:
                    f.write(line)
                self._lines_on_disk += 1
        except OSError as exc:  # history is a convenience: never fail a prompt over it
            log.warning("cannot write prompt history %s: %s", self.path, exc)

    def _rewrite(self, text: str) -> None:
        """Cut the file down to the last `limit` prompts, ``text`` last. From the file, not from memory: it
        also holds what other pi-tuis in this project added since this one loaded it."""
        assert self.path is not None
        from pi_tui.util.atomic_file import replace_file_bytes  # writers only: off start-up

        self._lines_on_disk = 0
        kept = self._read()  # a file that cannot be read is not rewritten (the caller logs why)
        if not kept or kept[-1] != text:
            kept.append(text)
        lines = [json.dumps(t, ensure_ascii=False) + "\n" for t in kept[-self.limit :]]
        # Atomic: a killed rewrite leaves the old history and a temporary file the next write removes.
        replace_file_bytes(self.path, "".join(lines).encode("utf-8"), durable=False)
        self._lines_on_disk = len(lines)
