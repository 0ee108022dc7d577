"""The ``pi-tui`` entry point: flags → settings → a mode.

Only the standard library is imported before we know what to do, so ``--help`` and ``--version`` answer
without loading pydantic, the provider SDKs or Textual.
"""

from __future__ import annotations

import base64
import gc
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from pi_tui import __version__
from pi_tui.args import HELP_TEXT, Args, ArgsError, check_session_flags, parse_args

if TYPE_CHECKING:
    from pi_tui.ai.types import ImageContent

__all__ = ["main"]


def _err(message: str) -> None:
    sys.stderr.write(message.rstrip("\n") + "\n")
    sys.stderr.flush()


def _read_file_args(args: Args, cwd: Path) -> tuple[str, list[ImageContent]]:
    """Inline ``@file`` arguments as pi does: text files become ``<file name=...>`` blocks; an image
    (PNG, JPEG, GIF, WebP, told by its first bytes; a BMP converted to PNG) is attached to the first
    prompt, named by a block holding only the conversion note, if any. Empty files are skipped."""
    chunks: list[str] = []
    images: list[ImageContent] = []
    for name in args.files:
        path = (cwd / Path(name).expanduser()).resolve()
        if path.is_dir():
            raise FileNotFoundError(f"Not a file: {name} is a directory")
        if not path.is_file():
            raise FileNotFoundError(f"File not found: {name}")
        data = path.read_bytes()
        if not data:
            continue
        from pi_tui.tools.images import IMAGE_SNIFF_BYTES, detect_image_mime_type, looks_like_bmp

        head = data[:IMAGE_SNIFF_BYTES]
        mime_type = detect_image_mime_type(head) or ("image/bmp" if looks_like_bmp(head) else None)
        if mime_type is not None:
            # converted here (a BMP to PNG, with pi's note); the prompt fits it into the model's limits
            from pi_tui.ai.types import ImageContent
            from pi_tui.tools.image_process import ImageOmitted, process_image

            processed = process_image(data, mime_type, auto_resize=False)
            if isinstance(processed, ImageOmitted):
                reason = f"\n{processed.reason}" if processed.reason else ""
                chunks.append(f'<file name="{path}">{processed.message}{reason}</file>\n')
                continue
            encoded = base64.b64encode(processed.data).decode("ascii")
            images.append(ImageContent(data=encoded, mime_type=processed.mime_type))
            hints = "\n".join(processed.hints)
            chunks.append(f'<file name="{path}">{hints}</file>\n')
            continue
        text = data.decode("utf-8", errors="replace").removeprefix("\ufeff")
        chunks.append(f'<file name="{path}">\n{text}\n</file>\n')
    return "".join(chunks), images


def _export(args: Args, cwd: Path) -> int:
    from pi_tui.session import find_session
    from pi_tui.session.errors import SessionError
    from pi_tui.session.export_html import export_session_html

    target = args.export
    assert target is not None, "_run calls _export only when --export was given"
    session_dir = Path(args.session_dir).expanduser() if args.session_dir else None
    try:
        source = Path(target).expanduser()
        if not source.exists():
            source = find_session(target, cwd, session_dir)
        out = export_session_html(source, Path(args.export_out) if args.export_out else None)
    except (SessionError, OSError) as exc:
        _err(f"Export failed: {exc}")
        return 1
    print(f"Exported to: {out}")  # pi 0.87.1's line (the in-app /export says "Session exported to")
    return 0


