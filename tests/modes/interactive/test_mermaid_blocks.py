"""``markdown.mermaid``: Mermaid blocks in answers drawn as diagrams, as pi 0.87.1 draws them."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import Label

from pi_tui.ai.providers.faux import FauxScript, faux_reply
from pi_tui.modes.interactive.markdown_block import AssistantText, LabelledFence
from pi_tui.modes.interactive.mermaid import diagram

from .helpers import make_app, submit_and_wait, until

FLOW = "graph TD\n  A[Request] --> B{Valid?}\n  B -->|yes| C[Process]"
ANSWER = f"Here is the flow:\n\n```mermaid\n{FLOW}\n```\n\nDone."
# What pi 0.87.1's renderer (grok-mermaid 0.2.3) draws for FLOW, row for row (its `plain`).
PI_DRAWS = [
    " ┌─────────┐",
    " │ Request │",
    " └────┬────┘",
    "      │",
    "      ▼",
    " ╭────────╮",
    " │ Valid? │",
    " ╰────┬───╯",
    "      │",
    "      ▼yes",
    " ┌─────────┐",
    " │ Process │",
    " └─────────┘",
]


def _shown(fence: LabelledFence) -> str:
    return str(fence.query_one("#code-content", Label).content)


def test_the_diagram_is_pis_and_too_wide_or_unknown_kinds_stay_code() -> None:
    drawn = diagram(FLOW, 80)
    assert drawn is not None
    assert [row.rstrip() for row in drawn.plain.splitlines()] == PI_DRAWS
    styles = {drawn.plain[span.start : span.end]: span.style for span in drawn.spans}
    # coloured as pi colours it: whole boxes dim, connections in the accent colour, labels as text
    assert styles["┌─────────┐"] == styles["└────┬────┘"] == "$pi-border-muted"
    assert styles["▼"] == "$pi-accent" and styles["Request"] == "$pi-text"
    assert diagram(FLOW, 8) is None  # wider than the space at hand
    assert diagram('pie title x\n  "a": 1', 80) is None  # a kind the renderer does not draw
    assert diagram("   ", 80) is None


async def test_an_answers_mermaid_block_is_drawn_and_off_keeps_the_code(tmp_path: Path, agent_dir: Path) -> None:
    app = make_app(tmp_path, agent_dir, FauxScript(faux_reply(ANSWER)))
    async with app.run_test(size=(100, 40)) as pilot:
        await until(pilot, app.ready.is_set)
        await submit_and_wait(pilot, app, "draw it")
        fence = app.chat.query(AssistantText).last().query_one(LabelledFence)
        await until(pilot, lambda: fence.has_class("-diagram"))  # pi's default: "streaming"
        assert "│ Request │" in _shown(fence) and "graph TD" not in _shown(fence)
        app.session.settings.set("markdown", {"mermaid": "off"})  # type: ignore[union-attr]
        app.apply_settings()  # as /settings does after a change
        await until(pilot, lambda: not fence.has_class("-diagram"))
        assert "graph TD" in _shown(fence)


async def test_final_waits_for_the_answer_to_be_complete(tmp_path: Path, agent_dir: Path) -> None:
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "settings.json").write_text(json.dumps({"markdown": {"mermaid": "final"}}))
    app = make_app(tmp_path, agent_dir, FauxScript(faux_reply(ANSWER)))
    async with app.run_test(size=(100, 40)) as pilot:
        await until(pilot, app.ready.is_set)
        answer = AssistantText()
        await app.chat.mount(answer)
        answer.append_delta(ANSWER)  # streaming: shown as code
        await until(pilot, lambda: bool(answer.query(LabelledFence)))
        fence = answer.query_one(LabelledFence)
        await pilot.pause()
        assert not fence.has_class("-diagram")
        await answer.finish()
        await until(pilot, lambda: fence.has_class("-diagram"))
