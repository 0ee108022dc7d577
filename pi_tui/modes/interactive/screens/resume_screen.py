"""``/resume``: pick a session of this project (or of every project) and continue it.

Keys (pi 0.87): type to search (names, the whole conversation, ids and folders, as pi; ``"a phrase"``,
``re:regex``; the conversations arrive from the folders' text index after the picker opens, see
`resume_texts`), ↑/↓ PgUp/PgDn move, Enter resumes, Tab switches This folder / All, Ctrl+S cycles the sort
(threaded: forks under their parent session; recent; relevance), Ctrl+N named only, Ctrl+P shows paths, Ctrl+R
renames, Ctrl+D (and Ctrl+Backspace with an empty search) deletes (after a confirmation, into
``<agent dir>/trash``, so it can be restored), Esc closes. The keys are pi's ``app.session.*`` ids, rebound in
``keybindings.json``.
"""

from __future__ import annotations

import asyncio
import shutil
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, Static

from pi_tui.session.listing import SessionInfo

from ..keys import key_hint, keymap_of, list_binding
from ._dialogs import ConfirmScreen, PromptScreen
from ._format import fmt_age, fmt_size, one_line
from ._picker import SearchListScreen
from ._rowlist import RowList
from .resume_texts import ConversationTexts

if TYPE_CHECKING:
    from datetime import datetime

    from pi_tui.modes.interactive.app import PiApp
    from pi_tui.runtime.agent_session import AgentSession

__all__ = ["ResumeScreen", "open_resume", "trash_session", "TRASH_DIR_NAME"]

TRASH_DIR_NAME = "trash"
Scope = Literal["current", "all"]
Sort = Literal["threaded", "recent", "relevance"]
SORTS: tuple[Sort, ...] = ("threaded", "recent", "relevance")
RESEARCH_S = 0.25
"""While the conversations are being read, a typed query is searched again at most this often (seconds)."""
LONG_SEARCH_S = 0.12
"""Long conversations are searched once no key came for this long (seconds)."""
FIRST_LOOK = 40
"""Sessions shown while the folder is being listed (the files modified last): a screenful and more."""


def threaded(infos: list[SessionInfo]) -> list[tuple[SessionInfo, int]]:
    """pi's threaded order: forks under the session they came from (``parentSession``), each level by the
    latest activity anywhere in its subtree, newest first. Returns (info, depth) pairs."""
    by_path = {str(info.path): info for info in infos}
    children: dict[str, list[SessionInfo]] = {}
    roots: list[SessionInfo] = []
    for info in infos:
        parent = str(info.parent_session_path or "")
        if parent and parent in by_path and parent != str(info.path):
            children.setdefault(parent, []).append(info)
        else:
            roots.append(info)
    latest: dict[str, datetime] = {}

    def newest(info: SessionInfo, seen: frozenset[str] = frozenset()) -> datetime:
        key = str(info.path)
        if key not in latest:
            kids = [newest(k, seen | {key}) for k in children.get(key, []) if str(k.path) not in seen]
            latest[key] = max([info.modified, *kids])
        return latest[key]

    out: list[tuple[SessionInfo, int]] = []
    stack = [(info, 0) for info in sorted(roots, key=newest)]  # popped newest first
    visited: set[str] = set()
    while stack:
        info, depth = stack.pop()
        key = str(info.path)
        if key in visited:
            continue
        visited.add(key)
        out.append((info, depth))
        stack += [(kid, depth + 1) for kid in sorted(children.get(key, []), key=newest)]
    return out


def trash_session(path: Path, agent_dir: Path) -> Path:
    """Move a session file into ``<agent dir>/trash`` (a recoverable delete). Returns where it went."""
    trash = agent_dir / TRASH_DIR_NAME
    trash.mkdir(parents=True, exist_ok=True)
    target = trash / path.name
    counter = 1
    while target.exists():
        target = trash / f"{path.stem}-{counter}{path.suffix}"
        counter += 1
    shutil.move(str(path), target)
    return target


def resume_help(keymap: dict[str, list[str]] | None) -> str:
    """The picker's help line with the effective keys (pi's defaults without a keymap)."""
    actions = [
        ("toggleSort", "sort"),
        ("toggleNamedFilter", "named"),
        ("togglePath", "paths"),
        ("rename", "rename"),
        ("delete", "delete"),
    ]
    hints = [(key_hint(keymap, f"app.session.{name}"), label) for name, label in actions]
    keys = [f"{key} {label}" for key, label in hints if key]
    return " · ".join(["↑/↓ move", "Enter resume", "Tab folder/all", *keys, "Esc close"])


