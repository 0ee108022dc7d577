"""macOS back end: ``sandbox-exec`` with a Seatbelt profile generated from a `SandboxPolicy`.

Written from Apple's profile language as Chrome, Codex and Claude Code use it; not run by our tests
(they run on Linux). The profile allows everything except: writes outside the writable roots (and
into the protected paths), reads of the hidden paths, and network other than the local proxy port.
Paths go in as ``-D`` parameters, never pasted into the profile text, so no path can inject rules.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from .policy import SandboxPolicy

__all__ = ["SANDBOX_EXEC", "seatbelt_profile", "seatbelt_argv"]

SANDBOX_EXEC = "/usr/bin/sandbox-exec"


def seatbelt_profile(policy: SandboxPolicy, temp_dir: Path) -> tuple[str, dict[str, str]]:
    """The profile text and its ``-D`` parameters."""
    params: dict[str, str] = {"TMP": str(temp_dir)}
    writable = ['(subpath (param "TMP"))', '(literal "/dev/null")', '(regex #"^/dev/tty")']
    for i, root in enumerate(policy.writable):
        params[f"W{i}"] = str(root)
        writable.append(f'(subpath (param "W{i}"))')
    protected = []
    for i, path in enumerate(policy.protected):
        params[f"P{i}"] = str(path)
        protected.append(f'(subpath (param "P{i}"))')
    hidden = []
    for i, path in enumerate(policy.hidden):
        params[f"H{i}"] = str(path)
        hidden.append(f'(subpath (param "H{i}"))')
    lines = [
        "(version 1)",
        "(allow default)",
        "(deny file-write*)",
        f"(allow file-write* {' '.join(writable)})",
    ]
    if protected:
        lines.append(f"(deny file-write* {' '.join(protected)})")
    if hidden:
        lines.append(f"(deny file-read* file-write* {' '.join(hidden)})")
    lines += [
        "(deny network*)",
        '(allow network* (local ip "localhost:*") (remote ip "localhost:*") (remote unix-socket))',
    ]
    return "\n".join(lines) + "\n", params


def seatbelt_argv(
    policy: SandboxPolicy, command: Sequence[str], *, temp_dir: Path, env: Mapping[str, str]
) -> tuple[list[str], dict[str, str]]:
    """``sandbox-exec -p PROFILE -D…`` running ``command``, and its environment."""
    profile, params = seatbelt_profile(policy, temp_dir)
    argv = [SANDBOX_EXEC, "-p", profile]
    for name, value in params.items():
        argv += ["-D", f"{name}={value}"]
    out = dict(env)
    out.update({"TMPDIR": str(temp_dir), "PI_SANDBOX": policy.mode})
    return [*argv, "--", *command], out
