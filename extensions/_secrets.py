"""Finding secrets in text: the detection engine of the bundled ``secret_redactor`` (not an extension).

Two sources of findings, merged into ``(start, end, kind)`` spans of the text:

- **detect-secrets** (Yelp's scanner, a dependency of pi-tui): its format plugins (AWS, Azure storage, GitHub,
  GitLab, Slack, Stripe, Twilio, JWT, SendGrid, npm, PyPI, Discord, Telegram, Mailchimp, Square, basic auth
  in URLs, private key headers, …), its keyword detector in its config form (``password = …``,
  ``secret: …``) and its base64/hex high-entropy detectors on quoted strings, with its own false-positive
  filters (sequential strings, UUIDs, ids, templates, indirect references). Only the plugin classes are
  used, never its global settings or its network verification.
- **shapes detect-secrets lacks**: whole private key blocks (PEM, OpenSSH, PGP, also JSON-escaped), newer
  token prefixes (``sk-ant-``, ``github_pat_``, ``hf_``, ``dop_v1_``, ``shpat_``…), ``Authorization``
  headers, ``--password x``/``-u user:pass`` flags, passwords in URLs with an empty user, URL query
  secrets (``sig=``, ``X-Amz-Signature=``), ``<password>…</password>`` and secret-named assignments whose
  value is a literal.

detect-secrets costs about 0.15 s to import, so it is imported on first use (or by `warm_up`, which the
extension starts in a thread at session start); a run that does not load the redactor never pays it.
"""

from __future__ import annotations

import bisect
import re
import threading
from collections.abc import Iterator
from typing import Any

__all__ = ["Detector", "warm_up"]

# --- our own shapes ---------------------------------------------------------------------------------------

PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("anthropic_key", re.compile(r"(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{20,}")),
    ("openai_key", re.compile(r"(?<![A-Za-z0-9_-])sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}")),
    ("github_pat", re.compile(r"(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9_]{22,}")),
    ("github_token", re.compile(r"(?<![A-Za-z0-9_])gh[pousr]_[A-Za-z0-9]{36,}")),
    (
        "gitlab_token",
        re.compile(r"(?<![A-Za-z0-9_])gl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|oas)-[A-Za-z0-9_-]{20,}"),
    ),
    ("slack_token", re.compile(r"(?<![A-Za-z0-9-])xox[abposr]-[A-Za-z0-9-]{10,}")),
    ("slack_token", re.compile(r"(?<![A-Za-z0-9-])xapp-[0-9]-[A-Za-z0-9-]{10,}")),
    (
        "aws_access_key",
        re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[0-9A-Z]{16}(?![0-9A-Z])"),
    ),
    ("google_api_key", re.compile(r"(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])")),
    ("google_oauth_secret", re.compile(r"(?<![A-Za-z0-9_-])GOCSPX-[A-Za-z0-9_-]{20,}")),
    ("jwt", re.compile(r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{10,}")),
    ("huggingface_token", re.compile(r"(?<![A-Za-z0-9_])hf_[A-Za-z0-9]{30,}")),
    ("digitalocean_token", re.compile(r"(?<![A-Za-z0-9_])do[opr]_v1_[a-f0-9]{64}")),
    ("shopify_token", re.compile(r"(?<![A-Za-z0-9_])shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}")),
    ("stripe_key", re.compile(r"(?<![A-Za-z0-9_])(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,}")),
    ("stripe_webhook_secret", re.compile(r"(?<![A-Za-z0-9_])whsec_[A-Za-z0-9]{24,}")),
    ("npm_token", re.compile(r"(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}")),
    ("pypi_token", re.compile(r"(?<![A-Za-z0-9_])pypi-AgE[A-Za-z0-9_-]{50,}")),
    ("sendgrid_key", re.compile(r"(?<![A-Za-z0-9_])SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}")),
    ("databricks_token", re.compile(r"(?<![A-Za-z0-9_])dapi[a-f0-9]{32}")),
    ("age_secret_key", re.compile(r"AGE-SECRET-KEY-1[0-9A-Z]{58}")),
    ("mailgun_key", re.compile(r"(?<![A-Za-z0-9_])key-[a-f0-9]{32}(?![A-Za-z0-9])")),
)

# A literal each of those patterns needs (after its leading lookbehind).
_NEEDLES = {
    p.pattern: m.group(1)
    for _, p in PATTERNS
    if (m := re.match(r"\(\?<!\[[^\]]*\]\)([A-Za-z]{2,})", p.pattern)) is not None
}

# Patterns whose *first group* is the secret (the rest is context that stays readable).
VALUE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("authorization", re.compile(r"(?i)\b(?:authorization|proxy-authorization)\s*[:=]\s*[\"']?(?:bearer|basic|token|digest|bot)\s+([A-Za-z0-9._~+/=-]{8,})")),
    ("bearer_token", re.compile(r"(?<![A-Za-z])Bearer\s+([A-Za-z0-9._~+/-]{20,}=*)")),
    ("url_password", re.compile(r"[a-z][a-z0-9+.-]*://[^\s:/?#@\"'<>]*:([^\s@/\"'<>]{3,})@")),
    ("cli_password", re.compile(r"(?:^|\s)--?(?:password|passwd|pass|token|api-key|apikey|secret|client-secret|auth-token)(?:=|\s+)[\"']?([^\s\"']{6,})")),
    ("cli_password", re.compile(r"(?:^|\s)(?:-u|--user)\s+[\"']?[^\s:\"']+:([^\s\"']{3,})")),
    ("url_secret", re.compile(r"(?i)[?&;](?:sig|signature|x-amz-signature|x-amz-security-token|x-goog-signature|access_token|api_?key|apikey|client_secret|secret|password|pwd|token)=([^&\s#\"'<>]{8,})")),
    ("password", re.compile(r"(?i)<(\w*(?:password|passwd|secret|token|api_?key)\w*)>([^<\s]{4,})</\1>"), ),
)  # fmt: skip

