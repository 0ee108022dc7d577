"""Run the fake LLM server on its own: ``python -m pi_tui.testing.server [--port N] [--script file.json]``.

The first line on stdout is the base URL (``http://127.0.0.1:PORT``); point ``ANTHROPIC_BASE_URL``
at it and ``OPENAI_BASE_URL`` at it plus ``/v1``; for Gemini, give provider ``google`` the base URL plus
``/v1beta`` in ``models.json`` (``google-vertex``: the base URL itself; ``/token`` is a fake Google token
endpoint for a credentials file's ``token_uri``); for Amazon Bedrock, give provider ``amazon-bedrock`` the
base URL itself (SigV4 signatures are checked only with ``--aws-credentials KEY_ID:SECRET``). It serves
until killed (SIGINT/SIGTERM).

Control plane (no auth): ``POST /_fake/script`` (load a script; replaces the unused turns unless the
document has ``"append": true``), ``GET /_fake/log``, ``GET /_fake/violations``, ``GET /_fake/stats``
(counts, problems and cache stats), ``POST /_fake/reset``, ``POST /_fake/clock/advance``
(``{"seconds": 600}``).

Script JSON format
------------------

A document is ``{"turns": [turn, ...]}`` (or a bare list of turns). Each request consumes one turn.

A reply turn (``"type"`` defaults to ``"reply"``)::

    {"type": "reply",
     "parts": [
        {"type": "thinking", "thinking": "Let me look.", "signature": "optional"},
        {"type": "text", "text": "Reading the file."},
        {"type": "tool_call", "name": "read", "input": {"path": "a.py"}, "id": "optional"},
        {"type": "tool_call", "name": "bash", "arguments": "{\\"cmd\\": \\"ls"}
     ],
     "stop_reason": "tool_use",            # optional; default tool_use if a tool call, else end_turn
     "usage": {"output": 12},              # optional overrides: input, output, cache_read, cache_write
     "chunk": "word",                      # "word" | "whole" | a char count
     "frame_delay": 0.0, "first_byte_delay": 0.0,
     "interleave_tool_calls": false, "ping": false}

A part may also be a bare string (a text part). ``"arguments"`` is a raw (possibly invalid) JSON
string; ``"input"`` is an object. ``{"type": "thinking", "thinking": "opaque", "redacted": true}`` is a
redacted thinking block.

A fault turn::

    {"type": "fault", "kind": "rate_limit"}                       # 429 with retry-after-ms: 1
    {"type": "fault", "kind": "overloaded"}                       # 529 (Anthropic) / 503 (OpenAI)
    {"type": "fault", "kind": "api_error"}                        # 500
    {"type": "fault", "kind": "auth"}                             # 401
    {"type": "fault", "kind": "request_too_large"}                # 413
    {"type": "fault", "kind": "context_overflow", "tokens": 250000}   # 400 with the real overflow text
    {"type": "fault", "kind": "stream_error", "after_frames": 3, "error_type": "overloaded_error"}
    {"type": "fault", "kind": "truncate", "after_frames": 4}      # clean end, no stop event
    {"type": "fault", "kind": "drop", "after_frames": 2}          # socket closed mid-body
    {"type": "fault", "kind": "stall", "after_frames": 2, "stall_seconds": 30}

Stream faults take an optional ``"reply"`` (a reply object) to stream before breaking; other
optional keys: ``message``, ``status``, ``retry_after_ms``.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path

from ._fake import FakeLLM

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Serve until interrupted; returns the process exit code."""
    parser = argparse.ArgumentParser(
        prog="python -m pi_tui.testing.server", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="port to bind (default: a free one)")
    parser.add_argument("--script", type=Path, help="a script JSON file to load")
    parser.add_argument("--api-key", help="reject requests presenting another key with a 401")
    parser.add_argument(
        "--aws-credentials",
        metavar="KEY_ID:SECRET",
        help="Bedrock: verify SigV4 signatures against this access key id and secret",
    )
    parser.add_argument("--context-window", type=int, default=200_000)
    parser.add_argument("--lenient", action="store_true", help="record rule violations but answer anyway")
    args = parser.parse_args(argv)

    aws: dict[str, str] | None = None
    if args.aws_credentials:
        key_id, sep, secret = args.aws_credentials.partition(":")
        if not sep or not key_id or not secret:
            parser.error("--aws-credentials takes KEY_ID:SECRET")
        aws = {key_id: secret}
    fake = FakeLLM(
        context_window=args.context_window,
        api_key=args.api_key,
        strict=not args.lenient,
        aws_credentials=aws,
    )
    if args.script is not None:
        try:
            fake.load_script(args.script.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            parser.error(f"cannot load script {args.script}: {exc}")
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with fake.serve(args.host, args.port) as server:
        sys.stdout.write(server.url + "\n")
        sys.stdout.flush()
        try:
            stop.wait()
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
