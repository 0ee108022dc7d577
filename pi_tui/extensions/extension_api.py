"""The ``pi`` object an extension's ``register(pi)`` receives.

Every method is bound to the extension that called ``register``: what it registers is torn down with
it on reload, and errors in its handlers are reported under its name.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, overload

from pi_tui.util.json_types import JsonObject, JsonValue

from ..context.ledger import Attribution
from .bus import ExtensionBus
from .convert import to_content, to_custom_message
from .events import EVENTS, to_snake
from .extension import (
    CommandInfo,
    Extension,
    RegisteredCommand,
    RegisteredFlag,
    RegisteredRenderer,
    RegisteredShortcut,
    ToolInfo,
)

if TYPE_CHECKING:
    from pi_tui.ai.stream import AbortSignal
    from pi_tui.ai.types import Model
    from pi_tui.context.panels import PanelState, Placement, RenderFn

    from .host import SessionHost
    from .runner import ExtensionRunner

__all__ = ["ExtensionAPI", "ExecResult"]

log = logging.getLogger(__name__)

_Handler = TypeVar("_Handler", bound=Callable[..., object])

_DELIVERY = {
    "steer": "steer",
    "follow_up": "follow_up",
    "followUp": "follow_up",
    "next_turn": "next_turn",
    "nextTurn": "next_turn",
}


@dataclass(frozen=True, slots=True)
class ExecResult:
    """``pi.exec`` result; ``killed`` is true when the timeout or the signal stopped the process."""

    stdout: str
    stderr: str
    code: int | None
    killed: bool

    def __getitem__(self, key: str) -> str | int | bool | None:
        # pi's dict-style read: the extension names the field, camelCase or snake_case
        return getattr(self, to_snake(key))


def _options(options: dict[str, Any] | None, kwargs: dict[str, Any]) -> dict[str, Any]:
    """pi passes an options object; Python callers use keywords. Both, with either key spelling."""
    merged = {to_snake(str(k)): v for k, v in (options or {}).items()}
    merged.update(kwargs)
    return merged


class ExtensionAPI:
    """What ``register(pi)`` gets. See ``docs/extensions.md`` for a guide with examples."""

    def __init__(self, runner: ExtensionRunner, extension: Extension) -> None:
        self._runner = runner
        self._ext = extension
        self.events = ExtensionBus(runner.bus, extension.name)
        """The inter-extension bus: ``pi.events.on(name, fn)``, ``pi.events.emit(name, data)``."""

    @property
    def _session(self) -> SessionHost:
        return self._runner.session

    # --- events -------------------------------------------------------------------------------------

    @overload
    def on(self, event: str, handler: _Handler) -> _Handler: ...

    @overload
    def on(self, event: str, handler: None = None) -> Callable[[_Handler], _Handler]: ...

    def on(self, event: str, handler: _Handler | None = None) -> _Handler | Callable[[_Handler], _Handler]:
        """Subscribe ``handler(event, ctx)`` (sync or async) to ``event``.

        Usable as a decorator: ``@pi.on("tool_call")``. Handlers run in load order, then registration
        order. Unknown event names are accepted (with a logged warning) so a newer extension still loads.
        """
        name = to_snake(event)

        def add(fn: _Handler) -> _Handler:
            if name not in EVENTS:
                log.warning("extension %s subscribes to unknown event %r", self._ext.name, event)
            self._ext.handlers.setdefault(name, []).append(fn)
            self._runner.handlers_changed()
            return fn

        return add(handler) if handler is not None else add

    # --- registration -------------------------------------------------------------------------------

    def register_tool(self, definition: dict[str, Any] | None = None, **fields: Any) -> None:
        """Add a tool the model can call (active at once).

        Fields: ``name``, ``label``, ``description``, ``parameters`` (JSON schema, ``type: object``),
        ``execute(tool_call_id, params, signal, on_update, ctx)`` (sync or async; may take fewer
        arguments; returns a `ToolResult`, ``{"content": [...], "details": ...}`` or a string; raise to
        report an error), and optionally ``prompt_snippet``, ``prompt_guidelines``,
        ``prepare_arguments(raw_args) -> args``.
        """
        spec = _options(definition, fields)
        missing = [k for k in ("name", "description", "parameters", "execute") if k not in spec]
        if missing:
            raise ValueError(f"register_tool needs {', '.join(missing)}")
        self._runner.registry.add_tool(
            self._ext,
            name=str(spec["name"]),
            label=spec.get("label"),
            description=str(spec["description"]),
            parameters=dict(spec["parameters"]),
            execute=spec["execute"],
            prompt_snippet=spec.get("prompt_snippet"),
            prompt_guidelines=tuple(spec.get("prompt_guidelines") or ()),
            prepare_arguments=spec.get("prepare_arguments"),
        )

    def register_command(self, name: str, options: dict[str, Any] | None = None, **fields: Any) -> None:
        """Add ``/name``: ``handler(args, ctx)`` runs when the user types it, even while the agent works.

        Fields: ``handler``, ``description``, ``get_argument_completions(prefix) -> list[str] | None``.
        """
        spec = _options(options, fields)
        if "handler" not in spec:
            raise ValueError("register_command needs a handler")
        command = RegisteredCommand(
            name=name.lstrip("/"),
            handler=spec["handler"],
            description=spec.get("description"),
            get_argument_completions=spec.get("get_argument_completions"),
        )
        self._runner.registry.add_command(self._ext, command)

    def register_shortcut(self, key: str, options: dict[str, Any] | None = None, **fields: Any) -> None:
        """Bind ``key`` (e.g. ``"ctrl+shift+p"``) to ``handler(ctx)`` in the interactive mode."""
        spec = _options(options, fields)
        shortcut = RegisteredShortcut(
            key=key, handler=spec["handler"], description=spec.get("description"), source=self._ext.name
        )
        self._runner.registry.add_shortcut(self._ext, shortcut)

    def register_flag(self, name: str, options: dict[str, Any] | None = None, **fields: Any) -> None:
        """Claim ``--name`` on the command line. Fields: ``type`` (``"boolean"``/``"string"``),
        ``description``, ``default``."""
        spec = _options(options, fields)
        flag = RegisteredFlag(
            name=name.lstrip("-"),
            type="string" if spec.get("type") == "string" else "boolean",
            description=spec.get("description"),
            default=spec.get("default"),
        )
        self._runner.registry.add_flag(self._ext, flag)

    def get_flag(self, name: str) -> JsonValue:
        """The value of one of this extension's flags (bare name, no ``--``), or its default."""
        return self._runner.registry.flag_value(self._ext, name.lstrip("-"))

    def register_message_renderer(self, custom_type: str, render: Callable[..., Any]) -> None:
        """How modes show custom messages of ``custom_type``: ``render(message, options, theme)``."""
        renderer = RegisteredRenderer(custom_type=custom_type, render=render)
        self._runner.registry.add_renderer(self._ext, renderer)

    def register_panel(
        self,
        name: str,
        render: RenderFn,
        placement: Placement = "tail",
        refresh_on: Sequence[str] = (),
    ) -> PanelState:
        """Add a live context panel; ``render()`` (sync or async) returns its text.

        ``placement="prefix"`` puts it before the conversation (cached), ``"tail"`` after it (uncached).
        ``refresh_on`` names events (extension events or ``pi.events`` names) that make it re-render;
        with none it re-renders before every request. Returns the panel's state.
        """
        from pi_tui.context.panels import Panel

        panel = Panel(name, render, placement, tuple(to_snake(e) for e in refresh_on), source=self._ext.name)
        state = self._session.panels.register(panel)
        if name not in self._ext.panels:
            self._ext.panels.append(name)
        if self._runner.started:
            self._session.restore_panel_state()
        return state

    def unregister_panel(self, name: str) -> bool:
        """Remove a panel this extension registered (e.g. after ``/unpin``). True when it existed."""
        state = self._session.panels.panels.get(name)
        if state is None or state.panel.source != self._ext.name:
            return False
        self._session.panels.unregister(name)
        if name in self._ext.panels:
            self._ext.panels.remove(name)
        return True

    def register_context_section(self, title: str, render: Callable[[], Any]) -> bool:
        """Add a section to ``/context`` (all three views: print-mode markdown, RPC ``get_context``'s
        ``extensionSections``, the TUI inspector): ``render()`` (sync) returns the lines shown under
        ``title``, called each time ``/context`` is built. Nothing of it is sent to the model.
        False when another extension already has a section of that title."""
        from .extension import RegisteredContextSection

        return self._runner.registry.add_context_section(self._ext, RegisteredContextSection(title, render))

    def register_mention_completions(self, complete: Callable[[str], Any]) -> bool:
        """Offer completions after ``@`` in the TUI editor, above the project's files.

        ``complete(prefix)`` (sync, called on each keystroke, so keep it cheap) gets what follows the
        ``@`` and returns the values to offer without the ``@``: strings, or ``(value, description)``
        pairs. An exception offers nothing. One completer per extension (a second call replaces it).
        """
        from .extension import RegisteredMentionCompleter

        return self._runner.registry.add_mention_completer(self._ext, RegisteredMentionCompleter(complete))

    def register_trust_requiring_files(self, *paths: str) -> None:
        """Name project files this extension reads only once the project is trusted (paths relative to
        the project, such as ``".mcp.json"``). A project holding one of them has something to trust:
        it is not reported trusted by default (``ctx.is_project_trusted()``, ``/trust``) until the user
        trusts it. Without this, a project with nothing pi itself gates counts as trusted, as in pi.

        Raises:
            ValueError: a path is absolute or leaves the project.
        """
        self._runner.registry.add_trust_files(self._ext, paths)

    def get_setting(self, key: str, default: JsonValue = None) -> JsonValue:
        """A settings value (global merged with the project's when it is trusted); a copy, read-only."""
        settings = self._session.settings
        return default if settings is None else settings.get(key, default)

    def register_provider(self, name: str, config: JsonObject) -> None:
        """Add (or replace) a provider and its models, in models.json's shape."""
        registry = self._session.registry
        if registry is None:
            raise RuntimeError("This session has no model registry")
        registry.register_provider(name, config)

    def unregister_provider(self, name: str) -> None:
        registry = self._session.registry
        if registry is not None:
            registry.unregister_provider(name)

    # --- messages and entries -----------------------------------------------------------------------

    def send_message(
        self,
        message: object,
        options: dict[str, Any] | None = None,
        *,
        deliver_as: str | None = None,
        trigger_turn: bool = False,
    ) -> None:
        """Add a custom message (``{"customType", "content", "display", "details"}``) to the conversation.

        ``deliver_as="next_turn"`` queues it for the next prompt. While the agent works it is steered
        (default) or queued as a ``"follow_up"``. When idle with ``trigger_turn=True`` it starts a turn;
        otherwise it is appended (and persisted as a ``custom_message`` entry) for the next request.
        """
        spec = _options(options, {})
        deliver = _DELIVERY.get(str(deliver_as or spec.get("deliver_as") or ""), None)
        trigger = trigger_turn or bool(spec.get("trigger_turn"))
        self._runner.send_custom_message(
            to_custom_message(message, default_type=self._ext.name), deliver, trigger, self._ext
        )

    def send_user_message(
        self, content: object, options: dict[str, Any] | None = None, *, deliver_as: str | None = None
    ) -> None:
        """Send a user message, as if typed (the ``input`` event sees ``source="extension"``), but
        without command or template expansion. It always starts a turn; while the agent works,
        ``deliver_as`` (``"steer"``/``"follow_up"``) is required."""
        spec = _options(options, {})
        deliver = _DELIVERY.get(str(deliver_as or spec.get("deliver_as") or ""), None)
        if self._session.is_streaming and deliver not in ("steer", "follow_up"):
            raise RuntimeError(
                'The agent is working: send_user_message needs deliver_as="steer" or "follow_up"'
            )
        blocks = to_content(content)
        text = "".join(b.text for b in blocks if b.type == "text")
        images = [b for b in blocks if b.type == "image"] or None
        self._runner.spawn(
            self._session.prompt(text, images, streaming_behavior=deliver, source="extension", expand=False),
            self._ext,
            "send_user_message",
        )

    def append_entry(self, custom_type: str, data: JsonValue = None) -> str:
        """Persist extension state (a ``custom`` entry, never sent to the model). Returns its id."""
        return str(self._session.session_manager.append_custom(custom_type, data).id)

    def set_session_name(self, name: str) -> None:
        self._session.set_session_name(name)

    def get_session_name(self) -> str | None:
        return self._session.session_manager.name

    def set_label(self, entry_id: str, label: str | None) -> None:
        """Label an entry in the tree (None clears it)."""
        self._session.label(entry_id, label)

    # --- tools, model, thinking ---------------------------------------------------------------------

    def get_active_tools(self) -> list[str]:
        return list(self._session.active_tools)

    def get_all_tools(self) -> list[ToolInfo]:
        """Every loaded tool as ``{name, description, parameters}``."""
        return [
            {"name": t.name, "description": t.description, "parameters": t.parameters}
            for t in self._session.tools.values()
        ]

    def set_active_tools(self, names: Sequence[str]) -> None:
        """Offer exactly these tools to the model (unknown names are ignored)."""
        self._session.set_active_tools(list(names))

    def declare_cache_invalidation(self, reason: str, where: str = "") -> None:
        """Say why the next request's cached prefix changes, for a change made outside the ``context`` hooks.

        Changing the offered tools (``set_active_tools``) or anything else in the cached region
        mid-session re-bills the prompt cache; declaring it records ``reason`` in the cache ledger under
        this extension's name, where ``/context`` and RPC ``get_context`` show it, instead of an
        unexplained "prefix changed". It applies to the next request; nothing is recorded if that
        request's cached prefix turns out unchanged.

        Raises:
            ValueError: ``reason`` is empty.
        """
        if not reason.strip():
            raise ValueError("declare_cache_invalidation needs a reason the user can read")
        self._session.engine.ledger.declare(Attribution(f"extension {self._ext.name}", reason, where))

    def get_commands(self) -> list[CommandInfo]:
        return self._runner.registry.command_list()

    def set_model(self, model: Model | str) -> bool:
        """Switch model (a `Model` or ``"provider/id"``). False when it is unknown or has no API key."""
        session = self._session
        registry = session.registry
        if isinstance(model, str):
            provider, _, model_id = model.partition("/")
            found = registry.find(provider, model_id) if registry is not None else None
            if found is None:
                return False
            model = found
        if registry is not None and registry.requires_api_key(model) and not registry.get_api_key(model):
            return False
        session.set_model(model)
        return True

    def get_thinking_level(self) -> str:
        return str(self._session.thinking)

    def set_thinking_level(self, level: str) -> None:
        """Set the thinking level (clamped to what the model supports)."""
        from pi_tui.ai.thinking import clamp_thinking_level

        self._session.set_thinking_level(clamp_thinking_level(self._session.model, level))

    # --- processes ----------------------------------------------------------------------------------

    async def exec(
        self,
        command: str,
        args: Sequence[str] = (),
        options: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        cwd: str | None = None,
        signal: AbortSignal | None = None,
    ) -> ExecResult:
        """Run a program (no shell) and collect its output.

        Args:
            command: The program.
            args: Its arguments.
            timeout: Seconds before it is killed (pi's option is in ms: ``{"timeout": ms}``).
            cwd: Working directory (default: the session's).
            signal: An `AbortSignal` that kills it.
        """
        spec = _options(options, {})
        if timeout is None and spec.get("timeout") is not None:
            timeout = float(spec["timeout"]) / 1000
        directory = cwd or spec.get("cwd") or str(self._session.cwd)
        proc = await asyncio.create_subprocess_exec(
            command,
            *args,
            cwd=directory,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=dict(os.environ),
        )
        signal = signal or spec.get("signal")
        communicate = asyncio.ensure_future(proc.communicate())
        waiters: set[asyncio.Future[Any]] = {communicate}
        abort_wait = asyncio.ensure_future(signal.wait()) if signal is not None else None
        if abort_wait is not None:
            waiters.add(abort_wait)
        killed = False
        try:
            done, _ = await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            if communicate not in done:
                killed = True
                proc.kill()
            out, err = await communicate
        finally:
            if abort_wait is not None:
                abort_wait.cancel()
            if not communicate.done():
                proc.kill()
                communicate.cancel()
        return ExecResult(
            out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), proc.returncode, killed
        )
