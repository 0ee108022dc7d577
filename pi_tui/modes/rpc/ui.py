"""``ctx.ui`` over RPC: pi's extension-UI sub-protocol.

Dialogs (select, confirm, input, editor) are sent as ``{"type": "extension_ui_request", "id", "method",
...}`` and wait for the client's ``{"type": "extension_ui_response", "id", "value" | "confirmed" |
"cancelled"}``; ``timeout`` goes out in milliseconds, as pi sends it, and is enforced here: when it
passes, the dialog resolves as cancelled. notify, setStatus, setWidget, setTitle and set_editor_text
are fire-and-forget requests with fresh ids. Everything else a TUI would draw is a no-op.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from pi_tui.extensions.ui import NotifyLevel, WidgetPlacement

__all__ = ["RpcUIBridge"]

log = logging.getLogger(__name__)


class RpcUIBridge:
    """A `pi_tui.extensions.ui.UIBridge` that talks to the RPC client.

    Args:
        send: Writes one record to the client.
    """

    def __init__(self, send: Callable[[dict[str, Any]], None]) -> None:
        self._send = send
        self._pending: dict[str, asyncio.Future[dict[str, Any]]] = {}

    # --- answers from the client ------------------------------------------------------------------

    def resolve(self, response: dict[str, Any]) -> bool:
        """Deliver an ``extension_ui_response``; False when no dialog waits for that id."""
        future = self._pending.get(str(response.get("id")))
        if future is None or future.done():
            return False
        future.set_result(response)
        return True

    def cancel_all(self) -> None:
        """Resolve every open dialog as cancelled (the client went away)."""
        for future in list(self._pending.values()):
            if not future.done():
                future.set_result({"cancelled": True})

    async def _ask(self, method: str, timeout: float | None, **fields: Any) -> dict[str, Any] | None:
        request_id = str(uuid.uuid4())
        record: dict[str, Any] = {"type": "extension_ui_request", "id": request_id, "method": method}
        record.update({k: v for k, v in fields.items() if v is not None})
        if timeout is not None:
            record["timeout"] = int(timeout * 1000)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            self._send(record)
            response = await asyncio.wait_for(future, timeout) if timeout is not None else await future
        except TimeoutError:
            return None
        finally:
            self._pending.pop(request_id, None)
        return None if response.get("cancelled") else response

    # --- dialogs ----------------------------------------------------------------------------------

    async def select(self, title: str, options: Sequence[str], *, timeout: float | None = None) -> str | None:
        answer = await self._ask("select", timeout, title=title, options=list(options))
        value = answer.get("value") if answer else None
        return value if isinstance(value, str) else None

    async def confirm(self, title: str, message: str, *, timeout: float | None = None) -> bool:
        answer = await self._ask("confirm", timeout, title=title, message=message)
        return bool(answer and answer.get("confirmed") is True)

    async def input(
        self, title: str, placeholder: str | None = None, *, timeout: float | None = None
    ) -> str | None:
        answer = await self._ask("input", timeout, title=title, placeholder=placeholder)
        value = answer.get("value") if answer else None
        return value if isinstance(value, str) else None

    async def editor(self, title: str, prefill: str | None = None) -> str | None:
        answer = await self._ask("editor", None, title=title, prefill=prefill)
        value = answer.get("value") if answer else None
        return value if isinstance(value, str) else None

    # --- fire and forget --------------------------------------------------------------------------

    def _tell(self, method: str, **fields: Any) -> None:
        record: dict[str, Any] = {"type": "extension_ui_request", "id": str(uuid.uuid4()), "method": method}
        record.update({k: v for k, v in fields.items() if v is not None})  # pi omits undefined fields
        try:
            self._send(record)
        except Exception:  # the client is gone; a notice is not worth failing the extension for
            log.debug("could not send %s", method, exc_info=True)

    def notify(self, message: str, level: NotifyLevel = "info") -> None:
        self._tell("notify", message=message, notifyType=level)

    def set_status(self, key: str, text: str | None) -> None:
        self._tell("setStatus", statusKey=key, statusText=text)

    def set_widget(
        self, key: str, lines: Sequence[str] | None, placement: WidgetPlacement = "aboveEditor"
    ) -> None:
        fields: dict[str, Any] = {"widgetKey": key, "widgetLines": None if lines is None else list(lines)}
        if placement != "aboveEditor":  # pi leaves the default out
            fields["widgetPlacement"] = placement
        self._tell("setWidget", **fields)

    def set_title(self, title: str) -> None:
        self._tell("setTitle", title=title)

    def set_editor_text(self, text: str) -> None:
        self._tell("set_editor_text", text=text)

    def set_working_message(self, message: str | None = None) -> None:
        return None
