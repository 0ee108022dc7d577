"""The full-screen interface (Textual). Nothing outside this package imports Textual.

`run_interactive` is what ``pi-tui`` without ``-p`` runs: it builds `PiApp` (cheap), lets it draw its
first frame, and has it create the session afterwards. The terminal is restored on any exit — an
exception, SIGTERM, SIGHUP — and a crash says where its log is; the session file stays valid because
every entry is appended whole as it happens.
"""

from __future__ import annotations

import gc
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pi_tui.ai.types import ImageContent
    from pi_tui.args import Args
    from pi_tui.resources.settings import SettingsManager
    from pi_tui.runtime.factory import Startup
    from pi_tui.runtime.session_cwd import SessionInOtherProjectError

    from .app import PiApp

__all__ = [
    "UNTRUSTED_PROJECT",
    "project_needs_trust",
    "project_trust_files",
    "report_crash",
    "run_interactive",
    "trust_question",
    "untrusted_project",
]

UNTRUSTED_PROJECT = (
    "This project is not trusted. Project .pi resources and packages are ignored. Use /trust to save a trust "
    "decision, then restart pi-tui."
)

def project_needs_trust(cwd: Path, agent_dir: Path) -> bool:
    """True when pi would ask its trust question about ``cwd``: it has settings or resources that load
    only once trusted (its ``.pi`` settings and resources, ``.agents/skills`` in it or in a folder
    above it, not the user's own ``~/.agents/skills``), and nothing decided yet (no saved decision
    either way, no ``trustedProjects`` entry, ``defaultProjectTrust`` neither always nor never)."""
    from pi_tui.resources.trust_store import has_trust_requiring_resources

    if not has_trust_requiring_resources(cwd):
        return False
    from pi_tui.resources.settings import SettingsManager

    return SettingsManager(agent_dir, cwd, project_trusted=False).trust_decision(cwd) is None


def untrusted_project(settings: SettingsManager | None, cwd: str | os.PathLike[str] | None) -> bool:
    """Whether the session ignores files of its project that load only once trusted (pi's rule): its
    settings do not trust it and it has such files. pi then says so in the chat at start-up."""
    from pi_tui.resources.trust_store import has_trust_requiring_resources

    if settings is None or settings.project_trusted:
        return False
    return has_trust_requiring_resources(cwd if cwd is not None else settings.cwd)


def project_trust_files(cwd: Path, limit: int = 12) -> list[str]:
    """What trusting ``cwd`` would let run or be read: the settings and instruction files, and each
    file in the extension, skill, prompt and theme folders, relative to ``cwd`` (a parent folder's
    ``.agents/skills`` files with ``../``); at most ``limit`` lines, the last saying how many more."""
    from pi_tui.resources.trust_store import trust_requiring_paths

    found: list[str] = []
    base = Path(os.path.realpath(cwd))
    for path in trust_requiring_paths(cwd):
        files = [path] if path.is_file() else sorted(
            p for p in path.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and not p.name.startswith(".")
        )  # fmt: skip
        found += [os.path.relpath(f, base) for f in files]
    if len(found) > limit:
        return [*found[: limit - 1], f"… and {len(found) - limit + 1} more"]
    return found


def trust_question(args: Args, agent_dir: Path) -> Callable[[Path], bool] | None:
    """The start-up check for the trust question about a directory (the one the run works in: a
    ``--session`` file's own, as pi), or None when the command line already decided.

    ``--trust-project`` records trust; ``--approve`` / ``--no-approve`` decide for this run only (pi 0.87).
    """
    if args.trust_project or args.approve is not None:
        return None
    return lambda where: project_needs_trust(where, agent_dir)


def _crash_log(agent_dir: Path) -> Path:
    return agent_dir / "pi-tui-crash.log"


def _preview_path(args: Args, cwd: Path) -> Path | None:
    """The session file to preview in the first frame: ``--session`` naming an existing file."""
    name = args.session
    if not name or args.fork or args.no_session:
        return None
    path = Path(name).expanduser()
    if not path.is_absolute():
        path = cwd / path
    return path if path.is_file() else None


def run_interactive(
    args: Args, cwd: Path, prompts: list[str], first_images: Sequence[ImageContent] | None = None
) -> int:
    """Run the TUI until the user quits; returns the exit code. ``first_images`` (``@file`` images) go
    with the first of ``prompts``."""
    from pi_tui.ai.paths import agent_dir as default_agent_dir

    from . import early_keys
    from .escape_timeout import escape_delay
    from .terminal_caps import color_system_for
    from .textual_env import hand_to_textual

    global_settings = _global_settings(default_agent_dir())
    handed: dict[str, str] = {}
    if (delay := escape_delay()) is not None:
        handed["ESCDELAY"] = delay
    if (colors := color_system_for(_true_color(global_settings))) is not None:
        handed["TEXTUAL_COLOR_SYSTEM"] = colors
    hand_to_textual(handed)  # before Textual reads its settings
    early_keys.hold()  # keys typed while Textual loads reach the editor as typed (Enter stays Enter)
    try:
        return _run_app(args, cwd, prompts, first_images, global_settings)
    finally:
        early_keys.release()


