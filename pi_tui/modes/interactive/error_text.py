"""How a provider's error reads on screen.

Provider errors carry a ``(retry after N ms)`` tail that the retry loop reads as the server's requested
wait, and some carry advice such as ``retrying may help``. Both are right for the first failure, but
read badly in two places: a wait under a second ("retry after 1 ms") tells the user nothing they can act
on, and once the retries are used up, advice to retry contradicts the line that says so. The stored
message keeps the full text (the retry loop needs it); only what is shown is trimmed.
"""

from __future__ import annotations

import re

__all__ = ["gave_up_text", "shown_error"]

_SHORT_WAIT = re.compile(r" \(retry after (\d+(?:\.\d+)?) ?ms\)")
_RETRY_ADVICE = re.compile(r"; retrying may help")


def _drop_short_wait(match: re.Match[str]) -> str:
    return "" if float(match.group(1)) < 1000 else match.group(0)


def shown_error(text: str) -> str:
    """``text`` without a requested wait shorter than a second."""
    return _SHORT_WAIT.sub(_drop_short_wait, text)


def gave_up_text(attempts: int, final_error: str) -> str:
    """The line told when the automatic retries are used up: the count and the last error, without the
    wait the server asked for or advice to retry, since no further attempt is coming."""
    count = f"{attempts} attempt{'s' if attempts != 1 else ''}"
    error = _SHORT_WAIT.sub("", final_error)
    return f"Gave up after {count}: {_RETRY_ADVICE.sub('', error)}"
