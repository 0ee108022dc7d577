from __future__ import annotations

import json
from pathlib import Path

from pi_tui.testing import FakeLLM, Reply, text

from .helpers import MODEL, open_session, open_startup, trust, write_extension

RECORDER = """
from pathlib import Path
ORDER_FILE = Path({order!r})

def register(pi):
    with ORDER_FILE.open("a") as f:
        f.write({name!r} + "\\n")
"""


def _recorder(folder: Path, name: str, order: Path) -> Path:
    return write_extension(folder, name, RECORDER.format(order=str(order), name=name))


async def test_load_order_is_project_then_global_then_settings_then_cli(
    agent_dir: Path, project: Path, tmp_path: Path
) -> None:
    order = tmp_path / "order.txt"
    trust(agent_dir, project)
    _recorder(project / ".pi" / "extensions", "p_one", order)
    _recorder(agent_dir / "extensions", "b_global", order)
    _recorder(agent_dir / "extensions", "a_global", order)
    listed = _recorder(tmp_path / "elsewhere", "from_settings", order)
    cli = _recorder(tmp_path / "cli", "from_cli", order)
    settings = json.loads((agent_dir / "settings.json").read_text())
    settings["extensions"] = [str(listed)]
    (agent_dir / "settings.json").write_text(json.dumps(settings))

    async with open_session(["-e", str(cli)], project):
        pass

    assert order.read_text().split() == ["p_one", "a_global", "b_global", "from_settings", "from_cli"]


async def test_a_package_folder_is_one_extension_and_helpers_are_skipped(
    agent_dir: Path, project: Path, tmp_path: Path
) -> None:
    order = tmp_path / "order.txt"
    package = agent_dir / "extensions" / "pkg"
    package.mkdir(parents=True)
    (package / "helper.py").write_text("NAME = 'pkg'\n")
    (package / "__init__.py").write_text(
        "from pathlib import Path\nfrom .helper import NAME\n"
        f"def register(pi):\n    Path({str(order)!r}).write_text(NAME)\n"
    )
    write_extension(agent_dir / "extensions", "_shared", "raise RuntimeError('helpers are not extensions')")
    (agent_dir / "extensions" / "notes").mkdir()  # a folder without __init__.py is not an extension

    async with open_startup([], project) as startup:
        names = [ext.name for ext in startup.session.extensions.extensions]

    assert names == ["pkg"]
    assert order.read_text() == "pkg"
    assert not any("Failed to load" in w for w in startup.warnings)


