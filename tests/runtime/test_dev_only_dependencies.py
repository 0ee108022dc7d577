from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Packages of the dev extra that only tests use (the SDK oracles, the fake's helpers). A plain install
# (`pip install pi-tui`, no extra) does not have them, so pi-tui must never import them.
DEV_ONLY = ("anthropic", "openai", "pydantic", "google.genai", "mistralai", "boto3", "botocore", "zstandard")
_DEV_ONLY_REQUIREMENTS = (
    "anthropic",
    "openai",
    "pydantic",
    "google-genai",
    "mistralai",
    "boto3",
    "zstandard",
)

# The MCP SDK is the `mcp` extra (`pip install 'pi-tui[mcp]'`, also in dev): only the bundled mcp extension
# imports it, so a plain install has neither it nor what it brings (pydantic among them).
MCP_EXTRA = ("mcp", "mcp_types")
NOT_IN_A_PLAIN_INSTALL = DEV_ONLY + MCP_EXTRA

# Imports of a dev-only package that a plain install never reaches, by (file, package), with the reason.
ALLOWED = {
    ("pi_tui/testing/_codex.py", "zstandard"): "the fake server decompresses a request body only when a "
    "client sends it zstd-encoded (pi 0.87.1 does, pi-tui does not); imported inside that branch",
    ("extensions/mcp/servers.py", "pydantic"): "the mcp extension loads only with the mcp extra installed, "
    "and the MCP SDK it installs depends on pydantic (FileUrl is the type of the SDK's Root.uri)",
}

# Run before pi-tui: importing a dev-only package fails as it does where it is not installed.
_BLOCK = f"""
import importlib.abc, sys
BLOCKED = {NOT_IN_A_PLAIN_INSTALL!r}
class _NotInstalled(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if any(name == b or name.startswith(b + ".") for b in BLOCKED):
            raise ModuleNotFoundError(f"No module named {{name!r}} (not in a plain install)", name=name)
        return None
sys.meta_path.insert(0, _NotInstalled())
"""

_ONE_TURN = (
    _BLOCK
    + """
import atexit, json, runpy
out = sys.argv.pop(1)
atexit.register(lambda: open(out, "w").write(json.dumps(sorted(sys.modules))))
sys.argv[0] = "pi-tui"
runpy.run_module("pi_tui", run_name="__main__", alter_sys=True)
"""
)

_TUI_START = (
    _BLOCK
    + """
import asyncio, json
from pathlib import Path
from pi_tui.args import parse_args
from pi_tui.modes.interactive.app import PiApp
from pi_tui.runtime.factory import create_session

out, cwd, agent_dir = sys.argv[1:4]

async def main():
    app = PiApp(lambda _trust: create_session(parse_args(["--provider", "faux"]), Path(cwd)),
                cwd=Path(cwd), agent_dir=Path(agent_dir))
    async with app.run_test(size=(100, 30)) as pilot:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 20
        while getattr(app, "session", None) is None:
            assert loop.time() < deadline, "the session never started"
            await pilot.pause(0.01)
        for key in ("h", "i", "enter"):
            await pilot.press(key)
        while app.session.last_assistant_message() is None:
            assert loop.time() < deadline, "no answer"
            await pilot.pause(0.01)
    Path(out).write_text(json.dumps(sorted(sys.modules)))

asyncio.run(main())
"""
)


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}


def _top(modules: list[str], packages: tuple[str, ...] = DEV_ONLY) -> set[str]:
    return {name for name in modules if any(name == b or name.startswith(b + ".") for b in packages)}


def _statements(nodes: list[ast.AST]) -> Iterator[ast.AST]:
    """Every statement, at any depth (imports are statements): the statement lists only, not the
    expressions in them, which are nine tenths of the nodes and were most of this test's CPU."""
    for node in nodes:
        yield node
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            children = getattr(node, field, None)
            if isinstance(children, list):
                yield from _statements(children)


def test_pi_tui_and_the_shipped_extensions_never_import_a_dev_only_package() -> None:
    found = []
    for path in [*(ROOT / "pi_tui").rglob("*.py"), *(ROOT / "extensions").rglob("*.py")]:
        for node in _statements(ast.parse(path.read_text(encoding="utf-8")).body):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom) and not node.level
                else []
            )
            where = str(path.relative_to(ROOT))
            found += [f"{where}:{node.lineno} {n}" for n in names if _top([n]) and (where, n) not in ALLOWED]
    assert found == []


def test_dev_only_packages_are_in_the_dev_extra_not_the_dependencies() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]

    def names(requirements: list[str]) -> set[str]:
        return {
            r.split(";")[0].split("[")[0].split("<")[0].split(">")[0].split("=")[0].split("~")[0].strip()
            for r in requirements
        }

    assert names(project["dependencies"]) & {*_DEV_ONLY_REQUIREMENTS, "mcp"} == set()
    assert set(_DEV_ONLY_REQUIREMENTS) <= names(project["optional-dependencies"]["dev"])
    extras = project["optional-dependencies"]
    assert names(extras["mcp"]) == {"mcp"} and set(extras["mcp"]) <= set(extras["dev"])


def test_a_one_turn_run_works_without_the_dev_only_packages(tmp_path: Path) -> None:
    dump = tmp_path / "modules.json"
    run = subprocess.run(
        [sys.executable, "-c", _ONE_TURN, str(dump), "--provider", "faux", "-p", "hi"],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=50,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip()
    assert _top(json.loads(dump.read_text()), NOT_IN_A_PLAIN_INSTALL) == set()


def test_the_tui_starts_and_answers_without_the_dev_only_packages(tmp_path: Path, agent_dir: Path) -> None:
    dump = tmp_path / "modules.json"
    run = subprocess.run(
        [sys.executable, "-c", _TUI_START, str(dump), str(tmp_path), str(agent_dir)],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=55,
    )
    assert run.returncode == 0, run.stderr
    assert _top(json.loads(dump.read_text()), NOT_IN_A_PLAIN_INSTALL) == set()


def test_the_mcp_extension_without_the_sdk_says_in_one_line_how_to_install_it(tmp_path: Path) -> None:
    # A sitecustomize that makes the SDK absent the way Python reports a missing package: find_spec gives
    # None and an import raises ModuleNotFoundError.
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "import sys\nfor name in ('mcp', 'mcp_types'):\n    sys.modules[name] = None\n"
    )
    env = {**_env(), "PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))}
    run = subprocess.run(
        [sys.executable, "-m", "pi_tui", "--provider", "faux", "-e", "mcp", "-p", "hi"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=50,
    )
    assert run.returncode == 0, run.stderr
    assert "You said: “hi”" in run.stdout
    (line,) = run.stderr.splitlines()
    assert line.endswith("the MCP SDK is not installed: pip install 'pi-tui[mcp]'")