# `NAME = value`, `NAME: value`, `"name": "value"` where NAME says it holds a secret.
_SECRET_NAME = (
    r"[A-Za-z0-9_.-]*(?:passw(?:or)?d|passwd|pwd|pass|secret|token|api[_-]?key|apikey|access[_-]?key|"
    r"private[_-]?key|auth[_-]?key|client[_-]?key|credentials?|signing[_-]?key|encryption[_-]?key|"
    r"session[_-]?key|master[_-]?key|account[_-]?key|dsn)[A-Za-z0-9_.-]*"
)
_ASSIGNMENT = re.compile(
    r"(?i)(?<![A-Za-z0-9_])[\"']?(" + _SECRET_NAME + r")[\"']?[ \t]*(?::=|=>|=|:)[ \t]*"
    r"(?:(\"|')((?:(?!\2).){6,}?)\2|([^\s\"',;`)(\[\]{}<>]{6,}))"
)
# Values of a secret-named assignment that are code or placeholders, not secrets.
_NOT_A_VALUE = re.compile(
    r"(?i)^(?:none|null|nil|true|false|undefined|required|optional|string|str|bytes|int|bool|"
    r"secret|password|token|changeme|example|placeholder|redacted|xxx+|\*+|\.\.\.|…)$"
)
# Lowercase words joined by dashes, maybe with a number: `test-key`, `from-models-json`, `dev-token-1`.
_PLACEHOLDER = re.compile(r"^[a-z]+(?:-[a-z]+)*(?:-?\d+)?$")
_CODE_LIKE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+$|^[A-Za-z_]+$")

_KEY_BEGIN = re.compile(
    r"-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY( BLOCK)?-----|---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----"
)
# After a BEGIN line with no END (cut-off output): the key's base64 lines and "Proc-Type: …" headers.
_KEY_BODY = re.compile(r"(?:(?:\r?\n|\\n)[ \t]*(?:[A-Za-z0-9+/=]+|[A-Za-z-]+: [^\n]*)[ \t]*)*")
_PUTTY = re.compile(r"Private-Lines: \d+\r?\n(?:[A-Za-z0-9+/=]+\r?\n?)+")

# detect-secrets' plugin classes → our mask kinds.
_KINDS = {
    "AWSKeyDetector": "aws_key",
    "AzureStorageKeyDetector": "azure_storage_key",
    "BasicAuthDetector": "url_password",
    "GitHubTokenDetector": "github_token",
    "GitLabTokenDetector": "gitlab_token",
    "JwtTokenDetector": "jwt",
    "KeywordDetector": "secret",
    "Base64HighEntropyString": "high_entropy",
    "HexHighEntropyString": "high_entropy",
    "SlackDetector": "slack_token",
    "StripeDetector": "stripe_key",
    "TwilioKeyDetector": "twilio_key",
}
# IPs are not secrets; private key headers are masked whole by our block logic.
# Hex strings in quotes are mostly hashes and commit ids; a hex secret is caught by its name instead.
_SKIPPED_PLUGINS = {"IPPublicDetector", "PrivateKeyDetector", "HexHighEntropyString"}


