from __future__ import annotations

from pathlib import Path

import pytest

from .helpers import commit, git, head, make_repo, run_cli, settings_packages

FILES = {"extensions/hello.py": "def register(pi):\n    pass\n", "VERSION": "1\n"}


@pytest.fixture
def origin(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "origin" / "hello", FILES)


def _clone_dir(agent_dir: Path, origin: Path) -> Path:
    return agent_dir / "git" / "local" / str(origin.resolve()).lstrip("/")


def test_install_clones_under_the_git_folder_and_records_the_source(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    agent_dir: Path,
    project: Path,
    origin: Path,
) -> None:
    assert run_cli(monkeypatch, project, "install", f"git:{origin}") == 0
    clone = _clone_dir(agent_dir, origin)
    assert capsys.readouterr().out.strip() == f"Installed git:{origin}"
    assert head(clone) == head(origin)
    assert (clone / "extensions" / "hello.py").is_file()
    assert settings_packages(agent_dir / "settings.json") == [f"git:{origin.resolve()}"]
    assert not [p for p in clone.parent.iterdir() if p.name.startswith(".")]  # no temporary clone left


def test_update_follows_new_commits_on_the_default_branch(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    agent_dir: Path,
    project: Path,
    origin: Path,
) -> None:
    run_cli(monkeypatch, project, "install", f"file://{origin}")
    clone = _clone_dir(agent_dir, origin)
    commit(origin, {"VERSION": "2\n"}, "second")
    newest = commit(origin, {"VERSION": "3\n", "extensions/more.py": ""}, "third")

    assert run_cli(monkeypatch, project, "update") == 0
    assert head(clone) == newest
    assert (clone / "VERSION").read_text() == "3\n"
    assert f"Updated file://{origin} (user): " in capsys.readouterr().out

    assert run_cli(monkeypatch, project, "update", f"git:{origin}") == 0  # the same package, another form
    assert capsys.readouterr().out.strip() == f"file://{origin} (user) is up to date"


def test_update_recovers_from_rewritten_history_and_a_missing_origin_head(
    monkeypatch: pytest.MonkeyPatch, agent_dir: Path, project: Path, origin: Path
) -> None:
    commit(origin, {"VERSION": "2\n"}, "second")
    run_cli(monkeypatch, project, "install", f"git:{origin}")
    clone = _clone_dir(agent_dir, origin)
    git(origin, "reset", "--quiet", "--hard", "HEAD~1")
    rewritten = commit(origin, {"VERSION": "rewritten\n"}, "force-pushed")
    git(clone, "remote", "set-head", "origin", "--delete")

    assert run_cli(monkeypatch, project, "update") == 0
    assert head(clone) == rewritten
    assert (clone / "VERSION").read_text() == "rewritten\n"


def test_a_pinned_ref_is_checked_out_and_never_updated(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    agent_dir: Path,
    project: Path,
    origin: Path,
) -> None:
    git(origin, "tag", "v1")
    tagged = head(origin)
    commit(origin, {"VERSION": "2\n"}, "after the tag")
    assert run_cli(monkeypatch, project, "install", f"git:{origin}@v1") == 0
    clone = _clone_dir(agent_dir, origin)
    assert head(clone) == tagged
    commit(origin, {"VERSION": "3\n"}, "later still")

    assert run_cli(monkeypatch, project, "update") == 0
    assert head(clone) == tagged
    assert f"Skipped git:{origin.resolve()}@v1 (user): pinned to v1" in capsys.readouterr().out


def test_installing_another_ref_moves_the_clone_and_replaces_the_entry(
    monkeypatch: pytest.MonkeyPatch, agent_dir: Path, project: Path, origin: Path
) -> None:
    first = head(origin)
    git(origin, "tag", "v1")
    second = commit(origin, {"VERSION": "2\n"}, "second")
    git(origin, "tag", "v2")
    run_cli(monkeypatch, project, "install", f"git:{origin}@v1")
    clone = _clone_dir(agent_dir, origin)
    assert head(clone) == first

    assert run_cli(monkeypatch, project, "install", f"git:{origin}@v2") == 0
    assert head(clone) == second
    assert settings_packages(agent_dir / "settings.json") == [f"git:{origin.resolve()}@v2"]


def test_a_branch_other_than_main_is_the_default_that_update_follows(
    monkeypatch: pytest.MonkeyPatch, agent_dir: Path, project: Path, tmp_path: Path
) -> None:
    origin = make_repo(tmp_path / "trunk-repo", FILES, branch="trunk")
    run_cli(monkeypatch, project, "install", f"git:{origin}")
    newest = commit(origin, {"VERSION": "2\n"}, "second")
    assert run_cli(monkeypatch, project, "update") == 0
    assert head(_clone_dir(agent_dir, origin)) == newest


def test_an_unknown_ref_fails_and_leaves_nothing_behind(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    agent_dir: Path,
    project: Path,
    origin: Path,
) -> None:
    assert run_cli(monkeypatch, project, "install", f"git:{origin}@no-such-tag") == 1
    assert 'Ref "no-such-tag" was not found' in capsys.readouterr().err
    assert not _clone_dir(agent_dir, origin).exists()
    assert not [p for p in _clone_dir(agent_dir, origin).parent.iterdir()]
    assert settings_packages(agent_dir / "settings.json") == []


def test_remove_deletes_the_clone_and_its_empty_parent_folders(
    monkeypatch: pytest.MonkeyPatch, agent_dir: Path, project: Path, origin: Path
) -> None:
    run_cli(monkeypatch, project, "install", f"git:{origin}")
    assert _clone_dir(agent_dir, origin).is_dir()
    assert run_cli(monkeypatch, project, "remove", f"file://{origin}") == 0
    assert settings_packages(agent_dir / "settings.json") == []
    assert not (agent_dir / "git" / "local").exists()
    assert origin.is_dir()


def test_project_scope_clones_under_the_projects_pi_folder(
    monkeypatch: pytest.MonkeyPatch, agent_dir: Path, project: Path, origin: Path
) -> None:
    assert run_cli(monkeypatch, project, "install", f"git:{origin}", "-l") == 0
    clone = project / ".pi" / "git" / "local" / str(origin.resolve()).lstrip("/")
    assert (clone / "extensions" / "hello.py").is_file()
    assert settings_packages(project / ".pi" / "settings.json") == [f"git:{origin.resolve()}"]
    assert not (agent_dir / "git").exists()
    assert run_cli(monkeypatch, project, "remove", f"git:{origin}") == 1  # not a user package
    assert run_cli(monkeypatch, project, "remove", f"git:{origin}", "-l") == 0
    assert not clone.exists()


def test_update_of_an_unlisted_source_exits_1(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], project: Path, origin: Path
) -> None:
    assert run_cli(monkeypatch, project, "update", f"git:{origin}") == 1
    assert f"No matching package found for git:{origin}" in capsys.readouterr().err


def test_update_skips_an_untrusted_projects_packages_unless_named(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], project: Path, origin: Path
) -> None:
    run_cli(monkeypatch, project, "install", f"git:{origin}", "-l")
    clone = project / ".pi" / "git" / "local" / str(origin.resolve()).lstrip("/")
    newest = commit(origin, {"VERSION": "2\n"}, "second")
    capsys.readouterr()

    assert run_cli(monkeypatch, project, "update") == 0
    assert "the project is not trusted" in capsys.readouterr().out
    assert head(clone) != newest
    assert run_cli(monkeypatch, project, "update", f"git:{origin}") == 0
    assert head(clone) == newest
