"""From command-line arguments to a ready `AgentSession` (settings, resources, model, session, tools)."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pi_tui.agent.tool import AgentTool
from pi_tui.ai.stream import StreamFn
from pi_tui.args import Args, resolve_flag_words

from .agent_session import AgentSession
from .run_settings import SETTINGS_NOTICE as _SETTINGS_NOTICE
from .run_settings import default_tools_setting as _default_tools
from .run_settings import load_run_settings as _load_settings

if TYPE_CHECKING:
    from pi_tui.ai.model_resolver import ScopedModel
    from pi_tui.packages.resolve import ResolvedPackages
    from pi_tui.resources.settings import SettingsManager
    from pi_tui.session import SessionManager

__all__ = ["StartupError", "Startup", "create_session", "create_session_or_report"]


class StartupError(Exception):
    """The run cannot start; ``message`` is one line for the user, ``exit_code`` what to exit with."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code
        self.warnings: list[str] = []  # what start-up had to say before it failed


@dataclass
class Startup:
    session: AgentSession
    warnings: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    packages: ResolvedPackages | None = None
    """Theme paths, the start-up install lines."""


def locate_session(args: Args, cwd: Path) -> Path:
    """The file ``--session`` names: a path (which may not exist yet), or a session found by id.

    Raises:
        SessionInOtherProjectError: the id belongs to another project's session (pi offers to fork it).
        SessionNotFoundError: no session has that id.
    """
    from pi_tui.session import find_session
    from pi_tui.session.listing import read_header
    from pi_tui.session.paths import default_session_dir

    target = args.session or ""
    session_dir = Path(args.session_dir).expanduser() if args.session_dir else None
    if "/" in target or "\\" in target or target.endswith(".jsonl"):
        return (cwd / Path(target).expanduser()).absolute()
    found = find_session(target, cwd, session_dir)
    local = session_dir if session_dir is not None else default_session_dir(cwd)
    if found.parent.resolve() != local.resolve():
        from .session_cwd import SessionInOtherProjectError

        header = read_header(found)
        raise SessionInOtherProjectError(found, header.cwd if header is not None else str(found.parent))
    return found


def _select_session_manager(
    args: Args, cwd: Path, warnings: list[str] | None = None
) -> tuple[SessionManager, list[str]]:
    from pi_tui.session import SessionManager, SessionNotFoundError, find_session
    from pi_tui.session.errors import SessionError
    from pi_tui.session.listing import find_exact_session

    notices: list[str] = []
    session_dir = Path(args.session_dir).expanduser() if args.session_dir else None
    # One prompt answered in text: a big plain history is built while the first request is read
    # (`SessionManager.open`'s ``defer_history``; the session decides at its first request).
    defer = (
        args.print_mode
        and args.mode == "text"
        and len(args.messages) == 1
        and not args.messages[0].startswith(("/", "@"))
    )
    _check_session_id(args)
    try:
        if args.no_session:
            return SessionManager.in_memory(cwd, session_id=args.session_id), notices
        if args.fork:
            if args.session_id and find_exact_session(args.session_id, cwd, session_dir) is not None:
                raise StartupError(f"Session already exists with id '{args.session_id}'", 1)
            # as pi: the whole session, copied into a new session of this directory
            forked = SessionManager.fork_from(
                find_session(args.fork, cwd, session_dir),
                cwd,
                session_dir=session_dir,
                session_id=args.session_id,
            )
            notices.append(f"Forked {forked.parent_session} into {forked.path}")
            return forked, notices
        if args.session:
            path = locate_session(args, cwd)
            if not path.exists():
                _check_creatable(path)
            opened = SessionManager.open(path, cwd=cwd, session_dir=session_dir, defer_history=defer)
            return _a_session(opened), notices
        if args.continue_session:
            return SessionManager.continue_recent(cwd, session_dir=session_dir, defer_history=defer), notices
        if args.session_id:
            existing = find_exact_session(args.session_id, cwd, session_dir)
            if existing is not None:
                opened = SessionManager.open(existing, cwd=cwd, session_dir=session_dir, defer_history=defer)
                return _a_session(opened), notices
            (warnings if warnings is not None else notices).append(
                f"No project session found with id '{args.session_id}'; creating a new session with that id."
            )
        return SessionManager.create(cwd, session_dir=session_dir, session_id=args.session_id), notices
    except SessionNotFoundError as exc:
        raise StartupError(str(exc), 1) from exc
    except SessionError as exc:
        raise StartupError(str(exc), 1) from exc
    except OSError as exc:
        where = exc.filename or args.session or args.fork or ""
        raise StartupError(f"Cannot open session {where}: {exc.strerror or exc}", 1) from exc


