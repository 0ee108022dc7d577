"""The session's sandbox: picks the back end, wraps each command, explains refusals, widens on request.

One `CommandSandbox` per session. It reads the ``sandbox`` settings at every command (a change in
``/settings`` applies to the next one), owns the private temp dir (``TMPDIR`` inside), and keeps what
the user allowed after a refusal for the rest of the session.
"""

from __future__ import annotations

import atexit
import shutil
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .diagnose import Refusal
    from .policy import SandboxMode, SandboxPolicy, SandboxSettings
    from .proxy import AllowListProxy

__all__ = ["CommandSandbox", "Launch", "SandboxUnavailableError", "INSTALL_HINT"]

INSTALL_HINT = "install bubblewrap (apt-get install bubblewrap, dnf install bubblewrap, pacman -S bubblewrap)"


class SandboxUnavailableError(RuntimeError):
    """A sandbox was asked for and cannot be used; the command must not run. One line, actionable."""


@dataclass(slots=True)
class Launch:
    """How to start one command.

    Attributes:
        argv: The program and arguments (the sandbox launcher first when sandboxed).
        env: The environment.
        policy: The policy applied, None when the command runs unsandboxed.
        temp_dir: The private temp dir (``TMPDIR`` inside), None unsandboxed.
    """

    argv: list[str]
    env: dict[str, str]
    policy: SandboxPolicy | None = None
    temp_dir: Path | None = None
    blocked_before: int = 0
    cwd: Path | None = None


