"""Secret redactor: masks secrets before the model sees them or they are saved.

Enable: ``pi-tui -e secret_redactor``, or ``"extensions": ["bundled:secret_redactor"]`` in settings.

What is masked, replaced by ``[REDACTED:<kind>]`` (the same secret always masks the same way, so a
conversation's bytes, and the prompt cache, stay the same from one request to the next):
- what **detect-secrets** finds (see ``_secrets.py``): AWS, Azure, GitHub, GitLab, Slack, Stripe, Twilio,
  SendGrid, npm, PyPI, Discord, Telegram, JWT and other token formats, ``password = …``/``secret: …``
  assignments, passwords in URLs, high-entropy quoted strings; plus shapes it lacks: whole private key
  blocks (PEM, OpenSSH, PGP, PuTTY, also inside JSON), ``sk-ant-``/``sk-``/``github_pat_``/``hf_``…
  tokens, ``Authorization`` headers, ``--password x`` and ``-u user:pass`` flags, URL query secrets;
- values from the ``.env*`` files in the cwd (``KEY=VALUE``, ``export KEY=VALUE``, single- or
  double-quoted, multi-line quoted values) of at least 8 characters; the kind is ``env:KEY``. A value
  that is one plain word (``production``, ``localhost``) is left alone unless its key names a secret
  (``…KEY``, ``…TOKEN``, ``…SECRET``, ``…PASSWORD``…), so ordinary words elsewhere are never masked.
  Template files (``.env.example``, ``.env.sample``, ``.env.template``, ``.env.dist``) are skipped. The
  files are re-read whenever one changes.
- settings ``{"secretRedactor": {"patterns": [{"kind": "internal_token", "pattern": "itk_[0-9a-f]{32}"}]}}``
  add regular expressions.

Where:
- ``tool_result``: each tool result's text and its ``details`` (an edit's diff, say), before the model
  sees them and before they are written to the session file;
- ``message``: every finalized message (user prompts with their ``@file`` attachments, extension
  messages, also those sent while the agent is idle, ``!command`` and its output, blocked or invalid tool
  calls, the assistant's text) before it is saved. ``!command`` runs as without the redactor (its output
  streams to your screen and Escape cancels it); what is saved and sent is masked;
- ``before_provider_request``: a last pass over every string of the request body (except thinking
  blocks and their signatures), so nothing that reached the conversation another way leaves unmasked.
Overlapping matches are merged, so no fragment of a secret survives, and nothing outside a match changes.

Limits: a secret that is transformed (base64, URL-encoded) is not recognised; the model cannot edit text
it only sees masked; a password made only of letters in a secret-named assignment is taken for code.
"""

from __future__ import annotations

import asyncio
import re
import runpy
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from pi_tui.extensions.api import (
    AssistantMessage,
    CustomMessage,
    Event,
    ExtensionAPI,
    ExtensionContext,
    TextContent,
    ToolResultMessage,
    UserMessage,
)

_here = Path(__file__).parent
_settings = SimpleNamespace(**runpy.run_path(str(_here / "_settings.py")))
_secrets = SimpleNamespace(**runpy.run_path(str(_here / "_secrets.py")))

MIN_LENGTH = 8
TEMPLATE_SUFFIXES = (".example", ".sample", ".template", ".dist", ".defaults")
SECRET_KEY = re.compile(r"KEY|TOKEN|SECRET|PASS|PWD|CREDENTIAL|AUTH|PRIVATE|SIGNATURE|SALT|DSN|COOKIE", re.I)
_ENV_LINE = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*(.*)$")
PATTERNS = _secrets.PATTERNS
# Request-body keys whose strings are signed or opaque: changing them makes the provider refuse the request.
_OPAQUE_KEYS = frozenset({"thinking", "signature", "data", "encrypted_content", "redacted_thinking"})
_CACHE_LIMIT = 4096
_MASK = re.compile(r"\[REDACTED:[^\]\s]*\]")


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
            return self.values
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


