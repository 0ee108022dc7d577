"""Claude Pro/Max requests: what the Anthropic adapter changes when the key is a subscription token.

A Claude subscription token (``sk-ant-oat…``, from ``/login anthropic`` or ``ANTHROPIC_OAUTH_TOKEN``)
is accepted only from Claude Code. pi 0.87.1 therefore speaks as Claude Code for such a key, and so do
we, with the same facts: ``Authorization: Bearer`` instead of ``x-api-key``, Claude Code's
``user-agent`` and ``x-app`` headers, the ``claude-code-20250219`` and ``oauth-2025-04-20`` betas, a
first system block naming Claude Code, and tool names in Claude Code's casing (``read`` → ``Read``),
mapped back to ours when the model calls them.
"""

from __future__ import annotations

from pi_tui.util.json_types import JsonObject

__all__ = [
    "CLAUDE_CODE_IDENTITY",
    "oauth_body",
    "oauth_headers",
]

CLAUDE_CODE_VERSION = "2.1.280"
CLAUDE_CODE_IDENTITY = "You are Claude Code, Anthropic's official CLI for Claude."
_OAUTH_BETAS = "claude-code-20250219,oauth-2025-04-20"
_CLAUDE_CODE_TOOLS = (
    "Read",
    "Write",
    "Edit",
    "Bash",
    "Grep",
    "Glob",
    "AskUserQuestion",
    "EnterPlanMode",
    "ExitPlanMode",
    "KillShell",
    "NotebookEdit",
    "Skill",
    "Task",
    "TaskOutput",
    "TodoWrite",
    "WebFetch",
    "WebSearch",
)
_TO_CLAUDE_CODE = {name.lower(): name for name in _CLAUDE_CODE_TOOLS}


def _claude_code_name(name: str) -> str:
    return _TO_CLAUDE_CODE.get(name.lower(), name)


def oauth_headers(api_key: str, headers: dict[str, str | None]) -> dict[str, str | None]:
    """The request headers for a subscription token; ``headers`` are the adapter's merged ones.

    The two subscription betas go first in ``anthropic-beta``; everything ``headers`` sets wins over
    the Claude Code defaults, as a configured header does in pi.
    """
    merged = dict(headers)
    betas = merged.pop("anthropic-beta", "") or ""
    return {
        "anthropic-dangerous-direct-browser-access": "true",
        "user-agent": f"claude-cli/{CLAUDE_CODE_VERSION}",
        "x-app": "cli",
        "authorization": f"Bearer {api_key}",
        **merged,
        "anthropic-beta": f"{_OAUTH_BETAS},{betas}" if betas else _OAUTH_BETAS,
    }


def oauth_body(body: JsonObject) -> JsonObject:
    """``body`` as Claude Code would send it: identity system block first, tool names in its casing.

    Nothing in ``body`` is modified (its message blocks may be shared with later requests); changed
    parts are copies.
    """
    out = dict(body)
    system = list(body.get("system") or [])
    identity: JsonObject = {"type": "text", "text": CLAUDE_CODE_IDENTITY}
    if system and "cache_control" in system[0]:
        identity["cache_control"] = dict(system[0]["cache_control"])
    out["system"] = [identity, *system]
    if body.get("tools"):
        out["tools"] = [{**tool, "name": _claude_code_name(tool["name"])} for tool in body["tools"]]
    messages = body.get("messages") or []
    renamed: list[JsonObject] = []
    for message in messages:
        content = message.get("content")
        if (
            message.get("role") == "assistant"
            and isinstance(content, list)
            and any(
                block.get("type") == "tool_use" and _claude_code_name(block["name"]) != block["name"]
                for block in content
            )
        ):
            content = [
                {**block, "name": _claude_code_name(block["name"])}
                if block.get("type") == "tool_use"
                else block
                for block in content
            ]
            message = {**message, "content": content}
        renamed.append(message)
    out["messages"] = renamed
    return out