class _DetectSecrets:
    """detect-secrets' plugins and filters, loaded once."""

    def __init__(self) -> None:
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
        from detect_secrets.filters import heuristic
        from detect_secrets.plugins.base import RegexBasedDetector
        from detect_secrets.plugins.high_entropy_strings import HighEntropyStringsPlugin
        from detect_secrets.plugins.keyword import CONFIG_DENYLIST_REGEX_TO_GROUP

        self.heuristic = heuristic
        self.regex_plugins: list[tuple[str, list[re.Pattern[str]]]] = []
        self.line_plugins: list[tuple[str, list[re.Pattern[str]]]] = []
        self.entropy_plugins: list[tuple[str, Any]] = []
        self.keyword: Any = None
        self.keyword_regexes = CONFIG_DENYLIST_REGEX_TO_GROUP
        for cls in get_mapping_from_secret_type_to_class().values():
            name = cls.__name__
            if name in _SKIPPED_PLUGINS:
                continue
            kind = _KINDS.get(name) or re.sub(r"(?<!^)(?=[A-Z])", "_", name.removesuffix("Detector")).lower()
            if issubclass(cls, RegexBasedDetector):
                for regex in cls.denylist:
                    # Keyword-anchored service patterns (IBM, SoftLayer, Cloudant) are slow on long
                    # text; they only ever match on lines with a secret word, so they run on those.
                    slow = regex.pattern.startswith("(?:(?<=\\W)|(?<=^))")
                    (self.line_plugins if slow else self.regex_plugins).append((kind, [regex]))
            elif issubclass(cls, HighEntropyStringsPlugin):
                self.entropy_plugins.append((kind, cls()))
            elif name == "KeywordDetector":
                self.keyword = cls()

    def filtered(self, secret: str, line: str) -> bool:
        """detect-secrets' heuristic filters for the keyword and entropy findings."""
        h = self.heuristic
        return (
            h.is_sequential_string(secret)
            or h.is_potential_uuid(secret)
            or h.is_likely_id_string(secret, line)
            or h.is_templated_secret(secret)
            or h.is_prefixed_with_dollar_sign(secret)
            or h.is_indirect_reference(line)
            or h.is_not_alphanumeric_string(secret)
        )

    def spans(self, text: str, hinted: list[tuple[int, str]]) -> Iterator[tuple[int, int, str]]:
        """Findings in ``text``; ``hinted`` are its lines that hold a secret word, with their offsets.

        Each format regex runs once over the whole text (none of them spans lines)."""
        for kind, regexes in self.regex_plugins:
            for regex in regexes:
                yield from _regex_spans(regex, text, kind)
        for offset, line in hinted:
            for kind, regexes in self.line_plugins:
                for regex in regexes:
                    yield from ((offset + s, offset + e, k) for s, e, k in _regex_spans(regex, line, kind))
            if self.keyword is not None:
                for secret in self.keyword.analyze_string(line, denylist_regex_to_group=self.keyword_regexes):
                    if plausible(secret, quoted=False) and not self.filtered(secret, line):
                        yield from _occurrences(line, secret, "secret", offset)
        lines: _Lines | None = None
        for kind, plugin in self.entropy_plugins:
            for m in plugin.regex.finditer(text):
                secret = m.group(2)
                if plugin.calculate_shannon_entropy(secret) <= plugin.entropy_limit:
                    continue
                lines = lines or _Lines(text)
                if not self.filtered(secret, lines.around(m.start())):
                    yield m.start(2), m.end(2), kind


def _regex_spans(regex: re.Pattern[str], text: str, kind: str) -> Iterator[tuple[int, int, str]]:
    """A detect-secrets pattern's matches: its group when that is the secret, else the whole match
    (without the delimiters some patterns include)."""
    for m in regex.finditer(text):
        group = 1 if regex.groups and m.group(1) and m.start(1) > m.start(0) and len(m.group(1)) >= 6 else 0
        start, end = m.span(group)
        value = text[start:end]
        stripped = value.strip(" \t\r\n=:\"'")
        if stripped:
            start += value.index(stripped)
            yield start, start + len(stripped), kind


# Lowercase fragments of the names secrets are stored under; lines without one skip the name-based scans.
_HINTS = ("pass", "pwd", "secret", "token", "key", "auth", "credential", "dsn", "contrase")


def hinted_lines(text: str) -> list[tuple[int, str]]:
    """``(offset, line)`` of the lines of ``text`` holding a secret word (``str.find`` is far faster
    than a case-insensitive alternation over the whole text)."""
    lowered = text.lower()
    starts: set[int] = set()
    for hint in _HINTS:
        pos = lowered.find(hint)
        while pos >= 0:
            start = lowered.rfind("\n", 0, pos) + 1
            starts.add(start)
            end = lowered.find("\n", pos)
            if end < 0:
                break
            pos = lowered.find(hint, end)
    out = []
    for start in sorted(starts):
        end = text.find("\n", start)
        out.append((start, text[start : len(text) if end < 0 else end].rstrip("\r")))
    return out


