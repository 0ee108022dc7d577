"""Secret redactor: masks secrets in tool results before the model sees them or they are saved.

Enable: ``pi-tui -e secret_redactor``, or ``"extensions": ["bundled:secret_redactor"]`` in settings.

What is masked, replaced by ``[REDACTED:<kind>]``:
- values from the ``.env*`` files in the cwd (``KEY=VALUE``, ``export KEY=VALUE``, single- or
  double-quoted, multi-line quoted values) of at least 8 characters; the kind is ``env:KEY``. A value
  that is one plain word (``production``, ``localhost``) is left alone unless its key names a secret
  (``…KEY``, ``…TOKEN``, ``…SECRET``, ``…PASSWORD``…), so ordinary words elsewhere are never masked.
  Template files (``.env.example``, ``.env.sample``, ``.env.template``, ``.env.dist``) are skipped. The
  files are re-read whenever one changes.
- API keys by shape: ``sk-ant-…`` (anthropic_key), ``sk-…`` (openai_key), ``ghp_``/``gho_``/``ghu_``/
  ``ghs_``/``ghr_`` (github_token), ``github_pat_…`` (github_pat), ``xoxa-``/``xoxb-``/``xoxp-``…
  (slack_token), ``AKIA…``/``ASIA…`` (aws_access_key), ``AIza…`` (google_api_key), three-part ``eyJ….eyJ….…``
  tokens (jwt), and ``-----BEGIN … PRIVATE KEY-----`` blocks up to their END line, or to the end of the
  key's lines when the output was cut (private_key).
- settings ``{"secretRedactor": {"patterns": [{"kind": "internal_token", "pattern": "itk_[0-9a-f]{32}"}]}}``
  add regular expressions.

Where: the ``tool_result`` hook masks each tool result's text and its ``details`` (an edit's diff, say)
before the model sees them and before they are written to the session file; the ``message`` hook applies
the same to tool result messages that did not go through a tool (blocked or invalid calls). Overlapping
matches are merged, so no fragment of a secret survives, and nothing outside a match is changed.

Limits: output of ``!command`` typed by the user is not a tool result and is not masked; a secret that is
transformed (base64, URL-encoded) is not recognised; the model cannot edit text it only sees masked.
"""

from __future__ import annotations

import re
import runpy
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from pi_tui.extensions.api import Event, ExtensionAPI, ExtensionContext, TextContent

_settings = SimpleNamespace(**runpy.run_path(str(Path(__file__).with_name("_settings.py"))))

MIN_LENGTH = 8
TEMPLATE_SUFFIXES = (".example", ".sample", ".template", ".dist", ".defaults")
SECRET_KEY = re.compile(r"KEY|TOKEN|SECRET|PASS|PWD|CREDENTIAL|AUTH|PRIVATE|SIGNATURE|SALT|DSN|COOKIE", re.I)
_ENV_LINE = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*(.*)$")

PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("anthropic_key", re.compile(r"(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{20,}")),
    ("openai_key", re.compile(r"(?<![A-Za-z0-9_-])sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}")),
    ("github_pat", re.compile(r"(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9_]{22,}")),
    ("github_token", re.compile(r"(?<![A-Za-z0-9_])gh[pousr]_[A-Za-z0-9]{36,}")),
    ("slack_token", re.compile(r"(?<![A-Za-z0-9-])xox[abposr]-[A-Za-z0-9-]{10,}")),
    ("aws_access_key", re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![0-9A-Z])")),
    ("google_api_key", re.compile(r"(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])")),
    ("jwt", re.compile(r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{10,}")),
)
_KEY_BEGIN = re.compile(r"-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----")
# After a BEGIN line with no END (cut-off output): the key's base64 lines and "Proc-Type: …" headers.
_KEY_BODY = re.compile(r"(?:\r?\n[ \t]*(?:[A-Za-z0-9+/=]+|[A-Za-z-]+: [^\n]*)[ \t]*)*")


# --- .env files ------------------------------------------------------------------------------------------


def _unquote(first: str, rest: list[str]) -> tuple[str | None, int]:
    """A quoted value starting at ``first`` (which begins with the quote), possibly over more lines.
    Returns the value as written between the quotes and how many extra lines it used."""
    quote = first[0]
    text, used = first[1:], 0
    while True:
        i = 0
        while i < len(text):
            if text[i] == "\\" and quote == '"':
                i += 2
                continue
            if text[i] == quote:
                return text[:i], used
            i += 1
        if used >= len(rest):
            return None, used  # never closed: not a value we can trust
        text += "\n" + rest[used]
        used += 1


def parse_env(text: str) -> list[tuple[str, str]]:
    """``(key, value)`` pairs of a dotenv file (values as written, without their quotes)."""
    pairs: list[tuple[str, str]] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        match = _ENV_LINE.match(lines[i])
        i += 1
        if not match:
            continue
        key, raw = match.group(1), match.group(2).strip()
        if raw[:1] in ("'", '"'):
            value, used = _unquote(raw, lines[i:])
            i += used
            if value is None:
                continue
        else:
            value = re.split(r"\s+#", raw, maxsplit=1)[0].strip()
        pairs.append((key, value))
    return pairs


def env_secrets(pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """``(kind, text)`` to mask for the pairs: the value as written and, for escapes, as the program sees it."""
    out: list[tuple[str, str]] = []
    for key, value in pairs:
        plain_word = value.isalpha() or value.lower() in ("true", "false", "null", "none")
        if len(value) < MIN_LENGTH or (plain_word and not SECRET_KEY.search(key)):
            continue
        forms = {value, value.replace("\\n", "\n").replace('\\"', '"').replace("\\\\", "\\")}
        forms |= {
            line.strip() for form in list(forms) for line in form.splitlines() if len(line.strip()) >= 16
        }
        out += [(f"env:{key}", form) for form in forms if len(form) >= MIN_LENGTH]
    return out


class EnvSecrets:
    """The ``.env*`` values of a folder, re-read when a file changes."""

    def __init__(self) -> None:
        self.cwd: Path | None = None
        self._stamp: tuple[Any, ...] = ()
        self.values: list[tuple[str, str]] = []

    def current(self) -> list[tuple[str, str]]:
        if self.cwd is None:
            return []
        files = sorted(
            p for p in self.cwd.glob(".env*") if p.is_file() and not p.name.endswith(TEMPLATE_SUFFIXES)
        )
        stamp = tuple((p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in files)
        if stamp != self._stamp:
            pairs = []
            for path in files:
                try:
                    pairs += parse_env(path.read_text(encoding="utf-8", errors="replace"))
                except OSError:
                    continue
            # Longest first, so a value containing another is masked whole.
            self.values = sorted(env_secrets(pairs), key=lambda kv: -len(kv[1]))
            self._stamp = stamp
        return self.values


# --- masking -----------------------------------------------------------------------------------------------


def _private_keys(text: str) -> list[tuple[int, int, str]]:
    spans = []
    for begin in _KEY_BEGIN.finditer(text):
        end_marker = f"-----END {begin.group(1)}PRIVATE KEY-----"
        end = text.find(end_marker, begin.end())
        if end >= 0:
            spans.append((begin.start(), end + len(end_marker), "private_key"))
            continue
        # Cut off (truncated output): mask the key's body lines that follow.
        body = _KEY_BODY.match(text, begin.end())
        spans.append((begin.start(), body.end() if body else begin.end(), "private_key"))
    return spans


class Redactor:
    def __init__(
        self, env: Callable[[], list[tuple[str, str]]], extra: list[tuple[str, re.Pattern[str]]]
    ) -> None:
        self._env = env
        self._extra = extra

    def spans(self, text: str) -> list[tuple[int, int, str]]:
        found = _private_keys(text) if "PRIVATE KEY-----" in text else []
        for kind, value in self._env():
            start = text.find(value)
            while start >= 0:
                found.append((start, start + len(value), kind))
                start = text.find(value, start + len(value))
        for kind, pattern in (*PATTERNS, *self._extra):
            found += [(m.start(), m.end(), kind) for m in pattern.finditer(text) if m.end() > m.start()]
        return found

    def redact(self, text: str) -> str:
        found = self.spans(text)
        if not found:
            return text
        found.sort(key=lambda s: (s[0], -(s[1] - s[0])))
        merged: list[list[Any]] = []
        for start, end, kind in found:
            if merged and start < merged[-1][1]:  # overlapping: one mask covers both
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end, kind])
        out, last = [], 0
        for start, end, kind in merged:
            out += [text[last:start], f"[REDACTED:{kind}]"]
            last = end
        out.append(text[last:])
        return "".join(out)

    def redact_data(self, value: Any) -> Any:
        """Strings anywhere inside JSON-like data (a tool's ``details``)."""
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, dict):
            return {k: self.redact_data(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.redact_data(v) for v in value]
        if isinstance(value, tuple):
            return tuple(self.redact_data(v) for v in value)
        return value


def extra_patterns(settings: dict[str, Any]) -> list[tuple[str, re.Pattern[str]]]:
    out = []
    for item in settings.get("patterns") or []:
        if isinstance(item, dict) and isinstance(item.get("pattern"), str):
            kind, source = str(item.get("kind") or "custom"), item["pattern"]
        elif isinstance(item, str):
            kind, source = "custom", item
        else:
            continue
        try:
            out.append((kind, re.compile(source)))
        except re.error:
            out.append((kind, re.compile(re.escape(source))))
    return out


def register(pi: ExtensionAPI) -> None:
    env = EnvSecrets()
    state: dict[str, Any] = {"extra": []}
    redactor = Redactor(env.current, state["extra"])

    @pi.on("session_start")
    def on_start(event: Event, ctx: ExtensionContext) -> None:
        env.cwd = Path(ctx.cwd)
        state["extra"][:] = extra_patterns(_settings.section(ctx, "secretRedactor"))

    def redact_blocks(blocks: list[Any]) -> tuple[list[Any], bool]:
        out, changed = [], False
        for block in blocks:
            text = getattr(block, "text", None)
            if getattr(block, "type", None) == "text" and isinstance(text, str):
                masked = redactor.redact(text)
                if masked != text:
                    out.append(TextContent(text=masked))
                    changed = True
                    continue
            out.append(block)
        return out, changed

    @pi.on("tool_result")
    def on_tool_result(event: Event) -> dict[str, Any] | None:
        content, changed = redact_blocks(list(event.content))
        details = redactor.redact_data(event.details)
        if details != event.details:
            changed = True
        return {"content": content, "details": details} if changed else None

    @pi.on("message")
    def on_message(event: Event) -> dict[str, Any] | None:
        message = event.message
        if message.role != "toolResult":
            return None
        content, changed = redact_blocks(list(message.content))
        details = redactor.redact_data(message.details)
        if not changed and details == message.details:
            return None
        message.content = content
        message.details = details
        return {"message": message}
