"""Slash commands in the TUI: screens first, then the app's own, then the prompt pipeline.

The pipeline (`AgentSession.prompt`) runs extension commands, the shared `BuiltinCommands` (/context,
/session, /name, /compact, /summary, /export, /reload — their text lands in the chat), skills and
templates; an unknown ``/word`` reaches the model, as in pi.
"""

from __future__ import annotations

import asyncio
import inspect
import os
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from pi_tui.modes.commands import BUILTIN_COMMANDS

from .completion import Candidate
from .dialogs import SelectDialog

if TYPE_CHECKING:
    from pi_tui.ai.types import Model
    from pi_tui.extensions.extension import RegisteredCommand
    from pi_tui.runtime.agent_session import AgentSession

    from .app import PiApp

__all__ = ["APP_COMMANDS", "MENU_ORDER", "CommandRouter", "load_screen_commands"]

APP_COMMANDS: dict[str, str] = {
    "model": "Switch model: /model <provider/id> (no argument: pick one)",
    "thinking": "Set the thinking level: /thinking <off|minimal|low|medium|high|xhigh|max>",
    "scoped-models": "Choose the models Ctrl+P cycles through",
    "new": "Start a new session",
    "resume": "Resume another session of this project",
    "fork": "Continue from an earlier user message in a new session",
    "clone": "Continue in a copy of this session, at the current position (a new session file)",
    "import": "Import a session file (.jsonl) into this project and resume it: /import <path.jsonl>",
    "share": "Share the session as a secret GitHub gist (needs the gh tool, logged in)",
    "bug": "Write a bug report about pi-tui (a zip to attach to your report): /bug [what went wrong]",
    "tree": "Navigate the session tree",
    "compact": "Summarise older conversation now: /compact [focus instructions]",
    "copy": "Copy the last answer to the clipboard",
    "changelog": "Show what changed in pi-tui, newest first",
    "hotkeys": "Show the keyboard shortcuts",
    "settings": "Change settings: thinking, theme, compaction, retries, the editor and more",
    "login": "Sign in: a subscription (Claude Pro/Max, xAI, Kimi) or an API key: /login [provider]",
    "logout": "Remove a login or API key saved by /login: /logout [provider]",
    "trust": "Save a trust decision for this project, used by future sessions",
    "quit": "Quit pi-tui",
    "reload": "Reload keybindings, extensions, skills, prompt templates, themes, context files and settings",
}

_LEVEL_NOTES: dict[str, str] = {
    "off": "answers without reasoning",
    "minimal": "reasons very briefly (about 1k tokens)",
    "low": "reasons briefly (about 2k tokens)",
    "medium": "reasons moderately (about 8k tokens)",
    "high": "reasons at length (about 16k tokens)",
    "xhigh": "reasons at great length (about 32k tokens)",
    "max": "reasons as long as the model allows",
}
"""What each thinking level means, beside it in the /thinking picker (the budgets are pi's defaults)."""

MENU_ORDER: tuple[str, ...] = (
    "settings", "model", "tree", "thinking", "scoped-models", "export", "import", "share", "bug", "copy", "name", "session",
    "context", "summary", "changelog", "hotkeys", "fork", "clone", "undo", "diff", "trust", "login", "logout", "new",
    "compact", "resume", "reload", "quit",
)  # fmt: skip
"""The built-in commands in the ``/`` menu's order: pi's order for the commands pi has, each of pi-tui's
own beside its nearest kin (``/context`` and ``/summary`` after ``/session``, ``/undo`` and ``/diff`` after
``/clone``). A built-in missing here comes after these."""

ScreenHandler = Callable[["PiApp", str], Awaitable[None]]


def load_screen_commands() -> tuple[dict[str, ScreenHandler], Callable[[PiApp], None]]:
    """The screens' commands (``/context``, ``/tree`` …) and their ``install`` hook."""
    from pi_tui.modes.interactive.screens import SCREEN_COMMANDS, install

    return dict(SCREEN_COMMANDS), install


