"""A test client for ``pi-tui --mode rpc`` run as a subprocess.

Every stdout line is parsed as JSON as it arrives (a line that is not JSON fails the test later, in
`RpcProcess.close`); responses and events are kept in arrival order so tests can check the order.
Waiting is always on a record arriving, with a timeout, never on time passing.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

Record = dict[str, Any]


class RpcProcess:
    def __init__(
        self, cwd: Path, *args: str, program: list[str] | None = None, env: dict[str, str] | None = None
    ) -> None:
        """Start ``pi-tui --mode rpc *args`` (or ``program --mode rpc *args``: the real pi, for recording)."""
        env = dict(os.environ if env is None else env)
        env.pop("PYTEST_CURRENT_TEST", None)
        self.proc = subprocess.Popen(
            [*(program or [sys.executable, "-m", "pi_tui"]), "--mode", "rpc", *args],
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.records: list[Record] = []
        self.bad_lines: list[bytes] = []
        self._queue: queue.Queue[Record | None] = queue.Queue()
        self._stderr: list[bytes] = []
        self._threads = [
            threading.Thread(target=self._read_stdout, daemon=True),
            threading.Thread(target=self._read_stderr, daemon=True),
        ]
        for thread in self._threads:
            thread.start()
        self._next_id = 0
        self.sent_types: set[str] = set()

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            try:
                record = json.loads(raw)
            except ValueError:
                self.bad_lines.append(raw)
                continue
            self._queue.put(record)
        self._queue.put(None)

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for raw in self.proc.stderr:
            self._stderr.append(raw)

    @property
    def stderr(self) -> str:
        return b"".join(self._stderr).decode("utf-8", "replace")

    # --- sending ----------------------------------------------------------------------------------

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, command: Record) -> Any:
        """Send a command with a fresh id (unless it has one); returns the id."""
        self.sent_types.add(str(command.get("type")))
        if "id" not in command:
            self._next_id += 1
            command = {"id": f"c{self._next_id}", **command}
        self.send_raw((json.dumps(command) + "\n").encode())
        return command["id"]

    # --- receiving --------------------------------------------------------------------------------

    def next(self, timeout: float = 20) -> Record:
        try:
            record = self._queue.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no record within {timeout}s; stderr:\n{self.stderr[-3000:]}") from None
        if record is None:
            raise AssertionError(f"stdout closed; stderr:\n{self.stderr[-3000:]}")
        self.records.append(record)
        return record

    def wait_for(
        self, predicate: Callable[[Record], bool], timeout: float = 20
    ) -> tuple[Record, list[Record]]:
        """Read until a record matches; returns it and every record read before it."""
        seen: list[Record] = []
        while True:
            record = self.next(timeout)
            if predicate(record):
                return record, seen
            seen.append(record)

    def response(self, cmd_id: Any, timeout: float = 20) -> tuple[Record, list[Record]]:
        return self.wait_for(lambda r: r.get("type") == "response" and r.get("id") == cmd_id, timeout)

    def call(self, command: Record, timeout: float = 20) -> Record:
        """Send a command and return its response (failing the test on an error response)."""
        response, _ = self.response(self.send(command), timeout)
        assert response["success"] is True, response
        return response

    def event(self, kind: str, timeout: float = 20) -> tuple[Record, list[Record]]:
        return self.wait_for(lambda r: r.get("type") == kind, timeout)

    def rss_kb(self) -> int:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise AssertionError("no VmRSS")

    def close(self, timeout: float = 30) -> int:
        """End stdin (EOF) and wait for the process; stdout must have carried only JSON lines."""
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        code = self.proc.wait(timeout=timeout)
        for thread in self._threads:
            thread.join(timeout=5)
        while True:  # drain what arrived after the last read
            try:
                record = self._queue.get_nowait()
            except queue.Empty:
                break
            if record is not None:
                self.records.append(record)
        assert self.bad_lines == [], self.bad_lines[:3]
        return code

    def kill(self) -> None:
        """Stop the process if it still runs and close its pipes (call in ``finally``)."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        for thread in self._threads:
            thread.join(timeout=5)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