class _Lines:
    """Finds the line around a position of a text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0, *(m.end() for m in re.finditer(r"\n", text))]

    def around(self, pos: int) -> str:
        start = self.starts[bisect.bisect_right(self.starts, pos) - 1]
        end = self.text.find("\n", start)
        return self.text[start : len(self.text) if end < 0 else end].rstrip("\r")


_engine: _DetectSecrets | None = None
_engine_lock = threading.Lock()


def warm_up() -> None:
    """Import detect-secrets and build its plugins (safe to call from a thread, and more than once)."""
    global _engine
    with _engine_lock:
        if _engine is None:
            _engine = _DetectSecrets()


def _detect_secrets() -> _DetectSecrets:
    if _engine is None:
        warm_up()
    assert _engine is not None
    return _engine


def _occurrences(text: str, value: str, kind: str, offset: int = 0) -> Iterator[tuple[int, int, str]]:
    start = text.find(value)
    while start >= 0:
        yield offset + start, offset + start + len(value), kind
        start = text.find(value, start + len(value))


def _private_keys(text: str) -> Iterator[tuple[int, int, str]]:
    for begin in _KEY_BEGIN.finditer(text):
        if begin.group(0).startswith("---- "):
            end_marker = "---- END SSH2 ENCRYPTED PRIVATE KEY ----"
        else:
            end_marker = f"-----END {begin.group(1)}PRIVATE KEY{begin.group(2) or ''}-----"
        end = text.find(end_marker, begin.end())
        if end >= 0:
            yield begin.start(), end + len(end_marker), "private_key"
            continue
        # Cut off (truncated output): mask the key's body lines that follow.
        body = _KEY_BODY.match(text, begin.end())
        yield begin.start(), body.end() if body else begin.end(), "private_key"
    for m in _PUTTY.finditer(text):
        yield m.start(), m.end(), "private_key"


def plausible(value: str, *, quoted: bool, name: str = "") -> bool:
    """Whether ``value``, assigned to a secret-sounding name, looks like a secret rather than code or a
    placeholder: ``password = get_password()``, ``api_key: str``, ``max_tokens=32_000``,
    ``"apiKey": "test-key"`` and ``token = settings.TOKEN`` are not."""
    if len(value) < 6 or not re.search(r"[A-Za-z]", value) or _NOT_A_VALUE.match(value):
        return False
    if name.lower().endswith("tokens") or value.startswith(("$", "%", "!", "{{", "os.", "process.env")):
        return False
    if _PLACEHOLDER.match(value):
        return False
    if _CODE_LIKE.match(value) or (not quoted and re.search(r"\s", value)):
        return False  # `settings.TOKEN`, `max_completion_tokens`, `str | None = None`
    return not (quoted and " " in value and not re.search(r"[0-9!@#%^&*]", value))  # prose in quotes


def _assignments(hinted: list[tuple[int, str]]) -> Iterator[tuple[int, int, str]]:
    for offset, line in hinted:
        for m in _ASSIGNMENT.finditer(line):
            group = 3 if m.group(3) is not None else 4
            if group == 4 and line[m.end(group) : m.end(group) + 1] in ("(", "["):
                continue  # a call or an index: `token = make_token(...)`
            if plausible(m.group(group), quoted=group == 3, name=m.group(1)):
                yield offset + m.start(group), offset + m.end(group), "secret"


class Detector:
    """Finds secrets in text.

    Args:
        extra: ``(kind, regex)`` pairs from the settings; the whole match is masked.
    """

    def __init__(self, extra: list[tuple[str, re.Pattern[str]]] | None = None) -> None:
        self.extra = extra if extra is not None else []

    def spans(self, text: str) -> list[tuple[int, int, str]]:
        """``(start, end, kind)`` of every secret found (they may overlap)."""
        found: list[tuple[int, int, str]] = []
        if "PRIVATE KEY" in text or "Private-Lines:" in text:
            found += _private_keys(text)
        for kind, pattern in (*PATTERNS, *self.extra):
            needle = _NEEDLES.get(pattern.pattern)
            if needle is not None and needle not in text:
                continue  # much faster than a regex that starts with a lookbehind
            found += [(m.start(), m.end(), kind) for m in pattern.finditer(text) if m.end() > m.start()]
        for kind, pattern in VALUE_PATTERNS:
            for m in pattern.finditer(text):
                group = pattern.groups if pattern.groups > 1 else 1
                if m.end(group) > m.start(group):
                    found.append((m.start(group), m.end(group), kind))
        hinted = hinted_lines(text)
        found += _detect_secrets().spans(text, hinted)
        found += _assignments(hinted)
        return found
