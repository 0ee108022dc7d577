"""RPC commands about the session itself: new, switch, fork, clone, entries and tree, statistics,
slash-command listing, user bash, and pi-tui's ``get_context``."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pi_tui.ai.types import AssistantMessage, BashExecutionMessage
from pi_tui.session.entries import MessageEntry, SessionEntry, SystemMessageEntry, entry_to_line

from .fields import NO_DATA, Command, Reply, RpcError, opt_bool, opt_str, req_str

if TYPE_CHECKING:
    from pi_tui.session.tree import TreeNode

    from .bash import BashRun
    from .server import RpcServer

__all__ = ["SessionCommands"]

log = logging.getLogger(__name__)

T = TypeVar("T")


def _entry_json(entry: SessionEntry) -> dict[str, Any]:
    value: dict[str, Any] = json.loads(entry_to_line(entry))
    return value


def _is_cancelled(exc: BaseException) -> bool:
    from pi_tui.extensions.events import CancelledByExtension

    return isinstance(exc, CancelledByExtension)


class SessionCommands:
    """Base of `CommandHandlers`: the session, tree, bash and inspection commands."""

    log = log

    def __init__(self, server: RpcServer) -> None:
        self.server = server
        self.session = server.session
        self.background: set[asyncio.Task[Any]] = set()
        self._bash: BashRun | None = None  # while one runs

    # --- switching sessions -------------------------------------------------------------------------

    async def _switching(self, action: Awaitable[T]) -> tuple[bool, T | None]:
        """Run a session replacement; an extension's veto is ``{cancelled: true}``, not an error."""
        try:
            result = await action
        except Exception as exc:
            if _is_cancelled(exc):
                return True, None
            raise
        return False, result

    async def cmd_new_session(self, cmd_id: object, command: Command) -> Reply:
        parent = opt_str(command, "parentSession")
        cancelled, _ = await self._switching(self.session.new_session(parent_session=parent))
        return {"cancelled": cancelled}

    async def cmd_switch_session(self, cmd_id: object, command: Command) -> Reply:
        from pi_tui.session import SessionManager

        raw = req_str(command, "sessionPath")
        path = Path(raw).expanduser()
        if not path.is_file():
            raise RpcError(f"Session file not found: {raw}")
        current = self.session.session_manager.path
        if current is not None and path.resolve() == Path(current).resolve():
            return {"cancelled": False}  # already there (opening it again would meet our own lock)
        manager = SessionManager.open(path)
        if manager.load_report.nothing_readable:  # as pi: not a session, and left untouched
            from pi_tui.runtime.factory import not_a_session_message

            manager.close()
            raise RpcError(not_a_session_message(raw))
        from pi_tui.runtime.session_cwd import MissingSessionCwdError

        try:
            # as pi: a session recorded in another directory works there; when that is gone, an error
            cancelled, _ = await self._switching(self.session.switch_session(manager))
        except MissingSessionCwdError as gone:
            manager.close()
            raise RpcError(gone.message) from None
        except BaseException:
            manager.close()
            raise
        if cancelled:
            manager.close()
        return {"cancelled": cancelled}

    async def cmd_fork(self, cmd_id: object, command: Command) -> Reply:
        entry_id = req_str(command, "entryId")
        if self.session.session_manager.get_entry(entry_id) is None:
            raise RpcError(f"Entry not found: {entry_id}")
        cancelled, text = await self._switching(self.session.fork(entry_id))
        return {"text": text or "", "cancelled": cancelled}

    async def cmd_clone(self, cmd_id: object, command: Command) -> Reply:
        manager = self.session.session_manager
        if manager.path is not None and not manager.is_flushed:
            raise RpcError(
                "This session has not been saved yet. Wait for the first assistant response before "
                "cloning or forking it."
            )
        if manager.get_leaf_id() is None:
            raise RpcError("Cannot clone session: no current entry selected")
        cancelled, _ = await self._switching(self.session.clone())
        return {"cancelled": cancelled}

    # --- entries ----------------------------------------------------------------------------------

    def cmd_get_fork_messages(self, cmd_id: object, command: Command) -> Reply:
        pairs = self.session.session_manager.get_user_messages_for_forking()
        return {"messages": [{"entryId": entry_id, "text": text} for entry_id, text in pairs]}

    def cmd_get_entries(self, cmd_id: object, command: Command) -> Reply:
        since = opt_str(command, "since")
        manager = self.session.session_manager
        entries = list(manager.get_entries())
        if since is not None:
            ids = [e.id for e in entries]
            if since not in ids:
                raise RpcError(f"Entry not found: {since}")
            entries = entries[ids.index(since) + 1 :]
        return {"entries": [_entry_json(e) for e in entries], "leafId": manager.get_leaf_id()}

    def cmd_get_tree(self, cmd_id: object, command: Command) -> Reply:
        manager = self.session.session_manager
        roots = manager.get_tree()
        out: list[dict[str, Any]] = []
        # Iterative: a long session is a deep chain, deeper than Python's recursion limit.
        stack: list[tuple[TreeNode, list[dict[str, Any]]]] = [(node, out) for node in reversed(roots)]
        while stack:
            node, siblings = stack.pop()
            record: dict[str, Any] = {"entry": _entry_json(node.entry), "children": []}
            if node.label:
                record["label"] = node.label
            siblings.append(record)
            stack.extend((child, record["children"]) for child in reversed(node.children))
        return {"tree": out, "leafId": manager.get_leaf_id()}

    # --- statistics -------------------------------------------------------------------------------

    def cmd_get_session_stats(self, cmd_id: object, command: Command) -> Reply:
        manager = self.session.session_manager
        counts = {"user": 0, "assistant": 0, "toolResult": 0}
        tool_calls = total = 0
        tokens = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}
        cost = 0.0
        for entry in manager.get_entries():
            if isinstance(entry, SystemMessageEntry):
                total += 1  # pi counts its recorded prompt among the messages
                continue
            if not isinstance(entry, MessageEntry):
                continue
            message = entry.message
            total += 1
            role = message.role
            if role in counts:
                counts[role] += 1
            if isinstance(message, AssistantMessage):
                tool_calls += len(message.tool_calls())
                u = message.usage
                tokens["input"] += u.input
                tokens["output"] += u.output
                tokens["cacheRead"] += u.cache_read
                tokens["cacheWrite"] += u.cache_write
                cost += u.cost.total
        stats: dict[str, Any] = {}
        if manager.path is not None:
            stats["sessionFile"] = str(manager.path)
        stats.update(
            sessionId=manager.id,
            userMessages=counts["user"],
            assistantMessages=counts["assistant"],
            toolCalls=tool_calls,
            toolResults=counts["toolResult"],
            totalMessages=total,
            tokens={**tokens, "total": sum(tokens.values())},
            cost=cost,
            contextUsage=self._context_usage(),
        )
        return stats

    def _context_usage(self) -> dict[str, Any]:
        """pi's footer figure: the prompt size of the last answer on this branch (None after a
        compaction, until the next answer says how big the context is now)."""
        window = self.session.model.context_window
        used: int | None = None
        for message in reversed(self.session.messages):
            if message.role == "compactionSummary":
                break
            if isinstance(message, AssistantMessage) and message.stop_reason not in ("error", "aborted"):
                u = message.usage
                used = u.input + u.output + u.cache_read + u.cache_write
                break
        percent = (100 * used / window) if used is not None and window else None
        return {"tokens": used, "contextWindow": window, "percent": percent}

    # --- slash commands ----------------------------------------------------------------------------

    def cmd_get_commands(self, cmd_id: object, command: Command) -> Reply:
        commands: list[dict[str, Any]] = []
        ext = self.session.extensions
        if ext is not None:
            for registered in ext.registry.commands.values():
                owner = next((e for e in ext.extensions if e.name == registered.source), None)
                path = str(owner.path) if owner is not None else ""
                scope = owner.source.scope if owner is not None else "cli"
                commands.append(
                    {
                        "name": registered.name,
                        "description": registered.description,
                        "source": "extension",
                        "sourceInfo": self._source_info(path, scope),
                    }
                )
        resources = self.session.resources
        for template in resources.templates if resources is not None else ():
            commands.append(
                {
                    "name": template.name,
                    "description": template.description,
                    "source": "prompt",
                    "sourceInfo": self._source_info(str(template.file_path), template.source),
                }
            )
        for skill in resources.skills if resources is not None else ():
            commands.append(
                {
                    "name": f"skill:{skill.name}",
                    "description": skill.description,
                    "source": "skill",
                    "sourceInfo": {
                        **self._source_info(str(skill.file_path), skill.source),
                        "baseDir": str(skill.base_dir),
                    },
                }
            )
        from pi_tui.modes.commands import BUILTIN_COMMANDS

        for name, description in BUILTIN_COMMANDS.items():  # pi-tui's own, run by prompt
            commands.append(
                {
                    "name": name,
                    "description": description,
                    "source": "builtin",
                    "sourceInfo": {
                        "path": f"<builtin:{name}>",
                        "source": "builtin",
                        "scope": "temporary",
                        "origin": "top-level",
                    },
                }
            )
        return {"commands": commands}

    @staticmethod
    def _source_info(path: str, where: str) -> dict[str, Any]:
        text = where.strip("()")
        scope = "project" if text == "project" else "user" if text in ("user", "global") else "temporary"
        origin = "package" if text == "package" else "top-level"
        return {"path": path, "source": "local", "scope": scope, "origin": origin}

    # --- bash ------------------------------------------------------------------------------------

    async def cmd_bash(self, cmd_id: object, command: Command) -> Reply:
        from .bash import BashRun

        text = req_str(command, "command")
        exclude = bool(opt_bool(command, "excludeFromContext"))
        if self._bash is not None:
            raise RpcError("A bash command is already running; abort it with abort_bash first")
        run = BashRun(self.session, text, exclude_from_context=exclude)
        self._bash = run
        try:
            await self.session.checkpoint_before_user_bash()  # checkpoints
            message = await run.execute(
                lambda delta: self.server.send(
                    {"type": "bash_execution_update", "id": cmd_id, "delta": delta}
                )
            )
        finally:
            self._bash = None
        self._record_bash(message)
        return run.result_json(message)

    def _record_bash(self, message: BashExecutionMessage) -> None:
        """The command and its output join the conversation (the next prompt carries them); while
        the agent runs they wait for it, as pi holds them until the turn ends."""
        if not self.session.is_streaming:
            self.session.record_bash_execution(message)
            return

        async def later() -> None:
            await self.session.wait_for_idle()
            self.session.record_bash_execution(message)

        task = asyncio.ensure_future(later())
        self.background.add(task)
        task.add_done_callback(self.background.discard)

    def abort_bash(self) -> None:
        if self._bash is not None:
            self._bash.abort()

    def cmd_abort_bash(self, cmd_id: object, command: Command) -> Reply:
        self.abort_bash()
        return NO_DATA

    # --- pi-tui: the context the model sees ------------------------------------------------------

    async def cmd_get_context(self, cmd_id: object, command: Command) -> Reply:
        from .context_view import context_view

        return await context_view(self.session)

    # --- pi-tui: rewind the conversation and/or the files (checkpoints) -------------------

    async def cmd_rewind(self, cmd_id: object, command: Command) -> Reply:
        """``{entryId, mode?: "conversation"|"code"|"both", force?, resolutions?: {path: "restore"|"keep"},
        ask?}``: conflicts come back in the data (``applied: false``) unless ``ask`` lets the client's
        confirm dialogs decide."""
        entry_id = opt_str(command, "entryId")
        mode = opt_str(command, "mode") or "both"
        if mode not in ("conversation", "code", "both"):
            raise RpcError(f'"mode" must be conversation, code or both, got "{mode}"')
        raw = command.get("resolutions") or {}
        if not isinstance(raw, dict) or any(v not in ("restore", "keep") for v in raw.values()):
            raise RpcError('"resolutions" must map paths to "restore" or "keep"')
        try:
            result = await self.session.rewind(
                entry_id,
                mode,
                force=bool(opt_bool(command, "force")),
                resolutions={str(k): v for k, v in raw.items()},
                ask=bool(opt_bool(command, "ask")),
            )
        except (LookupError, RuntimeError) as exc:
            raise RpcError(str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)) from exc
        return result.to_json()
