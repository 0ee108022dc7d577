"""What `SessionEventsMixin` relies on from `ExtensionRunner`, declared for type checkers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Awaitable, Callable

    from pi_tui.ai.types import CustomMessage

    from .context import ExtensionContext
    from .dispatch import Dispatch
    from .extension import Extension
    from .host import SessionHost
    from .ui import ExtensionUIState

__all__ = ["RunnerHost"]


class RunnerHost:
    """Attribute and method declarations only; `ExtensionRunner` provides them."""

    session: SessionHost
    lifecycle_timeout: float
    theme_paths: list[str]
    ui_state: ExtensionUIState
    tree_asked_for: str | None
    _next_turn: list[CustomMessage]
    _tree_from_extension: bool
    _tree_skip: bool
    dispatch: Dispatch

    if TYPE_CHECKING:

        def has_handlers(self, event: str) -> bool: ...

        def call(
            self, ext: Extension, handler: Callable[..., Any], *args: Any, ctx: ExtensionContext | None = None
        ) -> Any: ...

        async def notify(self, name: str, *, timeout: float | None = None, **fields: Any) -> None: ...

        async def report(self, ext: Extension, event: str, error: BaseException | str) -> None: ...

        def spawn(
            self, work: Awaitable[object], ext: Extension | None = None, what: str = ""
        ) -> asyncio.Future[object]: ...
