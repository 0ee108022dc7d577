"""``/tree``: the whole session tree — move through it, label, search, jump, summarize, fork.

Keys (pi 0.87): ↑/↓ move, ←/→ page, Ctrl+←/Alt+← fold (or jump to the previous segment start),
Ctrl+→/Alt+→ unfold (or jump to the next one), Shift+L label, Shift+T label times, Ctrl+X copy the entry's text, Ctrl+D/T/U/L/A
filters (default, no-tools, user-only, labelled-only, all), Ctrl+O / Shift+Ctrl+O cycle them, typing
searches (Backspace edits), Enter jumps, Ctrl+F forks into a new session file, Esc/Ctrl+C clears the
search, else cancels.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

from rich.text import Text
from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Static

from pi_tui.session.entries import MessageEntry

from ..keys import key_hint, keymap_of, list_binding, screen_keys
from . import session_of
from ._dialogs import ChoiceScreen, PromptScreen
from ._rowlist import RowList
from .tree_rows import FILTER_MODES, FilterMode, TreeModel, TreeRow

if TYPE_CHECKING:
    from pi_tui.modes.interactive.app import PiApp
    from pi_tui.runtime.agent_session import AgentSession

__all__ = ["ForkScreen", "TreeScreen", "open_fork", "open_tree"]


@runtime_checkable
class EditorHost(Protocol):
    """An app with a prompt editor (`PiApp`): navigating or forking puts the chosen prompt back in it."""

    def set_editor_text(self, text: str) -> None:
        """Replace the editor's text."""
        ...


@runtime_checkable
class ClipboardHost(Protocol):
    """An app that writes the system clipboard (`PiApp`): None when it worked, else why not."""

    async def copy_text(self, text: str) -> str | None:
        """Copy ``text`` to the system clipboard."""
        ...


NEAR_LEAF_ROWS = 100
"""Shown rows made above and below the leaf for a first open before the whole tree's rows are made."""


def _hint(keymap: dict[str, list[str]] | None, ids: tuple[str, ...], label: str) -> str:
    """``keys label`` for pi ids ``ids`` with their effective keys; empty when none is bound."""
    keys = key_hint(keymap, *ids)
    return f"{keys} {label}" if keys else ""


def tree_help(keymap: dict[str, list[str]] | None) -> str:
    """The tree's two help lines with the effective keys (pi's defaults without a keymap)."""
    copy = screen_keys(keymap, "app.message.copy")
    parts = [
        "↑/↓ move",
        "←/→ page",
        _hint(keymap, ("app.tree.foldOrUp", "app.tree.unfoldOrDown"), "branch"),
        f"{copy[0]} copy" if copy else "",
        _hint(keymap, ("app.tree.editLabel",), "label"),
        _hint(keymap, ("app.tree.toggleLabelTimestamp",), "label time"),
        "enter jump",
        "ctrl+f fork",
        "esc close",
    ]
    return " · ".join(part for part in parts if part) + "\n" + filter_help(keymap)


def filter_help(keymap: dict[str, list[str]] | None) -> str:
    """The tree's filter keys line (pi's ``app.tree.filter.*``, the effective keys)."""
    parts = [
        _hint(keymap, (f"app.tree.filter.{name}",), label)
        for name, label in (
            ("default", "default"),
            ("noTools", "no-tools"),
            ("userOnly", "user"),
            ("labeledOnly", "labelled"),
            ("all", "all"),
            ("cycleForward", "cycle"),
        )
    ]
    return " · ".join(part for part in parts if part)


