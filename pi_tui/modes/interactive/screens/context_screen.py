"""``/context``: the next request as a tree — what the model sees, what it costs, and a what-if.

The screen opens at once: until every message of the session is counted (the work ahead does it, a
20k-entry session takes ~0.1 s) its first frame names the model and its window and says the messages
are being counted; the report (`AgentSession.context_report`, the one source of every figure shown)
fills it in when it is ready. Esc closes it meanwhile; the other keys wait for the report.

Keys: ↑/↓ move, Enter opens the item's full content (or folds a group), Space folds, ``m`` moves the
selected panel between prefix and tail, ``h`` hides or shows it, ``a`` applies the what-if (asks for the
reason a cached change needs), ``u`` undoes the what-if, Esc closes.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Static, Tree
from textual.widgets.tree import TreeNode

from pi_tui.ai.types import (
    AssistantMessage,
    BashExecutionMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    dump_message,
    message_text,
)
from pi_tui.context.report import CacheProjection, ContextReport, Layout, MessageRow
from pi_tui.util.collector import FREEZE_BUILT_HISTORY_ABOVE, collector_paused
from pi_tui.util.pause_points import pausing, sleep_while
from pi_tui.util.record import Record

from ..handoff import quick_handoff
from . import session_of
from ._dialogs import DetailScreen, PromptScreen
from ._format import fmt_cost, fmt_tokens, one_line, share
from .context_data import apply_layout

if TYPE_CHECKING:
    from pi_tui.modes.interactive.app import PiApp
    from pi_tui.runtime.agent_session import AgentSession

__all__ = ["ContextScreen", "open_context"]

BREAKPOINT = "──── cache breakpoint ────"
COUNTING = "counting the messages' tokens…"
"""What the first frame shows where the figures go while the report is being made."""
COUNT_WAIT_S = 0.1
"""How long ``/context`` waits for the messages' counting (under way) before it shows without figures."""


@dataclass(frozen=True, slots=True)
class Item:
    """What a tree row stands for: its full content (Enter) and, for panels, the panel name.

    ``content`` may be a function: most rows are never opened, so their JSON is made on demand.
    """

    title: str
    content: str | Callable[[], str] = ""
    panel: str | None = None

    def text(self) -> str:
        return self.content() if callable(self.content) else self.content


def _message_preview(message: object) -> str:
    if isinstance(message, AssistantMessage):
        parts: list[str] = []
        for block in message.content:
            if isinstance(block, TextContent):
                parts.append(block.text)
            elif isinstance(block, ToolCall):
                parts.append(f"{block.name}({json.dumps(block.arguments, ensure_ascii=False)[:40]})")
            elif isinstance(block, ThinkingContent):
                parts.append("[thinking]")
        text = " ".join(parts)
    elif isinstance(message, ToolResultMessage):
        text = f"{message.tool_name} → {message_text(message)[:300]}"
    elif isinstance(message, BashExecutionMessage) and message.exclude_from_context:
        text = f"(kept out of context, not sent) {message_text(message)[:300]}"
    else:
        text = message_text(message)[:300]
    return one_line(text, 70) or "(empty)"


def _message_json(message: Record) -> Callable[[], str]:
    return lambda: json.dumps(dump_message(message), indent=2, ensure_ascii=False)


def _projection_line(p: CacheProjection | None) -> str:
    if p is None:
        return "estimating…"
    return (
        f"read {fmt_tokens(p.read)} · write {fmt_tokens(p.write)} · uncached {fmt_tokens(p.uncached)}"
        f" · est. input {fmt_cost(p.cost)}"
    )


class PlainTree(Tree[Item]):
    """A `Tree` whose string labels are plain text: message previews must never be read as markup."""

    def process_label(self, label: str | Text) -> Text:
        if isinstance(label, str):
            label = Text(label.partition("\n")[0])
        return super().process_label(label)


