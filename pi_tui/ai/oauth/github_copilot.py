"""GitHub Copilot login: a GitHub device code, then Copilot's own short-lived token, as pi 0.87.1 does it.

The GitHub token (kept as ``refresh``) is exchanged for a Copilot token (``access``, about 30 minutes)
at ``api.<domain>/copilot_internal/v2/token``; "refreshing" repeats that exchange. The Copilot token
names its API host (``proxy-ep=proxy.…`` → ``https://api.…``), which becomes the requests' base URL.
GitHub Enterprise: the user gives the domain (blank for github.com), stored as ``enterpriseUrl``. The
account's usable models are fetched and stored as ``availableModelIds``; models whose policy is still
"unconfigured" are switched on, as pi does ("Enabling models...").
"""

from __future__ import annotations

import re
import threading
import urllib.parse
from typing import TYPE_CHECKING, Any

from .types import AuthEvent, AuthPrompt, Credential, Interaction, OAuthError, OAuthProvider, RequestAuth

if TYPE_CHECKING:
    from ._http import HttpResult
    from .device import Poll

# The HTTP helpers and the device-code or callback machinery load inside login and refresh: a run
# with a stored, unexpired login only turns it into request auth.

__all__ = ["GitHubCopilotOAuth", "copilot_base_url", "normalize_domain"]

CLIENT_ID = "Iv1.b507a08c87ecfe98"
COPILOT_HEADERS = {
    "User-Agent": "GitHubCopilotChat/0.35.0",
    "Editor-Version": "vscode/1.107.0",
    "Editor-Plugin-Version": "copilot-chat/0.35.0",
    "Copilot-Integration-Id": "vscode-chat",
}
API_VERSION = "2026-06-01"
INDIVIDUAL_BASE_URL = "https://api.individual.githubcopilot.com"
_EXPIRY_MARGIN_MS = 5 * 60 * 1000


def normalize_domain(text: str) -> str | None:
    """The host name in what the user typed (``https://company.ghe.com/x`` → ``company.ghe.com``)."""
    value = text.strip()
    if not value:
        return None
    parts = urllib.parse.urlsplit(value if "://" in value else f"https://{value}")
    return parts.hostname or None


def copilot_base_url(token: str | None, enterprise_domain: str | None) -> str:
    """The Copilot API host for requests: from the token's ``proxy-ep``, else the enterprise or individual one."""
    match = re.search(r"proxy-ep=([^;]+)", token or "")
    if match:
        return "https://" + re.sub(r"^proxy\.", "api.", match.group(1))
    if enterprise_domain:
        return f"https://copilot-api.{enterprise_domain}"
    return INDIVIDUAL_BASE_URL


def _enterprise(credential: Credential) -> str | None:
    value = credential.get("enterpriseUrl")
    return normalize_domain(value) if isinstance(value, str) and value else None


def _copilot_token(github_token: str, domain: str | None, cancel: threading.Event) -> Credential:
    from ._http import failure, get_json

    result = get_json(
        f"https://api.{domain or 'github.com'}/copilot_internal/v2/token",
        headers={"Authorization": f"Bearer {github_token}", **COPILOT_HEADERS},
        cancel=cancel,
    )
    if not result.ok:
        raise failure("GitHub Copilot token request", result, [github_token])
    token, expires_at = result.body.get("token"), result.body.get("expires_at")
    if not isinstance(token, str) or not isinstance(expires_at, int | float):
        raise OAuthError("GitHub Copilot sent an unexpected token answer")
    credential: Credential = {
        "type": "oauth",
        "refresh": github_token,
        "access": token,
        "expires": int(expires_at * 1000 - _EXPIRY_MARGIN_MS),
    }
    if domain:
        credential["enterpriseUrl"] = domain
    return credential


def _models(token: str, domain: str | None, cancel: threading.Event) -> tuple[list[str], list[str]]:
    """``(available ids, ids to switch on)`` from the account's model list, by pi's rules."""
    from ._http import failure, get_json

    base = copilot_base_url(token, domain)
    result = get_json(
        f"{base}/models",
        headers={"Authorization": f"Bearer {token}", **COPILOT_HEADERS, "X-GitHub-Api-Version": API_VERSION},
        cancel=cancel,
    )
    if not result.ok:
        raise failure("GitHub Copilot model list", result, [token])
    data = result.body.get("data")
    if not isinstance(data, list):
        raise OAuthError("GitHub Copilot sent an unexpected model list")
    from ..catalog import provider_models

    known = {m.id for m in provider_models("github-copilot")}
    account: list[tuple[str, bool, Any]] = []
    for item in data:
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            continue
        supports = (item.get("capabilities") or {}).get("supports") or {}
        if isinstance(supports, dict) and supports.get("tool_calls") is False:
            continue
        policy = item.get("policy")
        account.append(
            (
                item["id"],
                item.get("model_picker_enabled") is True,
                (policy or {}).get("state") if isinstance(policy, dict) else None,
            )
        )
    picker = [mid for mid, enabled, state in account if enabled and state != "disabled"]
    fallback = base == INDIVIDUAL_BASE_URL and not picker
    available = picker if picker or not fallback else [mid for mid, _, state in account if state == "enabled"]
    to_enable = [
        mid
        for mid, enabled, state in account
        if state == "unconfigured" and mid in known and (enabled or fallback)
    ]
    return available, to_enable


