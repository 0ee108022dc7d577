from __future__ import annotations

import subprocess
from pathlib import Path

from pi_tui.testing import FakeLLM, Reply, text, tool_call

from .helpers import MODEL, ext, model_requests, open_session, panel_index, panel_text, prompt_index


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=T", "-c", "user.email=t@example.com", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def make_repo(path: Path) -> None:
    git(path, "init", "-q", "-b", "main")
    (path / "app.py").write_text("print('hi')\n")
    git(path, "add", "app.py")
    git(path, "commit", "-q", "-m", "first commit")


async def test_the_panel_shows_branch_changes_and_commits_and_follows_bash_and_write(
    fake: FakeLLM, project: Path
) -> None:
    make_repo(project)
    fake.script(
        [
            Reply([tool_call("bash", {"command": "echo more >> app.py"})]),
            Reply([tool_call("write", {"path": "notes.txt", "content": "n"})]),
            Reply([text("done")]),
        ]
    )
    async with open_session(ext("git_status"), project, model=MODEL) as session:
        await session.prompt("change things")

    first, second, third = (panel_text(r, "Git status") for r in model_requests(fake))
    assert first is not None and second is not None and third is not None
    assert first.splitlines()[:2] == ["## main", "(working tree clean)"]
    assert first.splitlines()[-2:] == ["Recent commits:", first.splitlines()[-1]]
    assert first.splitlines()[-1].endswith(" first commit")
    assert second.splitlines()[:2] == ["## main", " M app.py"]
    assert third.splitlines()[:3] == ["## main", " M app.py", "?? notes.txt"]
    last = model_requests(fake)[-1]
    assert panel_index(last, "Git status") > prompt_index(last, "change things")


async def test_outside_a_repository_the_panel_says_so(fake: FakeLLM, project: Path) -> None:
    fake.script([Reply([text("ok")])])
    async with open_session(ext("git_status"), project, model=MODEL) as session:
        await session.prompt("hello")

    assert panel_text(model_requests(fake)[0], "Git status") == "(not a git repository)"


async def test_a_change_made_between_prompts_shows_at_the_next_prompt(fake: FakeLLM, project: Path) -> None:
    make_repo(project)
    fake.script([Reply([text("one")]), Reply([text("two")])])
    async with open_session(ext("git_status"), project, model=MODEL) as session:
        await session.prompt("first")
        git(project, "checkout", "-q", "-b", "feature")
        await session.prompt("second")

    first, second = (panel_text(r, "Git status") for r in model_requests(fake))
    assert first is not None and first.startswith("## main\n")
    assert second is not None and second.startswith("## feature\n")


async def test_placement_prefix_from_the_flag(fake: FakeLLM, project: Path) -> None:
    make_repo(project)
    fake.script([Reply([text("ok")])])
    async with open_session(
        [*ext("git_status"), "--git-status-placement", "prefix"], project, model=MODEL
    ) as s:
        await s.prompt("hello")

    request = model_requests(fake)[0]
    assert panel_index(request, "Git status") < prompt_index(request, "hello")
