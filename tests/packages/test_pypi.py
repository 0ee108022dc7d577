from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_tui.packages.pip_ops import pip_command
from tests.extensions.helpers import open_startup

from .helpers import build_wheel, make_repo, run_cli, settings_packages

EXTENSION = """
import shoutdep
from pi_shout import VERSION

def register(pi):
    pi.on("input", lambda event, ctx: {"action": "transform", "text": shoutdep.loud(event.text)})
"""


@pytest.fixture
def index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder of wheels that pip uses instead of PyPI (no network)."""
    wheels = tmp_path / "wheels"
    build_wheel(
        wheels, "shoutdep", "1.0", {"shoutdep/__init__.py": "def loud(text):\n    return text.upper()\n"}
    )
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheels))
    return wheels


def _pi_shout(wheels: Path, version: str) -> None:
    build_wheel(
        wheels,
        "pi-shout",
        version,
        {
            "pi_shout/__init__.py": f"VERSION = {version!r}\n",
            "pi_shout/pi-package.json": json.dumps({"extensions": ["ext.py"]}),
            "pi_shout/ext.py": EXTENSION,
        },
        requires=["shoutdep"],
    )


def test_pip_runs_with_this_interpreter_into_a_target_folder(tmp_path: Path) -> None:
    command = pip_command(["pi-shout==1.0"], tmp_path / "t")
    assert command[1:5] == ["-m", "pip", "install", "--target"]
    assert command[5] == str(tmp_path / "t") and command[-1] == "pi-shout==1.0"
    import sys

    assert command[0] == sys.executable


async def test_a_pypi_package_installs_into_its_own_folder_and_its_extension_runs(
    monkeypatch: pytest.MonkeyPatch, agent_dir: Path, project: Path, index: Path
) -> None:
    _pi_shout(index, "1.0")
    assert run_cli(monkeypatch, project, "install", "pypi:pi_shout") == 0
    target = agent_dir / "pypi" / "pi-shout"
    assert (target / "pi_shout" / "ext.py").is_file()
    assert (target / "shoutdep" / "__init__.py").is_file()  # its dependency, beside it, not in our venv
    assert settings_packages(agent_dir / "settings.json") == ["pypi:pi_shout"]

    async with open_startup([], project) as startup:
        (ext,) = startup.session.extensions.extensions
        assert ext.module.VERSION == "1.0"
        assert ext.source.scope == "package"
        assert not startup.warnings

    _pi_shout(index, "2.0")
    assert run_cli(monkeypatch, project, "update") == 0
    assert "VERSION = '2.0'" in (target / "pi_shout" / "__init__.py").read_text()
    assert not [p for p in target.parent.iterdir() if p.name.startswith(".")]  # no temporary folder left


def test_a_pinned_pypi_package_is_not_updated_and_a_failed_install_changes_nothing(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    agent_dir: Path,
    project: Path,
    index: Path,
) -> None:
    _pi_shout(index, "1.0")
    assert run_cli(monkeypatch, project, "install", "pypi:pi-shout==1.0", "-l") == 0
    target = project / ".pi" / "pypi" / "pi-shout"
    _pi_shout(index, "2.0")
    assert run_cli(monkeypatch, project, "update", "pypi:pi-shout") == 0
    assert "pinned to pi-shout==1.0" in capsys.readouterr().out
    assert "'1.0'" in (target / "pi_shout" / "__init__.py").read_text()

    assert run_cli(monkeypatch, project, "install", "pypi:pi-shout==9.9", "-l") == 1
    assert "pip could not install pypi:pi-shout==9.9" in capsys.readouterr().err
    assert "'1.0'" in (target / "pi_shout" / "__init__.py").read_text()
    assert settings_packages(project / ".pi" / "settings.json") == ["pypi:pi-shout==1.0"]


async def test_a_git_packages_requirements_go_to_its_deps_folder(
    monkeypatch: pytest.MonkeyPatch, agent_dir: Path, project: Path, tmp_path: Path, index: Path
) -> None:
    origin = make_repo(
        tmp_path / "loud",
        {
            "requirements.txt": "shoutdep\n",
            "extensions/loud.py": "import shoutdep\nRESULT = shoutdep.loud('x')\ndef register(pi):\n    pass\n",
        },
    )
    assert run_cli(monkeypatch, project, "install", f"git:{origin}") == 0
    clone = agent_dir / "git" / "local" / str(origin.resolve()).lstrip("/")
    assert (clone / ".deps" / "shoutdep" / "__init__.py").is_file()

    async with open_startup([], project) as startup:
        (ext,) = startup.session.extensions.extensions
        assert ext.module.RESULT == "X"
