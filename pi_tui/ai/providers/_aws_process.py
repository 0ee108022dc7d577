"""``credential_process``: a profile's command that prints credentials as JSON.

As the AWS SDK for JavaScript runs it: through the shell, its standard output read as JSON
``{"Version": 1, "AccessKeyId", "SecretAccessKey", "SessionToken"?, "Expiration"?}``. Credentials
without ``Expiration`` are kept for the life of the process; others until five minutes before they
expire. The command's standard input is empty (pi-tui's screen owns the terminal); a tool that asks
for a code opens the terminal itself or fails with a message, which becomes the error shown.
"""

from __future__ import annotations

import subprocess
import time

from ._aws_cache import Temporary, parse_expiry
from ._sigv4 import AwsCredentials

__all__ = ["ProcessError", "run_credential_process"]

_TIMEOUT = 300.0  # a process may wait for a browser sign-in; never wait for ever
_STDERR_CHARS = 2000


class ProcessError(Exception):
    """The command failed or printed something that is not credentials; the message says which."""


def run_credential_process(profile: str, command: str) -> Temporary:
    """Run ``command`` and read the credentials it prints.

    Raises:
        ProcessError: it exited non-zero (its stderr is quoted), timed out, or printed no valid
            credentials.
    """
    where = f"AWS profile '{profile}': credential_process `{command}`"
    try:
        done = subprocess.run(  # noqa: S602 (the user's own configured command, run by the shell as the SDK does)
            command,
            shell=True,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise ProcessError(f"{where} did not finish within {_TIMEOUT:g} s") from exc
    except OSError as exc:
        raise ProcessError(f"{where} could not start: {exc}") from exc
    stderr = done.stderr.decode("utf-8", errors="replace").strip()
    if done.returncode != 0:
        detail = stderr[-_STDERR_CHARS:] if stderr else "(nothing on stderr)"
        raise ProcessError(f"{where} failed with exit code {done.returncode}: {detail}")
    import json

    try:
        data = json.loads(done.stdout.decode("utf-8", errors="replace").strip())
    except ValueError as exc:
        raise ProcessError(f"{where} did not print JSON credentials") from exc
    if not isinstance(data, dict):
        raise ProcessError(f"{where} did not print a JSON object")
    if data.get("Version") != 1:
        raise ProcessError(f'{where} did not print "Version": 1')
    key, secret = data.get("AccessKeyId"), data.get("SecretAccessKey")
    if not isinstance(key, str) or not isinstance(secret, str) or not key or not secret:
        raise ProcessError(f"{where} printed no AccessKeyId/SecretAccessKey")
    token = data.get("SessionToken")
    expires = None
    if data.get("Expiration"):
        expires = parse_expiry(data["Expiration"])
        if expires is None:
            raise ProcessError(f"{where} printed an Expiration that is not a date: {data['Expiration']!r}")
        if expires < time.time():
            raise ProcessError(f"{where} printed credentials that expired at {data['Expiration']}")
    return Temporary(
        AwsCredentials(key, secret, token if isinstance(token, str) and token else None), expires
    )
