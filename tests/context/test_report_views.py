"""The three ``/context`` views (print mode's markdown, RPC ``get_context``, the TUI inspector) show the
numbers of one `ContextReport`, and its projection of the next request is what the fake server bills.

Each view is read back as a user or client sees it (the markdown's text, the JSON, the tree's labels) and
the figures found there are compared, for a fresh session, a session pi 0.87.1 wrote and pi-tui resumes,
a compacted session and one with panels.
"""

from __future__ import annotations

import json
import re
import shutil
import urllib.request
from pathlib import Path
from typing import Any

from textual.widgets import Static, Tree

from pi_tui.ai.types import UserMessage
from pi_tui.args import parse_args
from pi_tui.context.panels import Panel
from pi_tui.context.render import render_context
from pi_tui.context.report import ContextReport, message_tokens
from pi_tui.modes.interactive.screens.context_screen import ContextScreen
from pi_tui.modes.rpc.context_view import report_json
from pi_tui.runtime.factory import create_session
from pi_tui.testing import FakeLLM, Reply, text
from pi_tui.util.format import fmt_tokens

from ..e2e.helpers import rehome_session, write_models_json
from ..modes.interactive.helpers import workers_done
from ..modes.interactive.screens.helpers import HostApp

ANTHROPIC = "fake-anthropic/claude-fake"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "pi087"
LONG = "Tell me about the context window and the prompt cache. " * 30

Figures = dict[str, Any]


def _from_markdown(markdown: str) -> Figures:
    head = re.search(
        r"Estimated prompt: \*\*(\S+) tokens\*\* — system (\S+), tools (\S+), cached messages (\S+), "
        r"uncached tail (\S+)",
        markdown,
    )
    nxt = re.search(
        r"Next request: reads ~(\S+) tokens from cache, writes ~(\S+) \(.*\), ~(\S+) uncached", markdown
    )
    cost = re.search(r"Estimated input cost of the next request: \$(\S+)", markdown)
    assert head and nxt and cost, markdown
    rows = re.findall(r"^\| (\d+) \| \w+ \| (\S+) \|", markdown, re.M)
    return {
        "prompt": head.groups(),
        "next": (*nxt.groups(), cost.group(1)),
        "messages": [(int(i), tokens) for i, tokens in rows],
    }


def _from_json(data: dict[str, Any]) -> Figures:
    t = data["tokens"]
    n = data["nextRequest"]
    fmt = fmt_tokens
    messages = [*data["messages"]["cached"], *data["messages"]["uncached"]]
    assert sum(m["tokens"] for m in messages) == t["cached"] + t["uncached"]
    assert t["total"] == t["system"] + t["tools"] + t["cached"] + t["uncached"]
    return {
        "prompt": tuple(fmt(t[k]) for k in ("total", "system", "tools", "cached", "uncached")),
        "next": None
        if n is None
        else (
            fmt(n["cacheReadTokens"]),
            fmt(n["cacheWriteTokens"]),
            fmt(n["uncachedTokens"]),
            f"{n['estimatedInputCost']:.4f}",
        ),
        "messages": [(m["index"], fmt(m["tokens"])) for m in messages],
    }


async def _from_screen(session: Any, report: ContextReport) -> Figures:
    app = HostApp(session)
    async with app.run_test(size=(160, 60)) as pilot:
        await app.push_screen(ContextScreen(session, report))
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ContextScreen)
        await workers_done(screen.app)
        await pilot.pause()
        tree = screen.query_one("#ctx-tree", Tree)
        for group in tree.root.children:  # open every message group (rows are made on first opening)
            group.expand()
        await pilot.pause()
        summary = str(screen.query_one("#ctx-summary", Static).render())
        labels = {str(n.label).split(" · ")[0]: str(n.label) for n in tree.root.children}
        rows = [str(leaf.label) for group in tree.root.children for leaf in group.children]
    total = re.search(r"prompt ~(\S+) tokens", summary)
    nxt = re.search(r"read (\S+) · write (\S+) · uncached (\S+) · est. input \$(\S+)", summary)
    assert total and nxt, summary

    def figure(prefix: str) -> str:
        label = next(v for k, v in labels.items() if k.startswith(prefix))
        return label.split(" · ")[1]

    return {
        "prompt": (
            total.group(1),
            figure("System prompt"),
            figure("Tools"),
            figure("Cached messages"),
            figure("Uncached tail"),
        ),
        "next": nxt.groups(),
        "messages": [
            (int(m.group(1)), m.group(2)) for row in rows if (m := re.match(r"#(\d+) \w+ · (\S+) ·", row))
        ],
    }


