"""Big sessions in pi's v3 format, generated on demand (deterministic), and the scenarios that resume them.

`write_big_session(path, entries, cwd)` writes a session of about ``entries`` entries (~600 bytes each,
so 20,000 entries ≈ 12 MB): turns of a user prompt, then assistant answers with signed thinking and a
tool call, each followed by its tool result, and a closing assistant text. Every 400 entries a short
abandoned branch (an answer the user went back from) hangs off the path, as `/tree` leaves them. The
same arguments always give the same bytes; nothing is committed as a file.

Scenarios (`python -m bench resume_big_20k ...`): ``resume_big_<n>`` runs ``--session FILE -p hi`` at
1k/5k/20k/100k entries (wall, CPU, peak RSS) on the Anthropic Messages API; the pi side of the same run
is in `bench.compare`. ``resume_big_20k_<api>`` (`WIRE_APIS`: chat, responses, azure, google, mistral,
bedrock) is the 20k run on another wire API: the session's assistant messages name that API, so the
history is its own model's, as a session recorded on it would be.
"""

from __future__ import annotations

import json
import random
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pi_tui.testing import FakeLLM, Reply, fake_signature, text

from .scenarios import Result, _result, make_env, run_cli
from .targets import PI_TUI, Target

__all__ = ["SIZES", "WIRE_APIS", "WireApi", "big_session_lines", "resume_big", "write_big_session"]

SIZES = {"1k": 1_000, "5k": 5_000, "20k": 20_000, "100k": 100_000}
BRANCH_EVERY = 400
_TOOLS_PER_TURN = 4
_WORDS = (
    "module function session entry context request token cache branch leaf parent render screen "
    "editor footer widget layout value error retry stream answer thinking result file line path"
).split()
_START = datetime(2025, 6, 1, tzinfo=UTC)
# A context window that holds the whole 100k-entry branch, so neither program compacts on resume.
BIG_WINDOW = 50_000_000


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def _words(rng: random.Random, count: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(count))


