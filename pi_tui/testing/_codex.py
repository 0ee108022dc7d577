"""The ChatGPT subscription backend's Codex endpoint (``POST …/codex/responses``): what it checks before a
Responses request reaches the model, in its own error shapes, and its usage-limit answer.

- The body may come zstd-compressed (``content-encoding: zstd``, as pi sends it); it is decoded first.
- ``Authorization: Bearer <access token>`` must be a JWT whose ``https://api.openai.com/auth`` claim names
  the account, and ``chatgpt-account-id`` must name the same account.
- The body must say ``store: false`` and ``stream: true``, carry ``instructions``, and may not ask for
  ``max_output_tokens`` (the backend refuses each with ``{"detail": ...}``).
Past these checks it is an ordinary Responses request (same rules, same stream).
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Mapping

from pi_tui.util.json_types import JsonObject

from ._errors import base_headers
from ._plan import Plan, json_plan

__all__ = ["CODEX_SUFFIX", "codex_refusal", "codex_usage_limit", "decode_body", "jwt_account"]

CODEX_SUFFIX = "/codex/responses"
_CLAIM = "https://api.openai.com/auth"


def decode_body(headers: Mapping[str, str], raw: bytes) -> bytes | Plan:
    """The request body, decompressed when the client sent it zstd-encoded (a 400 Plan if it is broken)."""
    if headers.get("content-encoding", "").lower() != "zstd":
        return raw
    import zstandard  # only a compressed request needs it (the dev extra has it)

    try:
        return zstandard.ZstdDecompressor().decompress(raw, max_output_size=64 * 1024 * 1024)
    except zstandard.ZstdError as exc:
        return json_plan(400, {"detail": f"Could not decode zstd request body: {exc}"})


def jwt_account(token: str) -> str | None:
    """The ChatGPT account id in an access token's claims, or None when it is not such a JWT."""
    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        payload = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except (ValueError, UnicodeDecodeError):
        return None
    claim = payload.get(_CLAIM) if isinstance(payload, dict) else None
    account = claim.get("chatgpt_account_id") if isinstance(claim, dict) else None
    return account if isinstance(account, str) and account else None


def _detail(status: int, text: str, seq: int) -> Plan:
    return json_plan(status, {"detail": text}, base_headers(seq), seq)


def codex_refusal(headers: Mapping[str, str], body: JsonObject, seq: int) -> Plan | None:
    """The backend's answer to a request it will not run, else None."""
    auth = headers.get("authorization", "")
    token = auth[7:].strip() if auth.lower().startswith("bearer ") else ""
    account = jwt_account(token)
    if account is None:
        return json_plan(
            401,
            {
                "error": {
                    "message": "Could not parse your authentication token. Please try signing in again.",
                    "type": "invalid_request_error",
                    "code": "token_invalid",
                }
            },
            base_headers(seq),
            seq,
        )
    if headers.get("chatgpt-account-id") != account:
        return _detail(403, "The chatgpt-account-id header does not match the signed-in account.", seq)
    if body.get("store") is not False:
        return _detail(400, "Store must be set to false", seq)
    if body.get("stream") is not True:
        return _detail(400, "Stream must be set to true", seq)
    if not isinstance(body.get("instructions"), str) or not body["instructions"]:
        return _detail(400, "Instructions are required", seq)
    for unsupported in ("max_output_tokens", "prompt_cache_retention"):
        if unsupported in body:
            return _detail(400, f"Unsupported parameter: {unsupported}", seq)
    return None


def codex_usage_limit(seq: int, plan_type: str = "plus", minutes: int = 30) -> Plan:
    """A 429 usage-limit answer, resetting ``minutes`` from now (wall clock, as the client compares)."""
    error = {
        "type": "usage_limit_reached",
        "message": "The usage limit has been reached",
        "plan_type": plan_type,
        "resets_at": int(time.time()) + minutes * 60,
    }
    return json_plan(429, {"error": error}, base_headers(seq), seq)
