"""A model scope chooses the start-up model when the command line names none, as in pi 0.87.1.

The scope is ``--models``, else the ``enabledModels`` setting. For a session without history pi starts
with the saved default model (``defaultProvider``/``defaultModel``) when it is in the scope, else with
the scope's first model; ``--model`` still wins, and a continued session keeps its own model.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_tui.testing import FakeLLM, Reply, text

from .helpers import run_cli, write_models_json

pytestmark = pytest.mark.slow

_DEFAULT_OPENAI = {"defaultProvider": "fake-openai", "defaultModel": "gpt-fake"}


@pytest.mark.parametrize(
    ("args", "settings", "expected"),
    [
        (["--models", "gpt-fake-r,gpt-fake"], {}, "gpt-fake-r"),  # first of the scope
        (["--models", "gpt-fake-r,gpt-fake"], _DEFAULT_OPENAI, "gpt-fake"),  # saved default, in scope
        (["--models", "gpt-fake-r"], _DEFAULT_OPENAI, "gpt-fake-r"),  # saved default out of scope
        ([], {"enabledModels": ["gpt-fake-r"]}, "gpt-fake-r"),
        (
            [],
            {"enabledModels": ["gpt-fake-r", "claude-fake"], "defaultProvider": "fake-anthropic",
             "defaultModel": "claude-fake"},
            "claude-fake",
        ),
        (["--models", "gpt-fake-r", "--model", "fake-anthropic/claude-fake"], {}, "claude-fake"),
    ],
)
def test_scope_picks_the_start_model(
    tmp_path: Path, agent_dir: Path, args: list[str], settings: dict[str, object], expected: str
) -> None:
    (agent_dir / "settings.json").write_text(json.dumps(settings))
    fake = FakeLLM()
    fake.script([Reply([text("ok")])])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        run = run_cli([*args, "-p", "hi"], tmp_path)
    assert run.returncode == 0, run.stderr
    assert [r.body.get("model") for r in fake.requests] == [expected]


def test_a_continued_session_keeps_its_model(tmp_path: Path, agent_dir: Path) -> None:
    fake = FakeLLM()
    fake.script([Reply([text("one")]), Reply([text("two")])])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        first = run_cli(["--model", "fake-anthropic/claude-fake", "-p", "hi"], tmp_path)
        assert first.returncode == 0, first.stderr
        second = run_cli(["-c", "--models", "gpt-fake-r", "-p", "again"], tmp_path)
    assert second.returncode == 0, second.stderr
    assert [r.body.get("model") for r in fake.requests] == ["claude-fake", "claude-fake"]


def test_a_scope_that_matches_nothing_warns(tmp_path: Path, agent_dir: Path) -> None:
    (agent_dir / "settings.json").write_text(json.dumps(_DEFAULT_OPENAI))
    fake = FakeLLM()
    fake.script([Reply([text("ok")])])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        run = run_cli(["--models", "nothing-like-this", "-p", "hi"], tmp_path)
    assert run.returncode == 0, run.stderr
    assert 'No models match pattern "nothing-like-this"' in run.stderr
    assert [r.body.get("model") for r in fake.requests] == ["gpt-fake"]