class _Writer:
    """Builds entries one by one, chaining ``parentId``s; ``leaf`` is where the next entry hangs."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.count = 0
        self.leaf: str | None = None
        self.ms = int(_START.timestamp() * 1000)
        self.lines: list[str] = []
        self.call_no = 0

    def _id(self) -> str:
        # Unique and random-looking: multiplying by an odd constant is a bijection modulo 2**32 (hashes
        # of 8 hex digits collide within 100,000 entries, and a duplicate id breaks the chain).
        return f"{(self.count * 2_654_435_761 + 0x9E3779B9) % 2**32:08x}"

    def add(self, record: dict[str, Any], parent: str | None = None) -> str:
        entry_id = self._id()
        self.count += 1
        self.ms += 1_500
        full = {
            "type": record.pop("type"),
            "id": entry_id,
            "parentId": self.leaf if parent is None else parent,
            "timestamp": _iso(self.ms),
            **record,
        }
        self.lines.append(json.dumps(full, separators=(",", ":")))
        self.leaf = entry_id
        return entry_id

    def message(self, message: dict[str, Any], parent: str | None = None) -> str:
        return self.add({"type": "message", "message": {**message, "timestamp": self.ms}}, parent)

    def user(self, turn: int) -> str:
        prompt = f"Turn {turn}: please look at " + _words(self.rng, 18)
        return self.message({"role": "user", "content": [{"type": "text", "text": prompt}]})

    def assistant(self, content: list[dict[str, Any]], stop: str, parent: str | None = None) -> str:
        usage = {
            "input": 12,
            "output": 60 + self.rng.randrange(80),
            "cacheRead": 1_000 + self.count,
            "cacheWrite": 40,
            "totalTokens": 1_200 + self.count,
            "cost": {
                "input": 0.0,
                "output": 0.001,
                "cacheRead": 0.0003,
                "cacheWrite": 0.0001,
                "total": 0.0014,
            },
        }
        return self.message(
            {
                "role": "assistant",
                "content": content,
                "api": "anthropic-messages",
                "provider": "bench",
                "model": "bench-model",
                "usage": usage,
                "stopReason": stop,
            },
            parent,
        )

    def tool_step(self) -> None:
        thinking = "I should read the next file: " + _words(self.rng, 12)
        self.call_no += 1
        call_id = f"toolu_{self.call_no:08d}"
        path = f"src/{self.rng.choice(_WORDS)}_{self.call_no % 97}.py"
        self.assistant(
            [
                {"type": "thinking", "thinking": thinking, "thinkingSignature": fake_signature(thinking)},
                {"type": "toolCall", "id": call_id, "name": "read", "arguments": {"path": path}},
            ],
            "toolUse",
        )
        output = "\n".join(f"{i + 1}: def {self.rng.choice(_WORDS)}(): return {i}" for i in range(6))
        self.message(
            {
                "role": "toolResult",
                "toolCallId": call_id,
                "toolName": "read",
                "content": [{"type": "text", "text": output}],
                "isError": False,
            }
        )

    def closing(self) -> None:
        self.assistant([{"type": "text", "text": "Done: " + _words(self.rng, 30)}], "stop")

    def abandoned_branch(self, turn: int) -> None:
        """An answer the user went back from: it hangs off the current leaf, which stays the leaf."""
        keep = self.leaf
        self.assistant(
            [{"type": "text", "text": f"(abandoned {turn}) " + _words(self.rng, 20)}], "stop", keep
        )
        self.leaf = keep


def big_session_lines(entries: int, cwd: Path, seed: int = 26) -> list[str]:
    """The lines (without newlines) of a ~``entries``-entry v3 session whose header names ``cwd``."""
    writer = _Writer(seed)
    header = {
        "type": "session",
        "version": 3,
        "id": str(uuid.UUID(int=entries * 1_000 + seed, version=4)),
        "timestamp": _iso(writer.ms),
        "cwd": str(cwd),
    }
    writer.add({"type": "model_change", "provider": "bench", "modelId": "bench-model"})
    writer.add({"type": "thinking_level_change", "thinkingLevel": "medium"})
    turn = 0
    next_branch = BRANCH_EVERY
    while writer.count < entries:
        turn += 1
        writer.user(turn)
        for _ in range(_TOOLS_PER_TURN):
            writer.tool_step()
        writer.closing()
        if next_branch <= writer.count < entries:  # the file ends on the active path
            writer.abandoned_branch(turn)
            next_branch += BRANCH_EVERY
    return [json.dumps(header, separators=(",", ":")), *writer.lines]


def write_big_session(path: Path, entries: int, cwd: Path, seed: int = 26) -> Path:
    """Write the session to ``path`` (parents created) and return it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(big_session_lines(entries, cwd, seed)) + "\n")
    return path


@dataclass(frozen=True)
class WireApi:
    """A wire API the fake server speaks, as the ``bench`` provider of ``models.json`` reaches it."""

    api: str
    base: str  # the attribute of the fake's server giving the base URL
    model: str = "bench-model"
    fake_args: dict[str, Any] = field(default_factory=dict)
    call_prefix: str = "toolu_"  # how the session's tool-call ids start (then eight digits)


ANTHROPIC = WireApi("anthropic-messages", "anthropic_base_url")
WIRE_APIS = {
    "chat": WireApi("openai-completions", "openai_base_url"),
    "responses": WireApi("openai-responses", "openai_base_url"),
    "azure": WireApi(
        "azure-openai-responses", "azure_base_url", fake_args={"azure_deployments": {"bench-model"}}
    ),
    "google": WireApi("google-generative-ai", "gemini_base_url"),
    # Mistral's own tool-call ids are nine letters and digits (the API refuses others).
    "mistral": WireApi("mistral-conversations", "mistral_base_url", call_prefix="t"),
    # A Claude model id: Bedrock replays signed thinking and marks the cache only for Claude models.
    "bedrock": WireApi("bedrock-converse-stream", "bedrock_base_url", "us.anthropic.claude-opus-4-6-v1"),
}
BENCH_KEY = "bench-key"


def _write_models_big(env: Any, server: Any, wire: WireApi = ANTHROPIC) -> str:
    config = {
        "providers": {
            "bench": {
                "baseUrl": getattr(server, wire.base),
                "api": wire.api,
                "apiKey": BENCH_KEY,
                "models": [
                    {"id": wire.model, "contextWindow": BIG_WINDOW, "maxTokens": 8192, "reasoning": True}
                ],
            }
        }
    }
    (env.agent_dir / "models.json").write_text(json.dumps(config))
    (env.agent_dir / "settings.json").write_text(json.dumps({"retry": {"baseDelayMs": 10}}))
    return f"bench/{wire.model}"


