"""Linux back end: the bubblewrap command line for a `SandboxPolicy`, and a probe that it starts.

Mount order matters (a later mount covers an earlier one): the whole file system read-only, a fresh
``/dev`` and ``/proc`` (own PID namespace, so host processes and their environments are invisible),
then the writable roots, then the protected paths inside them, then the hidden paths (an empty
tmpfs over a directory, ``/dev/null`` over a file). Capabilities are dropped and nested user
namespaces refused, which matters when pi-tui runs as root: a root process keeping its capabilities
could remount the read-only binds writable.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .policy import SandboxPolicy

__all__ = ["BwrapUnavailable", "find_bwrap", "bwrap_argv", "probe_bwrap", "SOCKET_ENV", "PROXY_SOCKET_NAME"]

SOCKET_ENV: tuple[str, ...] = ("SSH_AUTH_SOCK", "GPG_AGENT_INFO", "DBUS_SESSION_BUS_ADDRESS", "DOCKER_HOST")
"""Variables naming agent sockets; unset inside (the sockets are hidden too)."""

_SOCKET_PATHS: tuple[str, ...] = ("/run/user", "/var/run/docker.sock", "/run/docker.sock", "/run/dbus")

PROXY_SOCKET_NAME = "proxy.sock"
"""The host-side network proxy's Unix socket, inside the private temp dir."""


class BwrapUnavailable(RuntimeError):
    """bubblewrap is missing or cannot create its namespaces; the message is one line saying what to do."""


@dataclass(frozen=True, slots=True)
class _Probe:
    ok: bool
    message: str


_probes: dict[tuple[str, bool], _Probe] = {}


def find_bwrap(path: str | None = None) -> str | None:
    """The bubblewrap binary: ``path`` if given, else ``bwrap`` on PATH (looked up once per PATH value:
    the footer asks on every refresh)."""
    if path:
        return path if os.access(path, os.X_OK) else None
    return _which_bwrap(os.environ.get("PATH", ""))


@functools.lru_cache(maxsize=8)
def _which_bwrap(search_path: str) -> str | None:
    return shutil.which("bwrap", path=search_path)


def _base(bwrap: str, network: bool) -> list[str]:
    argv = [
        bwrap,
        "--new-session",
        "--die-with-parent",
        "--unshare-user",
        "--disable-userns",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
    ]
    if not network:
        argv.append("--unshare-net")
    argv += ["--cap-drop", "ALL", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    return argv


def probe_bwrap(bwrap: str, *, network: bool = False) -> None:
    """Start ``true`` in the same namespaces the commands get, once per process.

    Raises:
        BwrapUnavailable: It does not start; the message says why and what to do.
    """
    key = (bwrap, network)
    probe = _probes.get(key)
    if probe is None:
        try:
            done = subprocess.run(
                [*_base(bwrap, network), "--", "true"],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=10,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            probe = _Probe(False, f"bubblewrap ({bwrap}) could not be started: {exc}")
        else:
            if done.returncode == 0:
                probe = _Probe(True, "")
            else:
                probe = _Probe(False, _explain_failure(done.stderr.decode(errors="replace").strip()))
        _probes[key] = probe
    if not probe.ok:
        raise BwrapUnavailable(probe.message)


def _explain_failure(stderr: str) -> str:
    line = stderr.splitlines()[-1] if stderr else "no error message"
    if (
        "namespace" in line.lower()
        or "permission" in line.lower()
        or "operation not permitted" in line.lower()
    ):
        return (
            f"bubblewrap cannot create a sandbox here ({line}): user namespaces are off; enable them "
            "(sysctl kernel.unprivileged_userns_clone=1 / user.max_user_namespaces, or on Ubuntu "
            'kernel.apparmor_restrict_unprivileged_userns=0) or set "sandbox": "off"'
        )
    return f'bubblewrap failed to start a sandbox ({line}); set "sandbox": "off" to run commands unsandboxed'


def bwrap_argv(
    bwrap: str,
    policy: SandboxPolicy,
    command: Sequence[str],
    *,
    cwd: Path,
    temp_dir: Path,
    env: Mapping[str, str],
) -> tuple[list[str], dict[str, str]]:
    """The command line running ``command`` under ``policy``, and the environment to start it with."""
    # Always a network namespace of its own (only `lo`): allowed hosts are reached through the proxy's
    # Unix socket in the private temp dir (see `pi_tui.sandbox.proxy`).
    argv = _base(bwrap, network=False)
    argv += ["--bind", str(temp_dir), str(temp_dir)]
    for root in policy.writable:
        argv += ["--bind", str(root), str(root)]
    for path in policy.protected:
        argv += ["--ro-bind", str(path), str(path)]
    for path in (*policy.hidden, *(Path(p) for p in _SOCKET_PATHS)):
        if path.is_dir():
            argv += ["--tmpfs", str(path)]
        elif path.exists():
            argv += ["--ro-bind", "/dev/null", str(path)]
    argv += ["--chdir", str(cwd)]
    out = dict(env)
    for name in SOCKET_ENV:
        out.pop(name, None)
    cache = temp_dir / "cache"
    out.update(
        {
            "TMPDIR": str(temp_dir),
            "XDG_CACHE_HOME": str(cache),
            "npm_config_cache": str(cache / "npm"),
            "PI_SANDBOX": policy.mode,
        }
    )
    return [*argv, "--", *command], out
