"""``/hotkeys`` and ``/session`` as screens: tables to read, Esc to close."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from pi_tui.session.entries import CompactionEntry, ContextTransformEntry

from . import session_of
from ._format import fmt_cost, fmt_tokens

if TYPE_CHECKING:
    from pi_tui.modes.interactive.app import PiApp
    from pi_tui.runtime.agent_session import AgentSession

__all__ = [
    "CHANGELOG_PATH",
    "InfoScreen",
    "active_summary",
    "open_changelog",
    "open_hotkeys",
    "open_session",
    "open_summary",
    "session_rows",
    "SCREEN_KEYS",
    "screen_key_rows",
]

SCREEN_KEYS: dict[str, list[tuple[str, str]]] = {
    "/tree": [
        ("↑/↓ · ←/→", "move · page"),
        ("type · backspace", "search"),
        ("enter", "jump here (asks about a branch summary when leaving a branch)"),
        ("ctrl+f", "fork into a new session file"),
        ("esc / ctrl+c", "close"),
    ],
    "/context": [
        ("enter", "open the item's full content (or fold a group)"),
        ("m · h", "what-if: move the panel prefix↔tail · hide it"),
        ("a · u", "apply the what-if (asks why) · undo it"),
        ("esc", "close"),
    ],
    "/resume": [
        ("type", 'search names, prompts, dates ("phrase", re:regex)'),
        ("enter · tab", "resume · this folder / all"),
    ],
    "/model": [
        ("type · ←/→", "search · thinking level"),
        ("enter · ctrl+s", "use for this session · save as default"),
        ("tab · ctrl+t", "all / scoped · add or remove from the scope"),
    ],
    "/settings": [
        ("type · enter", "search · change"),
        ("ctrl+d · ctrl+g", "reset to default · write global / project"),
    ],
    "/fork": [("enter", "fork from the highlighted message of yours (the /tree keys work too)")],
    "compaction review": [("enter · e · r · esc", "accept · edit · regenerate with a focus · cancel")],
}
"""Each screen's fixed keys, for ``/hotkeys``; `screen_key_rows` adds the keys the user can rebind."""


def screen_key_rows(keymap: dict[str, list[str]] | None) -> dict[str, list[tuple[str, str]]]:
    """``/hotkeys``' tables of the screens: their fixed keys and, for ``/tree`` and ``/resume``, each of
    pi's ids (``app.tree.*``, ``app.session.*``) with its effective keys (the defaults when ``keymap``
    is None)."""
    from pi_tui.modes.interactive.keys import LIST_KEYS, SCREEN_SCOPES, screen_keys

    def rows(screen: str) -> list[tuple[str, str]]:
        return [
            (", ".join(screen_keys(keymap, pi_id)) or "(unbound)", LIST_KEYS[pi_id][0].split(": ", 1)[1])
            for pi_id in LIST_KEYS
            if pi_id in SCREEN_SCOPES[screen]
        ]

    copy = screen_keys(keymap, "app.message.copy")
    tables = dict(SCREEN_KEYS)
    first, *rest = SCREEN_KEYS["/tree"]
    tables["/tree"] = [
        first,
        *rows("/tree"),
        (", ".join(copy) or "(unbound)", "copy the entry's text"),
        *rest,
    ]
    tables["/resume"] = [*SCREEN_KEYS["/resume"], *rows("/resume")]
    return tables


def _table(title: str, rows: list[tuple[str, str]]) -> Table:
    table = Table(title=title, title_justify="left", show_header=False, box=None, padding=(0, 2))
    table.add_column(style="bold cyan", no_wrap=True)
    table.add_column(overflow="fold")  # a long path or id wraps instead of being cut
    for key, what in rows:
        table.add_row(Text(key), Text(what))
    return table


class InfoScreen(Screen[None]):
    """A titled, scrollable page of tables."""

    DEFAULT_CSS = """
    InfoScreen #info-title { height: 1; padding: 0 1; text-style: bold; color: $accent; }
    InfoScreen VerticalScroll { height: 1fr; padding: 0 1; }
    InfoScreen #info-help { height: 1; padding: 0 1; color: $text-muted; }
    """
    BINDINGS = [Binding("escape,q", "close", "Close")]

    def __init__(self, title: str, body: RenderableType) -> None:
        super().__init__()
        self._title = title
        self._body = body

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self._title, id="info-title")
            with VerticalScroll():
                yield Static(self._body, id="info-body")
            yield Static("↑/↓ scroll · Esc close", id="info-help")

    def on_mount(self) -> None:
        self.query_one(VerticalScroll).focus()

    def action_close(self) -> None:
        self.app.pop_screen()


def _app_keys(app: PiApp) -> list[tuple[str, str]]:
    from pi_tui.modes.interactive.app import PiApp
    from pi_tui.modes.interactive.keys import DEFAULT_KEYS, hotkey_rows

    if not isinstance(app, PiApp):  # a host app without pi's keys (the screens' tests): the defaults
        return hotkey_rows(DEFAULT_KEYS)
    # the app's keys and the editor's effective keys, keybindings.json included
    return hotkey_rows(app.keymap or DEFAULT_KEYS, app.editor.key_actions)


