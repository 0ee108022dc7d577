"""A tool loop run by the real pi 0.87.1 moves to pi-tui without losing pi's prompt cache.

For each wire API, pi runs a dozen tool calls (one-line, multi-line, image and error results) against the
fake server into a session file; pi-tui then resumes that file. Its first request must repeat pi's prefix
byte for byte, so the fake's cache simulation (which hashes blocks exactly as sent) serves almost all of
it from cache, as it does when pi resumes its own file.
"""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

from pi_tui.testing import FakeLLM, RecordedRequest, Reply, text, tool_call
from pi_tui.testing import thinking as think

from ..e2e.helpers import MODEL_COST, open_session
from ..pi087 import Pi087
from ..runtime.helpers import without_cache_control

MODELS = {
    "anthropic-messages": "fake-anthropic/claude-fake",
    "openai-completions": "fake-openai/gpt-fake",
    "openai-responses": "fake-responses/gpt-fake-r",
    "google-generative-ai": "fake-google/gemini-3-fake",
}
NOTES = "".join(
    f"{n:03d} a line of notes that the read tool returns with its line number\n" for n in range(80)
)


def _png(width: int = 2, height: int = 2) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def write_models(agent_dir: Path, server: object, *, reasoning: bool = False) -> None:
    """The fake's four providers, with image input so image results are sent as images."""
    model = {
        "contextWindow": 200_000,
        "maxTokens": 8192,
        "cost": MODEL_COST,
        "input": ["text", "image"],
        "reasoning": reasoning,
    }
    providers = {
        "fake-anthropic": ("anthropic-messages", "anthropic_base_url", "claude-fake"),
        "fake-openai": ("openai-completions", "openai_base_url", "gpt-fake"),
        "fake-responses": ("openai-responses", "openai_base_url", "gpt-fake-r"),
        # A Gemini 3 id: the fake signs each answer's first call and sends call ids, as Gemini 3 does.
        "fake-google": ("google-generative-ai", "gemini_base_url", "gemini-3-fake"),
    }
    config = {
        "providers": {
            name: {
                "baseUrl": getattr(server, attr),
                "api": api,
                "apiKey": "test-key",
                "models": [{"id": ident, **model}],
            }
            for name, (api, attr, ident) in providers.items()
        }
    }
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "models.json").write_text(json.dumps(config, indent=2))


TOOL_LOOP = [
    ("bash", {"command": "echo one line"}),
    ("read", {"path": "notes.txt"}),
    ("read", {"path": "dot.png"}),
    ("bash", {"command": "printf 'a\\nb\\nc\\n'"}),
    ("read", {"path": "notes.txt", "offset": 10, "limit": 5}),
    ("write", {"path": "out.txt", "content": "first\nsecond\n"}),
    ("edit", {"path": "out.txt", "edits": [{"oldText": "first", "newText": "1st"}]}),
    ("bash", {"command": "cat out.txt; ls"}),
    ("bash", {"command": "echo failing; exit 3"}),
    ("read", {"path": "missing.txt"}),
    ("read", {"path": "dot.png"}),
    ("bash", {"command": "echo 'done with \u00e9t\u00e9 \U0001f600'"}),
]


def _script(thinking: bool = False) -> list[Reply]:
    def step(n: int, name: str, args: dict[str, object]) -> Reply:
        thought = [think(f"Step {n} needs {name}.")] if thinking else []
        return Reply([*thought, text(f"Step {n}."), tool_call(name, args)])

    steps = [step(n, name, args) for n, (name, args) in enumerate(TOOL_LOOP)]
    return [*steps, Reply([text("All done.")])]


def _project(tmp_path: Path) -> Path:
    project = (tmp_path / "project").resolve()
    project.mkdir()
    (project / "notes.txt").write_text(NOTES)
    (project / "dot.png").write_bytes(_png())
    return project


def _ratio(request: RecordedRequest) -> float:
    return request.cache.cache_read / request.cache.total


def _tool_results(session: Path) -> list[dict[str, object]]:
    lines = [json.loads(line) for line in session.read_text(encoding="utf-8").splitlines()]
    return [
        e["message"] for e in lines if e.get("type") == "message" and e["message"]["role"] == "toolResult"
    ]


