"""The two terminals the line mode can talk to.

- `PromptToolkitTerminal`: stdin and stdout are a terminal. prompt-toolkit reads the line (history,
  completion, Emacs keys). While the agent
  works, stdin is in raw mode and only Escape and Ctrl+C mean something: abort.
- `PipeTerminal`: stdin or stdout is not a terminal, or ``TERM=dumb`` (an editor's shell buffer, a
  screen reader's console): lines are read as the terminal's own line editing delivers them, nothing but
  plain text is written, and Ctrl+C (SIGINT) aborts a running answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol, TextIO

__all__ = ["Terminal", "PromptToolkitTerminal", "PipeTerminal", "make_terminal"]


class Terminal(Protocol):
    """What the line mode needs from a terminal."""

    color: bool

    def write(self, text: str) -> None:
        """Write ``text`` as is and flush."""
        ...

    async def read_line(self, prompt: str, default: str = "") -> str | None:
        """Read the user's next input. None at end of input (Ctrl+D); raises KeyboardInterrupt on Ctrl+C."""
        ...

    async def ask(self, prompt: str, timeout: float | None = None) -> str | None:
        """Ask one question (an extension dialog). None when cancelled, timed out or at end of input."""
        ...

    def watch_abort(self, on_abort: Callable[[], None]) -> contextlib.AbstractContextManager[None]:
        """While the agent works: call ``on_abort`` when the user presses Escape or Ctrl+C."""
        ...

    def keys_held(self) -> contextlib.AbstractContextManager[None]:
        """For the whole line-mode run: keys typed between two reads wait for the next read as keys."""
        ...


class PromptToolkitTerminal:
    """A real terminal, read through prompt-toolkit.

    Args:
        history: Submitted prompts, oldest first (shared with the TUI's editor history); read live.
        completer: A prompt-toolkit completer for ``/`` and ``@``.
        toolbar: Returns the text of the bottom toolbar (extension statuses), or None for no toolbar.
    """

    def __init__(self, history: list[str], completer: Any, toolbar: Callable[[], str | None]) -> None:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.history import History
        from prompt_toolkit.input import create_input
        from prompt_toolkit.key_binding import KeyBindings

        class _History(History):
            """prompt-toolkit's view of our history list; storing is the caller's job (`PromptHistory`)."""

            def load_history_strings(self) -> Iterator[str]:
                return iter(reversed(history))

            def store_string(self, string: str) -> None:
                return None

        bindings = KeyBindings()

        # Alt+Enter adds a line. Not Ctrl+J as in the full-screen editor: Enter typed ahead while the
        # terminal is still in cooked mode (between two prompts) arrives as "\n", which is Ctrl+J, and
        # must still send.
        @bindings.add("escape", "enter")
        def _newline(event: Any) -> None:
            event.current_buffer.insert_text("\n")

        self.color = "NO_COLOR" not in os.environ
        self._input = create_input()
        self._toolbar = toolbar
        self._prompt: PromptSession[str] = PromptSession(
            history=_History(),
            completer=completer,
            complete_in_thread=True,
            complete_while_typing=True,
            key_bindings=bindings,
            input=self._input,
            multiline=False,
            enable_open_in_editor=True,
        )
        self._dialog: PromptSession[str] = PromptSession(input=self._input)
        self._out = sys.stdout

    def write(self, text: str) -> None:
        self._out.write(text)
        self._out.flush()

    async def read_line(self, prompt: str, default: str = "") -> str | None:
        try:
            return await self._prompt.prompt_async(prompt, default=default, bottom_toolbar=self._toolbar_text)
        except EOFError:
            return None

    def _toolbar_text(self) -> str | None:
        return self._toolbar()

    async def ask(self, prompt: str, timeout: float | None = None) -> str | None:
        # The abort watcher may own stdin (a dialog while a tool runs): lend stdin to the dialog.
        with self._input.detach():
            try:
                return await asyncio.wait_for(self._dialog.prompt_async(prompt), timeout)
            except (EOFError, KeyboardInterrupt, TimeoutError):
                return None

    @contextlib.contextmanager
    def watch_abort(self, on_abort: Callable[[], None]) -> Iterator[None]:
        from prompt_toolkit.keys import Keys

        inp = self._input

        def ready() -> None:
            # A lone ESC stays in the parser (it may start a sequence); a sequence arrives in one read,
            # so whatever is left after this read is the Escape key itself.
            for press in [*inp.read_keys(), *inp.flush_keys()]:
                if press.key in (Keys.Escape, Keys.ControlC):
                    on_abort()

        with inp.raw_mode(), inp.attach(ready):
            yield

    @contextlib.contextmanager
    def keys_held(self) -> Iterator[None]:
        """Ctrl+C stays a key between two reads, instead of the terminal's interrupt signal.

        prompt-toolkit leaves raw mode when a prompt returns, and the terminal is in its ordinary mode
        until the next prompt or abort watcher starts: while the quit hint is printed, a command runs or
        an answer is about to start. A Ctrl+C typed then (a quick second one to quit, or one to stop what
        is starting) would be SIGINT and end the process with 130. With the terminal's interrupt
        character switched off it waits as type-ahead and the next reader sees the key. The terminal's
        settings are restored on the way out.
        """
        import termios

        try:
            fd = sys.stdin.fileno()
            before = termios.tcgetattr(fd)
        except (OSError, ValueError, termios.error):  # not a real terminal after all
            yield
            return
        held = list(before)
        chars = list(before[6])
        chars[termios.VINTR] = b"\x00"  # _POSIX_VDISABLE: no character interrupts
        held[6] = chars
        try:
            termios.tcsetattr(fd, termios.TCSANOW, held)
        except termios.error:
            yield
            return
        try:
            yield
        finally:
            with contextlib.suppress(termios.error, OSError):
                termios.tcsetattr(fd, termios.TCSANOW, before)


