"""Compaction review (beyond pi): see the summary before it replaces the conversation.

`install_review` sets the runtime's ``review_summary`` hook. Depending on the ``compaction.review``
setting (``always`` | ``manual-only`` | ``never``; default ``manual-only``), a compaction shows
`ReviewScreen` before it is applied: Enter accepts, ``e`` edits, ``r`` regenerates with a focus, Esc
cancels. What the user accepts is exactly what is persisted (``compaction_apply``) and replayed.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from pi_tui.agent.events import AgentEvent, AutoCompactionEnd, AutoCompactionStart, RuntimeEvent

from . import session_of
from ._dialogs import EditScreen, PromptScreen

if TYPE_CHECKING:
    from pi_tui.modes.interactive.app import PiApp
    from pi_tui.resources.settings import SettingsManager
    from pi_tui.runtime.agent_session import AgentSession

__all__ = ["ReviewScreen", "ReviewMode", "install_review", "review_mode", "regenerate_summary"]

log = logging.getLogger(__name__)

ReviewMode = Literal["always", "manual-only", "never"]
REVIEW_MODES: tuple[ReviewMode, ...] = ("always", "manual-only", "never")
DEFAULT_REVIEW: ReviewMode = "manual-only"


def review_mode(settings: SettingsManager | None) -> ReviewMode:
    """``compaction.review`` from the settings (an unknown value falls back to the default)."""
    group = settings.get("compaction", {}) if settings is not None else {}
    value = group.get("review") if isinstance(group, dict) else None
    return value if value in REVIEW_MODES else DEFAULT_REVIEW


async def regenerate_summary(session: AgentSession, focus: str | None) -> str:
    """A fresh summary of what the pending compaction would summarise, with ``Additional focus``.

    Raises:
        pi_tui.compaction.CompactionError: nothing to compact, or the summary failed.
    """
    from pi_tui.compaction import NothingToCompact, prepare_compaction, summarize_compaction

    path = session.session_manager.get_branch()
    count = session.compaction.message_counter()  # the counts the first summary made, reused
    prep = prepare_compaction(path, session.compaction.settings(), count)
    if prep is None:
        raise NothingToCompact()
    backend = await session.compaction_backend()  # the runtime's own summary backend (same cache prefix)
    backend.count = count
    if backend.prefix_tokens is None:
        backend.prefix_tokens = prep.tokens_before
    outcome = await summarize_compaction(prep, backend, custom_instructions=focus or None)
    return outcome.summary


@dataclass(frozen=True, slots=True)
class _Regenerate:
    focus: str


class ReviewScreen(ModalScreen[str | None]):
    """Shows a compaction summary; answers the text to apply, or None to cancel the compaction."""

    DEFAULT_CSS = """
    ReviewScreen { align: center middle; }
    ReviewScreen > Vertical {
        width: 90%; max-width: 120; height: 90%;
        border: round $accent; background: $surface; padding: 0 1;
    }
    ReviewScreen #review-title { text-style: bold; color: $accent; }
    ReviewScreen VerticalScroll { height: 1fr; }
    ReviewScreen #review-hint { color: $text-muted; }
    """
    BINDINGS = [
        Binding("enter,a", "accept", "Accept"),
        Binding("e", "edit", "Edit"),
        Binding("r", "regenerate", "Regenerate"),
        Binding("escape", "cancel", "Cancel"),
    ]

    def __init__(self, session: AgentSession, summary: str, *, automatic: bool) -> None:
        super().__init__()
        self.session = session
        self.summary = summary
        self.automatic = automatic
        self.edited = False

    def compose(self) -> ComposeResult:
        with Vertical():
            kind = "Automatic compaction" if self.automatic else "Compaction"
            yield Static(
                f"{kind}: review the summary that will replace the older conversation", id="review-title"
            )
            with VerticalScroll():
                yield Static(Text(self.summary), id="review-summary")
            yield Static(
                "Enter accept · e edit · r regenerate with a focus · Esc cancel the compaction",
                id="review-hint",
            )

    def _show(self, summary: str) -> None:
        self.summary = summary
        self.query_one("#review-summary", Static).update(Text(summary))

    def action_accept(self) -> None:
        self.dismiss(self.summary)

    def action_cancel(self) -> None:
        self.dismiss(None)

    def action_edit(self) -> None:
        def done(text: str | None) -> None:
            if text is not None and text.strip():
                self.edited = True
                self._show(text)

        self.app.push_screen(EditScreen("Edit the summary (Ctrl+S keeps it)", self.summary), done)

    def action_regenerate(self) -> None:
        def done(focus: str | None) -> None:
            if focus is not None:
                self._regenerate(focus)

        self.app.push_screen(PromptScreen("Regenerate with what focus? (empty: none)"), done)

    @work(exclusive=True, group="review-regenerate")
    async def _regenerate(self, focus: str) -> None:
        from pi_tui.compaction import CompactionError

        self.query_one("#review-hint", Static).update("Regenerating the summary…")
        try:
            summary = await regenerate_summary(self.session, focus)
        except CompactionError as exc:
            self.notify(str(exc), severity="error")
        else:
            self._show(summary)
        self.query_one("#review-hint", Static).update(
            "Enter accept · e edit · r regenerate with a focus · Esc cancel the compaction"
        )


def install_review(app: PiApp) -> None:
    """Let the user review every compaction the ``compaction.review`` setting asks for."""
    session = session_of(app)
    state = {"automatic": False}

    def track(event: AgentEvent | RuntimeEvent) -> None:
        if isinstance(event, AutoCompactionStart):
            state["automatic"] = True
        elif isinstance(event, AutoCompactionEnd):
            state["automatic"] = False

    session.subscribe(track)

    async def review(summary: str) -> str | None:
        automatic = state["automatic"]
        mode = review_mode(session.settings)
        if mode == "never" or (mode == "manual-only" and automatic):
            return None
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[str | None] = loop.create_future()

        def done(result: str | None) -> None:
            if not answer.done():
                answer.set_result(result)

        app.push_screen(ReviewScreen(session, summary, automatic=automatic), done)
        result = await answer
        if result is None:
            return ""  # the runtime's "cancel"
        return result if result != summary else None

    session.compaction.review_summary = review
