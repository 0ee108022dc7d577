"""``/context``: a markdown view of exactly what the model sees and what it costs.

Shows the system parts, tools, cached and uncached messages with token estimates, where the cache
breakpoints sit, what the next request should read from the cache and what it will re-bill, the panels
with their state and cost, and the cache ledger. The TUI viewer and RPC ``get_context`` show this text.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pi_tui.ai.cost import projected_cost
from pi_tui.ai.stream import LlmRequest
from pi_tui.ai.tokens import estimate_tokens
from pi_tui.ai.types import Model, message_text
from pi_tui.util.format import fmt_tokens

from .envelope import ContextEnvelope
from .ledger import CacheLedger
from .panels import PanelManager
from .request import Block, common_prefix_blocks, fingerprint, sent_message_tokens

__all__ = ["render_context"]


def _preview(message: Any, width: int = 70) -> str:
    role = getattr(message, "role", "?")
    if role == "assistant":
        parts = []
        for block in message.content:
            if block.type == "text":
                parts.append(block.text)
            elif block.type == "toolCall":
                parts.append(f"{block.name}({json.dumps(block.arguments, ensure_ascii=False)[:40]})")
            elif block.type == "thinking":
                parts.append("[thinking]")
        text = " ".join(parts)
    elif role == "toolResult":
        text = f"{message.tool_name} → " + message_text(message)
    elif role == "bashExecution" and message.exclude_from_context:
        text = f"(kept out of context, not sent) {message_text(message)}"
    else:
        text = message_text(message)
    text = " ".join(text.split())
    return (text[: width - 1] + "…") if len(text) > width else text


def _table(rows: Sequence[tuple[str, ...]], header: tuple[str, ...]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return out


def render_context(
    envelope: ContextEnvelope,
    request: LlmRequest | None = None,
    *,
    ledger: CacheLedger | None = None,
    panels: PanelManager | None = None,
    model: Model | None = None,
    max_messages: int = 40,
    baseline_blocks: list[Block] | None = None,
    session_stats: Any = None,
) -> str:
    """Render the envelope (and, when given, the request it maps to) as markdown."""
    lines: list[str] = ["# Context", ""]
    if model is not None:
        lines.append(f"Model: `{model.label}` · context window {fmt_tokens(model.context_window)} tokens")
    sys_tokens = estimate_tokens(envelope.system_compiled)
    tool_tokens = sum(estimate_tokens(json.dumps(t.to_json_dict())) for t in envelope.tools)
    cached_tokens = sum(sent_message_tokens(m) for m in envelope.cached)
    uncached_tokens = sum(sent_message_tokens(m) for m in envelope.uncached)
    total = sys_tokens + tool_tokens + cached_tokens + uncached_tokens
    lines.append(
        f"Estimated prompt: **{fmt_tokens(total)} tokens** — system {fmt_tokens(sys_tokens)}, tools {fmt_tokens(tool_tokens)}, "
        f"cached messages {fmt_tokens(cached_tokens)}, uncached tail {fmt_tokens(uncached_tokens)}"
    )
    if model is not None and model.context_window:
        lines.append(f"Window used: {100 * total / model.context_window:.1f}%")
    lines.append("")

    lines += ["## System prompt", ""]
    lines += _table(
        [(p.name, fmt_tokens(estimate_tokens(p.text)), _preview_text(p.text)) for p in envelope.system_parts],
        ("part", "tokens", "starts with"),
    )
    lines += ["", "## Tools", ""]
    if envelope.tools:
        lines += _table(
            [
                (
                    t.name,
                    fmt_tokens(estimate_tokens(json.dumps(t.to_json_dict()))),
                    _preview_text(t.description),
                )
                for t in envelope.tools
            ],
            ("tool", "tokens", "description"),
        )
    else:
        lines.append("(none)")

    for title, messages in (
        ("Cached messages", envelope.cached),
        ("Uncached tail (request-only)", envelope.uncached),
    ):
        lines += ["", f"## {title} ({len(messages)})", ""]
        if not messages:
            lines.append("(none)")
            continue
        shown = list(enumerate(messages))
        if len(shown) > max_messages:
            lines.append(f"… {len(shown) - max_messages} earlier messages not shown …")
            shown = shown[-max_messages:]
        lines += _table(
            [
                (str(i), getattr(m, "role", "?"), fmt_tokens(sent_message_tokens(m)), _preview(m))
                for i, m in shown
            ],
            ("#", "role", "tokens", "content"),
        )

    options = {k: v for k, v in envelope.options.items() if v is not None}
    lines += ["", "## Options", "", json.dumps(options) if options else "(defaults)"]

    if request is not None:
        lines += ["", "## Cache", ""]
        boundary = len(request.messages) if request.cache_boundary is None else request.cache_boundary
        lines.append(
            "Breakpoints: end of the system prompt (covers the tools)"
            + (f", and the end of the cached region (message {boundary - 1})" if boundary else "")
        )
        blocks = fingerprint(request)
        previous = ledger.last_blocks if ledger is not None and ledger.last_blocks else baseline_blocks
        if previous:
            hit = common_prefix_blocks(previous, blocks)
            read = sum(b.tokens for b in blocks[:hit])
            rebill = sum(b.tokens for b in blocks[hit:] if b.cached)
            tail = sum(b.tokens for b in blocks if not b.cached)
            where = blocks[hit].label if hit < len(blocks) else "—"
            lines.append(
                f"Next request: reads ~{fmt_tokens(read)} tokens from cache, writes ~{fmt_tokens(rebill)} "
                f"(first difference: {where}), ~{fmt_tokens(tail)} uncached."
            )
            if model is not None:
                cost = projected_cost(model, read, rebill, tail)
                lines.append(f"Estimated input cost of the next request: ${cost:.4f}")
        else:
            lines.append(
                "No earlier request in this process: the next request reads nothing it has not written."
            )

    if panels is not None and panels.panels:
        lines += ["", "## Panels", ""]
        rows = []
        for placement in ("prefix", "tail"):
            for state in panels.ordered(placement):
                status = "uncached" if state.hit is None else ("hit" if state.hit else "miss")
                rows.append(
                    (
                        f"[{state.id}] {state.panel.name}",
                        placement,
                        fmt_tokens(state.tokens),
                        state.digest[:8],
                        state.refreshed_at,
                        status,
                        f"${state.cost:.4f}",
                    )
                )
        lines += _table(rows, ("panel", "placement", "tokens", "hash", "refreshed", "last request", "cost"))

    if session_stats is not None and session_stats.assistant_messages:
        st = session_stats
        denom = st.input + st.cache_read + st.cache_write
        ratio = f" · cache read ratio {st.cache_read / denom:.2f}" if denom else ""
        lines += [
            "",
            "## Session so far (from the file, all branches)",
            "",
            f"{st.assistant_messages} answers · input {fmt_tokens(st.input)} · cache read {fmt_tokens(st.cache_read)} · "
            f"cache write {fmt_tokens(st.cache_write)} · output {fmt_tokens(st.output)} · ${st.cost:.4f}{ratio}",
        ]

    if ledger is not None:
        lines += ["", "## Cache ledger (this process)", ""]
        totals = ledger.totals()
        hit_ratio = ledger.hit_ratio()
        lines.append(
            f"{len(ledger.requests)} requests · input {fmt_tokens(totals.input)} · cache read {fmt_tokens(totals.cache_read)} · "
            f"cache write {fmt_tokens(totals.cache_write)} · output {fmt_tokens(totals.output)} · ${totals.cost.total:.4f}"
            + (f" · hit ratio {hit_ratio:.2f}" if hit_ratio is not None else "")
        )
        if ledger.invalidations:
            lines.append("")
            lines += _table(
                [
                    (
                        str(inv.request_index),
                        inv.source,
                        inv.reason,
                        inv.where,
                        fmt_tokens(inv.tokens_rebilled),
                    )
                    for inv in ledger.invalidations[-20:]
                ],
                ("request", "who", "why", "where", "tokens re-billed"),
            )
        else:
            lines.append("No cache invalidations.")
    return "\n".join(lines) + "\n"


def _preview_text(text: str, width: int = 60) -> str:
    text = " ".join(text.split())
    return (text[: width - 1] + "…") if len(text) > width else text