async def _loop_then_resume(
    api: str, tmp_path: Path, agent_dir: Path, pi: Pi087, *, thinking: bool = False
) -> tuple[RecordedRequest, RecordedRequest]:
    """pi runs the tool loop into a session file; then pi-tui and pi each resume it with "one more".
    Returns pi-tui's first request and pi's."""
    project = _project(tmp_path)
    model = MODELS[api]
    fake = FakeLLM()
    fake.script([*_script(thinking), Reply([text("pi-tui answers")]), Reply([text("pi answers")])])
    level = ["--thinking", "low"] if thinking else []
    with fake.serve() as server:
        write_models(agent_dir, server, reasoning=thinking)
        sessions = tmp_path / "sessions"
        loop = subprocess.run(
            pi.argv(
                "--model", model, *level, "--session-dir", str(sessions), "-p", "Work through the steps."
            ),
            cwd=project,
            env=pi.env(),
            capture_output=True,
            text=True,
            timeout=50,
        )
        assert loop.returncode == 0, loop.stderr
        (session,) = sessions.rglob("*.jsonl")
        results = _tool_results(session)
        assert len(results) == len(TOOL_LOOP)
        kinds = [[block["type"] for block in r["content"]] for r in results]  # type: ignore[union-attr]
        assert ["text", "image"] in kinds and sum(bool(r["isError"]) for r in results) == 2
        own = tmp_path / "pi-own.jsonl"
        shutil.copyfile(session, own)
        loop_requests = len(fake.requests)

        async with open_session(["--session", str(session), "--model", model], project) as agent:
            await agent.prompt("one more")
        ours = fake.requests[loop_requests]

        again = subprocess.run(
            pi.argv("--model", model, "--session", str(own), "-p", "one more"),
            cwd=project,
            env=pi.env(),
            capture_output=True,
            text=True,
            timeout=50,
        )
        assert again.returncode == 0, again.stderr
        theirs = fake.requests[-1]
    assert fake.violations == []
    return ours, theirs


def _same_history(api: str, ours: RecordedRequest, theirs: RecordedRequest) -> None:
    field = {"openai-responses": "input", "google-generative-ai": "contents"}.get(api, "messages")
    assert without_cache_control(ours.body[field]) == without_cache_control(theirs.body[field])


@pytest.mark.slow
@pytest.mark.parametrize("api", list(MODELS))
async def test_pi_tui_resuming_pis_tool_loop_reads_pis_prefix_from_the_cache(
    api: str, tmp_path: Path, agent_dir: Path, pi087: Pi087
) -> None:
    ours, theirs = await _loop_then_resume(api, tmp_path, agent_dir, pi087)
    print(f"{api}: pi-tui resuming pi's loop reads {_ratio(ours):.3f}, pi resuming it {_ratio(theirs):.3f}")
    assert _ratio(theirs) >= 0.95, theirs.cache  # the fake's own sanity: pi reads its own prefix
    assert _ratio(ours) >= 0.95, (ours.cache, _ratio(theirs))
    # Beyond the cache: the replayed history is what pi sends, item for item (markers aside).
    _same_history(api, ours, theirs)


@pytest.mark.slow
@pytest.mark.parametrize("api", list(MODELS))
async def test_a_thinking_models_loop_is_replayed_with_its_signed_thinking_as_pi_replays_it(
    api: str, tmp_path: Path, agent_dir: Path, pi087: Pi087
) -> None:
    ours, theirs = await _loop_then_resume(api, tmp_path, agent_dir, pi087, thinking=True)
    print(f"{api} thinking: pi-tui reads {_ratio(ours):.3f}, pi {_ratio(theirs):.3f}")
    # the replayed turns carry their thinking in each API's form (signed block, reasoning item, field)
    marker = {
        "anthropic-messages": '"signature"',
        "openai-completions": '"reasoning',
        "openai-responses": '"encrypted_content"',
        "google-generative-ai": '"thought',
    }[api]
    assert marker in json.dumps(ours.body)
    _same_history(api, ours, theirs)
    assert _ratio(ours) >= 0.95, (ours.cache, _ratio(theirs))
