"""``get_context``: seed 001's markdown view of the envelope plus a structured form for clients that
draw their own (parts, tokens, breakpoints, panels, ledger).

The structured form is computed from the same inputs as the markdown: the envelope the next request
starts from (replayed from the session, panels placed, no hooks run), the request it maps to and its
block fingerprints, and the process's cache ledger.
"""

from __future__ import annotations

import json
from typing import Any

from pi_tui.ai.cost import projected_cost
from pi_tui.ai.tokens import estimate_tokens
from pi_tui.context.request import common_prefix_blocks, fingerprint, sent_message_tokens, to_llm_request

__all__ = ["context_view", "estimated_tokens"]


def _preview(text: str, width: int = 120) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def _message_row(index: int, message: Any) -> dict[str, Any]:
    from pi_tui.agent.convert import reaches_model
    from pi_tui.ai.types import message_text

    row: dict[str, Any] = {
        "index": index,
        "role": getattr(message, "role", "?"),
        "tokens": sent_message_tokens(message),
        # False for a shell command's output kept out of context: listed, counted as 0, never sent
        "sent": reaches_model(message),
    }
    row["preview"] = _preview(message_text(message))
    return row


def _usage_json(usage: Any) -> dict[str, Any] | None:
    return usage.to_json_dict() if usage is not None else None


def estimated_tokens(session: Any) -> int:
    """The next request's size estimate: system prompt, tools and messages of the replayed envelope."""
    env = session.engine.replay()
    return (
        estimate_tokens(env.system_compiled)
        + sum(estimate_tokens(json.dumps(t.to_json_dict())) for t in env.tools)
        + sum(sent_message_tokens(m) for m in (*env.cached, *env.uncached))
    )


async def context_view(session: Any) -> dict[str, Any]:
    """``{markdown, model, tokens, parts, tools, messages, options, breakpoints, nextRequest, panels,
    ledger}``."""
    markdown = await session.render_context()
    panels = await session.panels.preview()
    env = panels.place(session.engine.replay())
    request = to_llm_request(env, list(session.tools))
    model = session.model

    parts = [{"name": p.name, "tokens": estimate_tokens(p.text), "text": p.text} for p in env.system_parts]
    tools = [{"name": t.name, "tokens": estimate_tokens(json.dumps(t.to_json_dict()))} for t in env.tools]
    cached = [_message_row(i, m) for i, m in enumerate(env.cached)]
    uncached = [_message_row(len(cached) + i, m) for i, m in enumerate(env.uncached)]
    system_tokens = sum(p["tokens"] for p in parts)
    tool_tokens = sum(t["tokens"] for t in tools)
    cached_tokens = sum(m["tokens"] for m in cached)
    uncached_tokens = sum(m["tokens"] for m in uncached)
    total = system_tokens + tool_tokens + cached_tokens + uncached_tokens
    window = model.context_window

    boundary = len(request.messages) if request.cache_boundary is None else request.cache_boundary
    breakpoints: list[dict[str, Any]] = [{"after": "system", "covers": "tools and system prompt"}]
    if boundary:
        breakpoints.append({"after": f"messages[{boundary - 1}]", "messageIndex": boundary - 1})

    blocks = fingerprint(request)
    ledger = session.engine.ledger
    next_request: dict[str, Any] | None = None
    if ledger.last_blocks:
        hit = common_prefix_blocks(ledger.last_blocks, blocks)
        read = sum(b.tokens for b in blocks[:hit])
        write = sum(b.tokens for b in blocks[hit:] if b.cached)
        tail = sum(b.tokens for b in blocks if not b.cached)
        cost = projected_cost(model, read, write, tail)
        next_request = {
            "cacheReadTokens": read,
            "cacheWriteTokens": write,
            "uncachedTokens": tail,
            "firstDifference": blocks[hit].label if hit < len(blocks) else None,
            "estimatedInputCost": cost,
        }

    panel_rows = []
    for placement in ("prefix", "tail"):
        for state in panels.ordered(placement):
            panel_rows.append(
                {
                    "id": state.id,
                    "name": state.panel.name,
                    "placement": placement,
                    "tokens": state.tokens,
                    "hash": state.digest,
                    "refreshedAt": state.refreshed_at,
                    "lastRequest": None if state.hit is None else ("hit" if state.hit else "miss"),
                    "requests": state.requests,
                    "cost": state.cost,
                    **({"error": state.error} if state.error else {}),
                }
            )

    totals = ledger.totals()
    return {
        "markdown": markdown,
        "model": {"provider": model.provider, "id": model.id, "contextWindow": window},
        "tokens": {
            "system": system_tokens,
            "tools": tool_tokens,
            "cached": cached_tokens,
            "uncached": uncached_tokens,
            "total": total,
            "contextWindow": window,
            "percent": 100 * total / window if window else None,
        },
        "parts": parts,
        "tools": tools,
        "messages": {"cached": cached, "uncached": uncached},
        "options": {k: v for k, v in env.options.items() if v is not None},
        "breakpoints": breakpoints,
        "blocks": [
            {"kind": b.kind, "label": b.label, "digest": b.digest, "tokens": b.tokens, "cached": b.cached}
            for b in blocks
        ],
        "nextRequest": next_request,
        "panels": panel_rows,
        "ledger": {
            "requests": [
                {
                    "index": r.index,
                    "model": r.model,
                    "promptTokensEstimate": r.prompt_tokens_estimate,
                    "expectedCacheTokens": r.expected_cache_tokens,
                    "usage": _usage_json(r.usage),
                    "hitRatio": r.hit_ratio,
                }
                for r in ledger.requests
            ],
            "totals": totals.to_json_dict(),
            "hitRatio": ledger.hit_ratio(),
            "invalidations": [
                {
                    "requestIndex": inv.request_index,
                    "source": inv.source,
                    "reason": inv.reason,
                    "where": inv.where,
                    "tokensRebilled": inv.tokens_rebilled,
                }
                for inv in ledger.invalidations
            ],
        },
    }
