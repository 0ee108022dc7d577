from __future__ import annotations

import json
from pathlib import Path

import pytest

from .helpers import make_package, run_cli, settings_packages, trust


@pytest.fixture
def local_pkg(tmp_path: Path) -> Path:
    return make_package(tmp_path / "work" / "pkg", {"extensions/hello.py": "def register(pi):\n    pass\n"})


def test_install_of_a_relative_local_path_stores_it_relative_to_the_settings_file(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    agent_dir: Path,
    project: Path,
    local_pkg: Path,
) -> None:
    assert run_cli(monkeypatch, project, "install", "../work/pkg") == 0
    assert capsys.readouterr().out.strip() == "Installed ../work/pkg"
    stored = settings_packages(agent_dir / "settings.json")
    assert len(stored) == 1
    assert (agent_dir / stored[0]).resolve() == local_pkg.resolve()
    assert not (agent_dir / "git").exists() and not (agent_dir / "pypi").exists()  # used in place


def test_install_with_l_writes_the_project_settings_relative_to_its_folder(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    agent_dir: Path,
    project: Path,
    local_pkg: Path,
) -> None:
    assert run_cli(monkeypatch, project, "install", str(local_pkg.parent / "pkg"), "-l") == 0
    assert run_cli(monkeypatch, project, "install", "./vendored", "--local") == 1  # missing folder
    out, err = capsys.readouterr()
    assert "Installed" in out and "not trusted" in out
    assert "Local package" in err and "does not exist" in err
    assert settings_packages(project / ".pi" / "settings.json") == [str(local_pkg)]
    assert settings_packages(agent_dir / "settings.json") == []

    make_package(project / "vendored", {"prompts/x.md": "x"})
    assert run_cli(monkeypatch, project, "install", "./vendored", "-l") == 0
    assert settings_packages(project / ".pi" / "settings.json") == [str(local_pkg), "../vendored"]


def test_installing_the_same_package_again_replaces_its_entry_and_keeps_filters(
    monkeypatch: pytest.MonkeyPatch, agent_dir: Path, project: Path, local_pkg: Path
) -> None:
    (agent_dir / "settings.json").write_text(
        json.dumps({"packages": [{"source": str(local_pkg), "skills": []}], "theme": "dark"})
    )
    assert run_cli(monkeypatch, project, "install", f"{local_pkg}/") == 0
    data = json.loads((agent_dir / "settings.json").read_text())
    assert data["packages"] == [{"source": str(local_pkg), "skills": []}]
    assert data["theme"] == "dark"


def test_remove_matches_by_identity_even_with_a_trailing_slash_and_keeps_the_folder(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    agent_dir: Path,
    project: Path,
    local_pkg: Path,
) -> None:
    run_cli(monkeypatch, project, "install", "../work/pkg")
    assert run_cli(monkeypatch, project, "remove", f"{local_pkg}/") == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"Removed {local_pkg}/"
    assert settings_packages(agent_dir / "settings.json") == []
    assert local_pkg.is_dir()


def test_remove_of_an_unlisted_package_exits_1(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], project: Path, local_pkg: Path
) -> None:
    run_cli(monkeypatch, project, "install", str(local_pkg))
    assert run_cli(monkeypatch, project, "uninstall", str(local_pkg), "-l") == 1  # listed globally, not here
    assert run_cli(monkeypatch, project, "remove", "pypi:nothing") == 1
    err = capsys.readouterr().err
    assert f"No matching package found for {local_pkg}" in err
    assert "No matching package found for pypi:nothing" in err


def test_list_shows_user_and_project_packages_with_their_paths(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    agent_dir: Path,
    project: Path,
    local_pkg: Path,
) -> None:
    assert run_cli(monkeypatch, project, "list") == 0
    assert capsys.readouterr().out == "No packages installed.\n"
    (agent_dir / "settings.json").write_text(
        json.dumps({"packages": [str(local_pkg), {"source": "git:github.com/u/r@v1", "skills": []}]})
    )
    (project / ".pi").mkdir()
    (project / ".pi" / "settings.json").write_text(json.dumps({"packages": ["pypi:pi-thing"]}))
    trust(agent_dir, project)

    assert run_cli(monkeypatch, project, "list") == 0
    assert capsys.readouterr().out.splitlines() == [
        "User packages:",
        f"  {local_pkg}",
        f"    {local_pkg}",
        "  git:github.com/u/r@v1 (filtered)",
        f"    {agent_dir / 'git' / 'github.com' / 'u' / 'r'} (not installed)",
        "",
        "Project packages:",
        "  pypi:pi-thing",
        f"    {project / '.pi' / 'pypi' / 'pi-thing'} (not installed)",
    ]


@pytest.mark.parametrize("command", ["install", "remove", "uninstall", "update", "list"])
def test_each_command_has_help(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], project: Path, command: str
) -> None:
    assert run_cli(monkeypatch, project, command, "--help") == 0
    out = capsys.readouterr().out
    assert out.startswith("Usage:\n")
    assert f"pi-tui {'remove' if command == 'uninstall' else command}" in out


def test_an_unknown_option_names_itself_and_the_command(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], project: Path
) -> None:
    assert run_cli(monkeypatch, project, "install", "--force", "pypi:x") == 1
    assert run_cli(monkeypatch, project, "update", "-l") == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0] == 'Unknown option --force for "install"'
    assert err[1].startswith("Usage: pi-tui install <source> [-l]")
    assert err[2] == 'Unknown option -l for "update"'


def test_a_missing_source_exits_1_with_the_usage(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], agent_dir: Path, project: Path
) -> None:
    assert run_cli(monkeypatch, project, "install") == 1
    assert run_cli(monkeypatch, project, "remove", "-l") == 1
    assert capsys.readouterr().err.splitlines() == [
        'Missing source for "install"',
        "Usage: pi-tui install <source> [-l]",
        'Missing source for "remove"',
        "Usage: pi-tui remove <source> [-l]",
    ]
    assert not (agent_dir / "settings.json").exists()


def test_offline_refuses_network_installs_before_touching_anything(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], agent_dir: Path, project: Path
) -> None:
    assert run_cli(monkeypatch, project, "install", "git:github.com/u/r", "--offline") == 1
    monkeypatch.setenv("PI_OFFLINE", "1")
    assert run_cli(monkeypatch, project, "install", "pypi:something") == 1
    err = capsys.readouterr().err
    assert "Cannot install git:github.com/u/r while offline" in err
    assert "Cannot install pypi:something while offline" in err
    assert settings_packages(agent_dir / "settings.json") == []
    assert not (agent_dir / "git").exists()


def test_update_takes_pis_package_spellings_and_explains_self_update(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], project: Path
) -> None:
    assert run_cli(monkeypatch, project, "update", "--extensions") == 0
    assert capsys.readouterr().out.strip() == "No packages to update."
    assert run_cli(monkeypatch, project, "update", "--extension", "pypi:nothing-installed") == 1
    assert "pi-tui update does not" not in capsys.readouterr().err  # taken as a package source
    for target in (["self"], ["--self"], ["pi"], ["--all"], ["--models"]):
        assert run_cli(monkeypatch, project, "update", *target) == 1
        err = capsys.readouterr().err
        assert err.startswith("pi-tui update does not update "), (target, err)
        assert 'Update every package with "pi-tui update"' in err
