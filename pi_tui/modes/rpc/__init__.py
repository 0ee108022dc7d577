"""``pi-tui --mode rpc``: pi's RPC protocol over stdin/stdout, plus ``get_context``.

See ``docs/rpc.md`` for the commands, responses and events. This package never imports Textual: it
is one more consumer of `pi_tui.runtime.agent_session.AgentSession`.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pi_tui.args import Args
    from pi_tui.runtime.agent_session import AgentSession


__all__ = ["run_rpc", "serve_rpc"]

log = logging.getLogger(__name__)


async def serve_rpc(session: AgentSession, *, input_fd: int, output_fd: int) -> int | None:
    """Serve ``session`` over the given descriptors until input ends; the caller closes the session.

    Returns the signal (SIGTERM/SIGHUP) that ended serving, or None when input ended.
    """
    from .framing import JsonlWriter, LineReader
    from .server import RpcServer

    server = RpcServer(session, JsonlWriter(output_fd))
    await server.serve(LineReader(input_fd))
    return server.stopped_by


def run_rpc(args: Args, cwd: Path) -> int:
    """The ``--mode rpc`` entry point: build the session, serve stdin/stdout, save and exit.

    Returns the process exit code (0 after end of input, 143/129 after SIGTERM/SIGHUP; start-up
    failures as in print mode).
    """
    from .guard import guard_stdout

    with guard_stdout() as protocol_fd:
        from pi_tui.runtime.factory import create_session_or_report

        # As pi, RPC starts without a usable model: a client can still pick one, log in or ask questions,
        # and a prompt is answered with what is missing.
        # pi's question about another project's session (``--session <id>``) is answered by the first
        # stdin line; the commands after it are served.
        startup = create_session_or_report(args, cwd, allow_no_model=True, answer_from_stdin=True)
        if isinstance(startup, int):
            return startup

        async def go() -> int | None:
            try:
                return await serve_rpc(startup.session, input_fd=sys.stdin.fileno(), output_fd=protocol_fd)
            finally:
                await startup.session.close()

        try:
            stopped_by = asyncio.run(go())
        except KeyboardInterrupt:
            return 130
    if stopped_by is not None:
        import signal

        sys.stderr.write(f"Stopped by {signal.Signals(stopped_by).name}\n")
        return 128 + stopped_by
    return 0