def _one_line(text: str, limit: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _unique_prefixes(ids: list[str], shortest: int = 8) -> dict[str, str]:
    """Each id's shortest prefix (``shortest`` characters at least) that no other id starts with: ids
    are time-ordered UUIDs, so sessions started within a minute share their first 8 characters."""
    ordered = sorted(set(ids))
    out: dict[str, str] = {}
    for index, session_id in enumerate(ordered):
        length = shortest
        for neighbour in ordered[max(0, index - 1) : index] + ordered[index + 1 : index + 2]:
            common = next(
                (i for i, (a, b) in enumerate(zip(session_id, neighbour, strict=False)) if a != b),
                min(len(session_id), len(neighbour)),
            )
            length = max(length, common + 1)
        out[session_id] = session_id[:length]
    return out


def _list_resumable(args: Args, cwd: Path) -> int:
    """``-r`` without the TUI: this directory's sessions, newest first, one line each; exit 0."""
    from pi_tui.session import default_session_dir, list_sessions

    cwd = cwd.resolve()  # as the runtime does when it stores sessions
    directory = Path(args.session_dir).expanduser() if args.session_dir else default_session_dir(cwd)
    sessions = list_sessions(cwd, directory)
    if not sessions:
        print(f"No sessions in {directory}")
        return 0
    print(f"{len(sessions)} session{'s' if len(sessions) != 1 else ''} in {directory} (newest first):")
    short = _unique_prefixes([info.id for info in sessions])
    width = max(map(len, short.values()))
    for info in sessions:
        modified = info.modified.astimezone().strftime("%Y-%m-%d %H:%M")
        title = _one_line(info.name or info.first_message, 60)
        count = f"{info.message_count} msg{'s' if info.message_count != 1 else ''}"
        print(f"{short[info.id]:<{width}}  {modified}  {count:>9}  {title:<60}  {info.path}")
    print("Resume one with: pi-tui --session <id>")
    return 0


def _list_models(args: Args) -> int:
    from pi_tui.ai.model_registry import ModelRegistry
    from pi_tui.ai.model_resolver import list_models_table

    registry = ModelRegistry()
    for problem in registry.errors:
        _err(problem)
    models = registry.available_models()
    if not models:
        from pi_tui.ai.no_model import KEY_HINT

        _err(f"No models available: {KEY_HINT}, log in with 'pi-tui login', or configure models.json")
        return 1
    print(list_models_table(models, args.list_models_search))
    return 0


def _setup_logging(verbose: bool) -> None:
    """Library code logs; the CLI decides where it goes: stderr with --verbose, else a debug file."""
    import logging

    root = logging.getLogger()
    if verbose:
        handler: logging.Handler = logging.StreamHandler(sys.stderr)
        root.setLevel(logging.INFO)
    else:
        from pi_tui.ai.paths import agent_dir

        try:
            directory = agent_dir()
            directory.mkdir(parents=True, exist_ok=True)
            handler = logging.FileHandler(directory / "pi-tui-debug.log", encoding="utf-8", delay=True)
        except OSError:
            handler = logging.NullHandler()
        root.setLevel(logging.WARNING)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root.addHandler(handler)


def _run(args: Args) -> int:
    cwd = Path(os.getcwd())
    _setup_logging(args.verbose)
    if args.offline:
        os.environ["PI_OFFLINE"] = "1"
        os.environ["PI_SKIP_VERSION_CHECK"] = "1"
    if args.export:
        return _export(args, cwd)
    from pi_tui.runtime.run_settings import apply_http_proxy_setting, configured_session_dir

    args.session_dir = configured_session_dir(args, cwd)
    apply_http_proxy_setting(cwd)
    if args.list_models:
        return _list_models(args)
    if args.resume:
        _settle_gc()
        from pi_tui.modes.plain import cannot_host_fullscreen

        if not (args.print_mode or args.plain or cannot_host_fullscreen()):  # the TUI's resume picker
            from pi_tui.modes.interactive import run_interactive

            return run_interactive(args, cwd, ["/resume"])
        return _list_resumable(args, cwd)

    stdin_text = ""
    if args.mode != "rpc" and not sys.stdin.isatty():
        stdin_text = sys.stdin.read().strip()
        # As pi: a stdin that is not a terminal means print mode, with piped text or without it
        # (``echo -n | pi-tui`` sends nothing and exits 0); only ``--plain`` asks for the line mode.
        if stdin_text or not args.plain:
            args.print_mode = True
    try:
        file_text, file_images = _read_file_args(args, cwd)
    except OSError as exc:
        _err(str(exc) if isinstance(exc, FileNotFoundError) else f"Cannot read a file argument: {exc}")
        return 1

    def build_prompts() -> list[str]:
        # As current pi: piped stdin, the @file text and the first message are ONE user message (stdin
        # first), so ``cat notes | pi-tui -p "summarise"`` is one request; a blank line keeps the piped
        # text and the prompt apart. Further messages follow as prompts of their own.
        prompts = list(args.messages)
        head = file_text + (prompts.pop(0) if prompts else "")
        if stdin_text:
            head = stdin_text + ("\n\n" + head if head else "")
        return [head, *prompts] if head else prompts

    prompts = build_prompts()

    if args.rewind and args.mode == "text":  # checkpoints: --rewind is a print-mode action
        args.print_mode = True
    headless = args.print_mode or args.mode == "json"
    if not headless or args.mode == "rpc":
        _settle_gc()  # the interactive and RPC modes start their own way: collect as usual there
    if args.mode == "rpc":  # pi's RPC protocol on stdin/stdout
        from pi_tui.modes.rpc import run_rpc

        return run_rpc(args, cwd)
    # Every mode sends an image given as @file with the first prompt (as pi), print mode included.
    if not headless:  # --plain: the line mode, also where a full-screen app cannot run
        from pi_tui.modes.plain import cannot_host_fullscreen, run_plain_cli

        if args.plain or cannot_host_fullscreen():
            args.plain = True  # the line mode runs (what its notices say depends on it: no /trust there)
            return run_plain_cli(args, cwd, build_prompts, file_images)
    if not headless:
        from pi_tui.modes.interactive import run_interactive

        return run_interactive(args, cwd, prompts, file_images)
    if args.mode == "json":  # stdout carries JSON lines only, whatever extensions write
        from pi_tui.modes.rpc.guard import guard_stdout

        with guard_stdout() as protocol_fd, open(protocol_fd, "w", encoding="utf-8", closefd=False) as out:
            return _run_headless(args, cwd, build_prompts, out, file_images)
    return _run_headless(args, cwd, build_prompts, None, file_images)


def _run_headless(
    args: Args,
    cwd: Path,
    build_prompts: Callable[[], list[str]],
    stdout: TextIO | None,
    images: list[ImageContent] | None = None,
) -> int:
    """Print and JSON modes: build the session, run the prompts, close it."""
    import asyncio
    import signal

    from pi_tui.runtime.factory import create_session_or_report

    # JSON mode, as pi: a missing model or key fails the first prompt, after the session header is out
    startup = create_session_or_report(args, cwd, defer_model_check=args.mode == "json")
    _settle_gc()
    if isinstance(startup, int):
        return startup
    # Extensions' flags may have handed words back to the prompt. No prompt at all is not an error (as
    # pi): nothing is sent, and print mode repeats the session's last answer if it ends with one.
    prompts = build_prompts()

    from pi_tui.modes.print_mode import run_print_mode
    from pi_tui.modes.termination import cancel_on_termination

    async def go() -> int:
        try:
            if args.rewind:  # checkpoints: --rewind ENTRY, then the prompts if any
                from pi_tui.modes.rewind_cli import run_rewind_flag

                code = await run_rewind_flag(startup.session, args, _err, stdout)
                if code != 0 or not prompts:
                    return code
            # SIGTERM/SIGHUP: stop the tool's process group, close the session, 143/129
            task = asyncio.current_task()
            assert task is not None, "go() runs as asyncio.run's task"
            with cancel_on_termination(task) as received:
                try:
                    return await run_print_mode(
                        startup.session,
                        prompts,
                        json_mode=args.mode == "json",
                        stdout=stdout,
                        first_images=images,
                    )
                except asyncio.CancelledError:
                    if not received:
                        raise
                    _err(f"Stopped by {signal.Signals(received[0]).name}")
                    return 128 + received[0]
        finally:
            await startup.session.close()

    try:
        code = asyncio.run(go())
        _headless_done.append(True)
        return code
    except KeyboardInterrupt:
        _err("Interrupted")
        return 130


_gc_held: list[bool] = []  # [True] while `main` holds the cyclic collector off
_headless_done: list[bool] = []  # [True] once a print or JSON run has closed its session


def _settle_gc() -> None:
    """Start-up is over: freeze what it built and collect cycles again from here on.

    Start-up (imports, settings, the session, tools) makes tens of thousands of long-lived objects
    and almost no cyclic garbage; with the collector on, Python ran ~110 young collections over them
    (~17 ms of a ~210 ms one-turn answer) and each later full collection walked them all again.
    Frozen, they are skipped by every collection; objects made from here on are collected as usual.
    """
    if _gc_held:
        _gc_held.clear()
        gc.freeze()
        gc.enable()


def main(argv: list[str] | None = None) -> int:
    """Run pi-tui with ``argv`` (default: ``sys.argv[1:]``); returns the exit code."""
    # No cyclic collections until start-up is done (`_settle_gc`); only when we own the interpreter:
    # a caller's main(argv) (tests, embedding) keeps its collector as it is.
    if argv is None and gc.isenabled():
        gc.disable()
        _gc_held.append(True)
    try:
        code = _main(argv)
    finally:
        _settle_gc()
    if argv is None and _headless_done:
        # A print or JSON run that closed its session (appended, fsynced, extensions shut down): end
        # without the interpreter's teardown of every object left (see `pi_tui.util.quick_exit`).
        from pi_tui.util.quick_exit import end_process

        end_process(code)
    return code


def _main(argv: list[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    # --- package sub-commands, handled before normal parsing ---
    if argv and argv[0] in ("install", "remove", "uninstall", "update", "list"):
        from pi_tui.packages.commands import run_package_command

        return run_package_command(argv)
    # --- end package sub-commands ---
    if argv and argv[0] == "config":
        # pi's ``config`` opens a screen for choosing package resources; pi-tui has none yet, and the word
        # must not go to the model as a prompt
        _err(
            'pi-tui has no "config" command: choose what a package loads with the filters of its entry in '
            '"packages" (settings.json; see docs/extensions.md, "Choosing what loads: filters"), and see '
            'the installed packages with "pi-tui list". To send the word "config" as a prompt: pi-tui -- config'
        )
        return 1
    if argv and argv[0] in ("login", "logout"):
        from pi_tui.modes.login_cli import run_login_command

        return run_login_command(argv)
    if argv and argv[0] == "auth":
        from pi_tui.modes.auth_cli import run_auth_command

        return run_auth_command(argv)
    try:
        args = parse_args(argv)
    except ArgsError as exc:
        _err(f"Error: {exc}")
        return 1
    if args.help:
        from pi_tui.ai.catalog import provider_key_help

        sys.stdout.write(HELP_TEXT + "\n" + provider_key_help())
        return 0
    if args.version:
        print(__version__)
        return 0
    try:
        check_session_flags(args)
    except ArgsError as exc:
        _err(f"Error: {exc}")
        return 1
    try:
        return _run(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # stdout was closed under us; silence the interpreter's flush at exit as well
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