def _check_session_id(args: Args) -> None:
    """The session flags' combinations (`check_session_flags`), for callers that skip the CLI's check."""
    from pi_tui.args import ArgsError, check_session_flags

    try:
        check_session_flags(args)
    except ArgsError as exc:
        raise StartupError(f"Error: {exc}", 1) from exc


def _a_session(manager: SessionManager) -> SessionManager:
    """``manager``, unless its file holds no session at all (then it is closed, untouched, and refused)."""
    from pi_tui.session.errors import SessionError

    if manager.load_report.nothing_readable:
        manager.close()
        raise SessionError(not_a_session_message(manager.path))
    return manager


def not_a_session_message(path: object) -> str:
    """Why a file that holds no session entry is not opened (pi's words, and that nothing changed)."""
    return (
        f"Session file is not a valid pi session: {path} (no line of it is a session header or entry; "
        "the file was left as it is)"
    )


def _check_creatable(path: Path) -> None:
    """Fail now, not after the first answer, when a new session file could never be written there."""
    from pi_tui.session.errors import SessionError

    ancestor = path.parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir() or not os.access(ancestor, os.W_OK | os.X_OK):
        raise SessionError(f"Cannot create session file {path}: {ancestor} is not a writable directory")


def _preload_sdk_in_background(api: str, base_url: str | None = None) -> None:
    """Start importing the provider and its HTTP stack (~0.1 s) while resources and tools load."""
    import threading

    from pi_tui.ai.registry import preload_sdk

    def load() -> None:
        try:
            preload_sdk(api, base_url)
        except Exception:  # the request itself will report a broken SDK properly
            pass

    threading.Thread(target=load, name="sdk-preload", daemon=True).start()


def _one_trust_notice(warnings: list[str]) -> list[str]:
    """Say "this project is not trusted" once: fold the settings notice into the extensions one."""
    settings_notice = next((w for w in warnings if w.startswith(_SETTINGS_NOTICE)), None)
    others = [w for w in warnings if "not trusted" in w and w is not settings_notice]
    if settings_notice is None or not others:
        return warnings
    return [
        (w + " Its .pi/settings.json is ignored too.") if w is others[0] else w
        for w in warnings
        if w is not settings_notice
    ]


def create_session(
    args: Args,
    cwd: Path | None = None,
    *,
    stream_fn: StreamFn | None = None,
    extra_tools: dict[str, AgentTool] | None = None,
    allow_no_model: bool = False,
    keep_cwd: bool = False,
    defer_model_check: bool = False,
) -> Startup:
    """Build everything a mode needs. Raises `StartupError` with a user-facing line on bad input.

    With ``allow_no_model`` (the full-screen app) a start without a usable model is not an error: with no
    model at all the session holds `pi_tui.ai.no_model.no_model()` (``session.has_model`` is False);
    a model without a key is kept, with a warning. Either way the session's prompt says what is missing
    (`AgentSession.check_model`) until a usable model is picked or its key is configured.

    A ``--session`` file that records another working directory runs there, as in pi; when that directory
    is gone, `MissingSessionCwdError` is raised unless ``keep_cwd`` (the user chose to stay in ``cwd``).

    ``defer_model_check`` (JSON mode, as pi) is ``allow_no_model`` without the warning: the session starts
    (so its header can be printed) and the first prompt fails saying what is missing.
    """
    warnings: list[str] = []
    try:
        return _create_session(
            args, cwd, stream_fn, extra_tools, warnings, allow_no_model, keep_cwd, defer_model_check
        )
    except StartupError as exc:
        exc.warnings = _one_trust_notice(warnings)
        raise