async def open_hotkeys(app: PiApp, _args: str) -> None:
    """``/hotkeys``: the app's keys (with the user's keybindings), then each screen's."""
    tables = []
    app_rows = _app_keys(app)
    if app_rows:
        tables.append(_table("Main screen", app_rows))
    from pi_tui.modes.interactive.keys import keymap_of

    tables += [_table(name, rows) for name, rows in screen_key_rows(keymap_of(app)).items()]
    await app.push_screen(
        InfoScreen("Keyboard shortcuts", Group(*[g for t in tables for g in (t, Text(""))]))
    )


CHANGELOG_PATH = Path(__file__).resolve().parents[4] / "docs" / "changelog.md"
"""pi-tui's changelog: ``docs/changelog.md`` of the source tree (an install without it has none)."""


async def open_changelog(app: PiApp, _args: str) -> None:
    """``/changelog``: pi-tui's changelog, newest first, on a page of its own ("What's New", as pi titles it)."""
    from rich.markdown import Markdown

    try:
        text = CHANGELOG_PATH.read_text(encoding="utf-8")
    except OSError:
        text = ""
    # the page's own title and introduction give way to the entries ("## <day>" sections)
    start = text.find("\n## ")
    entries = text[start + 1 :].strip() if start >= 0 else ""
    body: RenderableType = Markdown(entries) if entries else Text("No changelog entries found.")
    await app.push_screen(InfoScreen("What's New", body))


def session_rows(session: AgentSession) -> list[tuple[str, str]]:
    """What ``/session`` shows, as (label, value) rows."""
    manager = session.session_manager
    stats = session.stats()
    entries = manager.get_entries()
    leaves = {e.id for e in entries} - {e.parent_id for e in entries}
    compactions = sum(
        1
        for e in entries
        if e.type == "compaction"
        or (
            isinstance(e, ContextTransformEntry)
            and any(isinstance(op, dict) and op.get("op") == "compaction_apply" for op in e.patch)
        )
    )
    denom = stats.input + stats.cache_read + stats.cache_write
    ratio = f"{stats.cache_read / denom:.1%}" if denom else "—"
    ledger = session.engine.ledger
    live = ledger.hit_ratio()
    from pi_tui.compaction.tokens import context_tokens
    from pi_tui.runtime.cache_warmer import warming_rows

    window = session.model.context_window
    used = context_tokens(manager.get_branch())
    return [
        ("Name", manager.name or "(unnamed)"),
        ("File", str(manager.path or "(in memory)")),
        ("ID", manager.id),
        ("Model", f"{session.model.label} · thinking {session.thinking}"),
        ("Entries", f"{len(entries)} · {len(leaves)} branch ends · {compactions} compactions"),
        (
            "Messages",
            f"{stats.user_messages} user · {stats.assistant_messages} assistant · {stats.tool_calls} tool calls"
            f" · {stats.tool_results} tool results",
        ),
        (
            "Tokens",
            f"{fmt_tokens(stats.input)} input · {fmt_tokens(stats.output)} output · "
            f"{fmt_tokens(stats.cache_read)} cache read · {fmt_tokens(stats.cache_write)} cache write · "
            f"{fmt_tokens(stats.total_tokens)} total",
        ),
        ("Cost", fmt_cost(stats.cost)),
        ("Cache read ratio", ratio + (f" (this run: {live:.1%})" if live is not None else "")),
        (
            "Context",
            f"~{fmt_tokens(used)} of {fmt_tokens(window)} ({100 * used / window:.1f}%)" if window else "—",
        ),
        *warming_rows(session.cache_warmer),
    ]


async def open_session(app: PiApp, _args: str) -> None:
    """``/session``: file, id, counts, tokens, cost and cache ratio."""
    table = Table(show_header=False, box=None, padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column(overflow="fold")  # a long path or id wraps instead of being cut
    for label, value in session_rows(session_of(app)):
        table.add_row(Text(label), Text(value))
    await app.push_screen(InfoScreen("Session", table))


def active_summary(session: AgentSession) -> tuple[str, int, str] | None:
    """The compaction summary the next request carries: (text, tokens before, when), or None."""
    latest = None
    for entry in session.session_manager.get_branch():
        if isinstance(entry, CompactionEntry):
            latest = (entry.summary, int(entry.tokens_before or 0), str(entry.timestamp))
        elif isinstance(entry, ContextTransformEntry):
            for op in entry.patch:
                if isinstance(op, dict) and op.get("op") == "compaction_apply":
                    latest = (
                        str(op.get("summary", "")),
                        int(op.get("tokensBefore") or 0),
                        str(entry.timestamp),
                    )
    return latest


async def open_summary(app: PiApp, _args: str) -> None:
    """``/summary``: the active compaction summary, in full."""
    from ._dialogs import DetailScreen

    found = active_summary(session_of(app))
    if found is None:
        app.notify("No compaction on this branch yet", severity="warning")
        return
    text, before, when = found
    await app.push_screen(
        DetailScreen(f"Compaction summary · {fmt_tokens(before)} tokens summarised · {when[:19]}", text)
    )