class GitHubCopilotOAuth(OAuthProvider):
    id = "github-copilot"
    name = "GitHub Copilot"

    def login(self, io: Interaction) -> Credential:
        from ._device_common import min_poll_interval, require_str, trusted_url
        from ._http import failure, post_form, post_json
        from .device import Poll, poll_device_flow

        typed = io.prompt(
            AuthPrompt(
                "text", "GitHub Enterprise URL/domain (blank for github.com)", placeholder="company.ghe.com"
            )
        )
        enterprise = normalize_domain(typed)
        if typed.strip() and enterprise is None:
            raise OAuthError("Invalid GitHub Enterprise URL/domain")
        domain = enterprise or "github.com"
        headers = {"User-Agent": COPILOT_HEADERS["User-Agent"]}
        started = post_form(
            f"https://{domain}/login/device/code",
            {"client_id": CLIENT_ID, "scope": "read:user"},
            headers=headers,
            cancel=io.cancel,
        )
        if not started.ok:
            raise failure("GitHub device authorization", started)
        body = started.body
        device_code = require_str(body, "device_code", "GitHub")
        user_code = require_str(body, "user_code", "GitHub")
        url = trusted_url(body.get("verification_uri"), "GitHub", https_only=False)
        interval, expires_in = body.get("interval"), body.get("expires_in")
        if not isinstance(expires_in, int | float):
            raise OAuthError("GitHub sent an unexpected device answer (no expires_in)")
        io.notify(AuthEvent("device_code", url=url, user_code=user_code, expires_in=float(expires_in)))

        def poll() -> Poll[str]:
            result: HttpResult = post_form(
                f"https://{domain}/login/oauth/access_token",
                {
                    "client_id": CLIENT_ID,
                    "device_code": device_code,
                    "grant_type": "urn:ietf:params:oauth:grant-type:device_code",
                },
                headers=headers,
                cancel=io.cancel,
            )
            if not result.ok:
                return Poll("failed", message=str(failure("GitHub device token request", result)))
            token = result.body.get("access_token")
            if isinstance(token, str):
                return Poll("complete", value=token)
            error = result.body.get("error")  # GitHub answers 200 with an error while waiting
            if error == "authorization_pending":
                return Poll("pending")
            if error == "slow_down":
                new = result.body.get("interval")
                return Poll("slow_down", interval=float(new) if isinstance(new, int | float) else None)
            description = result.body.get("error_description")
            detail = f"{error}: {description}" if description else str(error)
            return Poll("failed", message=f"GitHub device login failed: {detail}")

        github_token = poll_device_flow(
            poll,
            interval=float(interval) if isinstance(interval, int | float) else None,
            expires_in=float(expires_in),
            cancel=io.cancel,
            min_interval=min_poll_interval(),
        )
        credential = _copilot_token(github_token, enterprise, io.cancel)
        available, to_enable = _models(str(credential["access"]), enterprise, io.cancel)
        enabled: list[str] = []
        if to_enable:
            io.notify(AuthEvent("progress", "Enabling models..."))
            base = copilot_base_url(str(credential["access"]), enterprise)
            for model_id in to_enable:
                answer = post_json(
                    f"{base}/models/{model_id}/policy",
                    {"state": "enabled"},
                    headers={
                        "Authorization": f"Bearer {credential['access']}",
                        **COPILOT_HEADERS,
                        "openai-intent": "chat-policy",
                        "x-interaction-type": "chat-policy",
                    },
                    cancel=io.cancel,
                )
                if answer.status == 429:
                    break  # best effort, as pi: a rate limit stops the batch
                if answer.ok:
                    enabled.append(model_id)
        credential["availableModelIds"] = list(dict.fromkeys([*available, *enabled]))
        return credential

    def refresh(self, credential: Credential, cancel: threading.Event) -> Credential:
        domain = _enterprise(credential)
        fresh = _copilot_token(str(credential.get("refresh", "")), domain, cancel)
        fresh["availableModelIds"], _ = _models(str(fresh["access"]), domain, cancel)
        return fresh

    def to_auth(self, credential: Credential) -> RequestAuth:
        access = str(credential.get("access", ""))
        return RequestAuth(api_key=access, base_url=copilot_base_url(access, _enterprise(credential)))