def create_session_or_report(
    args: Args,
    cwd: Path,
    *,
    allow_no_model: bool = False,
    on_terminal: bool = False,
    answer_from_stdin: bool = False,
    defer_model_check: bool = False,
) -> Startup | int:
    """`create_session` for the line-based modes, with what start-up has to say written to stderr.

    A failure's warnings and message go to stderr and its exit code is returned; on success the packages
    installed at start-up (one line each) and the warnings are written, and the `Startup`
    is returned. ``notices`` are left to the caller (not every mode shows them). ``allow_no_model`` and
    ``defer_model_check`` as for `create_session`.

    Questions pi asks before it starts are asked on the terminal (a ``[y/N]`` line; without a terminal
    the answer is no, unless ``answer_from_stdin``: RPC mode reads the first stdin line as the answer, as
    pi does): whether to fork another project's session named by id (every mode, as pi) and,
    with ``on_terminal`` (the line mode, pi's interactive one), whether to continue in the current
    directory when the session's own is gone; the other modes stop there with exit 1, as pi's.
    """
    keep_cwd = False
    while True:
        try:
            startup = create_session(
                args,
                cwd,
                allow_no_model=allow_no_model,
                keep_cwd=keep_cwd,
                defer_model_check=defer_model_check,
            )
        except StartupError as exc:
            # the questions' module only loads when there is one to ask
            from .session_cwd import MissingSessionCwdError, SessionInOtherProjectError, ask_on_terminal

            if isinstance(exc, SessionInOtherProjectError):
                _err(exc.message)
                if not ask_on_terminal(exc.question, from_pipe=answer_from_stdin):
                    _err("Aborted.")
                    return 0
                exc.accept(args)
                continue
            if isinstance(exc, MissingSessionCwdError) and on_terminal and not keep_cwd:
                _err(exc.message)
                if ask_on_terminal("Continue in the current directory?"):
                    keep_cwd = True
                    continue
                return 0
            for warning in exc.warnings:
                _err(f"Warning: {warning}")
            _err(exc.message)
            return exc.exit_code
        break
    for line in startup.packages.installed if startup.packages is not None else ():
        _err(line)
    for warning in startup.warnings:
        _err(f"Warning: {warning}")
    return startup


def _login_only(provider: str) -> bool:
    """Whether ``provider`` is reached only through an account login (no API key at all)."""
    from pi_tui.ai.catalog import provider_info

    info = provider_info(provider)
    return info is not None and info.auth == "oauth"


def _scope_picks_model(args: Args, settings: SettingsManager, has_history: bool) -> bool:
    """True when a model scope (``--models``, else the ``enabledModels`` setting) chooses the start-up
    model, as pi does for a session without history."""
    return not has_history and bool(args.models or settings.enabled_models)


def _scope_start_model(scoped: list[ScopedModel], settings: SettingsManager) -> ScopedModel:
    """The scope's start-up model, as pi picks it: the saved default model when the scope holds it,
    else the scope's first model. ``scoped`` is not empty."""
    saved = (settings.default_provider, settings.default_model)
    for entry in scoped:
        if (entry.model.provider, entry.model.id) == saved:
            return entry
    return scoped[0]


def _option(name: str) -> str:
    """How the user spelt an option that ``args`` keeps without its dashes."""
    return f"-{name}" if len(name) == 1 else f"--{name}"


def _err(message: str) -> None:
    sys.stderr.write(message.rstrip("\n") + "\n")
    sys.stderr.flush()


