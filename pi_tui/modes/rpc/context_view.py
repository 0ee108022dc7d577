"""``get_context``: the ``/context`` report as data for clients that draw their own view, with the markdown
print mode shows (both are views of `AgentSession.context_report`, so every number is the same).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pi_tui.context.render import render_context
from pi_tui.context.report import ContextReport, MessageRow

if TYPE_CHECKING:
    from pi_tui.runtime.agent_session import AgentSession

__all__ = ["context_view", "report_json"]


def _preview(text: str, width: int = 120) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def _message_row(row: MessageRow) -> dict[str, Any]:
    from pi_tui.ai.types import message_text

    return {
        "index": row.index,
        "role": row.role,
        "tokens": row.tokens,
        # False for a shell command's output kept out of context: listed, counted as 0, never sent
        "sent": row.sent,
        "preview": _preview(message_text(row.message)),
    }


def _usage_json(usage: Any) -> dict[str, Any] | None:
    return usage.to_json_dict() if usage is not None else None


async def context_view(session: AgentSession) -> dict[str, Any]:
    """``{markdown, model, tokens, parts, tools, messages, options, breakpoints, blocks, nextRequest,
    panels, transforms, ledger}`` of the session's next request."""
    return report_json(await session.context_report())


def report_json(report: ContextReport) -> dict[str, Any]:
    """The report as ``get_context``'s data (pi's camelCase keys)."""
    r = report
    model = r.model
    markdown = render_context(r)
    projection = r.projection()
    next_request: dict[str, Any] | None = None
    if projection.has_baseline:
        next_request = {
            "cacheReadTokens": projection.read,
            "cacheWriteTokens": projection.write,
            "uncachedTokens": projection.uncached,
            "firstDifference": projection.first_difference,
            "estimatedInputCost": projection.cost,
        }
    ledger = r.ledger
    return {
        "extensionSections": [{"title": title, "lines": list(lines)} for title, lines in r.sections],
        "markdown": markdown,
        "model": {"provider": model.provider, "id": model.id, "contextWindow": r.window},
        "tokens": {
            "system": r.system_tokens,
            "tools": r.tool_tokens,
            "cached": r.cached_tokens,
            "uncached": r.uncached_tokens,
            "total": r.total_tokens,
            "contextWindow": r.window,
            "percent": r.percent,
        },
        "parts": [{"name": p.name, "tokens": p.tokens, "text": p.text} for p in r.parts],
        "tools": [{"name": t.name, "tokens": t.tokens} for t in r.tools],
        "messages": {
            "cached": [_message_row(m) for m in r.cached],
            "uncached": [_message_row(m) for m in r.uncached],
        },
        "options": r.options,
        "breakpoints": [
            {"after": "system", "covers": "tools and system prompt"}
            if bp.message_index is None
            else {"after": bp.after, "messageIndex": bp.message_index}
            for bp in r.breakpoints
        ],
        "blocks": [
            {"kind": b.kind, "label": b.label, "digest": b.digest, "tokens": b.tokens, "cached": b.cached}
            for b in r.blocks()
        ],
        "nextRequest": next_request,
        "panels": [
            {
                "id": row.state.id,
                "name": row.state.panel.name,
                "placement": row.layout,
                "tokens": row.state.tokens,
                "hash": row.state.digest,
                "refreshedAt": row.state.refreshed_at,
                "lastRequest": row.last_request,
                "requests": row.state.requests,
                "cost": row.state.cost,
                **({"error": row.state.error} if row.state.error else {}),
            }
            for row in r.panels
        ],
        "transforms": [
            {
                "entryId": t.entry_id,
                "timestamp": t.timestamp,
                "transformer": t.transformer,
                "title": t.title,
                "ops": list(t.ops),
            }
            for t in r.transforms
        ],
        "ledger": {
            "requests": [
                {
                    "index": rec.index,
                    "model": rec.model,
                    "promptTokensEstimate": rec.prompt_tokens_estimate,
                    "expectedCacheTokens": rec.expected_cache_tokens,
                    "usage": _usage_json(rec.usage),
                    "hitRatio": rec.hit_ratio,
                }
                for rec in ledger.requests
            ],
            "totals": ledger.totals().to_json_dict(),
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