class CommandSandbox:
    """Wraps the ``bash`` tool's and ``!cmd``'s commands in the OS sandbox the settings ask for.

    Args:
        settings: Reads the current ``sandbox`` settings.
        cwd: The session's working directory.
        agent_dir: pi's agent directory (its ``auth.json`` is hidden).
        override: ``--sandbox MODE`` from the command line; wins over the setting.
        platform: ``sys.platform`` (tests pass another to check the fallback).
        bwrap_path: The bubblewrap binary (default: ``bwrap`` on PATH).
    """

    def __init__(
        self,
        settings: Callable[[], SandboxSettings],
        cwd: Path,
        *,
        agent_dir: Path,
        override: str | None = None,
        platform: str = sys.platform,
        bwrap_path: str | None = None,
    ) -> None:
        self._settings = settings
        self._cwd = cwd
        self._agent_dir = agent_dir
        self._override = override
        self._platform = platform
        self._bwrap_path = bwrap_path
        self._temp_dir: Path | None = None
        self._allowed: list[Path] = []
        self._session_hosts: list[str] = []
        self._hosts: tuple[str, ...] = ()
        self._proxy: AllowListProxy | None = None
        self._noted = False  # the user was told that commands are not sandboxed
        self._notice: str | None = None

    # --- what the user sees -----------------------------------------------------------------------

    def requested_mode(self) -> tuple[SandboxMode, bool]:
        """The mode to use and whether the user asked for it (flag or setting) rather than the default.

        Raises:
            SandboxConfigError: The setting names a mode that does not exist.
        """
        from .policy import DEFAULT_MODE, MODES, SandboxConfigError

        if self._override is not None:
            return _mode(self._override, "--sandbox"), True
        current = self._settings()
        if current.invalid_mode is not None:
            raise SandboxConfigError(
                f"sandbox: {current.invalid_mode!r} is not a mode (use one of {', '.join(MODES)})"
            )
        if current.mode is not None:
            return _mode(current.mode, "sandbox"), True
        return DEFAULT_MODE, False

    def available(self, *, probe: bool = True) -> str | None:
        """None when this machine can sandbox commands, else why not (one line with what to do).

        ``probe=False`` skips starting bubblewrap once (a few milliseconds), for start-up: a failing
        probe is then reported with the first command instead.
        """
        if self._platform.startswith("linux"):
            from .bwrap import BwrapUnavailable, find_bwrap, probe_bwrap

            bwrap = find_bwrap(self._bwrap_path)
            if bwrap is None:
                where = f" at {self._bwrap_path}" if self._bwrap_path else ""
                return f"bubblewrap (bwrap) is not installed{where}: {INSTALL_HINT}"
            if not probe:
                return None
            try:
                probe_bwrap(bwrap)
            except BwrapUnavailable as exc:
                return str(exc)
            return None
        if self._platform == "darwin":
            return None if Path("/usr/bin/sandbox-exec").exists() else "sandbox-exec is missing"
        return f"no sandbox is available on {self._platform}"

    def status(self) -> str:
        """Short text for the footer: ``sandbox: workspace-write``, ``sandbox: off``, ``not sandboxed``."""
        from .policy import SandboxConfigError

        try:
            mode, _ = self.requested_mode()
        except SandboxConfigError:
            return "sandbox: invalid"
        if mode == "off":
            return "sandbox: off"
        if self.available() is not None:
            return "not sandboxed"
        return f"sandbox: {mode}"

    def startup_notice(self, *, probe: bool = True) -> str | None:
        """The one line to show at start when commands will not be sandboxed, or will be refused."""
        from .policy import SandboxConfigError

        try:
            mode, asked = self.requested_mode()
        except SandboxConfigError as exc:
            return str(exc)
        if mode == "off":
            return None
        why = self.available(probe=probe)
        if why is None:
            return None
        self._noted = True
        if asked:
            return f"Sandbox {mode} cannot start, commands will be refused: {why}"
        return f"Commands are not sandboxed: {why}"

    # --- running ----------------------------------------------------------------------------------

    def prepare(self, command: Sequence[str], cwd: Path, env: Mapping[str, str]) -> Launch:
        """The launch for ``command``: sandboxed unless the mode is ``off`` or the default cannot start.

        Raises:
            SandboxUnavailableError: A sandbox was asked for and cannot start, or its settings are wrong.
        """
        from .policy import SandboxConfigError, build_policy

        try:
            mode, asked = self.requested_mode()
            if mode == "off":
                return Launch(list(command), dict(env))
            why = self.available()
            if why is not None:
                if asked:
                    raise SandboxUnavailableError(f"Sandbox {mode} cannot start: {why}")
                if not self._noted:
                    self._noted = True
                    self._notice = f"[sandbox] Commands are not sandboxed: {why}"
                return Launch(list(command), dict(env))
            policy = build_policy(
                self._settings(),
                self._cwd,
                mode=mode,
                agent_dir=self._agent_dir,
                extra_writable=self._allowed,
                extra_hosts=self._session_hosts,
            )
        except SandboxConfigError as exc:
            raise SandboxUnavailableError(f"Sandbox refused to run the command: {exc}") from exc
        temp_dir = self.temp_dir()
        if self._platform == "darwin":
            from .seatbelt import seatbelt_argv

            argv, out_env = seatbelt_argv(policy, command, temp_dir=temp_dir, env=env)
        else:
            from .bwrap import bwrap_argv, find_bwrap

            bwrap = find_bwrap(self._bwrap_path)
            assert bwrap is not None  # available() checked it
            if policy.hosts:
                command = self._through_proxy(policy, command, temp_dir)
            argv, out_env = bwrap_argv(bwrap, policy, command, cwd=cwd, temp_dir=temp_dir, env=env)
            if policy.hosts:
                # Loopback stays inside the sandbox (a test suite's own server) unless it is on the list.
                local = ",".join(
                    name for name in ("localhost", "127.0.0.1", "::1") if name not in policy.hosts
                )
                out_env["NO_PROXY"] = out_env["no_proxy"] = local
        blocked = len(self._proxy.blocked) if self._proxy is not None else 0
        return Launch(argv, out_env, policy, temp_dir, blocked, cwd)

    def take_notice(self) -> str | None:
        """Once per session: the line saying commands run unsandboxed (the first command's result carries it)."""
        notice, self._notice = self._notice, None
        return notice

    def explain(self, output: str, launch: Launch) -> tuple[Refusal, str] | None:
        """What the sandbox refused in a command's ``output`` (a failed one, or one that went on past a
        refused write), and the note for the model."""
        from .diagnose import Refusal, describe, find_refusal

        if launch.policy is None:
            return None
        refusal: Refusal | None
        if self._proxy is not None and len(self._proxy.blocked) > launch.blocked_before:
            refusal = Refusal("network", self._proxy.blocked[-1])
        else:
            refusal = find_refusal(output, launch.policy, launch.temp_dir, launch.cwd)
        if refusal is None:
            return None
        return refusal, describe(refusal, launch.policy, launch.temp_dir)

    def allow_path(self, path: Path) -> Path:
        """Make ``path`` (or, when it does not exist yet, its nearest existing parent) writable for the session."""
        from .policy import nearest_existing

        target = nearest_existing(path)
        self._allowed.append(target.resolve())
        return target

    def allow_host(self, host: str) -> None:
        """Let commands reach ``host`` for the rest of the session."""
        self._session_hosts.append(host.lower())
        self._hosts = (*self._hosts, host.lower())

    def temp_dir(self) -> Path:
        """The private temp dir (created on first use, removed by `close`)."""
        if self._temp_dir is None or not self._temp_dir.is_dir():
            self._temp_dir = Path(tempfile.mkdtemp(prefix="pi-sandbox-")).resolve()
            atexit.register(shutil.rmtree, self._temp_dir, True)  # also when the session is never closed
        return self._temp_dir

    def close(self) -> None:
        """Remove the private temp dir and stop the network proxy."""
        if self._proxy is not None:
            self._proxy.close()
            self._proxy = None
        if self._temp_dir is not None:
            shutil.rmtree(self._temp_dir, ignore_errors=True)
            self._temp_dir = None

    # --- network ------------------------------------------------------------------------------------

    def _through_proxy(self, policy: SandboxPolicy, command: Sequence[str], temp_dir: Path) -> list[str]:
        """``command`` behind the in-sandbox bridge to the allow-list proxy (started on first use)."""
        from .bwrap import PROXY_SOCKET_NAME
        from .proxy import AllowListProxy

        self._hosts = policy.hosts
        if self._proxy is None or not self._proxy.socket_path.exists():
            self._proxy = AllowListProxy(temp_dir / PROXY_SOCKET_NAME, lambda: self._hosts)
        bridge = Path(__file__).with_name("bridge.py")
        return [sys.executable, "-I", "-S", str(bridge), str(self._proxy.socket_path), "--", *command]


def _mode(value: str, where: str) -> SandboxMode:
    from .policy import MODES, SandboxConfigError

    if value == "off":
        return "off"
    if value == "workspace-write":
        return "workspace-write"
    if value == "read-only":
        return "read-only"
    raise SandboxConfigError(f"{where}: {value!r} is not a mode (use one of {', '.join(MODES)})")
