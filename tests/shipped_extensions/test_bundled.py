from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from pi_tui.extensions.discovery import bundled_extension, bundled_extensions_dir, discover_extensions

from .helpers import open_startup, write_settings

REPO = Path(__file__).resolve().parents[2]
BUNDLED = [
    "git_status",
    "permission_gate",
    "pinned_files",
    "plan_mode",
    "protected_paths",
    "secret_redactor",
    "todo",
]


def test_the_bundled_folder_of_a_checkout_holds_every_shipped_extension() -> None:
    folder = bundled_extensions_dir()
    assert folder == REPO / "extensions"
    assert [bundled_extension(name) for name in BUNDLED] == [folder / f"{name}.py" for name in BUNDLED]
    assert bundled_extension("mcp") == folder / "mcp"  # a package extension (a folder with __init__.py)
    assert bundled_extension("_shell") is None  # helpers are not extensions
    assert bundled_extension("../pi_tui") is None


def test_a_bare_cli_name_is_a_bundled_extension_unless_a_path_by_that_name_exists(
    tmp_path: Path, agent_dir: Path
) -> None:
    found = discover_extensions(tmp_path, agent_dir, cli_paths=["permission_gate", "bundled:todo"])
    assert [(s.path, s.scope) for s in found.sources] == [
        (REPO / "extensions" / "permission_gate.py", "cli"),
        (REPO / "extensions" / "todo.py", "cli"),
    ]
    local = tmp_path / "todo"
    local.mkdir()
    (local / "__init__.py").write_text("def register(pi):\n    pass\n")
    assert [s.path for s in discover_extensions(tmp_path, agent_dir, cli_paths=["todo"]).sources] == [local]


def test_an_unknown_bundled_name_is_reported_with_the_names_that_exist(
    tmp_path: Path, agent_dir: Path
) -> None:
    found = discover_extensions(tmp_path, agent_dir, cli_paths=["permision_gate"])
    assert found.sources == []
    assert found.errors == [
        'Failed to load extension "permision_gate": no bundled extension "permision_gate" '
        f"(bundled: {', '.join(sorted([*BUNDLED, 'mcp']))})"
    ]


async def test_settings_enable_bundled_extensions_by_name(tmp_path: Path, agent_dir: Path) -> None:
    write_settings(
        agent_dir,
        {"extensions": ["bundled:todo", "bundled:git_status", "!bundled:git_status", "bundled:nope"]},
    )
    async with open_startup([], tmp_path) as startup:
        names = [e.name for e in startup.session.extensions.extensions]
        tools = list(startup.session.tools)

    assert names == ["todo"]
    assert "todo" in tools
    assert any('bundled:nope from settings: no bundled extension "nope"' in w for w in startup.warnings)


def test_the_wheel_maps_the_extensions_folder_to_pi_tui_bundled_extensions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(REPO)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # setuptools' notes about its own configuration
        from distutils.core import run_setup

        dist = run_setup("setup.py", stop_after="config")
        build_py = dist.get_command_obj("build_py")
        build_py.ensure_finalized()
        modules = build_py.find_all_modules()

    assert dist.package_dir["pi_tui.bundled_extensions"] == "extensions"
    shipped = sorted(module for package, module, _ in modules if package == "pi_tui.bundled_extensions")
    expected = sorted(p.stem for p in (REPO / "extensions").glob("*.py"))
    assert shipped == expected and set(BUNDLED) <= set(shipped)
    assert {"pi_tui", "pi_tui.extensions", "pi_tui.context"} <= set(dist.packages)
    package = sorted(module for package, module, _ in modules if package == "pi_tui.bundled_extensions.mcp")
    assert {"__init__", "config", "servers", "proxy", "commands"} <= set(package)  # the rest still ships
