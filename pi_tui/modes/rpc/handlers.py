"""One method per RPC command: ``cmd_<type>(id, command) -> data``.

A handler returns the response's ``data`` (`NO_DATA` for none), raises `RpcError` (or any exception)
for an error response, or returns `DEFERRED` when it answers later itself (``prompt``). Field names,
data shapes and error texts follow pi 0.87.1's RPC mode; ``get_context``, ``rewind`` and the login
commands (`pi_tui.modes.rpc.login`) are pi-tui's own.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_tui.ai.thinking import available_thinking_levels, clamp_thinking_level, cycle_thinking_level
from pi_tui.ai.types import AssistantMessage, ImageContent, ThinkingLevel, message_text

from .commands_session import SessionCommands
from .fields import BUSY_ERROR, DEFERRED, NO_DATA, Command, Reply, RpcError, opt_str, req_bool, req_str
from .login import LoginCommands
from .transcript import transcript_messages

if TYPE_CHECKING:
    from pi_tui.agent.hooks import QueueMode
    from pi_tui.ai.types import Model
    from pi_tui.resources.settings import SettingsManager

__all__ = ["COMMANDS", "DEFERRED", "HANDLERS", "NO_DATA", "CommandHandlers", "RpcError"]

def _images(command: Command) -> list[ImageContent] | None:
    raw = command.get("images")
    if raw is None:
        return None
    if not isinstance(raw, list):
        raise RpcError('"images" must be an array of {type: "image", data, mimeType}')
    images = []
    for index, item in enumerate(raw):
        if not (
            isinstance(item, dict)
            and isinstance(item.get("data"), str)
            and isinstance(item.get("mimeType"), str)
        ):
            raise RpcError(f'"images[{index}]" must be {{type: "image", data: <base64>, mimeType}}')
        images.append(ImageContent(data=item["data"], mime_type=item["mimeType"]))
    return images or None


class CommandHandlers(SessionCommands, LoginCommands):
    """The handlers; `SessionCommands` holds the session, tree, bash and inspection ones."""

    # --- prompting --------------------------------------------------------------------------------

    def _is_extension_command(self, text: str) -> bool:
        ext = self.session.extensions
        return ext is not None and text.startswith("/") and ext.registry.find_command(text) is not None

    def _is_command(self, text: str) -> bool:
        """An extension command or a pi-tui built-in: runs at once, even while the agent works."""
        from pi_tui.modes.commands import BUILTIN_COMMANDS

        name = text[1:].split(" ", 1)[0] if text.startswith("/") else ""
        return name in BUILTIN_COMMANDS or self._is_extension_command(text)

    def _check_model(self) -> None:
        from pi_tui.runtime.agent_session import ModelUnavailableError

        try:
            self.session.check_model()
        except ModelUnavailableError as exc:
            raise RpcError(str(exc)) from exc

    async def cmd_prompt(self, cmd_id: object, command: Command) -> Reply:
        text = req_str(command, "message")
        images = _images(command)
        behavior = opt_str(command, "streamingBehavior")
        if behavior not in (None, "steer", "followUp"):
            raise RpcError(f"Invalid streamingBehavior: {behavior} (expected 'steer' or 'followUp')")
        server = self.server
        if server.busy and self._is_command(text):
            # runs beside the current run (which keeps its own response and agent_settled)
            await self.session.prompt(text, images, source="rpc")
            return NO_DATA
        if server.busy:
            if behavior is None:
                raise RpcError(BUSY_ERROR)
            if self.session.is_streaming:
                await self.session.prompt(text, images, streaming_behavior=behavior, source="rpc")
            elif behavior == "steer":  # the run is starting or ending: queue for it directly
                self.session.steer(text, images)
            else:
                self.session.follow_up(text, images)
            return NO_DATA
        if not self._is_command(text):
            self._check_model()
        server.start_prompt(cmd_id, text, images)
        return DEFERRED

    async def _queue(self, command: Command, kind: str) -> Reply:
        text = req_str(command, "message")
        images = _images(command)
        if self._is_extension_command(text):
            raise RpcError(f'Extension commands cannot be queued with {kind}; send them with "prompt"')
        ext = self.session.extensions
        if ext is not None:  # pi 0.86: steer and follow_up pass through the extensions' input handlers
            await ext.ensure_started()
            outcome = await ext.emit_input(text, images, "rpc")
            if outcome.handled:
                return NO_DATA
            text, images = outcome.text, outcome.images
        if kind == "steer":
            self.session.steer(text, images)
        else:
            self.session.follow_up(text, images)
        return NO_DATA

    async def cmd_steer(self, cmd_id: object, command: Command) -> Reply:
        return await self._queue(command, "steer")

    async def cmd_follow_up(self, cmd_id: object, command: Command) -> Reply:
        return await self._queue(command, "follow_up")

    async def cmd_abort(self, cmd_id: object, command: Command) -> Reply:
        self.session.abort()  # also cancels a manual compaction; the queues stay as they are
        await self.server.wait_for_run()
        return NO_DATA

    def cmd_clear_queue(self, cmd_id: object, command: Command) -> Reply:
        steering, follow_up = self.session.agent.clear_queues()
        self.server.sync_queue(force=True)
        return {
            "steering": [message_text(m) for m in steering],
            "followUp": [message_text(m) for m in follow_up],
        }

    # --- state ------------------------------------------------------------------------------------

    def cmd_get_state(self, cmd_id: object, command: Command) -> Reply:
        s = self.session
        agent = s.agent
        manager = s.session_manager
        state: dict[str, Any] = {
            "model": s.model.to_json_dict(),
            "thinkingLevel": s.thinking,
            "isStreaming": self.server.busy,
            "isCompacting": self.server.is_compacting,
            "steeringMode": agent.steering_mode,
            "followUpMode": agent.follow_up_mode,
        }
        if manager.path is not None:
            state["sessionFile"] = str(manager.path)
        state["sessionId"] = manager.id
        if manager.name:
            state["sessionName"] = manager.name
        state["autoCompactionEnabled"] = self._auto_compaction_enabled()
        state["messageCount"] = len(transcript_messages(s))  # as pi counts: system messages too
        state["pendingMessageCount"] = len(agent.steering_queue) + len(agent.follow_up_queue)
        return state

    def _auto_compaction_enabled(self) -> bool:
        settings = self.session.settings
        return bool(settings.compaction.enabled) if settings is not None else True

    def cmd_get_messages(self, cmd_id: object, command: Command) -> Reply:
        return {"messages": transcript_messages(self.session)}

    def cmd_get_last_assistant_text(self, cmd_id: object, command: Command) -> Reply:
        for message in reversed(self.session.messages):
            if isinstance(message, AssistantMessage):
                text = "".join(b.text for b in message.content if b.type == "text").strip()
                return {"text": text or None}
        return {"text": None}

    # --- model and thinking -----------------------------------------------------------------------

    def _set_model(self, model: Model) -> None:
        registry = self.session.registry
        if registry is not None and registry.requires_api_key(model) and not registry.get_api_key(model):
            raise RpcError(f"No API key for {model.provider}/{model.id}")
        before = self.session.thinking
        self.session.set_model(model)
        self._set_thinking(clamp_thinking_level(model, before))

    def _set_thinking(self, level: ThinkingLevel) -> None:
        if level != self.session.thinking:
            self.session.set_thinking_level(level)
            self.server.send({"type": "thinking_level_changed", "level": level})

    def cmd_set_model(self, cmd_id: object, command: Command) -> Reply:
        provider = req_str(command, "provider")
        model_id = req_str(command, "modelId")
        registry = self.session.registry
        model = registry.find(provider, model_id) if registry is not None else None
        if model is None:
            raise RpcError(f"Model not found: {provider}/{model_id}")
        self._set_model(model)
        return model.to_json_dict()

    def _available_models(self) -> list[Any]:
        registry = self.session.registry
        return list(registry.available_models()) if registry is not None else [self.session.model]

    def cmd_get_available_models(self, cmd_id: object, command: Command) -> Reply:
        return {"models": [m.to_json_dict() for m in self._available_models()]}

    def cmd_cycle_model(self, cmd_id: object, command: Command) -> Reply:
        from pi_tui.runtime.model_cycle import model_cycle

        # as pi: the model scope (--models, else enabledModels) when there is one, with its levels
        cycle = model_cycle(self.session)
        if len(cycle.models) <= 1:
            return None
        target = cycle.next_index(self.session.model)
        model = cycle.models[target]
        self._set_model(model)
        level = cycle.levels[target]
        if level is not None:
            self._set_thinking(clamp_thinking_level(model, level))
        return {
            "model": model.to_json_dict(),
            "thinkingLevel": self.session.thinking,
            "isScoped": cycle.scoped,
        }

    def cmd_set_thinking_level(self, cmd_id: object, command: Command) -> Reply:
        from pi_tui.ai.thinking import parse_thinking_level

        raw = req_str(command, "level")
        model = self.session.model
        parsed = parse_thinking_level(raw)
        if parsed is None:
            raise RpcError(
                f"Invalid thinking level: {raw} (expected off, minimal, low, medium, high, xhigh or max)"
            )
        self._set_thinking(clamp_thinking_level(model, parsed))
        return NO_DATA

    def cmd_cycle_thinking_level(self, cmd_id: object, command: Command) -> Reply:
        model = self.session.model
        if not model.reasoning:
            return None
        level = cycle_thinking_level(model, self.session.thinking)
        self._set_thinking(level)
        return {"level": level}

    def cmd_get_available_thinking_levels(self, cmd_id: object, command: Command) -> Reply:
        return {"levels": list(available_thinking_levels(self.session.model))}

    # --- queue modes, compaction and retry settings -------------------------------------------------

    def _queue_mode(self, command: Command) -> QueueMode:
        mode = req_str(command, "mode")
        if mode == "all":
            return "all"
        if mode == "one-at-a-time":
            return "one-at-a-time"
        raise RpcError(f"Invalid mode: {mode} (expected 'all' or 'one-at-a-time')")

    def _save_setting(self, name: str, save: Callable[[SettingsManager], None]) -> None:
        """pi saves these toggles to the settings file; a read-only file only costs the persistence."""
        settings = self.session.settings
        if settings is None:
            return
        try:
            save(settings)
        except (OSError, ValueError) as exc:
            self.log.warning("could not save setting (%s): %s", name, exc)

    def cmd_set_steering_mode(self, cmd_id: object, command: Command) -> Reply:
        mode = self._queue_mode(command)
        self.session.agent.steering_mode = mode
        self._save_setting("set_steering_mode", lambda settings: settings.set_steering_mode(mode))
        return NO_DATA

    def cmd_set_follow_up_mode(self, cmd_id: object, command: Command) -> Reply:
        mode = self._queue_mode(command)
        self.session.agent.follow_up_mode = mode
        self._save_setting("set_follow_up_mode", lambda settings: settings.set_follow_up_mode(mode))
        return NO_DATA

    def cmd_set_auto_compaction(self, cmd_id: object, command: Command) -> Reply:
        enabled = req_bool(command, "enabled")
        if self.session.settings is None:
            raise RpcError("Auto-compaction cannot be changed: this session has no settings")
        self._save_setting(
            "set_compaction_enabled", lambda settings: settings.set_compaction_enabled(enabled)
        )
        return NO_DATA

    def cmd_set_auto_retry(self, cmd_id: object, command: Command) -> Reply:
        enabled = req_bool(command, "enabled")
        self.session.agent.retry.enabled = enabled
        self._save_setting("set_nested", lambda settings: settings.set_nested("retry", "enabled", enabled))
        return NO_DATA

    def cmd_abort_retry(self, cmd_id: object, command: Command) -> Reply:
        if self.server.retrying:  # the run is waiting to retry: cancelling the wait ends it
            self.session.agent.abort()
        return NO_DATA

    async def cmd_compact(self, cmd_id: object, command: Command) -> Reply:
        from pi_tui.compaction import CompactionCancelled

        instructions = opt_str(command, "customInstructions")
        server = self.server
        server.is_compacting = True
        server.send({"type": "compaction_start", "reason": "manual"})
        end: dict[str, Any] = {"type": "compaction_end", "reason": "manual"}
        try:
            result = await self.session.compact(instructions)
        except CompactionCancelled as exc:
            server.send({**end, "aborted": True, "willRetry": False})
            raise RpcError(str(exc) or "Compaction cancelled") from exc
        except Exception as exc:
            server.send(
                {**end, "aborted": False, "willRetry": False, "errorMessage": f"Compaction failed: {exc}"}
            )
            raise RpcError(str(exc)) from exc
        finally:
            server.is_compacting = False
        data = result.to_json()  # with pi's estimatedTokensAfter (pi 0.79.8)
        server.send({**end, "result": data, "aborted": False, "willRetry": False})
        return data

    # --- misc ---------------------------------------------------------------------------------------

    def cmd_set_session_name(self, cmd_id: object, command: Command) -> Reply:
        name = req_str(command, "name").strip()
        if not name:
            raise RpcError("Session name cannot be empty")
        self.session.set_session_name(name)
        self.server.send({"type": "session_info_changed", "name": name})
        return NO_DATA

    def cmd_export_html(self, cmd_id: object, command: Command) -> Reply:
        from pi_tui.session.export_html import export_session_html

        output = opt_str(command, "outputPath")
        path = export_session_html(
            self.session.session_manager, Path(output).expanduser() if output else None
        )
        return {"path": str(path)}


Handler = Callable[[CommandHandlers, object, Command], Reply | Awaitable[Reply]]
"""A command's method: ``(handlers, id, command)`` to its data (or an awaitable of it)."""

