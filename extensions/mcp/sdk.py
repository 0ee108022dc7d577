"""The MCP SDK, loaded in a background thread so a server's first use does not wait for its import.

Importing the SDK's client side takes ~0.45 s of CPU (pydantic models for every protocol type, plus the
SDK's server half, which its package ``__init__`` imports too), and a first ``tools/call`` of a tool with
an output schema imports ``jsonschema`` (~50 ms more). ``preload`` starts that work in a daemon thread as
soon as the extension knows a server is configured; ``loaded`` waits for it without blocking the event
loop. The thread is a daemon so that a short run that never uses a server does not wait for the import
to finish before it exits.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import importlib
import threading
from collections.abc import Iterable

__all__ = ["preload", "loaded", "modules_for"]

_BASE = (
    "mcp_types",
    "mcp.client.session",
    "mcp.shared.message",
    "mcp.shared.exceptions",
    "anyio._backends._asyncio",  # anyio loads its event-loop backend on first use otherwise (~45 ms)
)
# Imported after the future is set: a connection does not need them, the first call of a tool with an
# output schema does (the session validates structured results with jsonschema, ~50 ms).
_AFTER = ("jsonschema.validators", "referencing")
_BY_TRANSPORT = {
    "stdio": (),  # our own transport (stdio.py): nothing more than the base
    "http": ("mcp.client.streamable_http", "mcp.shared._httpx_utils"),
    "sse": ("mcp.client.sse",),
}

_lock = threading.Lock()
_loads: dict[str, concurrent.futures.Future[None]] = {}


def modules_for(transports: Iterable[str]) -> list[str]:
    """The modules connections over ``transports`` need, in import order."""
    wanted = list(_BASE)
    for transport in sorted(set(transports)):
        wanted += [m for m in _BY_TRANSPORT.get(transport, ()) if m not in wanted]
    return wanted


def _import_all(modules: list[str], done: concurrent.futures.Future[None]) -> None:
    try:
        for name in modules:
            importlib.import_module(name)
    except BaseException as exc:  # noqa: BLE001 — handed to whoever waits, as it is
        done.set_exception(exc)
        return
    done.set_result(None)
    for name in _AFTER:
        try:
            importlib.import_module(name)
        except ImportError:  # the session imports it again when it needs it, and reports it then
            return


def preload(transports: Iterable[str]) -> concurrent.futures.Future[None]:
    """Start importing what ``transports`` need in a daemon thread, once per set of modules."""
    modules = modules_for(transports)
    key = " ".join(modules)
    with _lock:
        future = _loads.get(key)
        if future is None:
            future = concurrent.futures.Future()
            _loads[key] = future
            threading.Thread(target=_import_all, args=(modules, future), name="mcp-sdk-import",
                             daemon=True).start()  # fmt: skip
    return future


async def loaded(transports: Iterable[str]) -> None:
    """Return once the SDK parts ``transports`` need are imported (starting the import if needed).

    Raises:
        ImportError: the SDK is not installed or broken.
    """
    future = preload(transports)
    if not future.done():
        await asyncio.wrap_future(future)
    future.result()
