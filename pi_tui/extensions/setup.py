"""Wiring extensions into a new `AgentSession` (called by `pi_tui.runtime.factory.create_session`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .discovery import PROJECT_DIR, Discovery, discover_extensions

if TYPE_CHECKING:
    from pi_tui.resources.settings import SettingsManager

    from .host import SessionHost
    from .runner import ExtensionRunner

__all__ = ["load_extensions", "untrusted_notice"]


def untrusted_notice(cwd: Path, skipped: list[Path], has_trust_command: bool) -> str:
    """What start-up (or a reload) says about project extensions it skipped; ``has_trust_command``: the
    mode offers ``/trust`` (the full-screen app), else the notice names the command-line flags."""
    from pi_tui.resources.trust_hint import trust_hint

    names = ", ".join(p.name for p in skipped)
    return (
        f"Project extensions in {cwd / PROJECT_DIR} were not loaded ({names}): this project is not trusted. "
        f"{trust_hint(has_trust_command)}"
    )


def load_extensions(
    session: SessionHost,
    *,
    cwd: Path,
    agent_dir: Path,
    settings: SettingsManager | None,
    cli_paths: list[str],
    no_extensions: bool,
    flags: dict[str, str | bool],
    package_paths: Callable[[], Sequence[Path]] | None = None,  # packages
) -> tuple[ExtensionRunner | None, list[str]]:
    """Discover, import and register extensions for ``session``; returns the runner and start-up warnings.

    With nothing to load, no runner is built (start-up stays as cheap as without extensions) and
    ``session.extension_setup`` builds one when ``/reload`` finds extensions later. ``session_start`` is
    not sent here (it needs the event loop): it goes out on ``session.start()`` or the first prompt.
    """

    def discover() -> Discovery:
        # the session's directory and settings now: a switch to a session recorded elsewhere moves both
        where = Path(session.cwd) if session.cwd is not None else cwd
        current = session.settings if session.settings is not None else settings
        trusted = bool(current is not None and current.is_project_trusted(where))
        entries = current.resource_entries("extensions") if current is not None else []
        return discover_extensions(
            where,
            agent_dir,
            settings_entries=entries,
            cli_paths=cli_paths,
            no_extensions=no_extensions,
            project_trusted=trusted,
            package_paths=package_paths() if package_paths is not None else (),
        )

    def bind() -> ExtensionRunner:
        from .runner import ExtensionRunner  # only when there is something to run

        runner = ExtensionRunner(session, flags=flags, rediscover=discover)
        runner.bind()
        return runner

    found = discover()
    warnings = list(found.errors)
    if found.skipped_untrusted:
        warnings.append(untrusted_notice(cwd, found.skipped_untrusted, session.has_trust_command))
    if not found.sources:
        session.extension_setup = bind
        return None, warnings
    runner = bind()
    runner.load(found.sources)
    warnings += runner.warnings
    runner.warnings = []
    return runner, warnings
