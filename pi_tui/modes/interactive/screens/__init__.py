"""The TUI's inspectors and navigators: ``/context``, ``/tree``, ``/resume``, ``/model``,
``/scoped-models``, ``/settings``, ``/hotkeys``, ``/session`` and the compaction review.

The shell (`pi_tui.modes.interactive.app.PiApp`) routes those commands here through `SCREEN_COMMANDS`
(command name without the slash → ``async handler(app, args)`` that pushes the screen) and calls
`install` once the session is ready. The screens need only ``app.session`` (the `AgentSession`),
``app.set_editor_text(text)`` and ``app.run_command(text)``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pi_tui.modes.interactive.app import PiApp
    from pi_tui.runtime.agent_session import AgentSession

__all__ = ["SCREEN_COMMANDS", "install", "session_of"]

Handler = Callable[["PiApp", str], Awaitable[None]]


def session_of(app: PiApp) -> AgentSession:
    """The app's session (the screens' commands run once it is ready)."""
    if app.session is None:
        raise RuntimeError("Startup is still in progress")
    return app.session


async def _context(app: PiApp, args: str) -> None:
    from .context_screen import open_context

    await open_context(app, args)


async def _tree(app: PiApp, args: str) -> None:
    from .tree_screen import open_tree

    await open_tree(app, args)


async def _resume(app: PiApp, args: str) -> None:
    from .resume_screen import open_resume

    await open_resume(app, args)


async def _model(app: PiApp, args: str) -> None:
    from .model_screen import open_model

    await open_model(app, args)


async def _scoped_models(app: PiApp, args: str) -> None:
    from .scoped_models_screen import open_scoped_models

    await open_scoped_models(app, args)


async def _settings(app: PiApp, args: str) -> None:
    from .settings_screen import open_settings

    await open_settings(app, args)


async def _hotkeys(app: PiApp, args: str) -> None:
    from .info_screens import open_hotkeys

    await open_hotkeys(app, args)


async def _changelog(app: PiApp, args: str) -> None:
    from .info_screens import open_changelog

    await open_changelog(app, args)


async def _session(app: PiApp, args: str) -> None:
    from .info_screens import open_session

    await open_session(app, args)


async def _fork(app: PiApp, args: str) -> None:
    from .tree_screen import open_fork

    await open_fork(app, args)


async def _summary(app: PiApp, args: str) -> None:
    from .info_screens import open_summary

    await open_summary(app, args)


SCREEN_COMMANDS: dict[str, Handler] = {
    "context": _context,
    "tree": _tree,
    "resume": _resume,
    "model": _model,
    "scoped-models": _scoped_models,
    "settings": _settings,
    "hotkeys": _hotkeys,
    "changelog": _changelog,
    "session": _session,
    "fork": _fork,
    "summary": _summary,
}


def install(app: PiApp) -> None:
    """Called once by the shell after the session is ready: registers the compaction review."""
    from .compaction_review import install_review

    install_review(app)