def _run_app(
    args: Args,
    cwd: Path,
    prompts: list[str],
    first_images: Sequence[ImageContent] | None,
    global_settings: dict[str, object],
) -> int:
    from pi_tui.ai.paths import agent_dir as default_agent_dir

    agent_dir = default_agent_dir()

    keep_cwd = False  # the user chose to continue here although the session's directory is gone

    def create_startup(trust: bool | None) -> Startup:
        from pi_tui.runtime.factory import create_session

        if trust:
            args.trust_project = True
        # no key yet: the app opens and says so
        return create_session(args, cwd, allow_no_model=True, keep_cwd=keep_cwd)

    def continue_in_cwd() -> None:
        nonlocal keep_cwd
        keep_cwd = True

    def run_cwd() -> Path:
        from pi_tui.runtime.session_cwd import peek_run_cwd

        return peek_run_cwd(args, cwd.resolve(), keep_cwd=keep_cwd)

    def fork_here(other: SessionInOtherProjectError) -> None:
        other.accept(args)

    def trust_for_this_run() -> None:
        # "Trust (this session only)" is --approve for the start-up project: trusted for this run,
        # nothing recorded (a session switched to in another directory does not inherit it)
        args.approve = True
        args.approve_here_only = True

    theme = args.use_theme or os.environ.get("PI_TUI_THEME") or _theme_setting(global_settings)
    # No garbage collection until the first frame is drawn: start-up allocates much and frees little.
    gc.disable()
    from .app import PiApp
    from .textual_private import uncaught_exception

    app = PiApp(
        create_startup,
        cwd=cwd.resolve(),
        agent_dir=agent_dir,
        initial_prompts=prompts,
        initial_images=first_images,
        needs_trust=trust_question(args, agent_dir),
        trust_for_this_run=trust_for_this_run,
        continue_in_cwd=continue_in_cwd,
        run_cwd=run_cwd,
        fork_here=fork_here,
        theme_name=theme or "light/dark",  # none set: light or dark by the terminal's background, as pi
        preview_path=_preview_path(args, cwd),
    )
    app.save_detected_theme = theme is None
    app.resume_gc_after_first_frame = True
    app.leave_if_resume_cancelled = args.resume  # -r: Escape in its picker leaves, as pi
    app.verbose_startup = args.verbose
    app.theme_override = args.use_theme

    try:
        code = app.run()
    except Exception:
        return report_crash(agent_dir, app, traceback.format_exc())
    finally:
        app.uninstall_signal_handlers()
    crash = uncaught_exception(app)
    if crash is not None:  # Textual restored the terminal and printed the traceback; say where it went
        text = "".join(traceback.format_exception(type(crash), crash, crash.__traceback__))
        return report_crash(agent_dir, app, text)
    if app.exit_message and not app.output_cut:  # after a signal the terminal may not read any more
        # the alternate screen is gone: the conversation is written to the normal one, as pi does
        terminal = sys.stdout.isatty()
        conversation = app.exit_transcript(color=terminal, width=_columns() if terminal else None)
        sys.stdout.write((conversation + "\n" if conversation else "") + app.exit_message + "\n")
    return code if isinstance(code, int) else 0


def _columns() -> int | None:
    """The terminal's width now (the app may have been resized since it started), None if unknown."""
    try:
        return os.get_terminal_size(sys.stdout.fileno()).columns or None
    except OSError:
        return None


def report_crash(agent_dir: Path, app: PiApp, details: str) -> int:
    """Write ``details`` to the crash log and tell the user where it is and where the session is saved."""
    path = _crash_log(agent_dir)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(details, encoding="utf-8")
        where_log = str(path)
    except OSError as exc:
        where_log = f"nowhere ({exc}); the traceback follows:\n{details}"
    sys.stderr.write(f"pi-tui crashed; the details are in {where_log}\n")
    saved = app.session.session_manager.path if app.session is not None else None  # None: it crashed starting
    if saved:
        sys.stderr.write(f"Your session is saved and valid: {saved} (continue it with pi-tui -c)\n")
    return 1


def _global_settings(agent_dir: Path) -> dict[str, object]:
    """The global settings as written (read directly, once: the settings manager loads later, with the
    session); empty when missing or unreadable."""
    from pi_tui.util import json_safe

    try:
        data = json_safe.loads((agent_dir / "settings.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _theme_setting(settings: dict[str, object]) -> str | None:
    """The ``theme`` of the global settings."""
    value = settings.get("theme")
    return value if isinstance(value, str) and value else None


def _true_color(settings: dict[str, object]) -> bool | None:
    """The colour-depth override: the global ``terminal.trueColor``, else ``PI_TRUE_COLOR``."""
    from pi_tui.resources.settings_schema import capability_override

    terminal = settings.get("terminal")
    return capability_override(terminal.get("trueColor") if isinstance(terminal, dict) else None, "PI_TRUE_COLOR")