_CACHE: dict[int, str] = {}


def resume_big(size: str, target: Target = PI_TUI, api: str | None = None) -> Result:
    """``--session FILE -p hi`` on a generated ``size``-entry session: load, answer once, append.

    Args:
        size: a key of `SIZES`.
        target: the program run.
        api: a key of `WIRE_APIS` (None: the Anthropic Messages API, the figures of ``resume_big_<n>``).
    """
    entries = SIZES[size]
    wire = ANTHROPIC if api is None else WIRE_APIS[api]
    env = make_env()
    path = env.agent_dir / "sessions" / "big" / f"big-{size}.jsonl"
    if entries not in _CACHE:
        _CACHE[entries] = "\n".join(big_session_lines(entries, Path("/CWD"))) + "\n"
    path.parent.mkdir(parents=True)
    body = _CACHE[entries].replace('"cwd":"/CWD"', json.dumps({"cwd": str(env.repo)})[1:-1], 1)
    if wire is not ANTHROPIC:  # the history is the chosen API's own model's
        body = body.replace('"api":"anthropic-messages"', json.dumps({"api": wire.api})[1:-1])
        body = body.replace('"bench-model"', json.dumps(wire.model))
        body = body.replace('"toolu_', '"' + wire.call_prefix)
    path.write_text(body)
    fake = FakeLLM(context_window=BIG_WINDOW, **({"api_key": BENCH_KEY, **wire.fake_args} if api else {}))
    fake.script([Reply([text("Done.")])])
    with fake.serve() as server:
        model = _write_models_big(env, server, wire)
        run = run_cli(env, ["--session", str(path), "--model", model, "-p", "hi"], target)
    sent = len(fake.requests[0].messages) if fake.requests else 0
    name = f"resume_big_{size}" if api is None else f"resume_big_{size}_{api}"
    on = "" if api is None else f" on {wire.api}"
    return _result(
        name,
        f"`--session` a generated {entries:,}-entry v3 session (~{path.stat().st_size / 1e6:.0f} MB) -p hi{on}",
        fake,
        run,
        messages_sent=sent,
        file_mb=round(path.stat().st_size / 1e6, 1),
    )


def register_all() -> None:
    """Put the big-session scenarios into the registry (`bench.registry`)."""
    from .registry import register

    for size in SIZES:
        register(f"resume_big_{size}", lambda size=size: resume_big(size))
    for api in WIRE_APIS:
        register(f"resume_big_20k_{api}", lambda api=api: resume_big("20k", api=api))
    register("list_1000_big", list_1000_big)


def make_many_sessions(env: Any, count: int = 1_000, big: int = 10, big_entries: int = 20_000) -> Path:
    """``count`` sessions of the env's repo in its session directory; ``big`` of them ``big_entries`` long."""
    from pi_tui.session.paths import encode_cwd

    from .scenarios import _small_session

    cwd = env.repo.resolve()
    directory = env.agent_dir / "sessions" / encode_cwd(cwd)
    directory.mkdir(parents=True)
    for i in range(count - big):
        name, body = _small_session(i, cwd)
        (directory / name).write_text(body)
    if big:
        if big_entries not in _CACHE:
            _CACHE[big_entries] = "\n".join(big_session_lines(big_entries, Path("/CWD"))) + "\n"
        body = _CACHE[big_entries].replace('"cwd":"/CWD"', json.dumps({"cwd": str(cwd)})[1:-1], 1)
        for i in range(big):
            stamp = f"2025-06-{i + 1:02d}T10-00-00-000Z"
            (directory / f"{stamp}_{uuid.UUID(int=10_000 + i, version=4)}.jsonl").write_text(body)
    return directory


def list_1000_big(target: Target = PI_TUI) -> Result:
    """`pi-tui -r` listing 1,000 sessions of one directory, 10 of them 20k entries (~11 MB each)."""
    env = make_env()
    make_many_sessions(env)
    fake = FakeLLM()
    run_cli(env, ["-r"], target)  # a first listing (fills any cache), then the one measured
    run = run_cli(env, ["-r"], target)
    listed = sum(1 for line in run[4].splitlines() if line.endswith(".jsonl"))
    return _result(
        "list_1000_big", "`pi-tui -r`: 1,000 sessions, 10 of them 20k entries", fake, run, listed=listed
    )
