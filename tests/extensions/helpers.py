from __future__ import annotations

import json
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

from pi_tui.args import parse_args
from pi_tui.runtime.agent_session import AgentSession
from pi_tui.runtime.factory import Startup, create_session

EXAMPLES = Path(__file__).parent / "examples"
MODEL = "fake-anthropic/claude-fake"


def example(name: str) -> str:
    """The path of an example extension (a ``.py`` file or a package folder), for ``-e``."""
    path = EXAMPLES / name
    return str(path if path.exists() else path.with_suffix(".py"))


def install(folder: Path, name: str) -> Path:
    """Copy an example extension into an extensions folder (global or project discovery)."""
    folder.mkdir(parents=True, exist_ok=True)
    source = Path(example(name))
    target = folder / source.name
    if source.is_dir():
        shutil.copytree(source, target)
    else:
        shutil.copy(source, target)
    return target


def write_extension(folder: Path, name: str, code: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.py"
    path.write_text(code)
    return path


def trust(agent_dir: Path, project: Path) -> None:
    settings_path = agent_dir / "settings.json"
    settings = json.loads(settings_path.read_text()) if settings_path.exists() else {}
    settings["trustedProjects"] = [str(project)]
    settings_path.write_text(json.dumps(settings))


@asynccontextmanager
async def open_startup(argv: list[str], cwd: Path, *, model: str | None = None) -> AsyncIterator[Startup]:
    """A session on the fake server's model (``model=MODEL``) or, by default, the offline faux provider."""
    chosen = ["--model", model] if model else ["--provider", "faux"]
    startup = create_session(parse_args([*chosen, *argv]), cwd)
    try:
        yield startup
    finally:
        await startup.session.close()


@asynccontextmanager
async def open_session(
    argv: list[str], cwd: Path, *, model: str | None = None
) -> AsyncIterator[AgentSession]:
    async with open_startup(argv, cwd, model=model) as startup:
        yield startup.session


def module(session: AgentSession, name: str) -> ModuleType:
    """The live module of a loaded extension (its globals hold what the example recorded)."""
    for ext in session.extensions.extensions:
        if ext.name == name:
            assert ext.module is not None
            return ext.module
    raise AssertionError(f"extension {name} is not loaded")


class Events:
    def __init__(self, session: AgentSession) -> None:
        self.all: list[Any] = []
        session.subscribe(self.all.append)

    def of(self, kind: str) -> list[Any]:
        return [e for e in self.all if getattr(e, "type", None) == kind]

    def errors(self) -> list[dict[str, Any]]:
        return [e.data for e in self.of("extension_error")]


def model_requests(fake: Any) -> list[Any]:
    """The requests that asked the model for an answer (token counting left out)."""
    return [r for r in fake.requests if r.api != "anthropic-count-tokens"]


def user_texts(request: Any) -> list[str]:
    """The text blocks of the user messages of an Anthropic request, in order (tool results left out)."""
    texts: list[str] = []
    for message in request.messages:
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
            continue
        for block in content:
            if block.get("type") == "text":
                texts.append(block["text"])
    return texts


def session_entries(session: AgentSession) -> list[dict[str, Any]]:
    path = session.session_manager.path
    assert path is not None
    return [json.loads(line) for line in Path(path).read_text().splitlines()[1:]]