class CommandRouter:
    """Decides who runs a ``/command`` and offers every command name for completion."""

    def __init__(self, app: PiApp) -> None:
        self.app = app
        self.anthropic_warning_shown = False
        self.screens, self.install = load_screen_commands()
        self._own: dict[str, Callable[[str], Awaitable[None]]] = {
            "reload": self._cmd_reload,
            "quit": self._cmd_quit,
            "new": self._cmd_new,
            "clone": self._cmd_clone,
            "compact": self._cmd_compact,
            "copy": self._cmd_copy,
            "model": self._cmd_model,
            "login": self._cmd_login,
            "logout": self._cmd_logout,
            "thinking": self._cmd_thinking,
            "trust": self._cmd_trust,
            "import": self._cmd_import,
            "share": self._cmd_share,
            "bug": self._cmd_bug,
        }
        """The app's own commands (the rest of `APP_COMMANDS` are screens)."""

    def _extension_commands(self) -> dict[str, RegisteredCommand]:
        session: AgentSession | None = self.app.session
        runner = session.extensions if session is not None else None
        return runner.registry.commands if runner is not None else {}

    def candidates(self) -> list[Candidate]:
        """Built-ins (in `MENU_ORDER`), then prompt templates, extension commands and ``skill:`` names."""
        builtins: dict[str, str] = {**APP_COMMANDS, **BUILTIN_COMMANDS}
        for name in self.screens:
            builtins.setdefault(name, "")
        rank = {name: index for index, name in enumerate(MENU_ORDER)}
        out = dict(sorted(builtins.items(), key=lambda item: rank.get(item[0], len(rank))))
        session: AgentSession | None = self.app.session
        resources = session.resources if session is not None else None
        for template in resources.templates if resources is not None else []:
            out.setdefault(template.name, template.description or "")
        for name, command in self._extension_commands().items():
            out.setdefault(name, command.description or "")
        for skill in resources.skills if resources is not None else []:
            out.setdefault(f"skill:{skill.name}", skill.description or "")
        return [Candidate(name, desc) for name, desc in out.items() if name]

    def argument_candidates(self, name: str, prefix: str) -> list[Candidate]:
        """Completions of a command's argument: models for ``/model``, levels for ``/thinking``, and
        whatever an extension command's ``get_argument_completions(prefix)`` returns."""
        from pi_tui.util.fuzzy import fuzzy_filter

        session = self.app.session
        if session is None:
            return []
        options: list[str] = []
        if name == "model" and session.registry is not None:
            options = [m.label for m in session.registry.available_models()]
        elif name in ("login", "logout"):
            from pi_tui.ai.oauth import oauth_provider_ids

            if name == "login":
                options = [*oauth_provider_ids(), *session.registry.providers()] if session.registry else []
            elif session.registry is not None:
                options = session.registry.auth.providers()
            options = list(dict.fromkeys(options))
        elif name == "thinking":
            from pi_tui.ai.thinking import available_thinking_levels

            options = list(available_thinking_levels(session.model))
        else:
            command = self._extension_commands().get(name)
            complete = command.get_argument_completions if command is not None else None
            if complete is None:
                return []
            try:
                found = complete(prefix)
            except Exception:  # an extension's completer must not break typing
                return []
            return [Candidate(str(item)) for item in found or []]
        return [Candidate(options[i]) for i, _ in fuzzy_filter(prefix, options)]

    def mention_candidates(self, prefix: str) -> list[Candidate]:
        """What extensions offer after ``@`` (``pi.register_mention_completions``), values without the ``@``."""
        session: AgentSession | None = self.app.session
        runner = session.extensions if session is not None else None
        if runner is None:
            return []
        return [Candidate(value, text) for value, text in runner.registry.mention_candidates(prefix)]

    def has_command(self, name: str) -> bool:
        """Whether ``/name`` is a command here: the app's, a screen's, a built-in or an extension's."""
        if name in APP_COMMANDS or name in BUILTIN_COMMANDS or name in self.screens:
            return True
        return name in self._extension_commands()

    def note_subscription(self, model: Model | None) -> None:
        """pi's once-a-session warning when Claude is used through a subscription login: that usage is
        billed as extra usage, not from the plan's limits."""
        if self.anthropic_warning_shown or model is None or model.provider != "anthropic":
            return
        import os

        session = self.app.session
        registry = session.registry if session is not None else None
        login = registry is not None and registry.auth.oauth("anthropic") is not None
        if not login and "sk-ant-oat" not in os.environ.get("ANTHROPIC_OAUTH_TOKEN", ""):
            return
        self.warn_extra_usage()

    def warn_extra_usage(self) -> None:
        """Show the extra-usage warning once a session, unless ``warnings.anthropicExtraUsage`` is false."""
        session = self.app.session
        settings = session.settings if session is not None else None
        if self.anthropic_warning_shown or (
            settings is not None and not settings.anthropic_extra_usage_warning
        ):
            return
        from pi_tui.ai.oauth import ANTHROPIC_EXTRA_USAGE_WARNING

        self.anthropic_warning_shown = True
        self.app.chat_notice(ANTHROPIC_EXTRA_USAGE_WARNING, "warning")

    def note_missing_model(self) -> None:
        """Without a model, say how to get one (``/login`` named once a command of that name exists)."""
        session = self.app.session
        if session is None or session.has_model:
            return
        from pi_tui.ai.no_model import no_model_message

        session.login_available = self.has_command("login")
        where = session.registry.agent_dir if session.registry is not None else None
        if where is not None:
            self.app.chat_notice(no_model_message(where, login=session.login_available), "warning")

    def _refresh_models(self) -> None:
        """As pi whenever the model picker opens: re-read models.json and auth.json, so a key or provider
        added since start-up is offered at once. The chat does not repeat the start-up "No model
        available" warning here: the picker says itself how to add a provider."""
        session = self.app.require_session()
        if session.registry is not None:
            session.registry.refresh()
        session.login_available = self.has_command("login")

    async def run(self, text: str) -> bool:
        """Run ``text`` if the app or a screen handles it; False means "give it to the prompt pipeline"."""
        name, _, rest = text[1:].partition(" ")
        args = rest.strip()
        if name == "model":
            self._refresh_models()
        handler = self.screens.get(name)
        if handler is not None and not (name in ("model", "thinking") and args):  # text arguments: ours
            await handler(self.app, args)
            return True
        local = self._own.get(name)
        if local is not None:
            await local(args)
            return True
        return False

    # --- the app's own commands ---------------------------------------------------------------------

    async def _cmd_reload(self, args: str) -> None:
        """The shared /reload, then the settings the app applies itself, read again (as pi does)."""
        session = self.app.require_session()
        for warning in self.app.reload_keybindings():  # as pi's /reload: the keys first
            self.app.chat_notice(warning, "warning")
        builtin = session.builtin_commands
        if builtin is not None:
            outcome = builtin(f"/reload {args}".rstrip())
            if inspect.isawaitable(outcome):
                await outcome
        self.app.apply_settings()
        # the theme too, as pi's /reload applies it (--use-theme, then PI_TUI_THEME, when given, still win)
        settings = session.settings
        theme = (
            self.app.theme_override
            or os.environ.get("PI_TUI_THEME")
            or (settings.theme if settings is not None else None)
        )
        if theme and self.app.theme != f"pi-{theme}":
            error = self.app.set_pi_theme(theme)
            if error:
                self.app.chat_notice(error, "warning")

    async def _cmd_quit(self, _args: str) -> None:
        await self.app.action_quit()

    async def _cmd_new(self, _args: str) -> None:
        session = self.app.require_session()
        await session.new_session()
        self.app.chat_notice("✓ New session started", "success")

    async def _cmd_clone(self, _args: str) -> None:
        """pi's /clone: the conversation so far goes on in a new session file (this one stays as it is)."""
        from pi_tui.extensions.events import CancelledByExtension

        session = self.app.require_session()
        if session.session_manager.get_leaf_id() is None:
            self.app.chat_notice("Nothing to clone yet")
            return
        try:
            await session.clone()
        except CancelledByExtension:
            return  # an extension said no (and says why itself)
        except (RuntimeError, ValueError, OSError) as exc:
            self.app.chat_notice(f"Clone failed: {exc}", "error")
            return
        self.app.chat_notice("Cloned to new session", "success")

    async def _cmd_compact(self, args: str) -> None:
        """As the shared /compact, plus the summary shown as a compaction block and "Compacting…"."""
        from pi_tui.ai.types import CompactionSummaryMessage

        session = self.app.require_session()
        self.app.working_message = f"Compacting context… ({self.app.key_text('app.interrupt')} to cancel)"
        self.app.set_busy(True)
        self.app.terminal_progress.show()
        from pi_tui.compaction import CompactionCancelled

        try:
            result = await session.compact(args or None)
        except CompactionCancelled as exc:  # Escape (or an extension): what pi says, not a failure
            self.app.chat_notice(str(exc) or "Compaction cancelled", "warning")
            return
        except Exception as exc:  # nothing to compact, the summary call failed: say so
            self.app.chat_notice(f"Compaction failed: {exc}", "error")
            return
        finally:
            self.app.terminal_progress.hide()
            self.app.set_busy(False)
            self.app.working_message = "Working"
        self.app.chat.add(
            CompactionSummaryMessage(summary=result.summary, tokens_before=result.tokens_before)
        )
        self.app.refresh_footer(compacted=True)

    async def _cmd_copy(self, _args: str) -> None:
        session = self.app.require_session()
        from pi_tui.ai.types import AssistantMessage, message_text

        text = ""
        for message in reversed(session.messages):
            if isinstance(message, AssistantMessage):
                text = message_text(message)
                if text.strip():
                    break
        if not text.strip():
            self.app.chat_notice("No agent messages to copy yet.", "warning")
            return
        problem = await self.app.copy_text(text)
        if problem is not None:
            self.app.chat_notice(problem, "error")
            return
        self.app.chat_notice("Copied the last answer to the clipboard", "success")

    async def _cmd_model(self, args: str) -> None:
        """As pi: a model named exactly (``provider/id``, or an id only one provider has; ``:level`` may
        follow) switches at once; anything else opens the picker with it as the search."""
        from pi_tui.ai.model_resolver import model_command_target

        from .screens.model_screen import open_model

        session = self.app.require_session()
        models = session.registry.available_models() if session.registry is not None else []
        reference = args.strip()
        target = model_command_target(reference, models) if reference else None
        if target is not None:
            self.app.switch_model(*target)
            return
        await open_model(self.app, reference)

    async def _cmd_login(self, args: str) -> None:
        from .screens.login_screen import open_login

        await open_login(self.app, args)

    async def _cmd_logout(self, args: str) -> None:
        from .screens.login_screen import open_logout

        await open_logout(self.app, args)

    async def _cmd_thinking(self, args: str) -> None:
        from pi_tui.ai.thinking import available_thinking_levels, parse_thinking_level

        session = self.app.require_session()
        levels = list(available_thinking_levels(session.model))
        level = parse_thinking_level(args) if args else None
        if level is None:
            if args:
                self.app.chat_notice(f"Unknown thinking level {args!r}; levels: {', '.join(levels)}", "error")
                return
            from pi_tui.ai.thinking import DEFAULT_THINKING_LEVEL

            from .bridge import ask

            current = levels.index(session.thinking) if session.thinking in levels else 0
            settings = session.settings
            default = (
                settings.default_thinking_level if settings is not None else None
            ) or DEFAULT_THINKING_LEVEL
            # as pi's selector: the session's level ticked, what each level does, the default marked
            rows = [
                f"{'✓' if level == session.thinking else ' '} {level:<8} {_LEVEL_NOTES.get(level, '')}"
                + (" · default" if level == default else "")
                for level in levels
            ]
            dialog = SelectDialog(
                "Thinking level",
                rows,
                values=levels,
                search_keys=[f"{level} {_LEVEL_NOTES.get(level, '')}" for level in levels],
                message="Enter: this session · ctrl+s: also the default for new sessions",
                initial=current,
                saveable=True,
            )
            answer = await ask(self.app, dialog)
            if answer is None:
                return
            if dialog.saved:  # pi 0.84: Ctrl+S in the selector saves the default too
                session.set_thinking_level(answer)
                if session.settings is not None:
                    session.settings.set_default_thinking_level(session.thinking)
                self.app.chat_status(f"Default thinking level: {session.thinking}")
                self.app.refresh_footer()
                return
            level = answer
        session.set_thinking_level(level)
        self.app.chat_status(f"Thinking level: {session.thinking}")
        self.app.refresh_footer()

    async def _cmd_trust(self, _args: str) -> None:
        """pi's /trust: pick and save this project's trust decision in ``<agent dir>/trust.json``; the
        running session keeps what it loaded, the decision counts from the next start."""
        from pi_tui.resources.trust_store import ProjectTrustStore, TrustState, TrustStoreError, trust_choices

        from .bridge import ask

        session = self.app.require_session()
        settings = session.settings
        if settings is None:
            self.app.chat_notice("Trust decisions cannot be saved: this session has no settings", "error")
            return
        store = ProjectTrustStore(settings.agent_dir)
        saved = store.entry(session.cwd)
        choices = trust_choices(session.cwd)
        if saved is None:
            saved_text = "none"
        else:
            state = "trusted" if saved[1] else "untrusted"
            inherited = saved[0] != choices[0].saved_path
            saved_text = f"{state} (inherited from {saved[0]})" if inherited else f"{state} ({saved[0]})"
        marked = [saved is not None and (c.saved_path, c.trusted) == saved for c in choices]
        # as pi: a project with nothing that loads only once trusted (pi's files, or those a loaded
        # extension named) counts as trusted; what this session loaded is unchanged by it
        runner = session.extensions
        extra = runner.registry.trust_requiring_files() if runner is not None else []
        nothing = settings.trust_state(session.cwd, extra=extra) is TrustState.NOTHING_TO_TRUST
        current = "trusted" if settings.project_trusted or nothing else "untrusted"
        answer = await ask(
            self.app,
            SelectDialog(
                f"Project trust\n{session.cwd}",
                [("✓ " if mark else "  ") + c.label for c, mark in zip(choices, marked, strict=True)],
                values=list(range(len(choices))),
                message=f"Saved decision: {saved_text}\nCurrent session: {current}",
                search=False,
                initial=marked.index(True) if True in marked else 0,
            ),
        )
        if answer is None:
            return
        choice = choices[answer]
        try:
            store.set_many(choice.updates)
        except TrustStoreError as exc:
            self.app.chat_notice(f"Trust decision not saved: {exc}", "error")
            return
        state = "trusted" if choice.trusted else "untrusted"
        self.app.chat_notice(f"Saved trust decision: {state}. Restart pi-tui for it to take effect.")

    async def _cmd_import(self, args: str) -> None:
        """pi's /import: after a yes, copy the file among this project's sessions and resume the copy here.

        A session whose recorded working directory is gone needs a second yes to continue in this one."""
        from pathlib import Path

        from pi_tui.extensions.events import CancelledByExtension
        from pi_tui.runtime.session_cwd import MissingSessionCwdError
        from pi_tui.session import SessionManager
        from pi_tui.session.errors import SessionError
        from pi_tui.session.importing import import_session_file, missing_session_cwd

        from .bridge import ask
        from .dialogs import ConfirmDialog, ask_continue_in_cwd

        source = args.strip().strip("\"'")
        if not source:
            self.app.chat_notice("Usage: /import <path.jsonl>", "error")
            return
        session = self.app.require_session()
        session_dir = session.new_session_dir()
        if session_dir is None:
            self.app.chat_notice("Cannot import: this session is not saved (--no-session)", "error")
            return
        if not await ask(
            self.app, ConfirmDialog("Import session", f"Replace the current session with {source}?")
        ):
            self.app.chat_notice("Import cancelled")
            return
        gone = missing_session_cwd(source)
        if gone is not None and not await ask_continue_in_cwd(
            self.app, MissingSessionCwdError(Path(source), gone, Path(session.cwd))
        ):
            self.app.chat_notice("Import cancelled")
            return
        try:
            copy = import_session_file(source, session_dir)
            manager = SessionManager.open(copy, cwd=session.cwd)
            if gone is not None:  # the user chose to continue here
                manager.work_in(session.cwd)
            try:
                await session.switch_session(manager)
            except BaseException:
                manager.close()
                raise
        except CancelledByExtension:
            self.app.chat_notice("Import cancelled")
            return
        except (SessionError, OSError, RuntimeError) as exc:
            self.app.chat_notice(f"Failed to import session: {exc}", "error")
            return
        self.app.chat_notice(f"Session imported from: {source}", "success")

    async def _cmd_share(self, _args: str) -> None:
        """pi's /share: the session's HTML page as a secret gist through ``gh``, then its address."""
        from pi_tui.session.share_gist import ShareError, share_session_gist

        session = self.app.require_session()
        upload = asyncio.ensure_future(share_session_gist(session.session_manager))
        stopped: list[bool] = []

        def stop() -> None:  # Escape: gh is killed as the upload is cancelled, and its page removed
            stopped.append(True)
            upload.cancel()

        self.app.working_message = f"Creating gist… ({self.app.key_text('app.interrupt')} to cancel)"
        self.app.set_busy(True)
        forget = self.app.cancel_on_escape(stop)
        try:
            shared = await upload
        except ShareError as exc:
            self.app.chat_notice(str(exc), "error")
            return
        except asyncio.CancelledError:
            if not stopped:
                raise  # the command itself was cancelled (the app is closing)
            self.app.chat_status("Share cancelled")
            return
        finally:
            forget()
            self.app.set_busy(False)
            self.app.working_message = "Working"
        lines = [f"Share URL: {shared.viewer_url}"] if shared.viewer_url else []
        self.app.chat_status("\n".join([*lines, f"Gist: {shared.gist_url}"]))

    async def _cmd_bug(self, args: str) -> None:
        """pi's /bug, as far as pi-tui can: pi uploads the report to its developers or writes it as a zip;
        pi-tui has no upload service, so it always writes the zip, for the user to attach to a report."""
        from pathlib import Path

        from pi_tui.runtime.bug_report import BugReportError, build_bug_report, write_bug_report

        from .bridge import ask
        from .dialogs import InputDialog, SelectDialog

        session = self.app.require_session()
        description = await ask(
            self.app,
            InputDialog(
                "Report a bug in pi-tui. The report is a zip written to the current folder; nothing is sent"
                " anywhere. It holds pi-tui's version, your system, the model, the thinking level and the"
                " settings (without API keys or tokens), and the session's failed model turns.\n\n"
                "What went wrong? (optional; Enter goes on, Esc cancels)",
                value=args,
            ),
        )
        if description is None:
            self.app.chat_status("Bug report cancelled")
            return
        include = await ask(
            self.app,
            SelectDialog(
                "Include the session transcript?",
                ["Yes, include the transcript", "No"],
                values=[True, False],
                message="The transcript holds your messages, the model's answers, the tool calls and their"
                " results, including file contents and command output read in this session.",
                search=False,
            ),
        )
        if include is None:
            self.app.chat_status("Bug report cancelled")
            return
        try:
            report = build_bug_report(session, description, include_session=include)
            path = write_bug_report(report, Path(session.cwd))
        except (BugReportError, OSError) as exc:
            self.app.chat_notice(f"Failed to write bug report: {exc}", "error")
            return
        self.app.chat_status(
            f"Bug report exported to: {path}\nReport ID: {report.id}\n"
            "pi-tui has no upload service: attach this file when you report the problem to pi-tui's"
            " maintainers (read it first: it is plain JSON)."
        )