class ResumeScreen(SearchListScreen[SessionInfo]):
    """The session picker."""

    BINDINGS = [
        Binding("pageup", "page(-1)", "Page up", show=False, priority=True),
        Binding("pagedown", "page(1)", "Page down", show=False, priority=True),
        Binding("tab", "scope", "This folder / All", priority=True),
        # pi's ids: the app's keymap gives them the user's keys (keybindings.json)
        list_binding("app.session.toggleSort", "sort"),
        list_binding("app.session.toggleNamedFilter", "named"),
        list_binding("app.session.togglePath", "paths"),
        list_binding("app.session.rename", "rename"),
        list_binding("app.session.delete", "delete"),
        list_binding("app.session.deleteNoninvasive", "delete_if_no_search"),
    ]

    def __init__(
        self,
        session: AgentSession,
        infos: list[SessionInfo] | None,
        on_cancel: Callable[[], None] | None = None,
        *,
        first_look: list[SessionInfo] | None = None,
    ) -> None:
        """Args:
        session: the session whose folder is listed.
        infos: the folder's sessions; None lists them once the screen shows.
        on_cancel: also run when the picker closes without a choice (``-r``: leave the app).
        first_look: when ``infos`` is None, the sessions modified last, shown meanwhile."""
        super().__init__()
        self.session = session
        self.on_cancel = on_cancel  # closing without a choice also runs this (``-r``: leave the app)
        self.scope: Scope = "current"
        self.sort: Sort = "threaded"
        self.depths: dict[Path, int] = {}
        self.named_only = False
        self.show_paths = False
        self.lists: dict[Scope, list[SessionInfo] | None] = {"current": infos, "all": None}
        self.first_look: list[SessionInfo] | None = first_look if infos is None else None
        """The folder's sessions modified last, shown while the whole folder is being listed."""
        self.shown: list[SessionInfo] = list(infos or ())
        self.now = datetime.now(UTC)
        self.texts = ConversationTexts()
        """The conversations searched, as the folders' text index brings them in."""
        self.searching: str | None = None
        """The query whose long conversations are being searched after its keystroke, if any."""
        self._search_round = 0
        self._researched = 0.0

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("", id="resume-title", classes="picker-title")
            yield Input(placeholder="Type to search", id="resume-search", classes="picker-search")
            yield RowList(self._render_row, row_key=self._row_key, mark="› ", id="resume-list")
            yield Static(resume_help(keymap_of(self.app)), id="resume-help", classes="picker-help")

    def on_mount(self) -> None:
        self._apply()
        self.query_one(Input).focus()
        if self.lists["current"] is None:
            self._load_current()
        else:
            self.call_after_refresh(self._read_texts, self.lists["current"])

    def on_unmount(self) -> None:
        self.texts.stop()

    # --- rows -----------------------------------------------------------------------------------------

    def _row_key(self, index: int) -> object:
        return self.shown[index].path if index < len(self.shown) else index

    def _render_row(self, index: int) -> Text:
        if index >= len(self.shown):
            return Text("")
        info = self.shown[index]
        current = self.session.session_manager.path
        text = Text(no_wrap=True)
        text.append("● " if current is not None and info.path == current else "  ", style="green")
        title = info.name or info.first_message
        depth = self.depths.get(info.path, 0)
        indent = ("  " * (depth - 1) + "└ ") if depth else ""
        meta = f"  {fmt_age(info.modified, self.now):>10}  {info.message_count:>5} msgs  {fmt_size(info.size):>7}"
        # The title gives way to the age, count and size in a narrow terminal (at most 70 columns wide).
        fits = self._list().row_width - 2 - len(meta)
        width = max(12, min(70, fits))
        text.append(
            (indent + one_line(title, width - len(indent))).ljust(width), style="bold" if info.name else ""
        )
        text.append(meta, style="dim")
        if self.scope == "all" or self.show_paths:
            where = str(info.path) if self.show_paths else info.cwd
            text.append(f"  {where}", style="dim italic")
        return text

    def _infos(self) -> list[SessionInfo]:
        infos = self.lists[self.scope]
        if infos is None and self.scope == "current":
            infos = self.first_look
        return infos or []

    def _query(self) -> str:
        return self.query_one(Input).value if self.is_mounted else ""

    def _apply(self, keep: Path | None = None, *, by_user: bool = True) -> None:
        """Fill the list from the search box: at once with what is quick to search, then (for a query,
        when long conversations are known) again when their search ends (`_search_long`).
        ``by_user``: a key asked for it (the reading of conversations lets it go first)."""
        from pi_tui.session.search import search_sessions

        infos = self._infos()
        query = self._query()
        self.depths = {}
        if by_user:
            self.texts.busy()
        self._search_round += 1
        self.searching = None
        if self.sort == "threaded" and not query.strip():
            rows = threaded([s for s in infos if not self.named_only or (s.name or "").strip()])
            self.shown = [info for info, _ in rows]
            self.depths = {info.path: depth for info, depth in rows if depth}
        else:
            self.shown = search_sessions(
                infos, query, sort=self._sort_by(), named_only=self.named_only, texts=self.texts.quick
            )
            if query.strip() and self.texts.has_long:
                self.searching = query
                round_ = self._search_round
                # after a pause in the typing: keys typed in a row are not slowed by searches whose
                # result the next key makes stale
                self.set_timer(LONG_SEARCH_S, lambda: self._search_long(round_, infos, query))
        index = next((i for i, s in enumerate(self.shown) if s.path == keep), 0)
        self._list().reset(len(self.shown), index)
        self._update_title()

    def _sort_by(self) -> Literal["recent", "relevance"]:
        return "recent" if self.sort == "recent" else "relevance"

    def _update_title(self) -> None:
        scope = "Current Folder" if self.scope == "current" else "All"
        loading = " · loading…" if self.lists[self.scope] is None else ""
        extra = " · named only" if self.named_only else ""
        progress = self.texts.progress
        if progress is not None:
            extra += f" · reading conversations {progress[0]}/{progress[1]}…"
        elif self.searching is not None:
            extra += " · searching conversations…"
        count = f"{len(self.shown)} of {len(self._infos())}"
        self.query_one("#resume-title", Static).update(  # one line, always: no layout pass per keystroke
            f"Resume Session ({scope}) · {count} · sort: {self.sort}{extra}{loading}", layout=False
        )

    @work(exclusive=True, group="resume-search")
    async def _search_long(self, round_: int, infos: list[SessionInfo], query: str) -> None:
        """Search every known conversation (long ones too) in a worker thread; the rows replace the
        keystroke's quick ones unless the search box or the list changed meanwhile."""
        from pi_tui.session.search import search_sessions

        if round_ != self._search_round:
            return

        from .prepare import run_in_daemon_thread

        texts = dict(self.texts.every)
        sort, named = self._sort_by(), self.named_only
        found: list[list[SessionInfo]] = []

        def stale() -> bool:
            return round_ != self._search_round

        def run() -> None:
            found.append(search_sessions(infos, query, sort=sort, named_only=named, texts=texts, stop=stale))

        await run_in_daemon_thread(run)
        if stale() or not found:
            return
        chosen = self._selected() if self._list().cursor > 0 else None
        self.shown = found[0]
        self.searching = None
        index = next((i for i, s in enumerate(self.shown) if chosen is not None and s.path == chosen.path), 0)
        self._list().reset(len(self.shown), index)
        self._update_title()

    def _read_texts(self, infos: list[SessionInfo] | None) -> None:
        """Start reading the conversations of ``infos`` (a whole listing) for the search."""
        if infos:
            self._read_texts_worker([info.path for info in infos])

    @work(exclusive=True, group="resume-texts")
    async def _read_texts_worker(self, paths: list[Path]) -> None:
        await self.texts.read(paths, self._texts_arrived)

    def _texts_arrived(self) -> None:
        """More conversations are known: search again when a query is typed (the cursor's row kept),
        at most every `RESEARCH_S` while the index is read, and once it is done."""
        if not self.is_mounted:
            return
        now = time.monotonic()
        done = self.texts.progress is None
        if self._query().strip() and (done or now - self._researched >= RESEARCH_S):
            self._researched = now
            chosen = self._selected() if self._list().cursor > 0 else None
            self._apply(keep=chosen.path if chosen is not None else None, by_user=False)
        else:
            self._update_title()

    # --- keys -----------------------------------------------------------------------------------------

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        info = self._selected()
        if info is not None:
            self._resume(info)

    def on_row_list_selected(self, event: RowList.Selected) -> None:
        event.stop()
        if 0 <= event.index < len(self.shown):
            self._resume(self.shown[event.index])

    def action_page(self, direction: int) -> None:
        self.texts.busy()
        self._list().action_page(direction)

    def action_move(self, step: int) -> None:
        self.texts.busy()
        super().action_move(step)

    def action_scope(self) -> None:
        self.scope = "all" if self.scope == "current" else "current"
        self._list().refresh_rows()  # "All" shows each session's folder
        if self.lists[self.scope] is None:
            self._load_all()
        self._apply()

    @work(exclusive=True, group="resume-current")
    async def _load_current(self) -> None:
        """The folder's sessions, when the picker opened before they were listed: the listing ahead
        (`prepare`) goes first, then the rows are taken from what it kept."""
        from pi_tui.session.listing import list_recent_sessions, list_sessions

        from .prepare import preparation_for

        session = self.session
        preparation = preparation_for(session)
        release = preparation.hold()  # the other steps of the work ahead wait for the rows
        try:
            # A first page at once (the files modified last, those quick to read), the rest after.
            if self.first_look is None:
                first = await asyncio.to_thread(
                    list_recent_sessions, session.cwd, session.new_session_dir(), FIRST_LOOK
                )
                if self.lists["current"] is None:
                    self.first_look = first
                    self._apply()
            await preparation.need("listing")
            infos = await asyncio.to_thread(list_sessions, session.cwd, session.new_session_dir())
            moved = self._list().cursor > 0  # the user moved: keep their row, else the first one
            chosen = self._selected() if moved else None
            self.lists["current"] = infos
            self.first_look = None
            if self.scope == "current":
                self._apply(keep=chosen.path if chosen is not None else None)
            self.call_after_refresh(self._read_texts, infos)
        finally:
            self.call_after_refresh(release)

    @work(exclusive=True, group="resume-all")
    async def _load_all(self) -> None:
        from pi_tui.session.listing import list_all_sessions

        root = None
        session_dir = self.session.session_manager.session_dir
        if session_dir is not None:
            root = Path(session_dir).parent
        self.lists["all"] = await asyncio.to_thread(list_all_sessions, root)
        self._apply()
        self.call_after_refresh(self._read_texts, self.lists["all"])

    def action_sort(self) -> None:
        self.sort = SORTS[(SORTS.index(self.sort) + 1) % len(SORTS)]
        self._list().refresh_rows()  # the threaded order indents
        self._apply()

    def action_named(self) -> None:
        self.named_only = not self.named_only
        self._apply()

    def action_paths(self) -> None:
        self.show_paths = not self.show_paths
        self._list().refresh_rows()

    def action_delete_if_no_search(self) -> None:
        """pi's ``app.session.deleteNoninvasive`` (Ctrl+Backspace): with an empty search, delete the
        highlighted session; while searching, the key edits the search (a word back) instead."""
        search = self.query_one(Input)
        if search.value:
            search.action_delete_left_word()
        else:
            self.action_delete()

    def action_close(self) -> None:
        self.app.pop_screen()
        if self.on_cancel is not None:
            self.on_cancel()

    def action_rename(self) -> None:
        info = self._selected()
        if info is None:
            return

        def done(name: str | None) -> None:
            if name is None or not name.strip():
                return
            self._rename(info, " ".join(name.split()))

        self.app.push_screen(PromptScreen("Rename session", info.name or ""), done)

    def _rename(self, info: SessionInfo, name: str) -> None:
        from pi_tui.session import SessionManager
        from pi_tui.session.errors import SessionError
        from pi_tui.session.listing import read_session_info

        try:
            if info.path == self.session.session_manager.path:
                self.session.set_session_name(name)
            else:
                manager = SessionManager.open(info.path, cwd=info.cwd or None)
                try:
                    manager.append_session_info(name)
                finally:
                    manager.close()
        except (SessionError, OSError) as exc:
            self.notify(f"Rename failed: {exc}", severity="error")
            return
        fresh = read_session_info(info.path)
        for scope, infos in self.lists.items():
            if infos is not None:
                self.lists[scope] = [fresh if s.path == info.path and fresh else s for s in infos]
        self._list().refresh_rows()
        self._apply(keep=info.path)
        self.notify(f"Renamed to {name}")

    def action_delete(self) -> None:
        info = self._selected()
        if info is None:
            return
        if info.path == self.session.session_manager.path:
            self.notify("Cannot delete the session you are in", severity="error")
            return

        def done(yes: bool | None) -> None:
            if yes:
                self._delete(info)

        title = one_line(info.name or info.first_message, 60)
        self.app.push_screen(ConfirmScreen(f"Delete “{title}”? (it goes to the trash folder)"), done)

    def _delete(self, info: SessionInfo) -> None:
        agent_dir = self._agent_dir()
        try:
            where = trash_session(info.path, agent_dir)
        except OSError as exc:
            self.notify(f"Delete failed: {exc}", severity="error")
            return
        for scope, infos in self.lists.items():
            if infos is not None:
                self.lists[scope] = [s for s in infos if s.path != info.path]
        self._apply()
        self.notify(f"Moved to {where}")

    def _agent_dir(self) -> Path:
        settings = self.session.settings
        if settings is not None and settings.agent_dir is not None:
            return Path(settings.agent_dir)
        from pi_tui.ai.paths import agent_dir

        return agent_dir()

    @work(exclusive=True, group="resume-open")
    async def _resume(self, info: SessionInfo) -> None:
        from pi_tui.session import SessionManager
        from pi_tui.session.errors import SessionError

        if info.path == self.session.session_manager.path:
            self.app.pop_screen()
            return
        from pi_tui.runtime.session_cwd import MissingSessionCwdError

        here = ""
        try:
            manager = SessionManager.open(info.path, cwd=self.session.cwd)
        except (SessionError, OSError) as exc:
            self.notify(f"Could not resume: {exc}", severity="error")
            return
        from ..app import PiApp
        from ..dialogs import ask_continue_in_cwd

        where = Path(manager.cwd).resolve() if manager.cwd and Path(manager.cwd).is_dir() else None
        if isinstance(self.app, PiApp) and where is not None and where != Path(self.session.cwd).resolve():
            await self.app.answer_trust_for(where)  # as pi: its trust question first
        try:
            try:
                # as pi: a session recorded in another directory works there (tools, footer, AGENTS.md)
                await self.session.switch_session(manager)
            except MissingSessionCwdError as gone:
                if not await ask_continue_in_cwd(self.app, gone):
                    manager.close()
                    self.app.pop_screen()  # as pi: back to the current session
                    self.app.notify("Resume cancelled")
                    return
                manager.work_in(self.session.cwd)
                await self.session.switch_session(manager)
                here = " in current cwd"
        except (SessionError, OSError, RuntimeError) as exc:
            manager.close()
            self.notify(f"Could not resume: {exc}", severity="error")
            return
        except BaseException:
            manager.close()
            raise
        self.app.pop_screen()
        self.app.notify(f"Resumed {one_line(info.name or info.first_message, 60)}{here}")


async def open_resume(app: PiApp, _args: str) -> None:
    """``/resume``: push the picker over this project's sessions. When the folder is not listed yet
    (the work ahead, `prepare`, has not got to it), the picker shows at once, "loading…", and its rows
    follow as soon as they are read."""
    from pi_tui.session.listing import list_recent_sessions, list_sessions

    from .prepare import preparation_for

    session = app.require_session()
    preparation = preparation_for(session)
    release = preparation.hold()  # the work ahead of the other screens waits for the first frame
    try:
        infos = first = None
        if preparation.done("listing"):
            infos = await asyncio.to_thread(list_sessions, session.cwd, session.new_session_dir())
        else:
            # The first page goes into the first frame: the files modified last, read here (~5 ms
            # once the work ahead has read them: `prepare`'s ``recent`` step) rather than in a thread
            # whose hand-offs cost more than that on a busy machine.
            first = list_recent_sessions(session.cwd, session.new_session_dir(), FIRST_LOOK)
        from ..app import PiApp

        on_cancel = app.take_resume_cancel() if isinstance(app, PiApp) else None
        await app.push_screen(ResumeScreen(session, infos, on_cancel, first_look=first))
    finally:
        app.call_after_refresh(release)
