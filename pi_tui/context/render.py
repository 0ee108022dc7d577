"""``/context`` as markdown: the view print mode (``-p /context``) and RPC ``get_context`` show.

It lays out a `ContextReport` (system parts, tools, cached and uncached messages with their tokens, where
the cache breakpoints sit, what the next request reads from the cache and what it re-bills, the panels,
the session's totals and the cache ledger); every figure is the report's.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pi_tui.ai.types import message_role, message_text
from pi_tui.util.format import fmt_tokens

from .report import ContextReport

__all__ = ["render_context"]


def _preview(message: Any, width: int = 70) -> str:
    role = message_role(message) or "?"
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


def render_context(report: ContextReport, *, max_messages: int = 40) -> str:
    """Render the report as markdown (at most ``max_messages`` rows per message group)."""
    r = report
    model = r.model
    lines: list[str] = ["# Context", ""]
    lines.append(f"Model: `{model.label}` · context window {fmt_tokens(model.context_window)} tokens")
    lines.append(
        f"Estimated prompt: **{fmt_tokens(r.total_tokens)} tokens** — system {fmt_tokens(r.system_tokens)}, "
        f"tools {fmt_tokens(r.tool_tokens)}, cached messages {fmt_tokens(r.cached_tokens)}, "
        f"uncached tail {fmt_tokens(r.uncached_tokens)}"
    )
    if r.percent is not None:
        lines.append(f"Window used: {r.percent:.1f}%")
    lines.append("")

    lines += ["## System prompt", ""]
    lines += _table(
        [(p.name, fmt_tokens(p.tokens), _preview_text(p.text)) for p in r.parts],
        ("part", "tokens", "starts with"),
    )
    lines += ["", "## Tools", ""]
    if r.tools:
        lines += _table(
            [(t.name, fmt_tokens(t.tokens), _preview_text(t.definition.description)) for t in r.tools],
            ("tool", "tokens", "description"),
        )
    else:
        lines.append("(none)")

    for title, rows in (("Cached messages", r.cached), ("Uncached tail (request-only)", r.uncached)):
        lines += ["", f"## {title} ({len(rows)})", ""]
        if not rows:
            lines.append("(none)")
            continue
        shown = list(rows)
        if len(shown) > max_messages:
            lines.append(f"… {len(shown) - max_messages} earlier messages not shown …")
            shown = shown[-max_messages:]
        lines += _table(
            [(str(m.index), m.role, fmt_tokens(m.tokens), _preview(m.message)) for m in shown],
            ("#", "role", "tokens", "content"),
        )

    options = r.options
    lines += ["", "## Options", "", json.dumps(options) if options else "(defaults)"]

    lines += ["", "## Cache", ""]
    marks = [bp for bp in r.breakpoints if bp.message_index is not None]
    lines.append(
        "Breakpoints: end of the system prompt (covers the tools)"
        + (f", and the end of the cached region (message {marks[0].message_index})" if marks else "")
    )
    p = r.projection()
    lines.append(
        f"Next request: reads ~{fmt_tokens(p.read)} tokens from cache, writes ~{fmt_tokens(p.write)} "
        f"(first difference: {p.first_difference or '—'}), ~{fmt_tokens(p.uncached)} uncached."
    )
    lines.append(f"Estimated input cost of the next request: ${p.cost:.4f}")
    if not p.has_baseline:
        lines.append("No earlier request to compare with: the next request reads nothing it has not written.")

    if r.panels:
        lines += ["", "## Panels", ""]
        rows_out = [
            (
                f"[{row.state.id}] {row.state.panel.name}",
                row.layout,
                fmt_tokens(row.state.tokens),
                row.state.digest[:8],
                row.state.refreshed_at,
                "uncached" if row.last_request is None else row.last_request,
                f"${row.state.cost:.4f}",
            )
            for row in r.panels
        ]
        lines += _table(
            rows_out, ("panel", "placement", "tokens", "hash", "refreshed", "last request", "cost")
        )

    if r.transforms:
        lines += ["", f"## Context transforms ({len(r.transforms)})", ""]
        lines += _table(
            [(t.timestamp[:19], t.transformer, t.title or "", str(len(t.ops))) for t in r.transforms],
            ("when", "by", "title", "ops"),
        )

    st = r.totals
    if st is not None:
        ratio = f" · cache read ratio {st.cache_read_ratio:.2f}" if st.cache_read_ratio is not None else ""
        lines += [
            "",
            "## Session so far (from the file, all branches)",
            "",
            f"{st.answers} answers · input {fmt_tokens(st.input)} · cache read {fmt_tokens(st.cache_read)} · "
            f"cache write {fmt_tokens(st.cache_write)} · output {fmt_tokens(st.output)} · ${st.cost:.4f}{ratio}",
        ]

    ledger = r.ledger
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
                (str(inv.request_index), inv.source, inv.reason, inv.where, fmt_tokens(inv.tokens_rebilled))
                for inv in ledger.invalidations[-20:]
            ],
            ("request", "who", "why", "where", "tokens re-billed"),
        )
    else:
        lines.append("No cache invalidations.")
    for title, section in r.sections:  # what extensions add (pi.register_context_section)
        lines += ["", f"## {title}", "", *section]
    return "\n".join(lines) + "\n"


def _preview_text(text: str, width: int = 60) -> str:
    text = " ".join(text.split())
    return (text[: width - 1] + "…") if len(text) > width else text
