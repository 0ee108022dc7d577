from __future__ import annotations

from pathlib import Path

from pi_tui.ai.catalog import FAUX_MODEL_ID, FAUX_PROVIDER, builtin_models
from pi_tui.ai.providers.faux import FAUX_MODEL
from pi_tui.ai.types import AssistantMessage
from pi_tui.args import parse_args
from pi_tui.runtime.factory import create_session


async def test_faux_tool_call_ids_stay_unique_across_branches(tmp_path: Path, agent_dir: Path) -> None:
    (tmp_path / "README.md").write_text("hello\n")
    session = create_session(parse_args(["--provider", "faux"]), tmp_path).session
    try:
        await session.prompt("read README.md")
        await session.navigate(None)  # back to the start: the same request again, on a new branch
        await session.prompt("read README.md")
        ids = [
            call.id
            for entry in session.session_manager.get_entries()
            if isinstance(getattr(entry, "message", None), AssistantMessage)
            for call in entry.message.tool_calls()
        ]
    finally:
        await session.close()
    assert len(ids) == 2 and len(set(ids)) == 2, ids


def test_the_faux_model_has_one_context_window() -> None:
    (listed,) = [m for m in builtin_models() if (m.provider, m.id) == (FAUX_PROVIDER, FAUX_MODEL_ID)]
    assert (FAUX_MODEL.context_window, FAUX_MODEL.max_tokens) == (listed.context_window, listed.max_tokens)
    assert FAUX_MODEL.name == listed.name