class ContextScreen(Screen[None]):
    """The ``/context`` inspector: a view of `ContextReport` with a panel what-if."""

    DEFAULT_CSS = """
    ContextScreen { layout: vertical; }
    ContextScreen #ctx-summary { height: auto; padding: 0 1; background: $boost; }
    ContextScreen #ctx-tree { height: 1fr; }
    ContextScreen #ctx-whatif { height: auto; padding: 0 1; color: $warning; }
    ContextScreen #ctx-hint { height: 1; padding: 0 1; color: $text-muted; }
    """
    BINDINGS = [
        Binding("escape", "close", "Close"),
        Binding("m", "move_panel", "Move panel"),
        Binding("h", "hide_panel", "Hide panel"),
        Binding("a", "apply_whatif", "Apply"),
        Binding("u", "reset_whatif", "Undo what-if"),
    ]

    def __init__(
        self,
        session: AgentSession,
        view: ContextReport | None = None,
        keys_pending: Callable[[], float] | None = None,
    ) -> None:
        """Args:
        session: the session whose next request is shown.
        view: its report; None opens the screen at once and fills it in once the report is made.
        keys_pending: how many more seconds the user's keys count as coming (`WarmUpTurn.keys_pending`):
            the cache projection, made in a thread, pauses while they come."""
        super().__init__()
        self.session = session
        self._view = view
        self._keys_pending = keys_pending
        self.ready = asyncio.Event()
        """Set once the report is shown (at once when the screen was given one)."""
        if view is not None:
            self.ready.set()
        self.whatif: dict[str, Layout] = {}
        self._next: TreeNode[Item] | None = None
        self._lazy: dict[int, tuple[TreeNode[Item], tuple[MessageRow, ...]]] = {}

    # --- building -------------------------------------------------------------------------------------

    @property
    def view(self) -> ContextReport:
        """The report shown.

        Raises:
            RuntimeError: it is still being made (see `ready`)."""
        if self._view is None:
            raise RuntimeError("The context report is still being made")
        return self._view

    def compose(self) -> ComposeResult:
        with Vertical():
            view = self._view
            yield Static(self._summary() if view is not None else self._pending_summary(), id="ctx-summary")
            model = view.model if view is not None else self.session.agent.model
            tree: Tree[Item] = PlainTree(Text(f"Next request → {model.label}"), id="ctx-tree")
            tree.show_root = True
            tree.guide_depth = 3
            if view is not None:
                self._fill(tree)
            else:
                tree.root.add_leaf(COUNTING)
                tree.root.expand()
            yield tree
            yield Static("", id="ctx-whatif")
            yield Static(
                "↑/↓ move · Enter open/fold · m move panel prefix↔tail · h hide panel · a apply · u undo · Esc close",
                id="ctx-hint",
            )

    def _pending_summary(self) -> Text:
        model = self.session.agent.model
        return Text(
            f"Model {model.label} · window {fmt_tokens(model.context_window)} · prompt: {COUNTING}\n"
            "Next request: estimating…"
        )

    def _summary(self) -> Text:
        v = self.view
        total = v.total_tokens
        projected = v.projected
        lines = [
            f"Model {v.model.label} · window {fmt_tokens(v.window)} · prompt ~{fmt_tokens(total)} tokens "
            f"({share(total, v.window)})",
            "Next request: "
            + _projection_line(projected)
            + (
                " (no earlier request: nothing to read yet)"
                if projected is not None and not projected.has_baseline
                else ""
            ),
        ]
        return Text("\n".join(lines))

    def _fill(self, tree: Tree[Item]) -> None:
        v = self.view
        env = v.envelope
        window = v.window
        root = tree.root
        root.data = Item("Next request", lambda: json.dumps(env.to_json(), indent=2, ensure_ascii=False))
        root.expand()

        system = root.add(
            f"System prompt · {fmt_tokens(v.system_tokens)} · {share(v.system_tokens, window)}",
            data=Item("System prompt", env.system_compiled),
        )
        for part in v.parts:
            system.add_leaf(
                f"{part.name} · {fmt_tokens(part.tokens)} · {one_line(part.text, 50)}",
                data=Item(f"System part: {part.name}", part.text),
            )
        tool_total = v.tool_tokens
        tools = root.add(
            f"Tools ({len(env.tools)}) · {fmt_tokens(tool_total)} · {share(tool_total, window)}",
            data=Item("Tools", lambda: json.dumps([t.to_json_dict() for t in env.tools], indent=2)),
        )
        for tool_row in v.tools:
            tool = tool_row.definition
            tools.add_leaf(
                f"{tool.name} · {fmt_tokens(tool_row.tokens)} · {one_line(tool.description, 50)}",
                data=Item(
                    f"Tool: {tool.name}", json.dumps(tool.to_json_dict(), indent=2, ensure_ascii=False)
                ),
            )
        root.add_leaf(Text(f"{BREAKPOINT} end of system prompt (covers the tools)", style="bold yellow"))

        cached_total = v.cached_tokens
        cached = root.add(
            f"Cached messages ({len(env.cached)}) · {fmt_tokens(cached_total)} · {share(cached_total, window)}",
            data=Item("Cached messages", ""),
            allow_expand=bool(env.cached),
        )
        self._lazy[id(cached)] = (cached, v.cached)
        if len(env.cached) <= 40:
            cached.expand()
        if env.cached:
            root.add_leaf(Text(f"{BREAKPOINT} end of the cached region", style="bold yellow"))
        tail_total = v.uncached_tokens
        tail = root.add(
            f"Uncached tail ({len(env.uncached)}) · {fmt_tokens(tail_total)} · {share(tail_total, window)}",
            data=Item("Uncached tail", ""),
            allow_expand=bool(env.uncached),
        )
        self._lazy[id(tail)] = (tail, v.uncached)
        tail.expand()
        options = v.options
        root.add_leaf(
            f"Options · {json.dumps(options) if options else '(defaults)'}",
            data=Item("Options", json.dumps(options, indent=2)),
        )

        self._next = root.add("Next request cache: estimating…", data=Item("Next request", ""), expand=True)
        self._fill_projection()

        panels = root.add(f"Panels ({len(v.panels)})", data=Item("Panels", ""), expand=True)
        if not v.panels:
            panels.add_leaf("(none registered)")
        for row in v.panels:
            state, where = row.state, row.layout
            if not state.requests:
                status = "not sent yet"
            elif state.hit is None:
                status = "uncached tail"
            else:
                status = "cache hit" if state.hit else "cache miss"
            panels.add_leaf(
                f"[{state.id}] {state.panel.name} · {where} · {fmt_tokens(state.tokens)} · "
                f"refreshed {state.refreshed_at or '—'} · last request: {status} · {fmt_cost(state.cost)} so far",
                data=Item(f"Panel [{state.id}] {state.panel.name}", state.content, panel=state.panel.name),
            )

        transforms = root.add(f"Context transforms ({len(v.transforms)})", data=Item("Transforms", ""))
        for record in v.transforms:
            node = transforms.add(
                f"{record.timestamp[:19]} · {record.transformer}"
                + (f" · {record.title}" if record.title else "")
                + f" · {len(record.ops)} op(s)",
                data=Item(f"Transform by {record.transformer}", json.dumps(list(record.ops), indent=2)),
            )
            for op in record.ops:
                reason = op.get("invalidateCacheReason")
                node.add_leaf(
                    f"{op.get('op')} ({op.get('scope', 'cached')})" + (f" · why: {reason}" if reason else ""),
                    data=Item(f"Patch op {op.get('op')}", json.dumps(op, indent=2, ensure_ascii=False)),
                )

        ledger = v.ledger
        t = ledger.totals()
        ratio = ledger.hit_ratio()
        led = root.add(
            f"Cache ledger · {len(ledger.requests)} requests · read {fmt_tokens(t.cache_read)} · "
            f"write {fmt_tokens(t.cache_write)} · input {fmt_tokens(t.input)} · {fmt_cost(t.cost.total)}"
            + (f" · hit ratio {ratio:.2f}" if ratio is not None else ""),
            data=Item("Cache ledger", ""),
        )
        if not ledger.invalidations:
            led.add_leaf("No cache invalidations")
        for inv in ledger.invalidations:
            led.add_leaf(
                f"request {inv.request_index} · {inv.source} · {inv.reason} · at {inv.where} · "
                f"{fmt_tokens(inv.tokens_rebilled)} re-billed",
                data=Item("Invalidation", json.dumps(asdict(inv), indent=2)),
            )
        st = v.totals
        if st is not None:
            ratio = st.cache_read_ratio
            root.add_leaf(
                f"Session so far (file, all branches): {st.answers} answers · {fmt_cost(st.cost)}"
                + (f" · cache read ratio {ratio:.2f}" if ratio is not None else "")
            )
        for title, lines in v.sections:  # what extensions add (pi.register_context_section)
            section = root.add(title, data=Item(title, "\n".join(lines)))
            for line in lines:
                section.add_leaf(Text(line))

    def _fill_projection(self) -> None:
        p = self.view.projected
        node = self._next
        if node is None:
            return
        node.set_label("Next request cache: " + _projection_line(p))
        if p is None:
            return
        node.remove_children()
        node.add_leaf(f"read from cache ~{fmt_tokens(p.read)} (priced at cache read)")
        node.add_leaf(
            f"written to cache ~{fmt_tokens(p.write)}"
            + (f" (first difference: {p.first_difference})" if p.first_difference and p.has_baseline else "")
        )
        node.add_leaf(f"sent uncached ~{fmt_tokens(p.uncached)} (priced as input)")

    def on_tree_node_expanded(self, event: Tree.NodeExpanded[Item]) -> None:
        # Message rows are made when their group is first opened: a long session has thousands.
        lazy = self._lazy.pop(id(event.node), None)
        if lazy is not None:
            node, rows = lazy
            self._add_messages(node, rows, self.view.window)

    def _add_messages(self, parent: TreeNode[Item], rows: tuple[MessageRow, ...], window: int) -> None:
        for row in rows:
            parent.add_leaf(
                f"#{row.index} {row.role} · {fmt_tokens(row.tokens)} · {share(row.tokens, window)} · "
                f"{_message_preview(row.message)}",
                data=Item(f"Message #{row.index} ({row.role})", _message_json(row.message)),
            )

    # --- actions --------------------------------------------------------------------------------------

    def _tree(self) -> Tree[Item]:
        return self.query_one("#ctx-tree", Tree)

    def on_mount(self) -> None:
        self._tree().focus()
        if self._view is None:
            self.call_after_refresh(self._load)
        elif self._view.projected is None:
            self.call_after_refresh(self._estimate)

    @work(exclusive=True, group="context-report")
    async def _load(self) -> None:
        """Make the report once every message is counted (by the work ahead, which gives this step
        the first turn and runs it in a thread, so keys go on being read), then show it."""
        from .prepare import preparation_for

        preparation = preparation_for(self.session)
        release = preparation.hold()  # nothing else of the work ahead until the report is drawn
        try:
            await preparation.need("tokens")
            self._show(await self.session.context_report())
        finally:
            self.call_after_refresh(release)
        if self.view.projected is None:
            await self._projection()

    def _show(self, view: ContextReport) -> None:
        self._view = view
        tree = self._tree()
        tree.clear()
        self._fill(tree)
        self.query_one("#ctx-summary", Static).update(self._summary())
        self.ready.set()

    @work(exclusive=True, group="context-projection")
    async def _estimate(self) -> None:
        await self._projection()

    async def _projection(self) -> None:
        # Hashing two whole requests takes a while on a long session: draw first, then fill this in.
        # The work ahead of the other screens waits meanwhile: this is for the screen being looked at.
        from .prepare import preparation_for

        release = preparation_for(self.session).hold()
        try:
            await asyncio.to_thread(self._project)
        finally:
            release()
        if not self.is_attached:  # closed (or the app quit) while the hashing ran: nothing left to fill
            return
        self._fill_projection()
        self.query_one("#ctx-summary", Static).update(self._summary())
        self._show_whatif()

    def _project(self) -> None:
        """In a thread: the projection, handing the interpreter back quickly to the keys meanwhile.
        It builds and hashes the whole next request and keeps the previous one's blocks: with the
        collector on, the full collections that set off took 50-100 ms from whichever key was under way."""
        pending = self._keys_pending
        wait = sleep_while(pending) if pending is not None else (lambda: None)
        with quick_handoff(), collector_paused(freeze_above=FREEZE_BUILT_HISTORY_ABOVE), pausing(wait):
            self.view.projection()

    def on_tree_node_selected(self, event: Tree.NodeSelected[Item]) -> None:
        event.stop()
        node = event.node
        item = node.data
        if item is None:
            return
        content = item.text()
        if node.children and not content:
            return  # a group: Enter folds it (the tree's own toggle)
        self.app.push_screen(DetailScreen(item.title, content or "(empty)"))

    def _selected_panel(self) -> str | None:
        node = self._tree().cursor_node
        item = node.data if node is not None else None
        return item.panel if item is not None else None

    def _current(self, name: str) -> Layout:
        if name in self.whatif:
            return self.whatif[name]
        for row in self.view.panels:
            if row.state.panel.name == name:
                return "hidden" if row.layout == "hidden" else row.state.panel.placement
        raise KeyError(name)

    def _pending(self) -> bool:
        """Whether the report is still being made (a key that needs it says so and does nothing)."""
        if self._view is not None:
            return False
        self.notify("Still counting the messages' tokens: one moment", severity="warning")
        return True

    def action_move_panel(self) -> None:
        if self._pending():
            return
        name = self._selected_panel()
        if name is None:
            self.notify("Select a panel to move it", severity="warning")
            return
        current = self._current(name)
        self.whatif[name] = "prefix" if current in ("tail", "hidden") else "tail"
        self._show_whatif()

    def action_hide_panel(self) -> None:
        if self._pending():
            return
        name = self._selected_panel()
        if name is None:
            self.notify("Select a panel to hide it", severity="warning")
            return
        current = self._current(name)
        if current == "hidden":
            original = next(r.state.panel.placement for r in self.view.panels if r.state.panel.name == name)
            self.whatif[name] = original
        else:
            self.whatif[name] = "hidden"
        self._show_whatif()

    def action_reset_whatif(self) -> None:
        if self._pending():
            return
        self.whatif = {}
        self._show_whatif()

    def _changes(self) -> dict[str, Layout]:
        base = {
            r.state.panel.name: ("hidden" if r.layout == "hidden" else r.state.panel.placement)
            for r in self.view.panels
        }
        return {name: layout for name, layout in self.whatif.items() if base.get(name) != layout}

    def projection(self) -> CacheProjection:
        """The what-if projection of the next request (the current one when nothing is changed)."""
        return self.view.project_layout(self._changes())

    def _show_whatif(self) -> None:
        box = self.query_one("#ctx-whatif", Static)
        changes = self._changes()
        if not changes:
            box.update("")
            return
        then = self.projection()
        now = self.view.projection()
        delta = then.cost - now.cost
        moves = ", ".join(f"{name} → {where}" for name, where in changes.items())
        box.update(
            Text(
                f"What-if ({moves}):\n"
                f"  now:     {_projection_line(now)}\n"
                f"  what-if: {_projection_line(then)}\n"
                f"  change:  {'+' if delta >= 0 else '-'}{fmt_cost(abs(delta))} on the next request, "
                f"tokens {then.total - now.total:+d} · a apply · u undo"
            )
        )

    def action_apply_whatif(self) -> None:
        if self._pending():
            return
        changes = self._changes()
        if not changes:
            self.notify("Nothing to apply: move (m) or hide (h) a panel first", severity="warning")
            return

        def done(reason: str | None) -> None:
            if reason is None:
                return
            try:
                apply_layout(self.session, changes, reason)
            except ValueError as exc:
                self.notify(str(exc), severity="error")
                return
            self.notify("Panel layout applied; the next request uses it")
            self.app.pop_screen()

        self.app.push_screen(
            PromptScreen("Why? (a change to the cached prompt needs a reason)", placeholder="reason"), done
        )

    def action_close(self) -> None:
        self.app.pop_screen()


