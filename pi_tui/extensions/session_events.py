"""The session and resource events (a part of `ExtensionRunner`): session_before_* / session_*,
model_select, resources_discover, user_bash.

``session_before_*``: the first handler returning ``{"cancel": True}`` stops the chain and the action
(`CancelledByExtension` is raised to the caller); otherwise the last returned result counts.
A switch or fork replaces the extensions (`RenewalMixin.leave_session` / ``enter_session``): the fresh
ones get ``session_start`` and rebuild their state from the new session's entries, then
``session_switch``/``session_fork``, which pi 0.87 no longer sends, for extensions written to the older API.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._host import RunnerHost
from .events import CancelledByExtension, Event, normalize_result

if TYPE_CHECKING:
    from collections.abc import Callable

    from .extension import Extension

__all__ = ["BeforeOutcome", "SessionEventsMixin"]


@dataclasses.dataclass(slots=True)
class BeforeOutcome:
    """A ``session_before_*`` result: cancelled (by which extension) or the last result returned."""

    cancelled: bool = False
    by: str | None = None
    result: dict[str, Any] = dataclasses.field(default_factory=dict)


class SessionEventsMixin(RunnerHost):
    """Mixed into `ExtensionRunner`."""

    # --- session and resource events ----------------------------------------------------------------

    async def emit_session_before(self, name: str, **fields: Any) -> BeforeOutcome:
        """``session_before_*``: the first ``cancel`` wins; otherwise the last returned result."""
        outcome = BeforeOutcome()
        for ext, handler in self.dispatch.handlers(name):
            result = await self.dispatch.result(ext, handler, Event(name, **fields))
            if result is None:
                continue
            outcome.result = result
            if result.get("cancel"):
                outcome.cancelled, outcome.by = True, ext.name
                break
        return outcome

    def notify_soon(self, name: str, **fields: Any) -> None:
        """`notify` from synchronous code (e.g. ``model_select`` from ``set_model``)."""
        if not self.has_handlers(name):
            return
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return
        self.spawn(self.notify(name, **fields))

    async def before_switch(self, reason: str, target_session_file: str | None) -> None:
        """``session_before_switch``. Raises `CancelledByExtension` when a handler cancels."""
        fields: dict[str, Any] = {"reason": reason}
        if target_session_file is not None:
            fields["target_session_file"] = target_session_file
        outcome = await self.emit_session_before("session_before_switch", **fields)
        if outcome.cancelled:
            raise CancelledByExtension(
                "Switching sessions" if reason == "resume" else "A new session", outcome.by or ""
            )

    async def after_switch(self, reason: str, previous_session_file: str) -> None:
        """``session_switch`` (or ``session_fork``) to the extensions loaded for the new session, after
        their ``session_start``."""
        if reason == "fork":
            await self.notify("session_fork", previous_session_file=previous_session_file)
        else:
            await self.notify("session_switch", reason=reason, previous_session_file=previous_session_file)

    async def before_fork(self, entry_id: str) -> bool:
        """``session_before_fork``; returns ``skip_conversation_restore``. Raises `CancelledByExtension`."""
        outcome = await self.emit_session_before("session_before_fork", entry_id=entry_id)
        if outcome.cancelled:
            raise CancelledByExtension("Forking", outcome.by or "")
        return bool(outcome.result.get("skip_conversation_restore"))

    async def before_tree(
        self, target_id: str | None, old_leaf_id: str | None, summary: str | None
    ) -> tuple[str | None, str | None]:
        """``session_before_tree``; returns the (possibly replaced) summary and a label for the new leaf.

        Raises:
            CancelledByExtension: A handler cancelled the move.
        """
        self._tree_skip = self.tree_asked_for is not None and self.tree_asked_for == (target_id or "<root>")
        self.tree_asked_for = None
        if self._tree_skip:  # the compaction's branch summary already asked (see compaction_hooks)
            return summary, None
        preparation = Event(
            "tree_preparation",
            target_id=target_id,
            old_leaf_id=old_leaf_id,
            user_wants_summary=summary is not None,
            summary=summary,
        )
        outcome = await self.emit_session_before("session_before_tree", preparation=preparation)
        if outcome.cancelled:
            raise CancelledByExtension("Moving in the session tree", outcome.by or "")
        result = outcome.result
        given = result.get("summary")
        if isinstance(given, dict):
            given = given.get("summary")
        self._tree_from_extension = given is not None
        label = result.get("label")
        return (str(given) if given is not None else summary), (str(label) if label else None)

    async def after_tree(self, old_leaf_id: str | None, label: str | None, summarized: bool) -> None:
        if self._tree_skip:
            self._tree_skip = False
            return
        session = self.session
        new_leaf = session.session_manager.get_leaf_id()
        if label and new_leaf is not None:
            session.label(new_leaf, label)
        summary_entry = session.session_manager.get_entry(new_leaf) if summarized and new_leaf else None
        await self.notify(
            "session_tree",
            new_leaf_id=new_leaf,
            old_leaf_id=old_leaf_id,
            summary_entry=summary_entry,
            from_extension=self._tree_from_extension,
        )

    async def emit_resources_discover(self, reason: str) -> None:
        """``resources_discover``: collect skill/prompt/theme paths and load them."""
        skills: list[str] = []
        prompts: list[str] = []
        themes: list[str] = []
        cwd = str(self.session.cwd)
        for ext, handler in self.dispatch.handlers("resources_discover"):
            event = Event("resources_discover", cwd=cwd, reason=reason)
            try:
                result = normalize_result(
                    await asyncio.wait_for(self._call_awaited(ext, handler, event), self.lifecycle_timeout)
                )
            except Exception as exc:
                await self.report(ext, "resources_discover", exc)
                continue
            if not result:
                continue
            base = ext.source.path if ext.source.path.is_dir() else ext.source.path.parent
            for key, bucket in (("skill_paths", skills), ("prompt_paths", prompts), ("theme_paths", themes)):
                for item in result.get(key) or ():
                    path = Path(str(item)).expanduser()
                    bucket.append(str(path if path.is_absolute() else base / path))
        self.theme_paths = themes
        resources = self.session.resources
        if (skills or prompts) and resources is not None:
            resources.extend_resources(skill_paths=skills, template_paths=prompts)
            self.session.invalidate_system_prompt()

    async def _call_awaited(self, ext: Extension, handler: Callable[..., Any], event: Event) -> Any:
        result = self.call(ext, handler, event)
        return await result if inspect.isawaitable(result) else result

    async def emit_user_bash(
        self, command: str, exclude_from_context: bool, cwd: str
    ) -> dict[str, Any] | None:
        """``user_bash`` (``!cmd``): the first non-empty result (``operations`` or ``result``) wins."""
        for ext, handler in self.dispatch.handlers("user_bash"):
            event = Event("user_bash", command=command, exclude_from_context=exclude_from_context, cwd=cwd)
            result = await self.dispatch.result(ext, handler, event)
            if result:
                return result
        return None
