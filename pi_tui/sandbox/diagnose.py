"""Reading a failed sandboxed command's output for what the sandbox refused.

The kernel answers a write outside the writable roots with ``EROFS`` ("Read-only file system"), a
write into a protected path the same way, a hidden path with "No such file or directory" (it looks
empty), and a network call with "Network is unreachable" / a failed name lookup (the namespace has
only loopback), or the proxy's ``403`` naming a host that is not on the allow list. Tools print these
in their own words; the patterns below cover the common spellings (shell, coreutils, Python, git,
curl, pip, npm, gcc, make).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from .policy import SandboxPolicy

__all__ = ["Refusal", "find_refusal", "describe"]

_WRITE_FAILURE = re.compile(
    r"Read-only file system|Permission denied|Device or resource busy|EROFS|EACCES|EBUSY"
)
_QUOTED = re.compile(r"""['"‘`]([^'"’`\n]+)['"’`]""")
_WRITE_WORDS = re.compile(
    r"(?:write|create|lock|open|touch|remove|mkdir|rename|move|link|unlink)\w*\b[^\n]*?(?P<path>[^\s'\"‘’`:]+/[^\s'\"‘’`:]*|\.[\w.-]+)"
)
_READ_ONLY = re.compile(r"Read-only file system|EROFS|Errno 30")
_NETWORK = re.compile(
    r"Network is unreachable|ENETUNREACH|Temporary failure in name resolution|EAI_AGAIN|"
    r"Could not resolve host|Name or service not known|getaddrinfo|No address associated|"
    r"nodename nor servname|Failed to establish a new connection|Errno 101|Errno -3|"
    r"Connection refused|ECONNREFUSED|Errno 111|Couldn't connect to server"
)
_HOST = re.compile(
    r"Could not resolve host: (?P<a>[\w.-]+)|host='(?P<b>[\w.-]+)'|https?://(?P<c>[\w.-]+)|"
    r"getaddrinfo \w+ (?P<d>[\w.-]+)|blocked-by-allowlist[^\n]*?host=(?P<e>[\w.-]+)|"
    r"(?P<f>\d+\.\d+\.\d+\.\d+)"
)
_BLOCKED = re.compile(r"sandbox proxy: (?P<host>[\w.:-]+) is not on the allow list")


@dataclass(frozen=True, slots=True)
class Refusal:
    """What the sandbox refused.

    Attributes:
        kind: ``write`` (a path outside the writable roots or protected), ``read`` (a hidden path) or
            ``network``.
        target: The path or host; empty when the output did not name it.
    """

    kind: Literal["write", "read", "network"]
    target: str


def find_refusal(
    output: str, policy: SandboxPolicy, temp_dir: Path | None, cwd: Path | None = None
) -> Refusal | None:
    """The first refusal ``output`` shows, or None when the failure does not look like the sandbox's.

    Relative paths in the output are read from ``cwd`` (the command's directory; default the project).
    """
    cwd = cwd or policy.project
    blocked = _BLOCKED.search(output)
    if blocked:
        return Refusal("network", blocked.group("host"))
    for line in output.splitlines():
        if not _WRITE_FAILURE.search(line):
            continue
        for raw in _path_candidates(line):
            path = _absolute(raw, cwd)
            if policy.is_writable(path, temp_dir):
                continue
            if _READ_ONLY.search(line) or "busy" in line.lower() or _writable_on_host(path):
                return Refusal("write", str(path))
    if _READ_ONLY.search(output):
        return Refusal("write", "")
    for hidden in policy.hidden:
        found = re.search(re.escape(str(hidden)) + r"""(?:/[^\s'"’`:]*)?""", output)
        if found:
            return Refusal("read", found.group(0))
    if _NETWORK.search(output):
        host = _HOST.search(output)
        target = next((g for g in host.groups() if g), "") if host else ""
        return Refusal("network", target)
    return None


def _path_candidates(line: str) -> list[str]:
    """Path-like words of an error line, nearest to the failure message first: the ``: ``-separated fields
    before it (``bash: line 1: PATH: Read-only file system``), quoted words (``touch: cannot touch 'PATH'``),
    a path after a verb (``could not write config file PATH``)."""
    failure = _WRITE_FAILURE.search(line)
    head = line[: failure.start()] if failure else line
    found = [part.strip().strip("'\"‘’`") for part in reversed(head.split(": "))]
    found += [m.group(1) for m in reversed(list(_QUOTED.finditer(line)))]
    verb = _WRITE_WORDS.search(line)
    if verb:
        found.append(verb.group("path"))
    return [c.rstrip(".,;)") for c in found if c and ("/" in c or c.startswith(".")) and " " not in c.strip()]


def _absolute(raw: str, cwd: Path) -> Path:
    path = Path(raw) if raw.startswith("/") else cwd / raw
    try:
        return path.resolve()
    except OSError:
        return path


def _writable_on_host(path: Path) -> bool:
    # "Permission denied" on a path the user could not write anyway is not the sandbox's doing.
    import os

    target = path if path.exists() else path.parent
    return os.access(target, os.W_OK)


def describe(refusal: Refusal, policy: SandboxPolicy, temp_dir: Path | None) -> str:
    """The note appended to the tool result: what was refused, what is allowed, how to widen it."""
    if refusal.kind == "network":
        what = f"network access to {refusal.target}" if refusal.target else "network access"
        allowed = ", ".join(policy.hosts) if policy.hosts else "none"
        return (
            f"[sandbox] Refused {what}: commands run without network (allowed hosts: {allowed}). "
            "Ask the user to add the host to sandbox.allowNetwork or to run the command outside the sandbox."
        )
    if refusal.kind == "read":
        return (
            f"[sandbox] Refused read of {refusal.target}: credentials (the built-in list and sandbox.denyRead) "
            "are hidden from commands and look missing or empty. Ask the user to run the command outside "
            "the sandbox if it really needs them."
        )
    roots = [str(r) for r in policy.writable] + ([str(temp_dir)] if temp_dir else [])
    where = f"write to {refusal.target}" if refusal.target else "a write"
    extra = (
        " It is a protected path (runs code outside the sandbox later)."
        if refusal.target
        and any(Path(refusal.target) == p or p in Path(refusal.target).parents for p in policy.protected)
        else ""
    )
    return (
        f"[sandbox] Refused {where}: the sandbox ({policy.mode}) lets commands write only in "
        f"{', '.join(roots) or 'nothing'} ($TMPDIR is the private temp dir).{extra} "
        "Ask the user to allow the path (sandbox.allowWrite) or to run the command outside the sandbox."
    )
