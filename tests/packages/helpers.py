from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import zipfile
from pathlib import Path

import pytest

from pi_tui.cli import main

GIT_IDENTITY = ["-c", "user.name=Test", "-c", "user.email=test@example.invalid", "-c", "commit.gpgsign=false"]

SHOUT_EXTENSION = """
def register(pi):
    def on_input(event, ctx):
        if event.text.startswith("shout "):
            return {"action": "transform", "text": event.text.removeprefix("shout ").upper()}
        return {"action": "continue"}
    pi.on("input", on_input)
"""


def recorder(order: Path, name: str) -> str:
    """An extension that appends its name to ``order`` when registered."""
    return (
        "from pathlib import Path\n"
        f"def register(pi):\n    with Path({str(order)!r}).open('a') as f:\n        f.write({name!r} + '\\n')\n"
    )


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *GIT_IDENTITY, *args], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def write_files(root: Path, files: dict[str, str]) -> None:
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)


def make_repo(path: Path, files: dict[str, str], *, branch: str = "main") -> Path:
    path.mkdir(parents=True)
    git(path, "init", "--quiet", "-b", branch)
    commit(path, files, "first")
    return path


def commit(repo: Path, files: dict[str, str], message: str) -> str:
    write_files(repo, files)
    git(repo, "add", "-A")
    git(repo, "commit", "--quiet", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def head(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD")


def make_package(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    write_files(root, files)
    return root


def build_wheel(
    folder: Path, name: str, version: str, files: dict[str, str], requires: list[str] = ()
) -> Path:
    """A pure-Python wheel written by hand (no build backend, so no network and no subprocess)."""
    folder.mkdir(parents=True, exist_ok=True)
    dist = name.replace("-", "_")
    info = f"{dist}-{version}.dist-info"
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n" + "".join(
        f"Requires-Dist: {r}\n" for r in requires
    )
    contents = {
        **files,
        f"{info}/METADATA": metadata,
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = ""
    for path, text in contents.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record += f"{path},sha256={digest},{len(text.encode())}\n"
    contents[f"{info}/RECORD"] = record + f"{info}/RECORD,,\n"
    wheel = folder / f"{dist}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, text in contents.items():
            archive.writestr(path, text)
    return wheel


def run_cli(monkeypatch: pytest.MonkeyPatch, cwd: Path, *argv: str) -> int:
    monkeypatch.chdir(cwd)
    return main(list(argv))


def settings_packages(settings_file: Path) -> list[object]:
    if not settings_file.exists():
        return []
    return json.loads(settings_file.read_text()).get("packages", [])


def trust(agent_dir: Path, project: Path) -> None:
    settings_file = agent_dir / "settings.json"
    data = json.loads(settings_file.read_text()) if settings_file.exists() else {}
    data["trustedProjects"] = [str(project)]
    settings_file.write_text(json.dumps(data))
