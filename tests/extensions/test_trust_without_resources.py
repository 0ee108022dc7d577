"""What an extension's ``ctx.is_project_trusted()`` answers, as pi 0.87 does: a project with nothing
that loads only once trusted counts as trusted (unless ``--no-approve`` said otherwise for this run);
a project with such files keeps its real answer, and its files stay unloaded."""

from __future__ import annotations

from pathlib import Path

from .helpers import open_startup, write_extension

_ASKS = "def register(pi):\n    pass\n"


async def _answer(argv: list[str], project: Path, cli: Path) -> bool:
    async with open_startup(["-e", str(cli), *argv], project) as startup:
        runner = startup.session.extensions
        assert runner is not None
        ext = next(e for e in runner.extensions if e.name == "asker")
        return runner.context_for(ext).is_project_trusted()


async def test_a_project_with_nothing_needing_trust_is_trusted(project: Path, tmp_path: Path) -> None:
    cli = write_extension(tmp_path / "cli", "asker", _ASKS)
    (project / "AGENTS.md").write_text("context files need no trust\n")
    assert await _answer([], project, cli) is True


async def test_no_approve_still_says_untrusted_without_resources(project: Path, tmp_path: Path) -> None:
    cli = write_extension(tmp_path / "cli", "asker", _ASKS)
    assert await _answer(["--no-approve"], project, cli) is False


async def test_a_project_with_resources_stays_untrusted_and_unloaded(project: Path, tmp_path: Path) -> None:
    cli = write_extension(tmp_path / "cli", "asker", _ASKS)
    marker = tmp_path / "executed.marker"
    write_extension(
        project / ".pi" / "extensions",
        "local",
        f"from pathlib import Path\nPath({str(marker)!r}).write_text('ran')\ndef register(pi):\n    pass\n",
    )
    assert await _answer([], project, cli) is False
    assert not marker.exists()


async def test_skills_in_a_parent_folder_need_trust_too(project: Path, tmp_path: Path) -> None:
    cli = write_extension(tmp_path / "cli", "asker", _ASKS)
    skills = project.parent / ".agents" / "skills" / "s"
    skills.mkdir(parents=True)
    (skills / "SKILL.md").write_text("---\nname: s\ndescription: d\n---\nbody\n")
    assert await _answer([], project, cli) is False


async def test_files_added_during_the_session_stay_unloaded_after_reload(project: Path, tmp_path: Path) -> None:
    """Being reported as trusted while nothing needed trust loads nothing that appears later."""
    cli = write_extension(tmp_path / "cli", "asker", _ASKS)
    marker = tmp_path / "executed.marker"
    async with open_startup(["-e", str(cli)], project) as startup:
        session = startup.session
        runner = session.extensions
        assert runner is not None
        assert runner.context_for(runner.extensions[0]).is_project_trusted() is True
        write_extension(
            project / ".pi" / "extensions",
            "late",
            f"from pathlib import Path\nPath({str(marker)!r}).write_text('ran')\ndef register(pi):\n    pass\n",
        )
        await session.reload()
        runner = session.extensions
        assert runner is not None
        assert [e.name for e in runner.extensions] == ["asker"]
        assert runner.context_for(runner.extensions[0]).is_project_trusted() is False
    assert not marker.exists()
