"""The MCP SDK's client half, loaded in a background thread so a server's first use does not wait for it.

Two costs are avoided:

- **The SDK's server half.** ``import mcp`` runs the package ``__init__``, which imports the server
  classes too (~140 ms of CPU a client never uses), and so does ``mcp.client``'s ``__init__``. The
  client's modules themselves do not need either ``__init__``: ``client_only`` registers both packages
  as *shells* (the real package object with its real ``__path__``, its ``__init__`` not yet run), so
  ``mcp.client.session`` and the transports import alone. A shell runs its real ``__init__`` on the
  first attribute it lacks (a module ``__getattr__``), so ``from mcp import ClientSession`` or
  ``from mcp.server.mcpserver import MCPServer`` still work for anyone else in the process.
- **The cyclic garbage collector.** Building the protocol types makes hundreds of thousands of objects
  that all stay alive; with the collector on, its young and full collections walk them again and again
  (~45 ms of a ~270 ms import, measured). ``import_client`` holds it off for the import (no cyclic
  garbage is made there), freezes what it built and turns it back on, unless somebody else had it off
  already.
- **Validators nobody uses.** Besides the protocol types a session hands out, the SDK defines each
  message again per protocol era (2025-11-25 and 2026-07-28, ~300 models) to check what a server sends
  against the era it speaks; building all their validators at import was ~90 ms of CPU, and a session
  uses a handful. ``defer_era_models`` has pydantic build each of those on its first use instead
  (its ``defer_build`` setting, on the one base class the era models share); the few a first call
  checks results against are built at the end of the load (``build_first_call_models``), off the
  handshake.
- **Waiting for the import.** The rest (~170 ms of CPU: pydantic models for every protocol type)
  cannot be avoided; ``preload`` starts it in a daemon thread as soon as the extension knows a server
  is configured and ``loaded`` waits for it without blocking the event loop. The thread is a daemon so
  that a short run that never uses a server does not wait for it before it exits. ``jsonschema`` (the
  session's check of structured tool results, ~25 ms) is imported only once a server is started
  (``prefetch_when_loaded``), after the rest.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import importlib
import importlib.util
import sys
import threading
import types
from collections.abc import Callable, Iterable

from pi_tui.util.collector import collector_paused

__all__ = [
    "SHELLS",
    "client_only",
    "defer_era_models",
    "finish",
    "import_client",
    "is_loaded",
    "is_shell",
    "loaded",
    "modules_for",
    "prefetch",
    "prefetch_when_loaded",
    "preload",
]

_BASE = (
    "mcp_types",
    "mcp.client.session",
    "mcp.shared.message",
    "mcp.shared.exceptions",
    "anyio._backends._asyncio",  # anyio loads its event-loop backend on first use otherwise (~45 ms)
)
_BY_TRANSPORT = {
    "stdio": (),  # our own transport (stdio.py): nothing more than the base
    "http": ("mcp.client.streamable_http", "mcp.shared._httpx_utils"),
    "sse": ("mcp.client.sse",),
}
# The packages whose ``__init__`` imports more than the client needs (the server half, mainly).
SHELLS = ("mcp", "mcp.client")
_OUTPUT_SCHEMA_CHECK = ("jsonschema.validators", "referencing")

_lock = threading.Lock()
_loads: dict[str, concurrent.futures.Future[None]] = {}
_shell_lock = threading.RLock()
_shells: dict[str, Callable[[str], object]] = {}  # each shell's __getattr__, by package name


def modules_for(transports: Iterable[str]) -> list[str]:
    """The modules connections over ``transports`` need, in import order."""
    wanted = list(_BASE)
    for transport in sorted(set(transports)):
        wanted += [m for m in _BY_TRANSPORT.get(transport, ()) if m not in wanted]
    return wanted


def client_only() -> bool:
    """Register ``SHELLS`` as packages whose ``__init__`` runs on first use; True if it did.

    Nothing happens (False) when ``mcp`` is already imported or is not a package found on disk; the
    SDK is then imported as usual.
    """
    with _shell_lock:
        if SHELLS[0] in sys.modules:
            return False
        for name in SHELLS:
            spec = importlib.util.find_spec(name)  # for "mcp.client", through the "mcp" shell's __path__
            if spec is None or spec.loader is None or spec.submodule_search_locations is None:
                return False
            module = importlib.util.module_from_spec(spec)
            hook = _shells[name] = _run_init_on_miss(module)
            module.__getattr__ = hook  # type: ignore[method-assign]
            sys.modules[name] = module
            parent, _, child = name.rpartition(".")
            if parent:
                setattr(sys.modules[parent], child, module)
        return True


def _run_init_on_miss(module: types.ModuleType) -> Callable[[str], object]:
    """A module ``__getattr__`` that runs ``module``'s real ``__init__`` once, then answers from it."""
    running = False

    def __getattr__(name: str) -> object:
        nonlocal running
        with _shell_lock:
            if module.__dict__.get("__getattr__") is __getattr__ and not running:
                spec = module.__spec__
                assert spec is not None and spec.loader is not None
                running = True
                try:
                    spec.loader.exec_module(module)
                finally:
                    running = False
                    if module.__dict__.get("__getattr__") is __getattr__:  # the real one may define its own
                        del module.__dict__["__getattr__"]
        try:
            return module.__dict__[name]
        except KeyError:
            raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}") from None

    return __getattr__


