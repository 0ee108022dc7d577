"""``/bug``: a zip archive a user can attach to a bug report about pi-tui.

pi 0.87.1's ``/bug`` uploads such a report to its developers' service or writes it as a zip in the current
folder. pi-tui has no upload service, so it always writes the zip: ``report.json`` (the description, pi-tui's
version, the system, the model, the thinking level and the settings with secrets left out),
``diagnostics.json`` (the failed model turns of the session, without their content) and, when the user says
so, ``session.jsonl`` (the current branch of the conversation).
"""

from __future__ import annotations

import json
import os
import platform
import re
import sys
import tempfile
import uuid
import zipfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pi_tui.runtime.agent_session import AgentSession

__all__ = ["BugReport", "BugReportError", "build_bug_report", "write_bug_report"]

_REDACTED = "[redacted]"
_SENSITIVE = re.compile(r"key|token|secret|password|auth|credential|cookie|header", re.IGNORECASE)


class BugReportError(Exception):
    """The report could not be written, and why."""


@dataclass
class BugReport:
    """What goes in the archive: ``metadata`` (report.json), ``diagnostics`` and the optional transcript."""

    id: str
    metadata: dict[str, object]
    diagnostics: dict[str, object]
    session_jsonl: str | None = field(default=None)


def _redact(value: object, key: str = "") -> object:
    """A copy of ``value`` without anything under a key that may hold a credential."""
    if key and _SENSITIVE.search(key) and value not in (None, "", [], {}):
        return _REDACTED
    if isinstance(value, dict):
        return {k: _redact(v, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact(v) for v in value]
    return value


def _environment() -> dict[str, object]:
    from pi_tui import __version__

    env = os.environ.get
    return {
        "app": "pi-tui",
        "version": __version__,
        "python": sys.version.split()[0],
        "platform": sys.platform,
        "machine": platform.machine(),
        "osRelease": platform.release(),
        "shell": Path(env("SHELL", "")).name or None,
        "terminal": {
            "term": env("TERM"),
            "program": env("TERM_PROGRAM"),
            "programVersion": env("TERM_PROGRAM_VERSION"),
            "colorterm": env("COLORTERM"),
            "tmux": bool(env("TMUX")),
            "ssh": bool(env("SSH_CONNECTION") or env("SSH_CLIENT") or env("SSH_TTY")),
        },
        # the names only: they help understand the set-up, their values stay on this machine
        "piEnvironmentVariables": sorted(name for name in os.environ if name.startswith("PI_")),
    }


def _diagnostics(session: AgentSession) -> dict[str, object]:
    """The session's failed or aborted model turns, without what was said."""
    from pi_tui.ai.types import AssistantMessage
    from pi_tui.session.entries import MessageEntry

    entries = session.session_manager.get_entries()
    failed: list[dict[str, object]] = []
    answers = 0
    for entry in entries:
        if not isinstance(entry, MessageEntry) or not isinstance(entry.message, AssistantMessage):
            continue
        answers += 1
        message = entry.message
        if message.stop_reason not in ("error", "aborted") and not message.error_message:
            continue
        failed.append(
            {
                "entryId": entry.id,
                "provider": message.provider,
                "model": message.model,
                "api": message.api,
                "stopReason": message.stop_reason,
                "errorMessage": message.error_message,
            }
        )
    return {
        "sessionId": session.session_manager.id,
        "entryCount": len(entries),
        "assistantMessageCount": answers,
        "assistant": failed,
    }


def build_bug_report(session: AgentSession, description: str, *, include_session: bool) -> BugReport:
    """Gather the report of ``session``: ``description`` is the user's words (may be empty)."""
    report_id = str(uuid.uuid4())
    model = session.model if session.has_model else None
    settings = session.settings
    runner = session.extensions
    metadata: dict[str, object] = {
        "id": report_id,
        "createdAt": datetime.now(UTC).isoformat(timespec="seconds"),
        "hint": description.strip() or None,
        "environment": _environment(),
        "session": {
            "id": session.session_manager.id,
            "included": include_session,
            "messageCount": len(session.messages),
            **({"cwd": str(session.cwd)} if include_session else {}),
        },
        "model": (
            {"provider": model.provider, "id": model.id, "name": model.name, "api": model.api}
            if model is not None
            else None
        ),
        "thinkingLevel": session.thinking,
        "extensionErrors": _redact(runner.errors) if runner is not None else [],
        "settings": {
            "global": _redact(settings.scope_dict("global")) if settings is not None else None,
            "project": _redact(settings.scope_dict("project")) if settings is not None else None,
        },
    }
    transcript = None
    if include_session:
        from pi_tui.session.export_jsonl import export_branch_jsonl

        with tempfile.TemporaryDirectory(prefix="pi-tui-bug-") as folder:
            path = export_branch_jsonl(session.session_manager, Path(folder) / "session.jsonl")
            transcript = path.read_text(encoding="utf-8")
    return BugReport(report_id, metadata, _diagnostics(session), transcript)


def write_bug_report(report: BugReport, folder: Path) -> Path:
    """Write ``report`` as ``pi-tui-bug-report-<id>.zip`` in ``folder`` and return its path.

    Raises:
        BugReportError: the folder cannot be written to.
    """
    target = folder / f"pi-tui-bug-report-{report.id}.zip"
    try:
        with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("report.json", json.dumps(report.metadata, indent=2) + "\n")
            archive.writestr("diagnostics.json", json.dumps(report.diagnostics, indent=2) + "\n")
            if report.session_jsonl is not None:
                archive.writestr("session.jsonl", report.session_jsonl)
    except OSError as exc:
        target.unlink(missing_ok=True)
        reason = f"{exc.strerror}: {exc.filename}" if exc.strerror and exc.filename else str(exc)
        raise BugReportError(reason) from None
    return target