async def test_an_untrusted_projects_extensions_are_never_executed(
    agent_dir: Path, project: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "executed.marker"
    write_extension(
        project / ".pi" / "extensions",
        "evil",
        f"from pathlib import Path\nPath({str(marker)!r}).write_text('ran')\ndef register(pi):\n    pass\n",
    )
    (project / ".pi" / "settings.json").write_text(json.dumps({"extensions": ["extensions/evil.py"]}))

    async with open_startup([], project) as startup:
        runner = startup.session.extensions
        await startup.session.start()

    assert not marker.exists()
    assert runner is None  # nothing was loaded, so not even the runner was built
    notices = [w for w in startup.warnings if "not trusted" in w]
    assert len(notices) == 1
    assert "evil" in notices[0] and "Use /trust" in notices[0]  # the full-screen app: its /trust


async def test_a_trusted_projects_extensions_load(agent_dir: Path, project: Path, tmp_path: Path) -> None:
    marker = tmp_path / "executed.marker"
    write_extension(
        project / ".pi" / "extensions",
        "local",
        f"from pathlib import Path\ndef register(pi):\n    Path({str(marker)!r}).write_text('ran')\n",
    )
    trust(agent_dir, project)

    async with open_startup([], project) as startup:
        trusted = startup.session.extensions.context_for(startup.session.extensions.extensions[0])
        assert trusted.is_project_trusted()

    assert marker.read_text() == "ran"
    assert not any("not trusted" in w for w in startup.warnings)


async def test_no_extensions_skips_discovery_but_loads_explicit_paths(
    agent_dir: Path, project: Path, tmp_path: Path
) -> None:
    order = tmp_path / "order.txt"
    _recorder(agent_dir / "extensions", "discovered", order)
    explicit = _recorder(tmp_path / "cli", "explicit", order)

    async with open_session(["--no-extensions", "-e", str(explicit)], project):
        pass

    assert order.read_text().split() == ["explicit"]


async def test_settings_entries_can_exclude_a_discovered_extension(
    agent_dir: Path, project: Path, tmp_path: Path
) -> None:
    order = tmp_path / "order.txt"
    _recorder(agent_dir / "extensions", "keep", order)
    _recorder(agent_dir / "extensions", "drop", order)
    (agent_dir / "settings.json").write_text(json.dumps({"extensions": ["!extensions/drop.py"]}))

    async with open_session([], project):
        pass

    assert order.read_text().split() == ["keep"]


async def test_a_broken_extension_is_reported_and_the_app_goes_on(
    agent_dir: Path, project: Path, fake: FakeLLM
) -> None:
    broken = write_extension(agent_dir / "extensions", "broken", "raise ValueError('bad import')\n")
    empty = write_extension(agent_dir / "extensions", "empty", "X = 1\n")
    failing = write_extension(agent_dir / "extensions", "failing", "def register(pi):\n    1 / 0\n")
    fake.script([Reply([text("still works")])])

    async with open_startup(["-e", "missing_ext.py"], project, model=MODEL) as startup:
        await startup.session.prompt("hi")
        answer = startup.session.last_assistant_message()

    assert answer is not None and answer.content[0].text == "still works"
    # each names where in the extension's own file it failed
    assert f'Failed to load extension "{broken}": ValueError: bad import (at {broken}:1)' in startup.warnings
    assert f'Failed to load extension "{empty}": it has no register(pi) function' in startup.warnings
    assert (
        f'Failed to load extension "{failing}": ZeroDivisionError: division by zero (at {failing}:2)'
        in startup.warnings
    )
    assert any(w.startswith('Failed to load extension "missing_ext.py"') for w in startup.warnings)


async def test_an_extension_brings_its_dependencies_in_a_vendor_folder(
    agent_dir: Path, project: Path
) -> None:
    package = agent_dir / "extensions" / "with_deps"
    (package / "vendor" / "tinydep_for_pi_test").mkdir(parents=True)
    (package / "vendor" / "tinydep_for_pi_test" / "__init__.py").write_text("VALUE = 42\n")
    (package / "__init__.py").write_text(
        "import tinydep_for_pi_test\n"
        "def register(pi):\n"
        "    pi.register_command('dep', handler=lambda args, ctx: None, "
        "description=str(tinydep_for_pi_test.VALUE))\n"
    )

    async with open_startup([], project) as startup:
        command = startup.session.extensions.registry.commands["dep"]

    assert command.description == "42"
    assert not startup.warnings or all("with_deps" not in w for w in startup.warnings)


async def test_async_register_finishes_before_session_start(agent_dir: Path, project: Path) -> None:
    write_extension(
        agent_dir / "extensions",
        "async_reg",
        "import asyncio\nSEEN = []\n"
        "async def register(pi):\n"
        "    await asyncio.sleep(0)\n"
        "    pi.on('session_start', lambda event: SEEN.append(event.reason))\n",
    )

    async with open_session([], project) as session:
        await session.start()
        seen = session.extensions.extensions[0].module.SEEN

    assert seen == ["startup"]


async def test_reload_finds_extensions_added_after_start_up(
    agent_dir: Path, project: Path, tmp_path: Path
) -> None:
    order = tmp_path / "order.txt"
    async with open_session([], project) as session:
        assert session.extensions is None
        _recorder(agent_dir / "extensions", "late", order)
        await session.reload()
        names = [ext.name for ext in session.extensions.extensions]

    assert names == ["late"]
    assert order.read_text().split() == ["late"]