class PipeTerminal:
    """Plain lines in, plain text out, no colours."""

    def __init__(self, stdin: TextIO | None = None, stdout: TextIO | None = None) -> None:
        self.color = False
        self._in = stdin or sys.stdin
        self._out = stdout or sys.stdout
        self._lines: asyncio.Queue[str | None] | None = None

    def write(self, text: str) -> None:
        self._out.write(text)
        self._out.flush()

    def _queue(self) -> asyncio.Queue[str | None]:
        if self._lines is None:
            loop = asyncio.get_running_loop()
            lines: asyncio.Queue[str | None] = asyncio.Queue()

            def reader() -> None:
                # A daemon thread: a read still blocked when we quit must not keep the process alive.
                for line in iter(self._in.readline, ""):
                    loop.call_soon_threadsafe(lines.put_nowait, line.rstrip("\n"))
                loop.call_soon_threadsafe(lines.put_nowait, None)

            threading.Thread(target=reader, name="pi-tui-stdin", daemon=True).start()
            self._lines = lines
        return self._lines

    async def _next(self) -> str | None:
        queue = self._queue()
        line = await queue.get()
        if line is None:
            queue.put_nowait(None)  # end of input stays the end for every later read
        return line

    async def read_line(self, prompt: str, default: str = "") -> str | None:
        self.write(prompt)
        return await self._next()

    async def ask(self, prompt: str, timeout: float | None = None) -> str | None:
        self.write(prompt)
        try:
            return await asyncio.wait_for(self._next(), timeout)
        except TimeoutError:
            self.write("\n")
            return None

    @contextlib.contextmanager
    def watch_abort(self, on_abort: Callable[[], None]) -> Iterator[None]:
        loop = asyncio.get_running_loop()
        try:
            loop.add_signal_handler(signal.SIGINT, on_abort)
        except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no signals here
            yield
            return
        try:
            yield
        finally:
            loop.remove_signal_handler(signal.SIGINT)

    @contextlib.contextmanager
    def keys_held(self) -> Iterator[None]:
        """Nothing to hold: here Ctrl+C is the terminal's signal, as a pipe's reader expects."""
        yield


def make_terminal(history: list[str], completer: Any, toolbar: Callable[[], str | None]) -> Terminal:
    """A prompt-toolkit terminal when stdin and stdout are capable terminals, else a `PipeTerminal`."""
    if sys.stdin.isatty() and sys.stdout.isatty() and os.environ.get("TERM", "") != "dumb":
        return PromptToolkitTerminal(history, completer, toolbar)
    return PipeTerminal()


def cwd_label(cwd: Path) -> str:
    """``~/proj`` for a directory under the home directory."""
    home = Path.home()
    try:
        return "~/" + str(cwd.relative_to(home)) if cwd != home else "~"
    except ValueError:
        return str(cwd)