def is_shell(name: str) -> bool:
    """Whether ``name`` is imported as a shell whose real ``__init__`` has not run yet."""
    module = sys.modules.get(name)
    return module is not None and name in _shells and module.__dict__.get("__getattr__") is _shells[name]


def finish(name: str) -> None:
    """Run the real ``__init__`` of the shell ``name`` now (nothing when it is not a shell)."""
    if is_shell(name):
        with contextlib.suppress(AttributeError):  # any name: the hook runs the __init__ first, then looks
            _shells[name]("__all__")


# The module of the base class of the per-era wire models (internal to the SDK: found or not, the
# import works; when not found the era models are built at import as the SDK does by default).
_ERA_BASE = "mcp_types._wire_base"
_ERAS = ("mcp_types._v2025_11_25", "mcp_types._v2026_07_28")


def defer_era_models() -> bool:
    """Have pydantic build each per-era wire model's validator on its first use, not at import; True if
    it will (the era modules are not imported yet and their base class is where this SDK keeps it).

    Only what is built changes, not how it validates: a deferred model is built the same way, from the
    same module, the first time it validates or is asked for its schema.
    """
    if any(name in sys.modules for name in _ERAS):
        return False
    try:
        base = importlib.import_module(_ERA_BASE)
    except ImportError:
        return False
    wire = base.__dict__.get("WireModel")
    config = wire.__dict__.get("model_config") if isinstance(wire, type) else None
    if not isinstance(config, dict):  # not the pydantic model class this SDK version has there
        return False
    config["defer_build"] = True  # read by every subclass defined after, as the base of its own config
    return True


def import_client(modules: Iterable[str]) -> None:
    """Import ``modules`` with the SDK's packages as shells (see ``client_only``), the cyclic garbage
    collector off meanwhile and what they built frozen after (``collector_paused``: the modules and
    classes live as long as the process, and the first collection after would walk every one of them).

    Should an SDK version need more of its package ``__init__`` than the shells give, the import is
    tried again with the real ``__init__`` run first.
    """
    names = list(modules)
    client_only()
    with collector_paused(freeze_above=0):
        try:
            defer_era_models()
            for name in names:
                importlib.import_module(name)
        except ImportError:
            for shell in SHELLS:
                finish(shell)
            for name in names:
                importlib.import_module(name)


# The methods whose results a first call checks against the wire model of its protocol era: the
# handshake, the listings, the pings after the roots, the call.
FIRST_CALL_METHODS = ("initialize", "tools/list", "prompts/list", "resources/list", "ping", "tools/call")
# The requests a server may send during a first call's handshake, checked the same way: the roots it asks for.
FIRST_CALL_SERVER_REQUESTS = ("roots/list",)