class TreeScreen(Screen[None]):
    """The ``/tree`` navigator."""

    DEFAULT_CSS = """
    TreeScreen { layout: vertical; }
    TreeScreen #tree-title { height: 1; padding: 0 1; text-style: bold; color: $accent; }
    TreeScreen #tree-list { height: 1fr; border: none; }
    TreeScreen #tree-position { height: 1; padding: 0 1; color: $text-muted; }
    TreeScreen #tree-search { height: 1; padding: 0 1; }
    TreeScreen #tree-help { height: auto; padding: 0 1; color: $text-muted; }
    """
    BINDINGS = [
        Binding("escape,ctrl+c", "close", "Cancel", priority=True),
        Binding("left", "page(-1)", "Page up", show=False),
        Binding("right", "page(1)", "Page down", show=False),
        # pi's ids: the app's keymap gives them the user's keys (keybindings.json)
        list_binding("app.tree.foldOrUp", "fold", priority=False),
        list_binding("app.tree.unfoldOrDown", "unfold", priority=False),
        list_binding("app.tree.editLabel", "label", priority=False),
        list_binding("app.tree.toggleLabelTimestamp", "label_time", priority=False),
        Binding("ctrl+x", "copy", "Copy", show=False, id="app.message.copy"),
        list_binding("app.tree.filter.default", "filter('default')", priority=False),
        list_binding("app.tree.filter.noTools", "filter('no-tools')", priority=False),
        list_binding("app.tree.filter.userOnly", "filter('user-only')", priority=False),
        list_binding("app.tree.filter.labeledOnly", "filter('labeled-only')", priority=False),
        list_binding("app.tree.filter.all", "filter('all')", priority=False),
        list_binding("app.tree.filter.cycleForward", "cycle(1)", priority=False),
        list_binding("app.tree.filter.cycleBackward", "cycle(-1)", priority=False),
        Binding("ctrl+f", "fork", "Fork"),
    ]

    def __init__(
        self, session: AgentSession, mode: FilterMode = "default", *, near_leaf: bool = False
    ) -> None:
        super().__init__()
        self.session = session
        # ``near_leaf``: only the rows near the leaf when the whole tree's are not made yet (none when
        # they cannot be had: the opener then makes them all, see `open_tree`).
        self.model = TreeModel(session.session_manager, mode, make_rows=not near_leaf)
        if near_leaf:
            self.model.show_near_leaf(NEAR_LEAF_ROWS, NEAR_LEAF_ROWS)
        self.shown: list[TreeRow] = []
        self.show_label_time = False
        self.title_text = "Session Tree"
        self.help_text = ""
        """The help lines, made when the screen is composed (they name the app's effective keys)."""
        self.summarizing = False
        """A branch summary is being written for a jump: Esc cancels it and the tree stays open."""

    def help_lines(self) -> str:
        """The keys this screen names at its foot."""
        return tree_help(self._keymap())

    def compose(self) -> ComposeResult:
        self.help_text = self.help_lines()
        with Vertical():
            yield Static(self.title_text, id="tree-title")
            yield RowList(self._render_row, row_key=self._row_key, mark="› ", id="tree-list")
            yield Static("", id="tree-position")
            yield Static("", id="tree-search")
            yield Static(self.help_text, id="tree-help")

    def on_mount(self) -> None:
        self._refresh_rows(select=self.session.session_manager.get_leaf_id(), window=True)
        self._list().focus()
        if self.model.partial:  # the rest of the rows once this first frame is drawn
            self.call_after_refresh(self._complete_rows)

    @work(exclusive=True, group="tree-rows")
    async def _complete_rows(self) -> None:
        """Show every row instead of those near the leaf, as they are made by the work ahead (never
        twice); the highlighted row stays where it is on screen. What was typed meanwhile (a search, a
        filter, a fold) applies then."""
        from .prepare import preparation_for

        await preparation_for(self.session).need("tree")
        listing = self._list()
        offset = listing.cursor - int(listing.scroll_offset.y)
        self.model.rebuild()  # the rows the work ahead made and kept (made here if it failed)
        self._search(redraw=True, offset=offset)

    # --- drawing --------------------------------------------------------------------------------------

    def _list(self) -> RowList:
        return self.query_one("#tree-list", RowList)

    def _anchor(self, row: TreeRow) -> int:
        """The column where the row's entry text starts: indentation, fold and active-path markers."""
        return 2 * row.depth + 2 * self.model.foldable(row) + 2 * row.on_active_path

    def _pan(self) -> int:
        """Columns of indentation hidden from every row, so the highlighted row's text stays in view.

        pi 0.87 pans the tree sideways only when the highlighted row's text would start in the last
        third of the width (at most 20 columns from the edge, at least 4); it then keeps a quarter of
        the width (2 to 12 columns) of indentation before that text. Computed per frame from the
        highlighted row alone, so moving the cursor costs nothing for rows out of view.
        """
        listing = self._list()
        index = listing.cursor
        if not 0 <= index < len(self.shown):
            return 0
        width = listing.row_width or listing.size.width
        anchor = self._anchor(self.shown[index])
        room = min(20, max(4, width // 3))
        if anchor <= width - room:
            return 0
        return max(0, anchor - min(12, max(2, width // 4)))

    def _row_key(self, index: int) -> object:
        return (self.shown[index].id, self._pan()) if index < len(self.shown) else index

    def _render_row(self, index: int) -> Text:
        return self._row_text(self.shown[index], self._pan()) if index < len(self.shown) else Text("")

    def _row_text(self, row: TreeRow, pan: int = 0) -> Text:
        # A panned view drops the first ``pan`` columns of indentation (rows shallower than that start
        # at the left edge, rather than losing the start of their text).
        text = Text(" " * max(0, 2 * row.depth - pan), no_wrap=True)
        if self.model.foldable(row):
            text.append("⊞ " if row.id in self.model.folded else "⊟ ", style="bold")
        if row.on_active_path:
            text.append("• ", style="bold green")
        style = "bold" if row.is_leaf else ("" if row.on_active_path else "dim")
        if row.kind == "user":
            style += " cyan"
        elif row.kind in ("compaction", "branch_summary"):
            style += " yellow"
        text.append(row.text, style=style.strip())
        label = self.model.labels.get(row.id)
        if label:
            when = self.model.label_times.get(row.id, "") if self.show_label_time else ""
            text.append(
                f" [{label}{' ' + when[:16].replace('T', ' ') if when else ''}]", style="bold magenta"
            )
        if row.branch_point:
            text.append(f"  ({len(row.children)} branches)", style="dim")
        return text

    def _refresh_rows(
        self,
        select: str | None = None,
        *,
        redraw: bool = False,
        window: bool = False,
        offset: int | None = None,
    ) -> None:
        """Re-filter the rows; ``redraw`` when their text changed too (a fold marker, a label). While
        only the rows near the leaf are made, only the first call (``window``) filters them: a search,
        a filter or a fold waits for every row (`_complete_rows`). ``offset``: the highlighted row's
        line in the view, kept."""
        listing = self._list()
        mode = "" if self.model.mode == "default" else f" · filter: {self.model.mode}"
        # No count here: as in pi, the one count is the "(n/total)" line under the list, of the rows the
        # filter shows (a count of every entry, settings and model changes included, disagreed with it).
        self.query_one("#tree-title", Static).update(f"{self.title_text}{mode}")
        self.query_one("#tree-search", Static).update(Text(f"Type to search: {self.model.query}"))
        if self.model.partial and not window:
            return
        if redraw:
            listing.refresh_rows()
        current = self._highlighted()
        keep = select or (current.id if current else None)
        self.shown = self.model.visible()
        kept = self.model.by_id.get(keep) if keep is not None else None
        try:  # rows compare by identity: a search in C, not a Python loop over 20k rows
            index = self.shown.index(kept) if kept is not None else len(self.shown) - 1
        except ValueError:
            index = len(self.shown) - 1
        listing.reset(
            len(self.shown),
            index,
            top=None if offset is None else index - offset,
            height_hint=self._list_height_hint(),
        )
        self._show_position()

    def on_row_list_highlighted(self, _event: RowList.Highlighted) -> None:
        self._show_position()

    def _show_position(self) -> None:
        """As pi, "(n/total)" under the tree: the highlighted row and the rows the filter shows (blank
        while only the rows near the leaf are made: the total is not known yet)."""
        listing = self._list()
        if self.model.partial:
            text = ""
        else:
            text = f"({listing.cursor + 1}/{len(self.shown)})" if self.shown else "(0/0)"
        self.query_one("#tree-position", Static).update(text)

    def _list_height_hint(self) -> int:
        """The rows the list will have: the screen's height less the title, position, search and help
        lines (the help wraps in a narrow terminal)."""
        width = max(1, self.app.size.width - 2)  # the lines' padding
        help_lines = sum(max(1, -(-len(line) // width)) for line in self.help_text.splitlines())
        return max(1, self.app.size.height - 3 - help_lines)

    def _highlighted(self) -> TreeRow | None:
        index = self._list().cursor
        return self.shown[index] if 0 <= index < len(self.shown) else None

    # --- keys -----------------------------------------------------------------------------------------

    def _keymap(self) -> dict[str, list[str]] | None:
        """The app's effective keymap (None: a host app without pi's keys, the defaults then)."""
        return keymap_of(self.app)

    def on_key(self, event: events.Key) -> None:
        bound = self.active_bindings.get(event.key)
        if bound is not None and bound.node is self and event.key != "backspace":
            return  # a key of this screen (Shift+L labels, a printable key the user bound …): no search
        if event.key == "backspace":
            if self.model.query:
                had_folds = bool(self.model.folded)
                self.model.set_query(self.model.query[:-1])
                self._search(redraw=had_folds)
            event.stop()
        elif event.is_printable and event.character and event.key != "enter":
            had_folds = bool(self.model.folded)
            self.model.set_query(self.model.query + event.character)
            self._search(redraw=had_folds)
            event.stop()

    def _search(self, *, redraw: bool, offset: int | None = None) -> None:
        """Show the rows the query finds. A search reads every row's text: while the work ahead is
        still describing the entries (`prepare`), the query shows at once and the rows once it is done,
        rather than describing them a second time here."""
        from .prepare import preparation_for

        if self.model.query.strip() and not preparation_for(self.session).done("tree_texts"):
            self.query_one("#tree-search", Static).update(Text(f"Type to search: {self.model.query}"))
            self._search_when_described()
            return
        self._refresh_rows(redraw=redraw, offset=offset)

    @work(exclusive=True, group="tree-search")
    async def _search_when_described(self) -> None:
        from .prepare import preparation_for

        await preparation_for(self.session).need("tree_texts")
        self._refresh_rows(redraw=True)  # a key meanwhile may have cleared folds this one saw

    def action_page(self, direction: int) -> None:
        self._list().action_page(direction)

    def action_fold(self) -> None:
        row = self._highlighted()
        if row is None:
            return
        if self.model.foldable(row) and row.id not in self.model.folded:
            self.model.folded.add(row.id)
            self._refresh_rows(select=row.id, redraw=True)
            return
        start = self.model.segment_start_of(row.parent_id or "") if row.parent_id else None
        if row.segment_start or start is None:  # jump to the previous segment start in view
            starts = [i for i, r in enumerate(self.shown) if r.segment_start and r.id != row.id]
            before = [i for i in starts if i < self._list().cursor]
            if before:
                self._list().cursor = before[-1]
            return
        self._refresh_rows(select=start.id)

    def action_unfold(self) -> None:
        row = self._highlighted()
        if row is None:
            return
        if row.id in self.model.folded:
            self.model.folded.discard(row.id)
            self._refresh_rows(select=row.id, redraw=True)
            return
        here = self._list().cursor
        after = [i for i, r in enumerate(self.shown) if i > here and r.segment_start]
        self._list().cursor = after[0] if after else len(self.shown) - 1

    def action_filter(self, mode: str) -> None:
        wanted: FilterMode = mode if mode in FILTER_MODES else "default"
        # pi: the toggles go back to the default filter when pressed again
        had_folds = bool(self.model.folded)
        self.model.set_mode("default" if self.model.mode == wanted and wanted != "default" else wanted)
        self._refresh_rows(redraw=had_folds)

    def action_cycle(self, step: int) -> None:
        index = FILTER_MODES.index(self.model.mode)
        had_folds = bool(self.model.folded)
        self.model.set_mode(FILTER_MODES[(index + step) % len(FILTER_MODES)])
        self._refresh_rows(redraw=had_folds)

    def action_label_time(self) -> None:
        self.show_label_time = not self.show_label_time
        self._list().refresh_rows()

    async def action_copy(self) -> None:
        row = self._highlighted()
        if row is None:
            return
        if not isinstance(self.app, ClipboardHost):  # a bare test app: Textual's own copy
            self.app.copy_to_clipboard(row.text)
            self.notify("Copied")
            return
        problem = await self.app.copy_text(row.text)
        if problem is not None:
            self.notify(problem, severity="error")
        else:
            self.notify("Copied selected message to clipboard")

    def action_label(self) -> None:
        row = self._highlighted()
        if row is None:
            return

        def done(value: str | None) -> None:
            if value is None:
                return
            self.session.label(row.id, value.strip() or None)
            self.model.rebuild()
            self._refresh_rows(select=row.id, redraw=True)

        self.app.push_screen(PromptScreen("Label (empty clears it)", self.model.labels.get(row.id, "")), done)

    def action_close(self) -> None:
        if self.summarizing:  # "(Esc to cancel)": the summary stops, the jump with it, the tree stays
            self.session.compaction.abort()
            return
        if self.model.query:  # as pi: a search is cleared first (every row back), the next Esc closes
            had_folds = bool(self.model.folded)
            self.model.set_query("")
            self._search(redraw=had_folds)
            return
        self.app.pop_screen()

    # --- jumping and forking --------------------------------------------------------------------------

    def on_row_list_selected(self, event: RowList.Selected) -> None:
        event.stop()
        if 0 <= event.index < len(self.shown):
            self._jump(self.shown[event.index])

    @work(exclusive=True, group="tree-jump")
    async def _jump(self, row: TreeRow) -> None:
        session = self.session
        if session.compaction.is_compacting:
            self.notify("Wait for the compaction to finish", severity="warning")
            return
        if session.is_streaming:
            # pi 0.83: moving in the tree mid-answer aborts it; the turn so far is kept in the file.
            session.abort()
            await session.wait_for_idle()
        if row.id == session.session_manager.get_leaf_id():
            self.notify("Already at this point")
            return
        new_leaf = row.parent_id if row.kind in ("user", "custom_message") else row.id
        # --- checkpoints: the jump can bring the files along ---
        code = await self._code_choice(row)
        if code is None:
            return  # Esc: back to the tree at the same node
        if code == "code":
            await self._restore_code(row)
            self.app.pop_screen()
            return
        # --- end checkpoints ---
        summarize, focus = False, None
        settings = session.settings
        skip = bool(settings is not None and settings.branch_summary.skip_prompt)
        if self.model.leaving(new_leaf) and not skip:
            choice = await self.app.push_screen_wait(
                ChoiceScreen("Summarize branch?", ["No summary", "Summarize", "Summarize with custom prompt"])
            )
            if choice is None:
                return  # Esc: back to the tree at the same node
            if choice == 2:
                focus = await self.app.push_screen_wait(PromptScreen("Additional focus for the summary"))
                if focus is None:
                    return
            summarize = choice >= 1
        from pi_tui.compaction.errors import CompactionCancelled, CompactionError

        if summarize:
            self.notify("Summarizing branch... (Esc to cancel)", timeout=3600)
        self.summarizing = summarize
        try:
            editor_text = await session.navigate_with_summary(row.id, summarize, focus or None)
        except CompactionCancelled:
            self.app.clear_notifications()
            self.notify("Summary cancelled; nothing moved", severity="warning")
            return
        except (CompactionError, RuntimeError) as exc:
            self.app.clear_notifications()
            self.notify(str(exc), severity="error")
            return
        finally:
            self.summarizing = False
        if summarize:
            self.app.clear_notifications()  # the "Summarizing…" line: it is done
        if code == "both":  # checkpoints
            await self._restore_code(row)
        self.app.pop_screen()
        from pi_tui.modes.interactive.app import PiApp

        if isinstance(self.app, PiApp):  # the chat says where you are now, as pi's does
            self.app.chat_status("Navigated to selected point")
        if editor_text and isinstance(self.app, EditorHost):
            self.app.set_editor_text(editor_text)

    # --- checkpoints ----------------------------------------------------------------------

    async def _code_choice(self, row: TreeRow) -> str | None:
        """``conversation``, ``code`` or ``both`` when the jump would change files; None on Esc."""
        try:
            plan = self.session.plan_rewind(row.id)
        except (LookupError, OSError):
            plan = None
        if plan is None or plan.empty:
            return "conversation"
        files = len(plan.files)
        choice = await self.app.push_screen_wait(
            ChoiceScreen(
                f"This jump can restore {files} file(s) as they were at that point",
                ["Conversation only", "Code only", "Conversation and code"],
            )
        )
        return None if choice is None else ("conversation", "code", "both")[choice]

    async def _restore_code(self, row: TreeRow) -> None:
        try:
            result = await self.session.rewind(row.id, "code")
        except (LookupError, OSError, RuntimeError, ValueError) as exc:
            self.app.notify(f"Restoring files failed: {exc}", severity="error")
            return
        self.app.notify(result.summary(), severity="information" if result.applied else "warning")

    def action_fork(self) -> None:
        row = self._highlighted()
        if row is not None:
            self._fork(row)

    @work(exclusive=True, group="tree-fork")
    async def _fork(self, row: TreeRow) -> None:
        try:
            editor_text = await self.session.fork(row.id)
        except (RuntimeError, ValueError, OSError) as exc:
            self.notify(f"Fork failed: {exc}", severity="error")
            return
        self.app.pop_screen()
        from pi_tui.modes.interactive.app import PiApp

        if isinstance(self.app, PiApp):  # the chat of the new session says so, in pi's words
            self.app.chat_status("Forked to new session")
        else:
            self.app.notify("Forked to new session")
        if editor_text and isinstance(self.app, EditorHost):
            self.app.set_editor_text(editor_text)


class ForkScreen(TreeScreen):
    """``/fork``: the tree filtered to your messages; Enter forks from the highlighted one (pi's
    user-message selector: the new session holds the path before it, and its text goes to the editor)."""

    def __init__(self, session: AgentSession) -> None:
        super().__init__(session, "user-only")
        self.title_text = "Fork from message"

    def help_lines(self) -> str:
        return (
            "↑/↓ move · type to search · enter fork from this message (a new session file) · esc close\n"
            + filter_help(self._keymap())
        )

    def on_row_list_selected(self, event: RowList.Selected) -> None:
        event.stop()
        event.prevent_default()  # TreeScreen's handler (jump) must not run too
        if 0 <= event.index < len(self.shown):
            self._fork(self.shown[event.index])


async def open_fork(app: PiApp, _args: str) -> None:
    """``/fork``: refused before the first answer, as in pi 0.80+."""
    session = session_of(app)
    entries = session.session_manager.get_entries()
    if not any(isinstance(e, MessageEntry) and e.message.role == "assistant" for e in entries):
        app.notify("Nothing to fork from yet", severity="warning")
        return
    await app.push_screen(ForkScreen(session))


async def open_tree(app: PiApp, _args: str) -> None:
    """``/tree``: push the navigator (default filter from the ``treeFilterMode`` setting). When the
    work ahead has not made the whole tree's rows yet, it opens at once with the rows near the leaf
    (`tree_window`) and the rest follow; otherwise with every row."""
    from .prepare import preparation_for

    session = session_of(app)
    if session.session_manager.get_leaf_id() is None:  # nothing to navigate yet (pi says so too)
        app.notify("No entries in session")
        return
    settings = session.settings
    chosen = settings.tree_filter_mode if settings is not None else "default"
    mode: FilterMode = chosen if chosen in FILTER_MODES else "default"
    preparation = preparation_for(session)
    release = preparation.hold()  # the rest of the work ahead waits for the first frame
    try:
        # The children index the rows near the leaf start from: made by the work ahead (~10 ms at 20k
        # entries), now if it has not got to it, in its thread rather than a second time here.
        await preparation.need("tree_index")
        screen = TreeScreen(session, mode, near_leaf=not preparation.done("tree"))
        if not screen.model.rows:  # no rows near the leaf to show first: wait for all of them
            await preparation.need("tree")
            screen = TreeScreen(session, mode)
        await app.push_screen(screen)
    finally:
        app.call_after_refresh(release)
