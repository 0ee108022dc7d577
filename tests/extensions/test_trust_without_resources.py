"""What an extension's ``ctx.is_project_trusted()`` and ``ctx.project_trust()`` answer, as pi 0.87 reports
it: a project with nothing that loads only once trusted counts as trusted (unless ``--no-approve``); an
extension names the project files it reads only once trusted with ``pi.register_trust_requiring_files``,
and then a project holding one is untrusted. Reporting never loads anything."""

from __future__ import annotations

from pathlib import Path

from pi_tui.extensions.context import ExtensionContext
from pi_tui.resources.trust_store import TrustState

from .helpers import open_startup, trust, write_extension

_PLAIN = "def register(pi):\n    pass\n"
_NAMES_ITS_FILE = "def register(pi):\n    pi.register_trust_requiring_files('.tool/config.toml')\n"


async def _ask(argv: list[str], project: Path, cli: Path) -> tuple[bool, TrustState]:
    async with open_startup(["-e", str(cli), *argv], project) as startup:
        ctx = _ctx(startup.session)
        return ctx.is_project_trusted(), ctx.project_trust()


def _ctx(session: object) -> ExtensionContext:
    runner = session.extensions  # type: ignore[attr-defined]
    assert runner is not None
    ext = next(e for e in runner.extensions if e.name == "asker")
    return runner.context_for(ext)


async def test_a_project_with_nothing_needing_trust_is_reported_trusted(project: Path, tmp_path: Path) -> None:
    cli = write_extension(tmp_path / "cli", "asker", _PLAIN)
    (project / "AGENTS.md").write_text("context files need no trust\n")
    assert await _ask([], project, cli) == (True, TrustState.NOTHING_TO_TRUST)


async def test_no_approve_says_untrusted_without_such_files(project: Path, tmp_path: Path) -> None:
    cli = write_extension(tmp_path / "cli", "asker", _PLAIN)
    assert await _ask(["--no-approve"], project, cli) == (False, TrustState.UNTRUSTED)


async def test_a_trusted_project_is_trusted_by_decision(project: Path, tmp_path: Path, agent_dir: Path) -> None:
    cli = write_extension(tmp_path / "cli", "asker", _PLAIN)
    (project / ".pi").mkdir()
    (project / ".pi" / "settings.json").write_text("{}\n")
    trust(agent_dir, project)
    assert await _ask([], project, cli) == (True, TrustState.TRUSTED)


async def test_a_project_with_pi_files_stays_untrusted_and_unloaded(project: Path, tmp_path: Path) -> None:
    cli = write_extension(tmp_path / "cli", "asker", _PLAIN)
    marker = tmp_path / "executed.marker"
    write_extension(
        project / ".pi" / "extensions",
        "local",
        f"from pathlib import Path\nPath({str(marker)!r}).write_text('ran')\ndef register(pi):\n    pass\n",
    )
    assert await _ask([], project, cli) == (False, TrustState.UNTRUSTED)
    assert not marker.exists()


async def test_a_file_an_extension_names_makes_the_project_untrusted(project: Path, tmp_path: Path) -> None:
    cli = write_extension(tmp_path / "cli", "asker", _NAMES_ITS_FILE)
    assert await _ask([], project, cli) == (True, TrustState.NOTHING_TO_TRUST)
    (project / ".tool").mkdir()
    (project / ".tool" / "config.toml").write_text("run = 'x'\n")
    assert await _ask([], project, cli) == (False, TrustState.UNTRUSTED)
    plain = write_extension(tmp_path / "plain", "asker", _PLAIN)
    assert await _ask([], project, plain) == (True, TrustState.NOTHING_TO_TRUST)  # nobody reads it


async def test_a_path_outside_the_project_is_refused(project: Path, tmp_path: Path) -> None:
    bad = "def register(pi):\n    pi.register_trust_requiring_files('../elsewhere.json')\n"
    cli = write_extension(tmp_path / "cli", "asker", bad)
    async with open_startup(["-e", str(cli)], project) as startup:
        assert any("must be a path inside the project" in w for w in startup.warnings)


async def test_files_added_during_the_session_stay_unloaded_after_reload(project: Path, tmp_path: Path) -> None:
    """Being reported trusted while nothing needed trust loads nothing that appears later (pi would
    load it on /reload and save the project as trusted; pi-tui waits for the user's decision)."""
    cli = write_extension(tmp_path / "cli", "asker", _PLAIN)
    marker = tmp_path / "executed.marker"
    async with open_startup(["-e", str(cli)], project) as startup:
        session = startup.session
        assert _ctx(session).is_project_trusted() is True
        write_extension(
            project / ".pi" / "extensions",
            "late",
            f"from pathlib import Path\nPath({str(marker)!r}).write_text('ran')\ndef register(pi):\n    pass\n",
        )
        await session.reload()
        runner = session.extensions
        assert runner is not None
        assert [e.name for e in runner.extensions] == ["asker"]
        assert _ctx(session).is_project_trusted() is False
    assert not marker.exists()