def build_first_call_models() -> None:
    """Build the era wire models ``FIRST_CALL_METHODS``' results and ``FIRST_CALL_SERVER_REQUESTS`` are checked
    against (``defer_era_models`` leaves them to their first use, ~1 ms each, which would be inside a first
    call's handshake).

    Nothing happens when the SDK does not map them where this one does (they are then built on first use).
    """
    with contextlib.suppress(ImportError, AttributeError):
        from mcp_types.methods import SERVER_REQUESTS, SERVER_RESULTS
        from mcp_types.version import LATEST_HANDSHAKE_VERSION

        wanted = [SERVER_RESULTS.get((method, LATEST_HANDSHAKE_VERSION)) for method in FIRST_CALL_METHODS]
        wanted += [SERVER_REQUESTS.get((method, LATEST_HANDSHAKE_VERSION)) for method in FIRST_CALL_SERVER_REQUESTS]
        for model in wanted:
            if isinstance(model, type) and not model.__pydantic_complete__:
                model.model_rebuild()


def _import_all(modules: list[str], done: concurrent.futures.Future[None]) -> None:
    try:
        import_client(modules)
        # Here rather than later beside jsonschema: no session can use them before this load is done.
        with collector_paused(freeze_above=0):
            build_first_call_models()
    except BaseException as exc:  # noqa: BLE001 — handed to whoever waits, as it is
        done.set_exception(exc)
        return
    done.set_result(None)


Target = Callable[[list[str], "concurrent.futures.Future[None]"], None]


def _start(modules: list[str], target: Target) -> concurrent.futures.Future[None]:
    """Run ``target(modules, future)`` in a daemon thread, once per list of modules; the future."""
    key = " ".join(modules)
    with _lock:
        future = _loads.get(key)
        if future is None:
            future = _loads[key] = concurrent.futures.Future()
            threading.Thread(
                target=target, args=(modules, future), name="mcp-sdk-import", daemon=True
            ).start()
    return future


def preload(transports: Iterable[str]) -> concurrent.futures.Future[None]:
    """Start importing what ``transports`` need in a daemon thread, once per set of modules."""
    # The shells are registered here, before the thread starts: no import of ``mcp`` in this thread
    # can then find the package half set up (a few file look-ups, no import).
    with contextlib.suppress(ImportError, ValueError):  # a broken install: the thread reports it
        client_only()
    return _start(modules_for(transports), _import_all)


def _import_quietly(modules: list[str], done: concurrent.futures.Future[None]) -> None:
    with collector_paused(freeze_above=0):
        for name in modules:
            try:
                importlib.import_module(name)
            except ImportError:  # whoever needs it imports it again, and reports it then
                break
    done.set_result(None)


def prefetch() -> concurrent.futures.Future[None]:
    """Start importing ``jsonschema`` in a daemon thread (once): the SDK's session checks the results
    of tools with an output schema with it (~25 ms of CPU to import)."""
    return _start(list(_OUTPUT_SCHEMA_CHECK), _import_quietly)


def prefetch_when_loaded(transports: Iterable[str]) -> concurrent.futures.Future[None]:
    """``prefetch`` once the SDK parts ``transports`` need are loaded; done when both are.

    Called when a server starts: most servers have tools with output schemas. After, not during, the
    load, which it would slow down; it then overlaps the server's start-up and the handshake instead
    of the first call.
    """
    done: concurrent.futures.Future[None] = concurrent.futures.Future()

    def then(load: concurrent.futures.Future[None]) -> None:
        if load.exception() is not None:
            done.set_result(None)
        else:
            prefetch().add_done_callback(lambda _: done.set_result(None))

    preload(transports).add_done_callback(then)
    return done


def is_loaded(transports: Iterable[str]) -> bool:
    """Whether the SDK parts ``transports`` need are imported already (their load done, without error)."""
    with _lock:
        future = _loads.get(" ".join(modules_for(transports)))
    return future is not None and future.done() and future.exception() is None


async def loaded(transports: Iterable[str]) -> None:
    """Return once the SDK parts ``transports`` need are imported (starting the import if needed).

    Raises:
        ImportError: the SDK is not installed or broken.
    """
    future = preload(transports)
    if not future.done():
        await asyncio.wrap_future(future)
    future.result()