def _keys_pending(app: PiApp) -> Callable[[], float] | None:
    """The app's clock of the user's keys (`WarmUpTurn.keys_pending`); None in an app without one."""
    from ..app import PiApp

    return app.warm_turn.keys_pending if isinstance(app, PiApp) else None


async def open_context(app: PiApp, _args: str) -> None:
    """``/context``: push the inspector for the app's session. When every message is counted (the work
    ahead did it), the report is made first (a few milliseconds) and the first frame shows its figures;
    otherwise the screen shows at once and fills them in as soon as the counting is done (the work ahead
    does it now, before anything else)."""
    from .prepare import preparation_for

    session = session_of(app)
    preparation = preparation_for(session)
    release = preparation.hold()  # the work ahead of the other screens waits for the first frame
    try:
        if not preparation.done("tokens"):
            # The counting goes first now; when it ends soon, one frame with the figures comes sooner
            # than a placeholder followed by them (the two frames would share the interpreter with it).
            try:
                await asyncio.wait_for(asyncio.shield(preparation.need("tokens")), COUNT_WAIT_S)
            except TimeoutError:
                pass
        report = await session.context_report() if preparation.done("tokens") else None
        await app.push_screen(ContextScreen(session, report, _keys_pending(app)))
    finally:
        app.call_after_refresh(release)
