"""Shared scaffolding of the side-by-side tests with pi 0.87.1: the scripts both fakes play, the temp home
and project each program runs in, running real pi and pi-tui each against its own identical fake, and the
tool-schema scrub used before comparing request bodies (tool descriptions are a listed deliberate
difference).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pi_tui.testing import FakeLLM, Reply, text, thinking, tool_call

from ..pi087 import Pi087

Run = Callable[[list[str], Path, FakeLLM], "subprocess.CompletedProcess[str]"]

READ_BOTH_PROMPT = "What do hello.txt and bye.txt say?"
READ_BOTH_ANSWER = "They say hello world and bye."
READ_BOTH_FILES = {"hello.txt": "hello world\n", "bye.txt": "bye\n"}


def read_both_script(thinks: bool = True) -> list[Reply]:
    """Two turns: (optional reasoning,) text and two parallel reads, then the answer."""
    return [
        Reply(
            [
                *([thinking("I should read both files.")] if thinks else []),
                text("Let me read them."),
                tool_call("read", {"path": "hello.txt"}),
                tool_call("read", {"path": "bye.txt"}),
            ]
        ),
        Reply([text(READ_BOTH_ANSWER)]),
    ]


def read_one_script(closing_thought: str | None = None) -> list[Reply]:
    """Two turns: reasoning, text and a read of hello.txt, then the answer (after ``closing_thought``)."""
    return [
        Reply(
            [
                thinking("I should read the file first."),
                text("Let me read it."),
                tool_call("read", {"path": "hello.txt"}),
            ]
        ),
        Reply([*([thinking(closing_thought)] if closing_thought else []), text("It says hello world.")]),
    ]


def without_descriptions(value: Any) -> Any:
    """``value`` with every ``description`` key dropped, at any depth."""
    if isinstance(value, dict):
        return {k: without_descriptions(v) for k, v in value.items() if k != "description"}
    if isinstance(value, list):
        return [without_descriptions(v) for v in value]
    return value


def run_in_home(
    argv: list[str],
    root: Path,
    *,
    providers: dict[str, Any],
    args: list[str],
    files: dict[str, str] | None = None,
    env: dict[str, str] | None = None,
    drop_env_prefix: str | None = None,
    auth: dict[str, Any] | None = None,
    settings: dict[str, Any] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` + ``args`` in a fresh home under ``root`` with a project holding ``files``.

    Args:
        argv: the program (real pi or ``python -m pi_tui``).
        root: a directory of its own for this run.
        providers: the ``providers`` table written to the agent's models.json.
        args: command-line arguments after the program.
        files: the project's files, name to text (hello.txt and bye.txt when not given).
        env: variables set on top of the cleaned environment.
        drop_env_prefix: variables starting with this are removed from the inherited environment.
        auth: when given, written to the agent's auth.json (mode 0600).
        settings: when given, written to the agent's settings.json.

    Returns:
        The finished process, output captured as text.
    """
    home = root / "home"
    agent = home / ".pi" / "agent"
    agent.mkdir(parents=True)
    project = root / "project"
    project.mkdir()
    for name, content in (READ_BOTH_FILES if files is None else files).items():
        (project / name).write_text(content)
    (agent / "models.json").write_text(json.dumps({"providers": providers}))
    if settings is not None:
        (agent / "settings.json").write_text(json.dumps(settings))
    if auth is not None:
        auth_file = agent / "auth.json"
        auth_file.write_text(json.dumps(auth))
        auth_file.chmod(0o600)
    run_env = {
        k: v
        for k, v in os.environ.items()
        if k != "PYTEST_CURRENT_TEST"
        and not k.lower().endswith("_proxy")
        and not (drop_env_prefix and k.startswith(drop_env_prefix))
    }
    run_env |= {"HOME": str(home), "PI_CODING_AGENT_DIR": str(agent), "PI_OFFLINE": "1", **(env or {})}
    return subprocess.run(
        [*argv, *args], cwd=project, env=run_env, capture_output=True, text=True, timeout=50
    )


def run_pair(
    pi087: Pi087,
    tmp_path: Path,
    make_fake: Callable[[], FakeLLM],
    script: Callable[[], list[Reply]],
    run: Run,
) -> tuple[FakeLLM, subprocess.CompletedProcess[str], FakeLLM, subprocess.CompletedProcess[str]]:
    """Run real pi and pi-tui, each against its own fake made by ``make_fake`` and playing ``script()``.

    Returns:
        pi's fake and run, then pi-tui's fake and run.
    """
    pi_fake, tui_fake = make_fake(), make_fake()
    pi_fake.script(script())
    tui_fake.script(script())
    with pi_fake.serve(), tui_fake.serve():
        pi_run = run(pi087.argv(), tmp_path / "pi", pi_fake)
        tui_run = run([sys.executable, "-m", "pi_tui"], tmp_path / "tui", tui_fake)
    return pi_fake, pi_run, tui_fake, tui_run