def _create_session(
    args: Args,
    cwd: Path | None,
    stream_fn: StreamFn | None,
    extra_tools: dict[str, AgentTool] | None,
    warnings: list[str],
    allow_no_model: bool = False,
    keep_cwd: bool = False,
    defer_model_check: bool = False,
) -> Startup:
    from pi_tui.ai.model_registry import ModelRegistry, missing_key_message
    from pi_tui.ai.model_resolver import ModelResolutionError, find_initial_model, resolve_cli_model
    from pi_tui.ai.paths import agent_dir as default_agent_dir
    from pi_tui.ai.thinking import DEFAULT_THINKING_LEVEL, clamp_thinking_level, parse_thinking_level
    from pi_tui.ai.types import ThinkingLevel
    from pi_tui.tools import DEFAULT_TOOL_NAMES

    cwd = Path(cwd or os.getcwd()).resolve()
    agent_dir = default_agent_dir()
    warnings.extend(args.warnings)

    registry = ModelRegistry(agent_dir)
    warnings += registry.errors

    # The session comes first: a --session file recorded in another directory runs there, so that
    # directory's settings, resources and tools are the ones to load.
    session, notices = _select_session_manager(args, cwd, warnings)
    try:
        if args.session and not args.fork:
            from .session_cwd import session_run_cwd

            cwd = session_run_cwd(session, cwd, keep_cwd=keep_cwd)
        if args.name is not None:  # --name/-n: the session's display name, as pi
            if not args.name.strip():
                raise StartupError("Error: --name requires a non-empty value", 1)
            session.append_session_info(args.name)
        settings = _load_settings(args, agent_dir, cwd, warnings)
        try:
            resolved = resolve_cli_model(registry, args.provider, args.model, args.thinking)
        except ModelResolutionError as exc:
            raise StartupError(str(exc), 1) from exc
        warnings += resolved.warnings

        restored = session.restore_state()
        report = session.load_report
        summary = report.summary()  # problems, and also a pi v1/v2 file that the next save upgrades
        if summary:
            warnings.append(summary)

        model = resolved.model
        if args.api_key and model is None and not _scope_picks_model(args, settings, restored.has_messages):
            # As pi: the key names no provider, so it only goes with a model chosen on the command line,
            # never with whichever one the settings or the session would pick.
            raise StartupError(
                "Error: --api-key needs a model to go with: name it with --model provider/id (or "
                "--provider with --model), or give a --models scope",
                1,
            )
        scope_thinking: ThinkingLevel | None = None
        patterns = args.models or settings.enabled_models
        if patterns:
            from pi_tui.ai.model_resolver import resolve_model_scope

            scoped, scope_warnings = resolve_model_scope(patterns, registry.available_models())
            warnings += scope_warnings
            if model is None and scoped and _scope_picks_model(args, settings, restored.has_messages):
                start = _scope_start_model(scoped, settings)
                model, scope_thinking = start.model, start.thinking_level
        if model is None and restored.model is not None:
            model = registry.find(restored.model.provider, restored.model.model_id)
        if model is None:
            model = find_initial_model(registry, settings.default_provider, settings.default_model)
        placeholder = False
        if model is None and (allow_no_model or defer_model_check):
            from pi_tui.ai.no_model import no_model

            model, placeholder = no_model(), True  # the mode says so (it knows whether it has /login)
        if model is None:
            from pi_tui.ai.no_model import no_models_startup_message

            raise StartupError(no_models_startup_message(agent_dir), 1)
        if args.api_key and _login_only(model.provider):
            # As pi: a provider reached only through a login (ChatGPT for openai-codex) takes no API key
            warnings.append(f"--api-key is not used for {model.provider}: it takes no API key")
        elif args.api_key:
            registry.set_runtime_api_key(model.provider, args.api_key)
            model = registry.find(model.provider, model.id) or model  # built again for that key
        if (
            stream_fn is None
            and not placeholder
            and registry.requires_api_key(model)
            and not registry.get_api_key(model)
        ):
            if not (allow_no_model or defer_model_check):
                raise StartupError(missing_key_message(model.provider, agent_dir), 1)
            if not defer_model_check:
                warnings.append(missing_key_message(model.provider, agent_dir))
        if stream_fn is None and not placeholder:
            _preload_sdk_in_background(model.api, model.base_url)

        asked: str
        if resolved.thinking_level is not None:
            asked = resolved.thinking_level
        elif scope_thinking is not None:
            asked = scope_thinking  # the scope's ``pattern:level`` for the model it picked
        elif restored.has_messages and restored.thinking_level:
            # the level the session file recorded, as it was written (the clamp below fits it to the model)
            asked = restored.thinking_level
        else:
            asked = (
                parse_thinking_level(settings.thinking_level_for(model.provider, model.id))
                or DEFAULT_THINKING_LEVEL
            )
        thinking = clamp_thinking_level(model, asked)

        from pi_tui.packages.resolve import extension_provider

        from .cwd_services import CwdServices, build_cwd_services, move_args

        # bash commands and the sandbox reach the session through this box; it exists only below
        session_box: list[AgentSession] = []
        services = build_cwd_services(args, agent_dir, cwd, settings, session_box, warnings)
        packages, resources, checkpointer = services.packages, services.resources, services.checkpointer
        sandbox, tools = services.sandbox, services.tools
        if extra_tools:
            tools.update(extra_tools)
        from .tool_selection import select_tools

        selection = select_tools(
            tools=args.tools,
            exclude=args.exclude_tools,
            no_tools=args.no_tools,
            no_builtin_tools=args.no_builtin_tools,
            default_tools=_default_tools(settings, warnings),
            builtin_defaults=DEFAULT_TOOL_NAMES,
        )
        tools = {name: tool for name, tool in tools.items() if selection.gate.allows(name)}
        active = [t for t in selection.active if t in tools]
        if args.tools is None and not (args.no_tools or args.no_builtin_tools):
            active += [t for t in (extra_tools or {}) if t in tools and t not in active]

        agent_session = AgentSession(
            cwd=cwd,
            session_manager=session,
            model=model,
            thinking=thinking,
            registry=registry,
            resources=resources,
            settings=settings,
            tools=tools,
            active_tools=active,
            stream_fn=stream_fn,
            checkpoints=checkpointer,
        )
        agent_session.tool_gate = selection.gate
        session_box.append(agent_session)
        agent_session.sandbox = sandbox
        agent_session.cli_model_scope = list(args.models) or None

        def services_for(where: Path, notes: list[str]) -> CwdServices:
            moved = move_args(args)
            answer = agent_session.trust_answers.get(where, False)
            if answer is None:  # trusted for this run only
                moved.approve = True
            elif answer:
                moved.trust_project = True
            return build_cwd_services(
                moved, agent_dir, where, _load_settings(moved, agent_dir, where, notes), session_box, notes
            )

        agent_session.services_for = services_for  # a session recorded elsewhere is switched to there
        # --- extensions: discover, import and register; session_start goes out on start ---
        from pi_tui.extensions.setup import load_extensions

        modes = {"rpc": "rpc", "json": "json"}
        agent_session.mode = modes.get(args.mode, "print" if args.print_mode else "tui")
        from pi_tui.resources.trust_hint import full_screen

        agent_session.has_trust_command = full_screen(args)
        runner, extension_warnings = load_extensions(
            agent_session,
            cwd=cwd,
            agent_dir=agent_dir,
            settings=settings,
            cli_paths=list(args.extensions),
            no_extensions=args.no_extensions,
            flags=dict(args.unknown_flags),
            package_paths=extension_provider(
                packages, lambda: agent_session.settings or settings
            ),  # packages
        )
        flag_types = {name: flag.type for name, flag in (runner.registry.flags.items() if runner else ())}
        unclaimed = [_option(name) for name in args.unknown_flags if name not in flag_types]
        if unclaimed:  # as pi: an option neither pi-tui nor a loaded extension knows stops the run
            plural = "s" if len(unclaimed) > 1 else ""
            raise StartupError(f"Error: Unknown option{plural}: {', '.join(unclaimed)}", 1)
        resolve_flag_words(args, flag_types)
        unknown = [t for t in (args.tools or []) if t not in agent_session.tools]
        if unknown:  # checked once extensions registered theirs: a name neither knows is a typo
            warnings.append(f"Unknown tool(s) ignored: {', '.join(unknown)}")
        if runner is not None:
            runner.registry.flag_values = dict(args.unknown_flags)
        warnings = warnings + extension_warnings
        # --- end extensions ---
        warnings = _one_trust_notice(warnings)
    except BaseException:
        session.close()
        raise
    return Startup(agent_session, warnings, notices, packages=packages)
