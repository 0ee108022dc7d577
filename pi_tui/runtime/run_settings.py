"""Settings read once per run, before (or while) the session is built.

- `load_run_settings`: the global settings, plus the project's once it is trusted.
- `configured_session_dir`: where sessions are stored (``--session-dir``, the environment, the setting).
- `apply_http_proxy_setting`: the global ``httpProxy`` setting as the proxy variables.
- `default_tools_setting`: the ``defaultTools`` setting, checked.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pi_tui.args import Args
    from pi_tui.resources.settings import SettingsManager

__all__ = [
    "SESSION_DIR_ENV",
    "SETTINGS_NOTICE",
    "apply_http_proxy_setting",
    "configured_session_dir",
    "default_tools_setting",
    "load_run_settings",
]

SETTINGS_NOTICE = "Project settings in"


def load_run_settings(args: Args, agent_dir: Path, cwd: Path, warnings: list[str]) -> SettingsManager:
    """Global settings always; the project's ``.pi/settings.json`` only once the project is trusted.

    A project file can name shell prefixes and extension paths, so a cloned repository must not be able
    to configure pi-tui until the user says so (``--trust-project`` or ``trustedProjects``).
    """
    from pi_tui.resources.settings import SettingsManager

    settings = SettingsManager(agent_dir, cwd, project_trusted=False)
    if args.approve is not None:  # pi's --approve / --no-approve: this run only, beats saved decisions
        settings.override_project_trust(args.approve)
    elif args.trust_project and not settings.is_project_trusted(cwd):
        settings.trust_project(cwd)
    if settings.is_project_trusted(cwd):
        settings.set_project_trusted(True)
    elif (cwd / ".pi" / "settings.json").exists():
        from pi_tui.resources.trust_hint import full_screen, trust_hint

        warnings.append(
            f"{SETTINGS_NOTICE} {cwd / '.pi' / 'settings.json'} are ignored: this project is not trusted. "
            f"{trust_hint(full_screen(args))}"
        )
    warnings += settings.drain_errors()
    return settings


def default_tools_setting(settings: SettingsManager, warnings: list[str]) -> list[str] | None:
    """The ``defaultTools`` setting (built-in tools offered at start-up), or None when unset or unusable."""
    from pi_tui.tools import ALL_TOOL_NAMES

    value = settings.get("defaultTools")
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
        warnings.append("Setting defaultTools should be a list of tool names; using read, bash, edit, write")
        return None
    unknown = [name for name in value if name not in ALL_TOOL_NAMES]
    if unknown:
        warnings.append(f"Setting defaultTools names unknown built-in tool(s), ignored: {', '.join(unknown)}")
    return [name for name in value if name in ALL_TOOL_NAMES]


def apply_http_proxy_setting(cwd: Path) -> None:
    """pi's ``httpProxy`` setting: its URL as ``HTTP_PROXY`` and ``HTTPS_PROXY`` for this process and the
    commands it runs, each only when not set already. Read from the global settings only, so a project's
    files can never send traffic through a proxy of their choosing."""
    from pi_tui.ai.paths import agent_dir
    from pi_tui.resources.settings import SettingsManager

    value = SettingsManager(agent_dir(), cwd, project_trusted=False).scope_dict("global").get("httpProxy")
    proxy = value.strip() if isinstance(value, str) else ""
    if proxy:
        os.environ.setdefault("HTTP_PROXY", proxy)
        os.environ.setdefault("HTTPS_PROXY", proxy)


SESSION_DIR_ENV = "PI_CODING_AGENT_SESSION_DIR"


def configured_session_dir(args: Args, cwd: Path) -> str | None:
    """Where this run stores and looks up sessions: ``--session-dir``, else ``PI_CODING_AGENT_SESSION_DIR``,
    else the ``sessionDir`` setting (a trusted project's file may set it); None: the per-folder default.

    A relative value is taken from the working directory, ``~`` from the home folder (as pi).
    """
    if args.session_dir:
        return args.session_dir
    from_env = os.environ.get(SESSION_DIR_ENV, "").strip()
    if from_env:
        return from_env
    from pi_tui.ai.paths import agent_dir

    settings = load_run_settings(args, agent_dir(), cwd, [])  # its notices come again at start-up
    value = settings.get("sessionDir")
    return value.strip() if isinstance(value, str) and value.strip() else None