async def _check_views(session: Any) -> ContextReport:
    """Build the report, read the three views back and check they show its numbers."""
    report = await session.context_report()
    projection = report.projection()
    expected_prompt = tuple(
        fmt_tokens(n)
        for n in (
            report.total_tokens,
            report.system_tokens,
            report.tool_tokens,
            report.cached_tokens,
            report.uncached_tokens,
        )
    )
    expected_next = (
        fmt_tokens(projection.read),
        fmt_tokens(projection.write),
        fmt_tokens(projection.uncached),
        f"{projection.cost:.4f}",
    )
    expected_messages = [(m.index, fmt_tokens(m.tokens)) for m in (*report.cached, *report.uncached)]

    markdown = _from_markdown(render_context(report))
    data = _from_json(report_json(report))
    screen = await _from_screen(session, report)
    for view in (markdown, data, screen):
        assert view["prompt"] == expected_prompt
        assert view["messages"] == expected_messages
    assert markdown["next"] == screen["next"] == expected_next
    # get_context gives no projection until there is an earlier request to compare with
    assert data["next"] == (expected_next if projection.has_baseline else None)
    # the RPC markdown is the print-mode markdown
    assert report_json(report)["markdown"] == render_context(report)
    return report


async def _check_billing(session: Any, report: ContextReport, prompt: str = "next question") -> None:
    """Send the next request and compare the fake's bill with the projection.

    The request adds the new prompt, written to the cache with the history; the fake also bills a few
    tokens of framing per tool definition that the report leaves out, hence the small allowance."""
    projection = report.projection()
    added = message_tokens(UserMessage(content=prompt, timestamp=0))
    await session.prompt(prompt)
    usage = session.engine.ledger.requests[-1].usage
    assert usage is not None
    framing = 8 * len(report.tools) + 8
    assert abs(usage.cache_read - projection.read) <= 0.02 * usage.cache_read + framing, (usage, projection)
    sent = usage.cache_write + usage.input
    expected = projection.write + projection.uncached + added
    assert abs(sent - expected) <= 0.03 * sent + framing, (usage, projection)
    prices = report.model.cost
    billed = (
        usage.input * prices.input
        + usage.cache_read * prices.cache_read
        + usage.cache_write * prices.cache_write
    ) / 1e6
    assert abs(billed - (projection.cost + added * prices.cache_write / 1e6)) <= 0.05 * billed, (
        usage,
        projection,
    )


async def test_fresh_session(fake: FakeLLM, tmp_path: Path) -> None:
    fake.responder = lambda _request: Reply([text("ok")])
    session = create_session(parse_args(["--model", ANTHROPIC]), tmp_path).session
    report = await _check_views(session)
    assert not report.projection().has_baseline and report.projection().read == 0
    await _check_billing(session, report)
    report = await _check_views(session)  # now with this process's first request as the baseline
    assert report.projection().has_baseline
    await _check_billing(session, report)
    await session.close()
    assert fake.violations == []


async def test_resumed_pi_session(agent_dir: Path, tmp_path: Path) -> None:
    path = tmp_path / "plain.jsonl"
    shutil.copyfile(FIXTURES / "plain.jsonl", path)
    rehome_session(path, tmp_path.resolve())  # the session runs in the directory it records
    last = json.loads((FIXTURES / "plain.last-request.json").read_text())
    fake = FakeLLM()
    fake.responder = lambda _request: Reply([text("ok")])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        request = urllib.request.Request(  # pi's own last request, so the fake's cache holds its prefix
            server.anthropic_base_url + "/v1/messages",
            data=json.dumps(last).encode(),
            headers={
                "x-api-key": "test-key",
                "content-type": "application/json",
                "anthropic-version": "2023-06-01",
            },
        )
        with urllib.request.urlopen(request) as response:
            response.read()
        session = create_session(parse_args(["--session", str(path), "--model", ANTHROPIC]), tmp_path).session
        report = await _check_views(session)
        projection = report.projection()
        assert projection.has_baseline and projection.read > 0.8 * projection.total  # rebuilt from the file
        await _check_billing(session, report)
        await session.close()
    assert fake.violations == []


async def test_compacted_session(fake: FakeLLM, agent_dir: Path, tmp_path: Path) -> None:
    (agent_dir / "settings.json").write_text(json.dumps({"compaction": {"keepRecentTokens": 200}}))
    fake.responder = lambda _request: Reply([text("## Goal\nTalk about the cache.\n\n" + LONG)])
    session = create_session(parse_args(["--model", ANTHROPIC]), tmp_path).session
    for n in range(3):
        await session.prompt(f"question {n}: {LONG}")
    await session.compact()
    report = await _check_views(session)
    assert report.cached[0].role == "compactionSummary"
    await _check_billing(session, report)
    await session.close()
    assert fake.violations == []


async def test_session_with_panels(fake: FakeLLM, tmp_path: Path) -> None:
    fake.responder = lambda _request: Reply([text("ok")])
    session = create_session(parse_args(["--model", ANTHROPIC]), tmp_path).session
    runs = {"n": 0}

    def status() -> str:
        runs["n"] += 1
        return f"build status: run {runs['n']}\n" + "log line\n" * 40

    session.panels.register(Panel("Notes", lambda: "keep answers short\n" * 30, placement="prefix"))
    session.panels.register(Panel("Status", status, placement="tail"))
    for prompt in ("first question", "second question"):
        await session.prompt(prompt)
    report = await _check_views(session)
    assert {row.state.panel.name: row.layout for row in report.panels} == {
        "Notes": "prefix",
        "Status": "tail",
    }
    await _check_billing(session, report)
    await session.close()
    assert fake.violations == []
