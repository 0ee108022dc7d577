"""``/`` and ``@`` completion: what to offer, and the menu that floats above the editor."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rich.text import Text

from pi_tui.util.fuzzy import fuzzy_filter
from pi_tui.util.path_rank import PATH_SUGGESTIONS, rank_paths

from .marked_list import MarkedOptionList

__all__ = ["Candidate", "CompletionMenu", "FileIndex", "complete"]

MAX_FILES = 20_000
"""Files indexed for ``@`` completion (a walk stops there: big trees stay responsive)."""


@dataclass(frozen=True, slots=True)
class Candidate:
    """One completion: what replaces the token, and a description."""

    value: str
    description: str = ""
    label: str = ""
    """What the menu shows in place of ``value`` (a file's name, with its path as the description)."""


class FileIndex:
    """The project's files for ``@`` completion, walked in a thread (``.gitignore`` respected).

    The first walk starts with the app; :meth:`refresh` walks again (each new ``@`` mention asks for it),
    so files written since (by the user, or by the agent's tools) are offered too. Until a walk ends
    the previous listing stays in use. Files the write tools report are added at once (`note_written`);
    after a shell command, which reports none, `walk_again` lists the project once more.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.paths: list[str] = []
        self.ready = threading.Event()
        """Set once the first walk has ended."""
        self._started = False
        self._walking = threading.Lock()
        self._written: set[str] = set()
        """Files the agent's tools wrote, offered at once and kept over a walk that began before them."""
        self._again = False
        """A walk was asked for while one was under way (which may have missed the change): walk once more
        when it ends."""

    def start(self) -> None:
        if self._started:
            return
        self._started = True
        self._begin_walk()

    def move_to(self, root: Path) -> None:
        """List ``root`` from now on (the session works in another directory); walked again at once
        when the first walk has started, else when it starts."""
        self.root = root
        self.paths = []
        self._written.clear()
        if self._started:
            self.ready.clear()
            self._begin_walk()

    def note_written(self, path: str) -> None:
        """Offer ``path`` (as a tool gave it: relative to the project or absolute) from now on: a file the
        agent just wrote is listed at the next ``@`` without waiting for a walk of the project."""
        target = Path(path).expanduser()
        if not target.is_absolute():
            target = self.root / target
        try:
            rel = target.relative_to(self.root).as_posix()
        except ValueError:
            return  # outside the project: `@` lists only the project's files
        if not rel or rel == "." or ".." in rel.split("/"):
            return
        self._written.add(rel)
        self.paths = self._with_written(self.paths)

    def _with_written(self, paths: list[str]) -> list[str]:
        """``paths`` with the written files (and their folders) it lacks, where they still exist."""
        known = set(paths)
        extra: list[str] = []
        for rel in sorted(self._written):
            if not (self.root / rel).exists():
                continue
            parts = rel.split("/")
            for depth in range(1, len(parts)):
                folder = "/".join(parts[:depth]) + "/"
                if folder not in known:
                    known.add(folder)
                    extra.append(folder)
            if rel not in known:
                known.add(rel)
                extra.append(rel)
        return [*paths, *extra] if extra else paths

    def refresh(self) -> None:
        """Walk the project again in the background (nothing when a walk is under way)."""
        if not self._started:
            self.start()
        elif self.ready.is_set():
            self._begin_walk()

    def walk_again(self) -> None:
        """Files may have changed where no tool reported them (a shell command ran): list the project again
        in the background, after the walk under way if there is one (it may have begun before the change).
        Nothing before the first walk, which lists everything anyway."""
        if not self._started:
            return
        self._again = True  # before trying: a walk ending meanwhile sees it and walks once more
        self._begin_walk()

    def _begin_walk(self) -> None:
        if not self._walking.acquire(blocking=False):
            return
        self._again = False  # this walk begins after every change asked for so far
        threading.Thread(target=self._walk, name="file-index", daemon=True).start()

    def _walk(self) -> None:
        from pi_tui.tools.walk import list_project_files

        found: list[str] | None = None
        root = self.root
        try:
            found = list_project_files(root, limit=MAX_FILES, directories=True)
        except OSError:
            pass
        finally:
            moved = root != self.root  # `move_to` during the walk: this listing is of the old root
            if not moved and (found is not None or not self.ready.is_set()):
                self.paths = self._with_written(found or [])
            self._walking.release()
            if moved or self._again:
                self._begin_walk()
            else:
                self.ready.set()


def complete(
    text: str,
    cursor_offset: int,
    commands: Callable[[], list[Candidate]],
    files: FileIndex | None,
    *,
    limit: int = 50,
    arguments: Callable[[str, str], list[Candidate]] | None = None,
    mentions: Callable[[str], list[Candidate]] | None = None,
) -> tuple[int, list[Candidate]]:
    """Completions for the token before the cursor: ``(token start offset, candidates)``.

    ``/name`` at the start of the text completes commands (every match: the menu scrolls), ``/name arg…``
    the command's arguments (when ``arguments(name, prefix)`` offers some); a word starting with ``@``
    completes what extensions offer (``mentions(prefix)``, e.g. MCP resources) and then paths (the best
    ``limit``, at most pi's twenty, ranked by `pi_tui.util.path_rank`). Anything else gives no candidates.
    """
    before = text[:cursor_offset]
    if arguments is not None and before.startswith("/") and " " in before and "\n" not in before:
        name, _, prefix = before[1:].partition(" ")
        found = arguments(name, prefix)
        if found:
            return len(name) + 2, found[:limit]
    if before.startswith("/") and " " not in before and "\n" not in before:
        options = commands()
        names = [c.value for c in options]
        query = before[1:]
        ranked = fuzzy_filter(query, names, limit=len(names))
        exact = [i for i, _ in ranked if names[i] == query]
        order = exact + [i for i, _ in ranked if i not in exact]
        return 0, [options[i] for i in order]
    start = max(before.rfind(" "), before.rfind("\n")) + 1
    token = before[start:]
    if token.startswith("@") and (files is not None or mentions is not None):
        offered = [Candidate("@" + c.value, c.description) for c in (mentions(token[1:]) if mentions else [])]
        if files is None:
            return start, offered[:limit]
        if token == "@":
            files.refresh()  # a new mention: list the project again (files may have appeared since)
        else:
            files.start()
        if not files.ready.is_set():
            return start, offered[:limit]
        paths = rank_paths(token[1:], files.paths, min(limit, PATH_SUGGESTIONS))
        found = [_file_candidate(path) for path in paths]
        return start, [*offered, *found][:limit]
    return -1, []


def _file_candidate(path: str) -> Candidate:
    """``@path`` to insert, shown as pi lists it: the name (``src/`` for a folder), then the path."""
    bare = path.rstrip("/")
    name = bare.rsplit("/", 1)[-1] + ("/" if path.endswith("/") else "")
    return Candidate("@" + _quoted(path), bare, label=name)


def _quoted(path: str) -> str:
    return f'"{path}"' if " " in path else path


DEFAULT_VISIBLE = 5
"""Rows the menu shows before it scrolls: pi's ``autocompleteMaxVisible`` default."""


VALUE_COLUMN = 30
"""The widest a completion's value is shown before its description."""


class CompletionMenu(MarkedOptionList):
    """The list of completions floating above the editor (an overlay, so the chat does not move).

    It shows :attr:`visible_rows` rows at most (the ``autocompleteMaxVisible`` setting) and scrolls
    through the rest; when some are out of view its bottom border says which one is highlighted, as pi's
    ``(3/25)``. Up and Down wrap around the whole list.
    """

    DEFAULT_CSS = """
    CompletionMenu {
        display: none;
        height: auto;
        max-height: 7;
        border: round $pi-border-muted;
        background: $pi-background;
        color: $pi-text;
        padding: 0 1;
        /* one row per candidate: a long description is cut, so the rows show as many candidates */
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    CompletionMenu.-visible { display: block; }
    CompletionMenu > .option-list--option-highlighted { background: $pi-selected-bg; }
    """

    can_focus = False

    def __init__(self) -> None:
        super().__init__(id="completion")
        self.candidates: list[Candidate] = []
        self.token_start = -1
        self.visible_rows: Callable[[], int] = lambda: DEFAULT_VISIBLE
        """How many rows to show before scrolling (the app reads ``autocompleteMaxVisible``)."""

    def show(self, start: int, candidates: list[Candidate]) -> None:
        self.candidates = candidates
        self.token_start = start
        self.set_rows([])
        if not candidates:
            self.remove_class("-visible")
            return
        # The descriptions start in one column, after the widest value (at most `VALUE_COLUMN`), as pi's
        # list lays them out; a longer value is cut with an ellipsis.
        column = min(VALUE_COLUMN, max(len(c.label or c.value) for c in candidates))
        texts = []
        for c in candidates:
            shown = c.label or c.value
            value = shown if len(shown) <= column else shown[: column - 1] + "…"
            description = ("  " + " " * (column - len(value)) + c.description) if c.description else ""
            texts.append(Text.assemble((value, "bold"), (description, "dim")))
        self.set_rows(texts)
        rows = max(1, self.visible_rows())
        self.styles.max_height = rows + 2  # the rows and the round border
        self._scrolls = len(candidates) > rows
        self.highlighted = 0
        self._show_position()
        self.add_class("-visible")

    _scrolls = False

    def watch_highlighted(self, highlighted: int | None) -> None:
        super().watch_highlighted(highlighted)
        self._show_position()

    def _show_position(self) -> None:
        """``(n/total)`` on the bottom border while some candidates are out of view."""
        if self._scrolls and self.candidates:
            self.border_subtitle = f"({(self.highlighted or 0) + 1}/{len(self.candidates)})"
        else:
            self.border_subtitle = ""

    def hide(self) -> None:
        self.candidates = []
        self.remove_class("-visible")

    @property
    def is_shown(self) -> bool:
        return "-visible" in self.classes and bool(self.candidates)

    def move(self, step: int) -> None:
        if not self.candidates:
            return
        self.highlighted = ((self.highlighted or 0) + step) % len(self.candidates)

    def chosen(self) -> Candidate | None:
        if not self.candidates:
            return None
        return self.candidates[self.highlighted or 0]