HANDLERS: dict[str, Handler] = {
    "prompt": CommandHandlers.cmd_prompt,
    "steer": CommandHandlers.cmd_steer,
    "follow_up": CommandHandlers.cmd_follow_up,
    "abort": CommandHandlers.cmd_abort,
    "clear_queue": CommandHandlers.cmd_clear_queue,
    "new_session": CommandHandlers.cmd_new_session,
    "get_state": CommandHandlers.cmd_get_state,
    "get_messages": CommandHandlers.cmd_get_messages,
    "set_model": CommandHandlers.cmd_set_model,
    "cycle_model": CommandHandlers.cmd_cycle_model,
    "get_available_models": CommandHandlers.cmd_get_available_models,
    "set_thinking_level": CommandHandlers.cmd_set_thinking_level,
    "cycle_thinking_level": CommandHandlers.cmd_cycle_thinking_level,
    "get_available_thinking_levels": CommandHandlers.cmd_get_available_thinking_levels,
    "set_steering_mode": CommandHandlers.cmd_set_steering_mode,
    "set_follow_up_mode": CommandHandlers.cmd_set_follow_up_mode,
    "compact": CommandHandlers.cmd_compact,
    "set_auto_compaction": CommandHandlers.cmd_set_auto_compaction,
    "set_auto_retry": CommandHandlers.cmd_set_auto_retry,
    "abort_retry": CommandHandlers.cmd_abort_retry,
    "bash": CommandHandlers.cmd_bash,
    "abort_bash": CommandHandlers.cmd_abort_bash,
    "get_session_stats": CommandHandlers.cmd_get_session_stats,
    "export_html": CommandHandlers.cmd_export_html,
    "switch_session": CommandHandlers.cmd_switch_session,
    "fork": CommandHandlers.cmd_fork,
    "clone": CommandHandlers.cmd_clone,
    "get_fork_messages": CommandHandlers.cmd_get_fork_messages,
    "get_entries": CommandHandlers.cmd_get_entries,
    "get_tree": CommandHandlers.cmd_get_tree,
    "get_last_assistant_text": CommandHandlers.cmd_get_last_assistant_text,
    "set_session_name": CommandHandlers.cmd_set_session_name,
    "get_commands": CommandHandlers.cmd_get_commands,
    "get_context": CommandHandlers.cmd_get_context,
    "rewind": CommandHandlers.cmd_rewind,
    "get_login_providers": CommandHandlers.cmd_get_login_providers,
    "login": CommandHandlers.cmd_login,
    "abort_login": CommandHandlers.cmd_abort_login,
    "logout": CommandHandlers.cmd_logout,
}
"""Every RPC command, by its ``type``, to the method that answers it."""

COMMANDS = frozenset(HANDLERS)
