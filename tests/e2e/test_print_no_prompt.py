"""Print and JSON mode given no prompt at all behave as pi 0.87.1: nothing is sent, exit 0.

pi builds the session, sends nothing, then prints the text of the session's last message when that is an
assistant answer (so ``pi -c -p`` repeats the continued session's last answer) and exits 0; JSON mode
writes the session header line only.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_tui.testing import FakeLLM, Reply, text

from .helpers import run_cli, write_models_json

pytestmark = pytest.mark.slow

MODEL = ["--model", "fake-anthropic/claude-fake"]


def test_print_mode_without_a_prompt_sends_nothing_and_exits_0(tmp_path: Path, agent_dir: Path) -> None:
    fake = FakeLLM()
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        run = run_cli([*MODEL, "-p"], tmp_path, stdin="")
    assert run.returncode == 0, run.stderr
    assert run.stdout == "" and run.stderr == ""
    assert fake.requests == []


def test_json_mode_without_a_prompt_writes_the_header_only(tmp_path: Path, agent_dir: Path) -> None:
    fake = FakeLLM()
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        run = run_cli([*MODEL, "--mode", "json"], tmp_path, stdin="")
    assert run.returncode == 0, run.stderr
    lines = [json.loads(line) for line in run.stdout.splitlines()]
    assert [line["type"] for line in lines] == ["session"]
    assert fake.requests == []


def test_continue_without_a_prompt_prints_the_last_answer(tmp_path: Path, agent_dir: Path) -> None:
    fake = FakeLLM()
    fake.script([Reply([text("the first answer")])])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        first = run_cli([*MODEL, "-p", "hi"], tmp_path)
        assert first.returncode == 0, first.stderr
        again = run_cli(["-c", "-p"], tmp_path, stdin="")
    assert again.returncode == 0, again.stderr
    assert again.stdout == "the first answer\n"
    assert len(fake.requests) == 1


def test_an_empty_pipe_without_p_is_print_mode_too(tmp_path: Path, agent_dir: Path) -> None:
    """``echo -n | pi`` is print mode in pi (stdin is not a terminal): nothing sent, nothing written, exit
    0. pi-tui opened its line mode, wrote its banner and a prompt, and read the empty pipe."""
    fake = FakeLLM()
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        run = run_cli(MODEL, tmp_path, stdin="")
    assert run.returncode == 0, run.stderr
    assert run.stdout == "" and run.stderr == ""
    assert fake.requests == []


def test_an_empty_pipe_with_a_prompt_answers_it_in_print_mode(tmp_path: Path, agent_dir: Path) -> None:
    fake = FakeLLM()
    fake.script([Reply([text("the answer")])])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        run = run_cli([*MODEL, "hi"], tmp_path, stdin="")
    assert run.returncode == 0, run.stderr
    assert run.stdout == "the answer\n"
