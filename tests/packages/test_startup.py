from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_tui.testing import FakeLLM, Reply, text
from tests.extensions.helpers import MODEL, model_requests, open_session, open_startup

from .helpers import SHOUT_EXTENSION, make_package, make_repo, recorder, run_cli, trust

SKILL = "---\nname: {name}\ndescription: The {name} skill.\n---\nDo {name} things.\n"


def _write_settings(path: Path, data: dict[str, object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    current = json.loads(path.read_text()) if path.exists() else {}
    path.write_text(json.dumps({**current, **data}))


def _loaded(startup: object) -> list[tuple[str, str]]:
    runner = startup.session.extensions  # type: ignore[attr-defined]
    return [(ext.name, ext.source.scope) for ext in runner.extensions] if runner is not None else []


async def test_a_git_packages_extension_loads_and_runs_in_a_session(
    monkeypatch: pytest.MonkeyPatch, fake: FakeLLM, project: Path, tmp_path: Path
) -> None:
    origin = make_repo(tmp_path / "shout-pkg", {"extensions/shout.py": SHOUT_EXTENSION})
    assert run_cli(monkeypatch, project, "install", f"git:{origin}") == 0
    fake.script([Reply([text("ok")])])

    async with open_startup([], project, model=MODEL) as startup:
        await startup.session.prompt("shout quietly")
        loaded = _loaded(startup)

    assert loaded == [("shout", "package")]
    assert model_requests(fake)[0].last_user_text() == "QUIETLY"


async def test_project_packages_are_installed_and_loaded_only_once_the_project_is_trusted(
    agent_dir: Path, project: Path, tmp_path: Path
) -> None:
    origin = make_repo(tmp_path / "team-pkg", {"extensions/team.py": "def register(pi):\n    pass\n"})
    _write_settings(project / ".pi" / "settings.json", {"packages": [f"git:{origin}"]})
    clone = project / ".pi" / "git" / "local" / str(origin.resolve()).lstrip("/")

    async with open_startup([], project) as startup:
        assert _loaded(startup) == []
        assert startup.packages.installed == []
    assert not clone.exists()

    trust(agent_dir, project)
    async with open_startup([], project) as startup:
        assert _loaded(startup) == [("team", "package")]
        assert startup.packages.installed == [f"Installed git:{origin} (project package)"]
    assert (clone / "extensions" / "team.py").is_file()

    async with open_startup([], project) as startup:  # already there: nothing to install
        assert startup.packages.installed == []
        assert _loaded(startup) == [("team", "package")]


async def test_the_same_package_in_both_scopes_loads_once_with_the_project_entry(
    agent_dir: Path, project: Path, tmp_path: Path
) -> None:
    order = tmp_path / "order.txt"
    pkg = make_package(
        tmp_path / "shared",
        {
            "extensions/a.py": recorder(order, "a"),
            "extensions/b.py": recorder(order, "b"),
            "skills/review/SKILL.md": SKILL.format(name="review"),
        },
    )
    trust(agent_dir, project)
    _write_settings(agent_dir / "settings.json", {"packages": [{"source": str(pkg), "skills": []}]})
    _write_settings(
        project / ".pi" / "settings.json",
        {"packages": [{"source": "../../shared", "extensions": ["extensions/b.py"]}]},
    )

    async with open_startup([], project) as startup:
        skills = [skill.name for skill in startup.session.resources.skills]
        packages = startup.packages.packages

    assert order.read_text().split() == ["b"]
    assert [p.entry.scope for p in packages] == ["project"]
    assert skills == ["review"]  # the user entry's "skills": [] does not apply: the project entry won


async def test_package_extensions_load_after_auto_discovery_and_before_settings_and_cli(
    agent_dir: Path, project: Path, tmp_path: Path
) -> None:
    order = tmp_path / "order.txt"
    trust(agent_dir, project)
    make_package(project / ".pi" / "extensions", {"p_auto.py": recorder(order, "p_auto")})
    make_package(agent_dir / "extensions", {"g_auto.py": recorder(order, "g_auto")})
    user_pkg = make_package(tmp_path / "user-pkg", {"extensions/u_pkg.py": recorder(order, "u_pkg")})
    project_pkg = make_package(tmp_path / "project-pkg", {"extensions/p_pkg.py": recorder(order, "p_pkg")})
    listed = make_package(tmp_path / "listed", {"from_settings.py": recorder(order, "from_settings")})
    cli = make_package(tmp_path / "cli", {"from_cli.py": recorder(order, "from_cli")})
    _write_settings(
        agent_dir / "settings.json",
        {"packages": [str(user_pkg)], "extensions": [str(listed / "from_settings.py")]},
    )
    _write_settings(project / ".pi" / "settings.json", {"packages": [str(project_pkg)]})

    async with open_startup(["-e", str(cli / "from_cli.py")], project):
        pass

    assert order.read_text().split() == ["p_auto", "g_auto", "p_pkg", "u_pkg", "from_settings", "from_cli"]


async def test_no_extensions_leaves_package_extensions_out_but_keeps_their_skills(
    agent_dir: Path, project: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "ran.txt"
    pkg = make_package(
        tmp_path / "pkg",
        {"extensions/x.py": recorder(marker, "x"), "skills/tidy/SKILL.md": SKILL.format(name="tidy")},
    )
    _write_settings(agent_dir / "settings.json", {"packages": [str(pkg)]})

    async with open_startup(["--no-extensions"], project) as startup:
        skills = [skill.name for skill in startup.session.resources.skills]
    assert skills == ["tidy"]
    assert not marker.exists()

    async with open_startup(["--no-skills"], project) as startup:
        assert startup.session.resources.skills == []
    assert marker.read_text().split() == ["x"]


async def test_package_skills_prompts_and_themes_reach_the_session(
    agent_dir: Path, project: Path, tmp_path: Path
) -> None:
    pkg = make_package(
        tmp_path / "pkg",
        {
            "pi-package.json": json.dumps(
                {"skills": ["docs/skills"], "prompts": ["docs/prompts/review.md"], "themes": ["look"]}
            ),
            "docs/skills/lint/SKILL.md": SKILL.format(name="lint"),
            "docs/prompts/review.md": "---\ndescription: Review the change\n---\nReview $1 carefully.\n",
            "docs/prompts/unlisted.md": "Not listed.\n",
            "look/night.json": "{}",
        },
    )
    _write_settings(agent_dir / "settings.json", {"packages": [str(pkg)]})

    async with open_session([], project) as session:
        skills = [skill.name for skill in session.resources.skills]
        templates = [template.name for template in session.resources.templates]
        prompt = session.system_prompt()
    async with open_startup([], project) as startup:
        themes = startup.packages.theme_paths

    assert skills == ["lint"]
    assert templates == ["review"]
    assert "lint" in prompt
    assert themes == [pkg / "look" / "night.json"]


async def test_a_package_that_cannot_be_installed_is_a_warning_not_a_failure(
    agent_dir: Path, project: Path, tmp_path: Path
) -> None:
    _write_settings(
        agent_dir / "settings.json",
        {"packages": [f"git:{tmp_path / 'no-such-repo'}", str(tmp_path / "gone"), "git:github.com/u/r"]},
    )

    async with open_startup(["--offline"], project) as startup:
        warnings = startup.warnings
        assert _loaded(startup) == []

    assert any(
        f"git:{tmp_path / 'no-such-repo'} (user package) is not available: git clone failed" in w
        for w in warnings
    )
    assert any("does not exist" in w for w in warnings)
    assert any("Cannot install git:github.com/u/r while offline" in w for w in warnings)


async def test_a_package_extension_imports_its_dependencies_from_deps(
    agent_dir: Path, project: Path, tmp_path: Path
) -> None:
    pkg = make_package(
        tmp_path / "pkg",
        {
            ".deps/pkg_helper_dep/__init__.py": "GREETING = 'hello from .deps'\n",
            "extensions/uses_dep.py": (
                "import pkg_helper_dep\nSEEN = pkg_helper_dep.GREETING\ndef register(pi):\n    pass\n"
            ),
        },
    )
    _write_settings(agent_dir / "settings.json", {"packages": [str(pkg)]})

    async with open_startup([], project) as startup:
        (ext,) = startup.session.extensions.extensions
        assert ext.module.SEEN == "hello from .deps"
        assert not startup.warnings
