"""`AgentSession`: the one object every mode drives.

It binds the layers: the agent loop (turns, tools, retries), the session file (every finalized message is
appended as it ends), the context engine (every request is built by replaying the session through the
hook pipeline), resources (system prompt, skills, templates) and the model registry. Modes subscribe to
its events and call its methods; none of them touches the layers below directly.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pi_tui.agent.events import AgentEnd, AgentEvent, MessageEnd, MessageStart, TurnEnd
from pi_tui.agent.hooks import QueueMode, RetryConfig, ToolCallContext, ToolCallDecision
from pi_tui.agent.loop import Agent
from pi_tui.agent.tool import AgentTool, ToolResult, text_result
from pi_tui.ai.no_model import is_no_model, no_model_message
from pi_tui.ai.stream import (
    AbortSignal,
    Done,
    Error,
    LlmRequest,
    StreamEvent,
    StreamFn,
    StreamOptions,
    WirePrefix,
)
from pi_tui.ai.types import (
    THINKING_LEVELS,
    AssistantMessage,
    BashExecutionMessage,
    CustomMessage,
    ImageContent,
    Message,
    Model,
    TextContent,
    ThinkingLevel,
    UserMessage,
    now_ms,
)
from pi_tui.context.engine import ContextEngine
from pi_tui.context.envelope import ContextEnvelope, EnvelopeMeta, SystemPart
from pi_tui.context.hooks import ContextHandler
from pi_tui.context.layouts import restore_layouts
from pi_tui.context.panels import PANEL_STATE_TYPE, PANEL_TOOL_NAME, PanelManager
from pi_tui.extensions.ui import NullUIBridge
from pi_tui.session.entries import CompactionEntry, CustomEntry, MessageEntry
from pi_tui.session.errors import SessionError, SessionNotConfirmed
from pi_tui.util.tasks import stray_cancellation

from ._host import PendingState
from .cache_warmer import CacheWarmer, WarmingDecision, WarmRequest
from .compaction_ops import CompactionMixin
from .events import EntryAppended, ErrorEvent, RuntimeEvent, SessionStats
from .rewind_ops import RewindMixin
from .tree_ops import SessionTreeMixin

if TYPE_CHECKING:
    from pi_tui.ai.model_registry import ModelRegistry
    from pi_tui.ai.oauth.types import RequestAuth
    from pi_tui.checkpoints import Checkpointer
    from pi_tui.context.report import ContextReport, MessageTokenCache
    from pi_tui.context.request import Block
    from pi_tui.extensions.runner import ExtensionRunner
    from pi_tui.resources.loader import ResourceLoader
    from pi_tui.resources.settings import SettingsManager
    from pi_tui.sandbox import CommandSandbox
    from pi_tui.session.context import RestoreState
    from pi_tui.session.manager import SessionManager
    from pi_tui.tools.image_resize import ResizeLimits

    from .cwd_services import CwdServices
    from .session_stats import StatsCounter
    from .tool_selection import ToolGate

__all__ = [
    "AgentSession",
    "HTTP_IDLE_TIMEOUT_MS",
    "ModelUnavailableError",
    "PromptAborted",
    "RuntimeEvent",
    "SessionStats",
    "http_idle_timeout",
]

log = logging.getLogger(__name__)

T = TypeVar("T")

Listener = Callable[[AgentEvent | RuntimeEvent], Awaitable[None] | None]


HTTP_IDLE_TIMEOUT_MS = 300_000
"""Default of the ``httpIdleTimeoutMs`` setting (pi 0.87.1's): the longest a provider may stay silent."""


def http_idle_timeout(settings: SettingsManager | None) -> float:
    """Seconds a request may wait for the provider's next bytes (``httpIdleTimeoutMs``; a missing,
    non-numeric or non-positive value means the default)."""
    value = settings.get("httpIdleTimeoutMs", HTTP_IDLE_TIMEOUT_MS) if settings is not None else None
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        value = HTTP_IDLE_TIMEOUT_MS
    return float(value) / 1000


_ABORTED_IN_HOOKS = "Aborted while extension handlers of the prompt were running; nothing was sent"


def _queue_mode(value: str) -> QueueMode:
    """A ``steeringMode``/``followUpMode`` setting as the agent's queue mode (default one at a time)."""
    return "all" if value == "all" else "one-at-a-time"


class ModelUnavailableError(RuntimeError):
    """A prompt cannot be sent: there is no model yet, or the model's provider has no key. The message is
    one line saying what to set or pick; nothing was sent or saved."""


class PromptAborted(RuntimeError):
    """`AgentSession.abort` ended a prompt before its run started (while extension handlers ran)."""


class AgentSession(SessionTreeMixin, CompactionMixin, RewindMixin):
    """A live session: prompt it, steer it, abort it, inspect its context.

    Args:
        cwd: The working directory tools and prompts are bound to.
        session_manager: The `pi_tui.session.SessionManager` holding the entry tree (the session file),
            kept as ``session_manager`` (pi's ``sessionManager``).
        model: The model to start with.
        thinking: The thinking level to start with.
        registry: The `pi_tui.ai.model_registry.ModelRegistry` (keys, model lookup).
        resources: The `pi_tui.resources.loader.ResourceLoader` (system prompt inputs, skills, templates).
        settings: The `pi_tui.resources.settings.SettingsManager`.
        tools: Every loaded tool implementation by name.
        active_tools: The names offered to the model.
        stream_fn: Provider entry point (tests inject; default: `pi_tui.ai.registry.stream`).
        context_handlers: Returns the `context` handlers in load order (the extension layer provides it).
        checkpoints: The project's `pi_tui.checkpoints.Checkpointer` (default: from ``settings``, stored
            under the agent dir). Edit and write record through it when their tools were built with it.
    """

    def __init__(
        self,
        *,
        cwd: Path,
        session_manager: SessionManager,
        model: Model,
        thinking: ThinkingLevel,
        registry: ModelRegistry,
        resources: ResourceLoader | None,
        settings: SettingsManager | None,
        tools: dict[str, AgentTool],
        active_tools: Sequence[str],
        stream_fn: StreamFn | None = None,
        context_handlers: Callable[[], Sequence[ContextHandler]] = lambda: (),
        retry: RetryConfig | None = None,
        checkpoints: Checkpointer | None = None,
    ) -> None:
        self.cwd = cwd
        if checkpoints is None:  # checkpoints
            from pi_tui.checkpoints import Checkpointer

            checkpoints = Checkpointer.for_settings(cwd, settings)
        self.checkpoints = checkpoints
        self.session_manager = session_manager
        self.registry = registry
        self.resources = resources
        self.settings = settings
        self.tools = dict(tools)
        self.active_tools = [name for name in active_tools if name in self.tools]
        # the tool options' gate (--tools, --no-tools, --exclude-tools): None lets every tool load
        self.tool_gate: ToolGate | None = None
        self._listeners: list[Listener] = []
        self._context_handlers = context_handlers
        self._base_stream_fn = stream_fn
        self._login_auth: RequestAuth | None = None  # what the current request's login adds
        context_settings = settings.get("context", {}) if settings is not None else {}
        self.panels = PanelManager(
            reinject_system_prompt=isinstance(context_settings, dict)
            and bool(context_settings.get("reinjectSystemPrompt"))
        )
        self.restore_panel_layouts()
        self._offered_tools: set[str] | None = None
        self._system_parts_cache: tuple[tuple[str, ...], tuple[SystemPart, ...], dict[str, str]] | None = None
        self.system_messages_written: list[dict[str, object]] = []
        """The system messages this session wrote into its file, in order (what pi announces as
        messages: the JSON mode announces each)."""
        # Token counts of the last /context report's messages: opening it again counts only what is new.
        self._context_tokens: MessageTokenCache | None = None
        self._stats: StatsCounter | None = None  # session totals, extended as entries are appended
        # --- extensions: the runner sets `extensions`; modes call attach_ui() ---
        self.extensions: ExtensionRunner | None = None
        self.extension_setup: Callable[[], Any] | None = None  # binds a runner when /reload finds some
        self._watch_extensions = False  # start(watch=True) was asked: a runner bound later watches too
        self.login_available = False
        """The mode offers ``/login``: what `check_model` tells the user names it first."""
        self.ui: Any = NullUIBridge()
        self.mode = "print"
        self.sandbox: CommandSandbox | None = None
        """The OS sandbox for bash commands and ``!cmd`` (set by the factory; None: unsandboxed)."""
        self.services_for: Callable[[Path, list[str]], CwdServices] | None = None
        """Builds settings, resources, tools, ... for another directory (set by the factory): a session
        recorded elsewhere is switched to there, as pi. None: sessions switch without moving."""
        self.trust_answers: dict[Path, bool | None] = {}
        """The user's answers to the trust question about directories a switch moves to: True trusts
        (recorded), None trusts for this run, False does not (the UI asks before switching)."""
        self.has_trust_command = False
        """The mode offers ``/trust`` (the full-screen app; set by the factory): notices about an untrusted
        project tell to use it, else the command-line flags."""
        self.switch_warnings: list[str] = []
        """What building for the last switched-to directory had to say (project not trusted, ...)."""
        self.cli_model_scope: list[str] | None = None
        """``--models`` patterns (set by the factory): the scope Ctrl+P cycles, before ``enabledModels``."""
        # The mode's built-in slash commands, ``(text) -> handled``, called by the prompt pipeline.
        self.builtin_commands: Callable[[str], Awaitable[bool] | bool] | None = None
        self._system_override: str | None = None
        self._switch_reason: str | None = None
        # --- end extensions ---

        restored = session_manager.restore_state()
        retry_settings = settings.retry if settings is not None else None
        if retry is None and retry_settings is not None:
            retry = RetryConfig(
                enabled=retry_settings.enabled,
                max_retries=retry_settings.max_retries,
                base_delay_ms=retry_settings.base_delay_ms,
                max_delay_ms=retry_settings.max_delay_ms,
                max_agent_delay_ms=retry_settings.max_agent_delay_ms,
            )
        self.agent = Agent(
            model=model,
            messages=(),  # set by _rebuild_messages() once the engine exists
            thinking=thinking,
            tools=self._loaded_tools(),
            stream_fn=self._stream,
            build_request=self._build_request,
            before_tool_call=self._gate_tool_call,
            finish_tool_result=self._fit_result_images,
            get_api_key=self._api_key,
            retry=retry,
            steering_mode=_queue_mode(settings.steering_mode if settings is not None else ""),
            follow_up_mode=_queue_mode(settings.follow_up_mode if settings is not None else ""),
            block_images=bool(settings.images.block_images) if settings is not None else False,
            on_error=self._report_error,
        )
        # A provider that stops sending mid-answer ends the request after this long
        # (retry.provider.timeoutMs, else httpIdleTimeoutMs, as pi).
        self.agent.stream_options.timeout = http_idle_timeout(settings)
        if retry_settings is not None:
            if retry_settings.provider_timeout_ms is not None:
                self.agent.stream_options.timeout = retry_settings.provider_timeout_ms / 1000
            self.agent.stream_options.max_retries = retry_settings.provider_max_retries
            self.agent.stream_options.max_retry_delay_ms = retry_settings.max_delay_ms
        self.engine = ContextEngine(
            base_envelope=self._base_envelope,
            # With the history deferred, only its built end: the first request sends the rest as it is
            # (`_build_request`); anything that needs the whole tree builds it first.
            active_path=lambda: self.session_manager.get_kept_branch(),
            handlers=lambda: self._context_handlers(),
            persist_transform=self._persist_transform,
            available_tools=lambda: list(self.tools),
            place_panels=self.panels.place,
            preflight=self._preflight,
        )
        self.agent.subscribe(self._on_agent_event)
        self._rebuild_messages()  # replayed like every request, not the raw session context
        self._init_compaction()  # after _on_agent_event: step 8 runs once the turn is persisted
        self._pending_state = PendingState()
        self._abortable_tasks: set[asyncio.Task[Any]] = set()  # prompts inside input/before_agent_start
        self._aborted_tasks: set[asyncio.Task[Any]] = set()
        self._record_model_if_changed(restored, model, thinking)
        self.cache_warmer = CacheWarmer(
            get_mode=lambda: self.settings.cache_warming if self.settings is not None else "streaming",
            last_prompt_tokens=self._last_prompt_tokens,
            decide=self._cache_warming_decision,
            record=self._record_cache_warm,
        )
        """Keeps the prompt cache of the last request warm (``cacheWarming``; see `cache_warmer`)."""

    # --- events -------------------------------------------------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Receive every agent event and runtime event, in order. Returns an unsubscribe function."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    async def emit(self, event: AgentEvent | RuntimeEvent) -> None:
        for listener in list(self._listeners):
            try:
                result = listener(event)
                if inspect.isawaitable(result):
                    await result
            except Exception:
                log.exception("event listener failed on %s", event.type)
            except asyncio.CancelledError:
                if not stray_cancellation():
                    raise
                log.exception("event listener failed on %s", event.type)

    async def _on_agent_event(self, event: AgentEvent) -> None:
        if isinstance(event, MessageEnd):
            try:
                self._persist_message(event.message, hooked=True)
            except SessionNotConfirmed as exc:
                # Saved, but the disk would not confirm it: the notice says so and what to check.
                await self.emit(ErrorEvent(str(exc)))
            except SessionError as exc:
                # The conversation goes on in memory; the user must hear that it is not being saved.
                await self.emit(ErrorEvent(f"Session not saved: {exc}"))
        elif isinstance(event, TurnEnd) and (self.engine.has_handlers() or self._detaches_history()):
            # Without handlers or history detaching, step 7 would only replay the path for nothing.
            try:
                env = await self.engine.turn_end()
                self._maybe_detach_history(env)
            except Exception as exc:
                await self.emit(ErrorEvent(f"context(turn_end) failed: {exc}"))
        elif isinstance(event, AgentEnd):
            self.cache_warmer.on_agent_settled()
        await self.emit(event)

    def _detaches_history(self) -> bool:
        context_settings = self.settings.get("context", {}) if self.settings is not None else {}
        return isinstance(context_settings, dict) and bool(context_settings.get("detachHistory"))

    def _maybe_detach_history(self, env: ContextEnvelope) -> None:
        """The frozen history panels (opt-in: settings ``context.detachHistory``)."""
        if not self._detaches_history():
            return
        from pi_tui.context.history import find_detach_point

        last = find_detach_point(env)
        if last is not None:
            op = {
                "op": "history_detach",
                "scope": "cached",
                "lastEntryId": last,
                "invalidateCacheReason": "detach old conversation into a frozen history panel",
            }
            self.session_manager.append_context_transform("history", [op], {"title": "Frozen history panel"})

    def _report_error(self, where: str, exc: BaseException) -> None:
        log.warning("%s: %s", where, exc)

    # --- properties ---------------------------------------------------------------------------------

    @property
    def model(self) -> Model:
        return self.agent.model

    @property
    def has_model(self) -> bool:
        """False while the session holds the stand-in of a start without any usable model."""
        return not is_no_model(self.agent.model)

    def check_model(self) -> None:
        """Raise `ModelUnavailableError` when a prompt could not be sent: no model yet, or no key for
        its provider. A key written to ``models.json`` or ``auth.json`` since start-up counts at once."""
        model, registry = self.agent.model, self.registry
        if is_no_model(model):
            from pi_tui.ai.paths import agent_dir

            where = registry.agent_dir if registry is not None else agent_dir()
            raise ModelUnavailableError(no_model_message(where, login=self.login_available))
        if self._base_stream_fn is not None or registry is None or not registry.requires_api_key(model):
            return
        # has_auth is cheap and is what the model lists use; the key itself as the start-up check reads it
        if registry.has_auth(model.provider) or registry.get_api_key(model):
            return
        registry.refresh()
        if not (registry.has_auth(model.provider) or registry.get_api_key(model)):
            raise ModelUnavailableError(registry.missing_key_message(model.provider))

    @property
    def thinking(self) -> ThinkingLevel:
        return self.agent.thinking

    @property
    def is_streaming(self) -> bool:
        return self.agent.is_streaming

    @property
    def messages(self) -> list[Message]:
        return self.agent.messages

    # --- the prompt pipeline ------------------------------------------------------------------------

    def expand_input(self, text: str) -> str:
        """Skill (``/skill:name``) and prompt-template (``/name``) expansion; other text is unchanged."""
        if not text.startswith("/") or self.resources is None:
            return text
        from pi_tui.resources.skills import expand_skill_command
        from pi_tui.resources.templates import expand_template

        enabled = self.settings is None or self.settings.enable_skill_commands
        if enabled and text.startswith("/skill:"):
            expanded = expand_skill_command(text, self.resources.skills)
            if expanded is not None:
                return expanded
        expanded = expand_template(text, self.resources.templates)
        return expanded if expanded is not None else text

    def _user_message(self, text: str, images: Sequence[ImageContent] | None) -> UserMessage:
        if images:
            # an image a provider cannot decode would be refused now and with every later request
            from .prompt_images import check_prompt_images  # only prompts with images need it

            auto_resize, limits = self._image_options()
            usable, notes = check_prompt_images(images, auto_resize=auto_resize, limits=limits)
            if notes:
                text = f"{text}\n\n" + "\n".join(notes)
            return UserMessage(content=[TextContent(text=text), *usable])
        return UserMessage(content=[TextContent(text=text)])  # a block list, as pi 0.87 stores prompts

    async def prompt(
        self,
        text: str,
        images: Sequence[ImageContent] | None = None,
        *,
        streaming_behavior: str | None = None,
        source: str = "interactive",
        expand: bool = True,
    ) -> None:
        """Send a user prompt and return when the agent is idle again.

        The pipeline: an extension command (``/name``) runs and stops everything, even while
        the agent works → the extensions' ``input`` event → the mode's built-in commands
        (``builtin_commands``) → ``/skill:name`` → ``/template`` → (queued while the agent works) →
        ``before_agent_start`` → the agent loop. ``expand=False`` (``pi.send_user_message``) skips the
        commands and the expansion. While the agent is running, ``streaming_behavior`` must be
        ``"steer"`` or ``"follow_up"``. ``source`` is what the ``input`` event reports.
        """
        # --- extensions: commands, input event, built-in commands ---
        ext = self.extensions
        if ext is not None:
            await ext.ensure_started()
            if expand and text.startswith("/") and await ext.run_command(text):
                return
            outcome = await self._abortable(ext.emit_input(text, list(images) if images else None, source))
            if outcome.handled:
                return
            text, images = outcome.text, outcome.images
        if expand and text.startswith("/") and self.builtin_commands is not None:
            handled = self.builtin_commands(text)
            if inspect.isawaitable(handled):
                handled = await handled
            if handled:
                return
        # --- end extensions ---
        if expand:
            text = self.expand_input(text)
        model_before = self.model
        message = await self._prompt_message(text, images)
        if self.agent.is_streaming:
            if streaming_behavior == "steer":
                self.agent.steer(message)
                return
            if streaming_behavior in ("follow_up", "followUp"):
                self.agent.follow_up(message)
                return
            raise RuntimeError("The agent is already processing a prompt; steer or queue a follow-up instead")
        self.check_model()
        # --- extensions: next-turn messages, before_agent_start ---
        messages: list[str | Message] = [message]
        self._system_override = None
        if ext is not None:
            messages += ext.take_next_turn()
            base = "".join(part.text for part in self._system_parts())
            started = await self._abortable(
                ext.emit_before_agent_start(text, list(images) if images else None, base)
            )
            messages += started.messages
            self._system_override = started.system_prompt
        # --- end extensions ---
        if images and self.model is not model_before:
            # as pi, the images fit the model a before_agent_start handler (or anything meanwhile) switched to
            messages[0] = await self._prompt_message(text, images)
        await self._record_system_prompt()  # before the prompt, where pi writes it
        await self.agent.prompt(messages)
        await self._run_queued()

    async def _prompt_message(self, text: str, images: Sequence[ImageContent] | None) -> UserMessage:
        if images:  # converting or scaling a large image takes a moment: off the event loop, as pi's worker
            return await asyncio.to_thread(self._user_message, text, images)
        return self._user_message(text, images)

    async def _run_queued(self) -> None:
        """Messages queued while a run was ending (e.g. by an ``agent_end`` handler) start another run,
        as pi restarts its agent; an aborted run leaves them queued for the user to see."""
        while self.agent.steering_queue or self.agent.follow_up_queue:
            last = self.last_assistant_message()
            if last is not None and last.stop_reason == "aborted":
                return
            await self.agent.continue_()

    def steer(self, text: str, images: Sequence[ImageContent] | None = None) -> None:
        self.agent.steer(self._user_message(self.expand_input(text), images))

    def follow_up(self, text: str, images: Sequence[ImageContent] | None = None) -> None:
        self.agent.follow_up(self._user_message(self.expand_input(text), images))

    def abort(self) -> None:
        """Stop the run: the agent's turn, a compaction, and the extension handlers (``input``,
        ``before_agent_start``) a prompt is still waiting for (that prompt raises `PromptAborted`)."""
        for task in self._abortable_tasks:
            self._aborted_tasks.add(task)
            task.cancel()
        if self.extensions is not None:
            self.extensions.abort_hooks()  # a context/tool_call/tool_result/message handler that hangs
        self.agent.abort()
        self.compaction.abort()

    async def _abortable(self, work: Awaitable[T]) -> T:
        """Await an extension phase of the prompt pipeline so that `abort` can end it.

        The work runs in the prompt's own task (no new task: a phase without handlers must not yield to
        the event loop, or messages queued meanwhile would change order); `abort` cancels that task and
        the cancellation becomes `PromptAborted` here.
        """
        task = asyncio.current_task()
        if task is None:
            return await work
        self._abortable_tasks.add(task)
        try:
            result = await work
        except asyncio.CancelledError:
            if task in self._aborted_tasks and task.uncancel() == 0:
                raise PromptAborted(_ABORTED_IN_HOOKS) from None
            raise
        finally:
            self._abortable_tasks.discard(task)
            aborted = task in self._aborted_tasks
            self._aborted_tasks.discard(task)
        if aborted:  # a handler swallowed the cancellation: the prompt is aborted all the same
            task.uncancel()
            raise PromptAborted(_ABORTED_IN_HOOKS)
        return result

    async def wait_for_idle(self) -> None:
        await self.agent.wait_for_idle()

    # --- model and thinking -------------------------------------------------------------------------

    def set_model(self, model: Model, *, source: str = "set") -> None:
        """Use ``model`` from the next request on. The same model picked again takes its definition as it
        is now (a ``baseUrl`` or key fixed in models.json since start-up), as pi, but is no change: nothing
        is recorded and extensions hear nothing."""
        previous = self.agent.model
        self.agent.model = model
        if model.label == previous.label:
            return
        self._pending_state.model = (model.provider, model.id)
        self._write_choice_now()
        if self.extensions is not None:  # extensions
            self.extensions.notify_soon("model_select", model=model, previous_model=previous, source=source)

    def set_thinking_level(self, level: ThinkingLevel) -> None:
        if level != self.agent.thinking:
            self.agent.thinking = level
            self._pending_state.thinking = level
            self._write_choice_now()

    def _write_choice_now(self) -> None:
        """A model or level picked in a session that has its file is written at once, as pi writes it:
        quitting or switching sessions right after the pick lost it (``-c`` brought the old model back).
        A new session keeps it for its first write; what opening a session adjusts on its own (a
        recorded model that is not available) still waits for the next entry."""
        if self.session_manager.is_flushed:
            self._flush_pending_state()

    def _record_model_if_changed(self, restored: RestoreState, model: Model, thinking: ThinkingLevel) -> None:
        fresh = not self.session_manager.has_entries()
        ref = restored.model
        if is_no_model(model):  # nothing to record until a real model is picked (set_model records it)
            pass
        elif fresh or ref is None or (ref.provider, ref.model_id) != (model.provider, model.id):
            self._pending_state.model = (model.provider, model.id)
        if fresh or restored.thinking_level != thinking:
            self._pending_state.thinking = thinking

    def _flush_pending_state(self) -> None:
        """Model and thinking changes made by opening a session are written just before the next entry, not
        when they happen: opening a session with another model and only looking at it (``/context``,
        ``/session``) must not write to the user's file. Picked ones are written at once
        (`_write_choice_now`)."""
        state, self._pending_state = self._pending_state, PendingState()
        if state.model is not None:
            self.session_manager.append_model_change(*state.model)
        if state.thinking is not None:
            self.session_manager.append_thinking_level_change(state.thinking)

    async def _api_key(self, provider: str) -> str | None:
        if self.registry is None:
            return None
        model = self.agent.model
        # A stored login may also bring headers and a base URL (Kimi, GitHub Copilot); `_stream` applies them.
        self._login_auth = await self.registry.resolve_request_auth(model)
        if self._login_auth is not None and self._login_auth.api_key:
            return self._login_auth.api_key
        return self.registry.get_api_key(model)

    # --- tools --------------------------------------------------------------------------------------

    def _loaded_tools(self) -> list[AgentTool]:
        tools = [self._checkpointed_tool(tool) for tool in self.tools.values()]  # checkpoints
        if PANEL_TOOL_NAME not in self.tools:
            tools.append(self._panel_tool())
        return tools

    def _panel_tool(self) -> AgentTool:
        async def execute(_id: str, params: dict[str, Any], _signal: AbortSignal, _update: Any) -> ToolResult:
            content = self.panels.panel_content(str(params.get("id", "")))
            if content is None:
                raise ValueError(f"No panel with id {params.get('id')!r}")
            return text_result(content)

        return AgentTool(
            name=PANEL_TOOL_NAME,
            label="panel",
            description=self.panels.tool_definition().description,
            parameters=self.panels.tool_definition().parameters,
            execute=execute,
        )

    def set_context_handlers(self, handlers: Callable[[], Sequence[ContextHandler]]) -> None:
        """Where `context` handlers come from (the extension layer provides them in load order)."""
        self._context_handlers = handlers

    def set_active_tools(self, names: Sequence[str]) -> None:
        self.active_tools = [n for n in names if n in self.tools]
        self._system_parts_cache = None

    def _image_options(self) -> tuple[bool, ResizeLimits]:
        """``images.autoResize`` and the current model's image limits."""
        from pi_tui.tools.image_process import limits_for_model

        auto_resize = self.settings is None or bool(self.settings.images.auto_resize)
        return auto_resize, limits_for_model(self.model.input_limits)

    async def _fit_result_images(self, result: ToolResult) -> ToolResult:
        """The images a tool returned (an extension's or MCP server's too, and any a ``tool_result``
        handler added), converted and fitted into the model's limits before they enter the history."""
        if not any(isinstance(block, ImageContent) for block in result.content):
            return result
        from pi_tui.tools.result_images import normalize_result_images

        auto_resize, limits = self._image_options()
        content = await asyncio.to_thread(
            normalize_result_images, result.content, auto_resize=auto_resize, limits=limits
        )
        return result if content is None else ToolResult(content=content, details=result.details)

    async def _gate_tool_call(self, ctx: ToolCallContext) -> ToolCallDecision | None:
        offered = self._offered_tools
        name = ctx.tool_call.name
        if offered is not None and name not in offered:
            return ToolCallDecision(block=True, reason=f"Tool {name} is not available in this context")
        return None

    # --- the context ------------------------------------------------------------------------------

    def _system_parts(self) -> tuple[SystemPart, ...]:
        return self._system_layout()[0]

    def _system_layout(self) -> tuple[tuple[SystemPart, ...], dict[str, str]]:
        """The prompt's parts (what requests are built from) and its sections (what is persisted)."""
        key = tuple(self.active_tools)
        if self._system_parts_cache is not None and self._system_parts_cache[0] == key:
            return self._system_parts_cache[1], self._system_parts_cache[2]
        from pi_tui.resources.system_prompt import build_system_prompt_layout

        specs = [
            (name, self.tools[name].prompt_snippet, tuple(self.tools[name].prompt_guidelines))
            for name in self.active_tools
        ]
        res = self.resources
        layout = build_system_prompt_layout(
            tools=specs,
            custom_prompt=res.system_prompt if res is not None else None,
            append_system_prompt=res.append_system_prompt if res is not None else None,
            context_files=res.context_files if res is not None else (),
            skills=res.skills if res is not None else (),
            cwd=self.cwd,
        )
        result = tuple(SystemPart(p.name, p.text) for p in layout.parts)
        self._system_parts_cache = (key, result, layout.sections)
        return result, layout.sections

    async def _record_system_prompt(self) -> None:
        """Write the prompt and tools the next request carries into the session, as pi 0.86+ does: the
        whole of them when the path has none yet (a new session, or one written before), else a patch
        of what changed since (sections by name, tools added or removed); nothing when unchanged.

        A prompt pi persisted on the path is left as it is: requests keep sending it (one cache across
        pi and pi-tui), so there is nothing of pi-tui's to record. The request itself is built from the
        base envelope as before (`pi_tui.context.engine._with_system_state`), so writing the message
        changes no byte sent.
        """
        from pi_tui.session.system import system_update

        state = self.engine.replay_system()
        if state.seen and not state.own:
            return
        _parts, sections = self._system_layout()
        tools = [self.tools[name].definition().to_json_dict() for name in self.active_tools]
        message = system_update(state, sections, tools, now_ms())
        if message is None:
            return
        self._flush_pending_state()
        try:
            self.session_manager.append_system_message(message)
        except SessionError as exc:
            await self.emit(ErrorEvent(f"Session not saved: {exc}"))
            return
        self.system_messages_written.append(message)

    def _base_envelope(self) -> ContextEnvelope:
        options: dict[str, Any] = {"reasoning": self.agent.thinking}
        return ContextEnvelope(
            system_parts=self._effective_system_parts(),
            tools=tuple(self.tools[n].definition() for n in self.active_tools),
            options=options,
            meta=EnvelopeMeta(model=self.agent.model, session_id=self.session_manager.id),
        )

    async def _persist_transform(self, record: dict[str, Any]) -> None:
        self._flush_pending_state()
        self.session_manager.append_context_transform(
            record["transformerName"], record["patch"], record.get("display")
        )

    async def _preflight(self, env: ContextEnvelope, signal: AbortSignal) -> ContextEnvelope | None:
        changed = await self.panels.refresh()
        for record in changed:
            self.session_manager.append_custom(PANEL_STATE_TYPE, record)
        return await self._compaction_preflight(env, signal)

    def restore_panel_layouts(self) -> dict[str, str]:
        """Re-apply the panel layouts recorded on the active path (``/context``'s what-ifs made real), so
        a resumed session lays out its requests as the live one did, in every mode. Called when the
        session is opened or switched; panels registered later get them too. Returns them by panel name."""
        # (a plain history, the only kind deferred, records no layout: its kept end says the same)
        return restore_layouts(self.panels, self.session_manager.get_kept_branch())

    def restore_panel_state(self) -> None:
        """Give re-registered panels their persisted refresh times (call after panels are registered)."""
        records = [
            e.data
            for e in self.session_manager.get_branch()
            if isinstance(e, CustomEntry) and e.custom_type == PANEL_STATE_TYPE
        ]
        self.panels.restore([r for r in records if isinstance(r, dict)])

    async def _build_request(self, _messages: list[Message], signal: AbortSignal) -> LlmRequest:
        prefix = self._deferred_prefix()
        await self._record_system_prompt()  # a later turn's, a continued run's: what changed since
        prepared = await self.engine.prepare(signal, self.agent.model.label)
        if prefix is not None and self.session_manager.deferred_history is None:
            prefix = None  # something built the history meanwhile (a compaction): nothing to add
        if prefix is not None:
            prepared.request.wire_prefix = prefix
        self.panels.account(self.agent.model)
        self._offered_tools = {t.name for t in prepared.request.tools}
        return prepared.request

    def _deferred_prefix(self) -> WirePrefix | None:
        """With the history deferred (`SessionManager.open`'s ``defer_history``), the old part of it
        as the first request sends it; the history is built now instead when this request could not
        carry it that way (an extension, a payload hook or a stream function of a test that would read
        every message, another API, a shape left to the typed path)."""
        deferred = self.session_manager.deferred_history
        if deferred is None:
            return None
        prefix = None
        model = self.agent.model
        build = None
        if self.extensions is None and self._base_stream_fn is None:
            from pi_tui.session.fast_wire import prefix_builder

            build = prefix_builder(model.api)
        if build is not None:
            from pi_tui.util.collector import FREEZE_BUILT_HISTORY_ABOVE, collector_paused

            # As a provider converts a history: no collection walks the objects it makes meanwhile, and
            # they are frozen after (without that, the first allocation after the block ran a young
            # collection over every wire message, finding nothing, before the request was written).
            # Frozen objects are still freed as usual once the request drops them.
            with collector_paused(freeze_above=FREEZE_BUILT_HISTORY_ABOVE):
                prefix = build(deferred.split, model)
        if prefix is None:
            self._complete_history()
        return prefix

    def _complete_history(self, request: LlmRequest | None = None) -> None:
        """Build the deferred history and give the agent all of it; with ``request`` (the first one,
        its body written), make it the request the whole history gives, for the cache ledger."""
        from pi_tui.util.collector import FREEZE_BUILT_HISTORY_ABOVE, collector_paused

        sent = request is not None and request.wire_prefix is not None
        if request is not None:
            request.wire_prefix = None  # sent: its wire messages and their JSON go before the history comes
        # what it builds lives as long as the session
        with collector_paused(freeze_above=FREEZE_BUILT_HISTORY_ABOVE):
            self.session_manager.complete_history()
            env = self.engine.replay()
            self.agent.messages = list(env.cached)
            if request is None or not sent:
                return
            from pi_tui.context.request import to_llm_request

            whole = to_llm_request(env)
            end = request.cache_boundary if request.cache_boundary is not None else len(request.messages)
            boundary = whole.cache_boundary if whole.cache_boundary is not None else len(whole.messages)
            request.messages = [*whole.messages[:boundary], *request.messages[end:]]
            request.cache_boundary = boundary
        # The agent's messages are new objects now, though the conversation is the one this request
        # sent: the cache entry it writes is still the one to keep warm (a refresh sends the request as
        # the whole history gives it, the same body).
        self.cache_warmer.rebase(request, self._context_extends(self.agent.model))

    async def _stream(
        self, model: Model, request: LlmRequest, options: StreamOptions
    ) -> AsyncIterator[StreamEvent]:
        prepared = self.engine.last
        if prepared is not None:
            opts = prepared.options
            if opts.get("reasoning") in THINKING_LEVELS:
                options.thinking = opts["reasoning"]
            if "temperature" in opts:
                options.temperature = opts["temperature"]
            if "maxTokens" in opts:
                options.max_tokens = opts["maxTokens"]
        options.session_id = self.session_manager.id
        if request.wire_prefix is not None:
            # The rest of the history is built while the server reads the body.
            options.after_write = lambda: self._complete_history(request)
        login = self._login_auth
        if login is not None and login.headers:
            options.headers = {**(options.headers or {}), **login.headers}
        if login is not None and login.base_url and login.base_url != model.base_url:
            model = model.model_copy(update={"base_url": login.base_url})
        if self._base_stream_fn is not None:
            stream_fn = self._base_stream_fn
        else:
            from pi_tui.ai.registry import stream as stream_fn
        # Every session request replaces the cache entry worth keeping warm (compaction and summaries do
        # not come through here).
        self.cache_warmer.start(WarmRequest(model, request, options, stream_fn), self._context_extends(model))
        async for event in stream_fn(model, request, options):
            if isinstance(event, Done | Error) and prepared is not None:
                message = event.message if isinstance(event, Done) else event.error
                self.engine.ledger.note_usage(prepared.record, message.usage)
            yield event

    def _context_extends(self, model: Model) -> Callable[[], bool]:
        """Whether the conversation still extends the one of this moment, on the same model: the cache
        entry of a request sent now is still worth keeping warm. (The same message objects, not equal
        ones: a rebuilt history, after a compaction or a move in the tree, is another context.)"""
        sent = tuple(self.agent.messages)

        def extends() -> bool:
            current_model, current = self.agent.model, self.agent.messages
            return (
                current_model.provider == model.provider
                and current_model.id == model.id
                and len(sent) <= len(current)
                and all(a is b for a, b in zip(sent, current, strict=False))
            )

        return extends

    def _last_prompt_tokens(self) -> int:
        """The prompt size the provider reported for the conversation's last answer."""
        for message in reversed(self.agent.messages):
            if isinstance(message, AssistantMessage):
                usage = message.usage
                return usage.input + usage.cache_read + usage.cache_write
        return 0

    async def _cache_warming_decision(self, decision: WarmingDecision) -> str:
        """Extensions' ``cache_warming_decision`` handlers may overrule the warmer's action."""
        if self.extensions is None:
            return decision.action
        return await self.extensions.emit_cache_warming_decision(
            warm_cost=decision.warm_cost,
            miss_cost=decision.miss_cost,
            continuation_probability=decision.continuation_probability,
            action=decision.action,
        )

    async def _record_cache_warm(self, message: AssistantMessage, note: str | None) -> None:
        """A refresh's usage goes into the session file (totals and costs), never into the context."""
        try:
            entry = self.session_manager.append_usage(
                "cache_warm", message.provider, message.model, message.usage, note
            )
        except SessionError as exc:
            log.warning("cache warming usage not saved: %s", exc)
            return
        await self.emit(EntryAppended(entry))

    def current_envelope(self) -> ContextEnvelope:
        """The durable envelope as the next request would start from it (replayed, no hooks run)."""
        return self.engine.replay()

    async def context_report(self) -> ContextReport:
        """The ``/context`` report of the next request: what it carries, its token counts, the cache
        projection, panels, transforms and the ledger (panels previewed, no hooks run, nothing written).

        Print mode's markdown, RPC ``get_context`` and the TUI inspector are views of this one report."""
        from pi_tui.context.report import SessionTotals, build_context_report

        token_cache = self._token_cache()
        preview = await self.panels.preview()  # what the next request will show, without side effects
        st = self.stats()
        return build_context_report(
            model=self.agent.model,
            durable=self.engine.replay(),
            preview=preview,
            available_tools=list(self.tools),
            ledger=self.engine.ledger,
            path=list(self.session_manager.get_branch()),
            totals=SessionTotals(
                st.assistant_messages, st.input, st.output, st.cache_read, st.cache_write, st.cost
            )
            if st.assistant_messages
            else None,
            baseline_source=lambda: self._previous_request_blocks(preview),
            sections=self.extensions.registry.context_section_lines() if self.extensions is not None else (),
            token_cache=token_cache,
        )

    def count_context_tokens(self) -> int:
        """Count the token size of every message on the active branch ahead of the first
        `context_report`, and keep their rows (which it then reuses instead of counting and describing
        ~20k messages while the user waits). Plain computation over the loaded entries: an interface may run it in a worker
        thread while it is idle. Returns how many messages were counted now (0 when all were known)."""
        cache = self._token_cache()
        before = cache.counted
        for _ in cache.prime_in_steps(self._context_messages(), 0):
            pass
        return cache.counted - before

    def count_context_tokens_in_steps(self, chunk: int) -> Iterator[int]:
        """`count_context_tokens` in pieces of ``chunk`` messages: each ``next`` counts one piece and
        yields how many messages are counted so far (for a worker that lets other work go first)."""
        return self._token_cache().prime_in_steps(self._context_messages(), chunk)

    def _has_token_cache(self) -> bool:
        """Whether the session holds message token counts (``/context`` or its work ahead made them)."""
        return self._context_tokens is not None

    def _token_cache(self) -> MessageTokenCache:
        from pi_tui.context.report import MessageTokenCache

        if self._context_tokens is None:
            self._context_tokens = MessageTokenCache()
        return self._context_tokens

    def _context_messages(self) -> list[Message]:
        """The messages the next request can carry: the active branch's from the latest compaction's
        first kept entry on, oldest first."""
        branch = self.session_manager.get_branch()
        start = 0
        for index in range(len(branch) - 1, -1, -1):
            entry = branch[index]
            if isinstance(entry, CompactionEntry):
                kept = entry.first_kept_entry_id
                start = next((i for i, e in enumerate(branch) if e.id == kept), index) if kept else index
                break
        return [entry.message for entry in branch[start:] if isinstance(entry, MessageEntry)]

    def _previous_request_blocks(self, panels: PanelManager) -> list[Block]:
        """The blocks of the last request: the ledger's, or for a resumed session the request that produced
        the last answer, rebuilt from the file (replay is deterministic)."""
        if self.engine.ledger.last_blocks:
            return self.engine.ledger.last_blocks
        from pi_tui.context.request import fingerprint, to_llm_request
        from pi_tui.util.pause_points import pause_point

        path = list(self.session_manager.get_branch())
        last = max(
            (i for i, e in enumerate(path) if isinstance(e, MessageEntry) and e.message.role == "assistant"),
            default=None,
        )
        if last is None:
            return []
        previous = panels.place(self.engine.replay_path(path[:last]))
        pause_point()  # `/context` makes this in a thread: the user's keys go first (~20 ms per step)
        return fingerprint(to_llm_request(previous, list(self.tools)))

    async def render_context(self) -> str:
        """The ``/context`` markdown of the next request (a view of `context_report`)."""
        from pi_tui.context.render import render_context

        return render_context(await self.context_report())

    # --- extensions ---------------------------------------------------------------------
    # `pi_tui.extensions.setup` binds an ExtensionRunner to `extensions`; modes call attach_ui/start.

    def attach_ui(self, bridge: Any, mode: str) -> None:
        """Answer extensions' ``ctx.ui`` with ``bridge`` (a `pi_tui.extensions.ui.UIBridge`).

        ``mode`` is ``"tui"``, ``"rpc"``, ``"json"`` or ``"print"`` (``ctx.has_ui`` is true for the first two).
        """
        self.ui = bridge
        self.mode = mode

    async def start(self, *, watch: bool = False) -> None:
        """Send ``session_start`` and ``resources_discover`` to the extensions (the first prompt does it
        otherwise). ``watch=True`` hot-reloads extensions whose files change (interactive modes)."""
        self._watch_extensions = self._watch_extensions or watch
        if self.extensions is not None:
            await self.extensions.start(watch=watch)

    async def reload(self) -> list[str]:
        """``/reload``: re-read settings, resources (context files, skills, templates) and extensions.

        Returns:
            What the user should be told besides extensions that failed to load (those are reported as
            ``extension_error`` events before this returns): skipped untrusted project extensions,
            discovery problems, registration warnings.

        Raises:
            RuntimeError: the agent is running.
        """
        self._require_idle("reload")
        if self.settings is not None:
            self.settings.reload()
        if self.resources is not None:
            self.resources.reload()
        self.invalidate_system_prompt()
        found_now = False
        if self.extensions is None and self.extension_setup is not None:
            self.extension_setup()  # none were found at start-up: look again
            found_now = self.extensions is not None
        if self.extensions is None:
            return []
        notes: list[str] = await self.extensions.reload()
        if found_now and self._watch_extensions:  # the mode asked for hot reload at start-up
            self.extensions.start_watching()
        return notes

    async def _extensions_enter_session(self, reason: str, previous_session_file: str | None) -> list[str]:
        """After a switch: load the extensions of the directory the session works in (a runner is bound
        when none were found before); returns what the user should be told."""
        found_now = False
        if self.extensions is None and self.extension_setup is not None:
            self.extension_setup()
            found_now = self.extensions is not None
        if self.extensions is None:
            return []
        notes: list[str] = await self.extensions.enter_session(reason, previous_session_file)
        if found_now and self._watch_extensions:
            self.extensions.start_watching()
        return notes

    def add_tool(self, tool: AgentTool, *, activate: bool = True) -> None:
        """Load a tool at run time (an extension's ``register_tool``); it replaces one of the same name.

        A name the tool options keep out of this run (`tool_gate`) is not loaded.
        """
        if self.tool_gate is not None and not self.tool_gate.allows(tool.name):
            return
        self.tools[tool.name] = tool
        if activate and tool.name not in self.active_tools:
            self.active_tools.append(tool.name)
        self.agent.tools = self._loaded_tools()
        self.invalidate_system_prompt()

    def remove_tool(self, name: str) -> None:
        self.tools.pop(name, None)
        self.active_tools = [n for n in self.active_tools if n != name]
        self.agent.tools = self._loaded_tools()
        self.invalidate_system_prompt()

    def invalidate_system_prompt(self) -> None:
        """Rebuild the system prompt on the next request (tools or resources changed)."""
        self._system_parts_cache = None

    def system_prompt(self) -> str:
        """The system prompt of the next request, before any ``context`` patches."""
        return "".join(part.text for part in self._effective_system_parts())

    def _effective_system_parts(self) -> tuple[SystemPart, ...]:
        """The system parts with this run's ``before_agent_start`` override applied.

        An override that extends the base prompt becomes one extra part, ``before_agent_start`` (the
        cached prefix stays intact); any other override replaces every part with one part, ``system``.
        """
        parts = self._system_parts()
        override = self._system_override
        if override is None:
            return parts
        base = "".join(part.text for part in parts)
        if override.startswith(base):
            suffix = override[len(base) :]
            return (*parts, SystemPart("before_agent_start", suffix)) if suffix else parts
        return (SystemPart("system", override),)

    def _persist_message(self, message: Message, *, hooked: bool = False) -> Message:
        """Append ``message`` to the session file; returns what was written. A message that did not come
        through the agent loop (``hooked`` False: an extension's message sent while idle, ``!cmd``)
        passes the extensions' ``message`` handlers first, so the file gets it masked."""
        if (
            not hooked
            and self.extensions is not None
            and isinstance(message, CustomMessage | BashExecutionMessage)
        ):
            message = self.extensions.message_outside_turn(message)
        self._flush_pending_state()
        if isinstance(message, CustomMessage):  # pi stores extension messages as custom_message entries
            self.session_manager.append_custom_message(
                message.custom_type, message.content, message.display, message.details
            )
        else:
            self.session_manager.append_message(message)
        if isinstance(message, BashExecutionMessage):  # checkpoints: what !cmd changed
            self._record_user_bash()
        return message

    def append_custom_message(self, message: CustomMessage) -> None:
        """Add an extension message to the conversation without starting a turn (it passes the
        ``message`` handlers and is persisted)."""
        persisted = self._persist_message(message)
        self.agent.messages.append(persisted)

        async def announce() -> None:
            await self.emit(MessageStart(persisted))
            await self.emit(MessageEnd(persisted))

        if self.extensions is not None:
            self.extensions.spawn(announce())

    def record_bash_execution(self, message: BashExecutionMessage) -> None:
        """Add a user's shell command and its output to the conversation (pi's ``!cmd``, RPC ``bash``);
        it passes the ``message`` handlers, is persisted, and the next request carries it unless it is
        ``exclude_from_context``."""
        self.agent.messages.append(self._persist_message(message))

    # --- statistics ---------------------------------------------------------------------------------

    def stats(self) -> SessionStats:
        """Totals over the whole session file (all branches), as pi's footer shows: assistant messages plus
        usage recorded elsewhere (`pi_tui.session.usage`); only entries appended since the last call are
        counted again."""
        if self._stats is None:
            from .session_stats import StatsCounter

            self._stats = StatsCounter()
        return self._stats.totals(self.session_manager, self.session_manager.get_entries())

    def last_assistant_message(self) -> AssistantMessage | None:
        for message in reversed(self.agent.messages):
            if isinstance(message, AssistantMessage):
                return message
        return None

    async def close(self) -> None:
        self.cache_warmer.cancel()
        if self.agent.is_streaming:
            self.agent.abort()
            await asyncio.wait_for(self.agent.wait_for_idle(), timeout=5)
        if self.extensions is not None:  # extensions: session_shutdown
            await self.extensions.shutdown()
        await self._collect_checkpoint_garbage()  # checkpoints
        # a refresh under way was aborted above; it ends before the file closes (bounded all the same)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.cache_warmer.settled(), timeout=5)
        self.session_manager.close()