class Redactor:
    """Masks what the detector and the ``.env`` values find; results are cached per text, so a long
    conversation's request body is scanned once, not at every request."""

    def __init__(
        self, env: Callable[[], list[tuple[str, str]]], extra: list[tuple[str, re.Pattern[str]]]
    ) -> None:
        self._env = env
        self._detector = _secrets.Detector(extra)
        self._cache: OrderedDict[str, str] = OrderedDict()
        self._cache_key: tuple[Any, ...] = (None, 0)

    def spans(self, text: str) -> list[tuple[int, int, str]]:
        found = []  # the .env kinds first: on a tie they name the mask (`env:API_TOKEN`)
        for kind, value in self._env():
            start = text.find(value)
            while start >= 0:
                found.append((start, start + len(value), kind))
                start = text.find(value, start + len(value))
        found += self._detector.spans(text)
        if "[REDACTED:" in text:  # masking twice must change nothing: leave earlier masks alone
            masks = [m.span() for m in _MASK.finditer(text)]
            found = [f for f in found if not any(f[0] < end and start < f[1] for start, end in masks)]
        return found

    def redact(self, text: str) -> str:
        if len(text) < 8:
            return text
        # The cache holds while the .env values (the same list object) and the settings patterns do;
        # beyond `_CACHE_LIMIT` texts the least recently used go first.
        key = (self._env(), len(self._detector.extra))
        if key[0] is not self._cache_key[0] or key[1] != self._cache_key[1]:
            self._cache, self._cache_key = OrderedDict(), key
        cached = self._cache.get(text)
        if cached is None:
            cached = self._cache[text] = self._mask(text)
            if len(self._cache) > _CACHE_LIMIT:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(text)
        return cached

    def _mask(self, text: str) -> str:
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

    def redact_data(self, value: Any, *, skip: frozenset[str] = frozenset()) -> Any:
        """Strings anywhere inside JSON-like data (a tool's ``details``, a request body); the values of
        keys in ``skip`` are left as they are. Unchanged containers are returned as they came."""
        if isinstance(value, str):
            # An inline image (`data:image/png;base64,…`): random base64 can look like a token, and
            # masking part of it would break the image.
            return value if value.startswith("data:") and ";base64," in value[:100] else self.redact(value)
        if isinstance(value, dict):
            out = {k: v if k in skip else self.redact_data(v, skip=skip) for k, v in value.items()}
            return value if all(out[k] is value[k] for k in value) else out
        if isinstance(value, list | tuple):
            items = [self.redact_data(v, skip=skip) for v in value]
            if all(a is b for a, b in zip(items, value, strict=True)):
                return value
            return items if isinstance(value, list) else tuple(items)
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


# --- the extension ---------------------------------------------------------------------------------------


def register(pi: ExtensionAPI) -> None:
    env = EnvSecrets()
    extra: list[tuple[str, re.Pattern[str]]] = []
    redactor = Redactor(env.current, extra)

    warming: list[threading.Thread] = []

    @pi.on("session_start")
    def on_start(event: Event, ctx: ExtensionContext) -> None:
        env.cwd = Path(ctx.cwd)
        extra[:] = extra_patterns(_settings.section(ctx, "secretRedactor"))
        # detect-secrets takes ~0.12 s to import: do it while the user types or the model thinks.
        thread = threading.Thread(target=_secrets.warm_up, name="secret-redactor-warm-up", daemon=True)
        thread.start()
        warming.append(thread)

    @pi.on("session_shutdown")
    async def on_shutdown(event: Event) -> None:
        # Never leave an import half done in a thread while the interpreter shuts down.
        for thread in warming:
            await asyncio.to_thread(thread.join, 10)
        warming.clear()

    def redact_blocks(blocks: list[Any]) -> tuple[list[Any], bool]:
        out, changed = [], False
        for block in blocks:
            if isinstance(block, TextContent):
                masked = redactor.redact(block.text)
                if masked != block.text:
                    out.append(TextContent(text=masked))
                    changed = True
                    continue
            out.append(block)
        return out, changed

    @pi.on("tool_result")
    def on_tool_result(event: Event) -> dict[str, Any] | None:

        content, changed = redact_blocks(list(event.content))
        details = redactor.redact_data(event.details)
        if details is not event.details:
            changed = True
        return {"content": content, "details": details} if changed else None

    @pi.on("message")
    def on_message(event: Event) -> dict[str, Any] | None:
        message = event.message
        changed = False
        with_content = isinstance(message, UserMessage | AssistantMessage | ToolResultMessage | CustomMessage)
        content = message.content if with_content else None
        if isinstance(content, str):
            masked = redactor.redact(content)
            if masked != content:
                message.content, changed = masked, True
        elif isinstance(content, list):
            blocks, changed = redact_blocks(content)
            if changed:
                message.content = blocks
        if message.role in ("toolResult", "custom"):
            details = redactor.redact_data(message.details)
            if details is not message.details:
                message.details, changed = details, True
        if message.role == "bashExecution":
            output = redactor.redact(message.output)
            if output != message.output:
                message.output, changed = output, True
        return {"message": message} if changed else None

    @pi.on("before_provider_request")
    def on_request(event: Event) -> Any:
        payload = event.payload
        masked = redactor.redact_data(payload, skip=_OPAQUE_KEYS)
        return None if masked is payload else masked
