from __future__ import annotations

from pathlib import Path

import pytest

from pi_tui.args import parse_args
from pi_tui.runtime.agent_session import ModelUnavailableError
from pi_tui.runtime.factory import StartupError, create_session


async def test_a_session_without_a_model_refuses_a_prompt_in_one_line_and_works_once_one_is_set(
    tmp_path: Path, agent_dir: Path
) -> None:
    session = create_session(parse_args([]), tmp_path, allow_no_model=True).session
    try:
        assert not session.has_model
        with pytest.raises(ModelUnavailableError) as refused:
            await session.prompt("hello")
        message = str(refused.value)
        assert "ANTHROPIC_API_KEY" in message and "models.json" in message and "\n" not in message
        assert "GEMINI_API_KEY" in message and "pi-tui --help" in message  # not only two providers
        assert "docs/" not in message  # a pip install has no docs folder
        assert (
            session.session_manager.get_entries() == []
        )  # nothing sent, nothing saved (not even a model change)
        faux = session.registry.find("faux", "faux-1")
        assert faux is not None
        session.set_model(faux)
        await session.prompt("hello")
        kinds = [entry.type for entry in session.session_manager.get_entries()]
        assert kinds[0] == "model_change" and kinds.count("message") == 3  # the prompt recorded, as pi
    finally:
        await session.close()


def test_without_allow_no_model_start_up_still_fails_with_exit_code_1(
    tmp_path: Path, agent_dir: Path
) -> None:
    with pytest.raises(StartupError) as failed:
        create_session(parse_args([]), tmp_path)
    assert failed.value.exit_code == 1 and "No models available" in failed.value.message
    assert "GEMINI_API_KEY" in failed.value.message and "pi-tui login" in failed.value.message
