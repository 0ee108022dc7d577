from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench.big_sessions import big_session_lines
from pi_tui.args import parse_args
from pi_tui.modes.print_mode import run_print_mode
from pi_tui.runtime.factory import create_session
from pi_tui.session.manager import SessionManager
from pi_tui.testing import FakeLLM, Reply, text, tool_call

from ..e2e.helpers import write_models_json

MODEL = "fake-anthropic/claude-fake"
RESPONSES = "fake-responses/gpt-fake-r"


def _sessions(tmp_path: Path, damaged: bool = False) -> tuple[Path, Path]:
    """A big plain session, and the same with an extension's entry at its end (a shape the fast path
    leaves to the typed one; it changes nothing a request carries). ``damaged``: with lines the
    loading skips in the middle (one of them an entry of the path) and a torn last line."""
    lines = big_session_lines(3_000, tmp_path)
    leaf = json.loads(lines[-1])["id"]
    if damaged:
        lines[2_203] = lines[2_203][:300]  # an assistant turn: its results become strays, dropped
        lines.insert(2_500, "not JSON at all")
    plain = tmp_path / "plain.jsonl"
    torn = '{"type":"message","id":"0badf00d","par' if damaged else ""
    plain.write_text("\n".join(lines) + "\n" + torn)
    custom = {
        "type": "custom",
        "customType": "x",
        "data": {},
        "id": "feedf00d",
        "parentId": leaf,
        "timestamp": "2025-07-01T00:00:00.000Z",
    }
    typed = tmp_path / "typed.jsonl"
    typed.write_text("\n".join([*lines, json.dumps(custom)]) + "\n")
    return plain, typed


async def _answer(path: Path, cwd: Path, prompt: str = "hi", model: str = MODEL) -> tuple[bool, bool, int]:
    """Run one print-mode prompt on ``path``: (history deferred at start, deferred at the end, exit code)."""
    startup = create_session(parse_args(["--session", str(path), "--model", model, "-p", prompt]), cwd)
    session = startup.session
    deferred = session.session_manager.deferred_history is not None
    code = await run_print_mode(session, [prompt])
    after = session.session_manager.deferred_history is not None
    await session.close()
    return deferred, after, code


def _unmarked(messages: list[Any]) -> list[Any]:
    """The messages without their cache marker (it moves to the newest message with every request)."""
    out = []
    for message in messages:
        content = message["content"]
        if isinstance(content, list):
            content = [{k: v for k, v in block.items() if k != "cache_control"} for block in content]
        out.append({**message, "content": content})
    return out


def _history(body: dict[str, Any]) -> list[Any]:
    """The body's history: Anthropic's and Chat Completions' messages (cache markers taken out), the
    Responses API's input items."""
    return body["input"] if "input" in body else _unmarked(body["messages"])


def _new_lines(path: Path, before: int) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()[before:]]


@pytest.mark.parametrize(
    ("damaged", "model"),
    [(False, MODEL), (True, MODEL), (False, "fake-openai/gpt-fake"), (False, RESPONSES)],
    ids=["whole", "damaged", "chat completions", "responses"],
)
async def test_a_big_plain_resume_sends_what_the_typed_path_sends_and_appends_the_same(
    tmp_path: Path, agent_dir: Path, damaged: bool, model: str
) -> None:
    plain, typed = _sessions(tmp_path, damaged)
    original = plain.read_bytes()
    fake = FakeLLM()
    fake.script([Reply([text("Done.")]), Reply([text("Done.")])])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        count = len(plain.read_text().splitlines())
        leaf = SessionManager.open(plain, read_only=True).get_leaf_id()
        assert await _answer(plain, tmp_path, model=model) == (True, False, 0)
        assert await _answer(typed, tmp_path, model=model) == (False, False, 0)
    first, second = fake.requests
    assert first.body == second.body
    assert first.headers == second.headers
    assert len(_history(first.body)) > 2_900
    assert fake.violations == []
    added = _new_lines(plain, count)
    assert [(e["type"], e.get("message", {}).get("role")) for e in added][-2:] == [
        ("message", "user"),
        ("message", "assistant"),
    ]
    chain = [leaf, *(e["id"] for e in added)]
    assert [e["parentId"] for e in added] == chain[:-1]  # each new entry hangs off the one before
    reopened = SessionManager.open(plain, read_only=True)
    assert [e.id for e in reopened.get_branch()][-len(added) :] == [e["id"] for e in added]
    assert plain.read_bytes().startswith(original)  # every line kept, the unreadable ones too
    assert reopened.load_report.has_problems == damaged
    if damaged:  # the torn line, ended with a newline, is skipped again; nothing else changed
        assert [s.reason for s in reopened.load_report.skipped] == ["invalid JSON"] * 3


@pytest.mark.parametrize(
    "model", [MODEL, "fake-openai/gpt-fake", RESPONSES], ids=["anthropic", "chat completions", "responses"]
)
async def test_the_next_turn_after_a_deferred_resume_carries_the_whole_history(
    tmp_path: Path, agent_dir: Path, model: str
) -> None:
    plain, _ = _sessions(tmp_path)
    fake = FakeLLM()
    fake.script(
        [
            Reply([tool_call("read", {"path": "missing.txt"})]),  # a tool loop: a second request at once
            Reply([text("Done.")]),
            Reply([text("Again.")]),
        ]
    )
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        assert await _answer(plain, tmp_path, model=model) == (True, False, 0)
        assert await _answer(plain, tmp_path, "more", model=model) == (True, False, 0)
    first, loop, resumed = (_history(r.body) for r in fake.requests)
    assert loop[: len(first)] == first
    assert resumed[: len(loop)] == loop
    assert [m["role"] for m in resumed[len(loop) :]] == ["assistant", "user"]
    assert fake.violations == []


@pytest.mark.parametrize("prompts", [["/session"], ["hi", "again"]])
def test_a_run_of_other_prompts_opens_the_session_whole(prompts: list[str], tmp_path: Path) -> None:
    plain, _ = _sessions(tmp_path)
    args = parse_args(["--session", str(plain), "--model", MODEL, "-p", *prompts])
    from pi_tui.runtime.factory import _select_session_manager

    manager, _notices = _select_session_manager(args, tmp_path)
    assert manager.deferred_history is None
    manager.close()


async def test_no_young_collection_walks_the_wire_prefix_before_the_request_is_written(
    tmp_path: Path, agent_dir: Path
) -> None:
    """The wire messages of a big deferred history are many more objects than a young collection
    expects; left young, the first allocation after they are built ran a collection over all of them
    (finding nothing) before the request went out."""
    import gc
    import threading

    from pi_tui.util.collector import FREEZE_BUILT_HISTORY_ABOVE

    path = tmp_path / "big.jsonl"
    path.write_text("\n".join(big_session_lines(20_000, tmp_path)) + "\n")
    answered = threading.Event()

    def answer(_request: Any) -> Reply:
        answered.set()
        return Reply([text("Done.")])

    fake = FakeLLM(context_window=50_000_000)
    fake.script([answer])
    young: list[int] = []  # objects made since the last collection, at each collection of the client

    def watch(phase: str, info: dict[str, int]) -> None:
        # the client's collections up to its answer (the fake server runs in this process too)
        if (
            phase == "start"
            and threading.current_thread() is threading.main_thread()
            and not answered.is_set()
        ):
            young.append(gc.get_count()[0])

    was_enabled = gc.isenabled()
    with fake.serve() as server:
        write_models_json(agent_dir, server, context_window=50_000_000)  # no compaction
        args = parse_args(["--session", str(path), "--model", MODEL, "-p", "hi"])
        gc.disable()  # as the command line starts: no collection until start-up is done, then frozen
        try:
            session = create_session(args, tmp_path).session
            gc.freeze()
            gc.enable()
            gc.callbacks.append(watch)
            try:
                assert session.session_manager.deferred_history is not None
                assert await run_print_mode(session, ["hi"]) == 0
            finally:
                gc.callbacks.remove(watch)
                await session.close()
        finally:
            gc.unfreeze()
            if not was_enabled:
                gc.disable()
    assert answered.is_set()
    assert len(fake.requests[0].body["messages"]) > 19_000
    assert all(count < FREEZE_BUILT_HISTORY_ABOVE for count in young), young


@pytest.mark.parametrize(
    ("model", "api"),
    [(MODEL, "anthropic"), ("fake-openai/gpt-fake", "openai_completions"), (RESPONSES, "openai_responses")],
)
async def test_the_first_request_goes_out_before_the_typed_history_is_built(
    tmp_path: Path, agent_dir: Path, model: str, api: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On each of these APIs a big plain resume sends its history's old part as wire messages made from
    the file's lines: the provider builds the body while the history is still deferred, and the typed
    history is built after (another API builds it first)."""
    import importlib

    module = importlib.import_module(f"pi_tui.ai.providers.{api}")
    plain, _ = _sessions(tmp_path)
    order: list[str] = []
    build = module.build_request
    complete = SessionManager.complete_history

    def building(*args: Any) -> Any:
        order.append("request")
        return build(*args)

    def completing(self: SessionManager) -> None:
        if self.deferred_history is not None:
            order.append("history")
        complete(self)

    monkeypatch.setattr(module, "build_request", building)
    monkeypatch.setattr(SessionManager, "complete_history", completing)
    fake = FakeLLM()
    fake.script([Reply([text("Done.")])])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        assert await _answer(plain, tmp_path, model=model) == (True, False, 0)
    assert order == ["request", "history"]
    assert fake.violations == []


async def test_a_big_session_with_its_recorded_prompt_resumes_deferred_and_sends_the_typed_bytes(
    tmp_path: Path, agent_dir: Path
) -> None:
    """pi-tui's recorded prompt (a system message, written by the first resume of each file) keeps a
    plain session on the fast path, whose request is still byte for byte the typed one's."""
    plain, typed = _sessions(tmp_path)
    fake = FakeLLM()
    fake.script([Reply([text("Done.")]) for _ in range(4)])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        for path in (plain, typed):
            await _answer(path, tmp_path)
        count = len(plain.read_text().splitlines())
        recorded = [e for e in _new_lines(plain, 0)[1:] if e.get("message", {}).get("role") == "system"]
        assert len(recorded) == 1
        assert await _answer(plain, tmp_path, "again") == (True, False, 0)
        assert await _answer(typed, tmp_path, "again") == (False, False, 0)
    first, second = fake.requests[2:]
    assert first.body == second.body
    assert fake.violations == []
    added = _new_lines(plain, count)
    assert [e["message"]["role"] for e in added] == ["user", "assistant"]  # the prompt is unchanged


# API -> (the fake server's base URL attribute, the module whose build_request the stream calls, the
# body's history field)
_MORE_APIS = {
    "azure-openai-responses": ("azure_base_url", "azure_openai_responses", "input"),
    "google-generative-ai": ("gemini_base_url", "_google_stream", "contents"),
    "mistral-conversations": ("mistral_base_url", "mistral", "messages"),
    "bedrock-converse-stream": ("bedrock_base_url", "_bedrock_request", "messages"),
}
# The model each API's answers come from (Bedrock: a Claude model, which replays signed thinking).
_MORE_MODELS = {"bedrock-converse-stream": "anthropic.claude-more-fake"}


def _answered_by(path: Path, api: str, model: str) -> None:
    """Make the session's answers ``fake-more/<model>``'s on ``api`` (Mistral's ids: nine characters)."""
    text = path.read_text()
    text = text.replace('"api":"anthropic-messages"', f'"api":"{api}"').replace('"toolu_', '"t')
    path.write_text(text.replace('"provider":"bench"', '"provider":"fake-more"').replace("bench-model", model))


@pytest.mark.parametrize("api", list(_MORE_APIS))
async def test_more_apis_resume_on_the_fast_path_and_send_what_the_typed_path_sends(
    tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch, api: str
) -> None:
    """Azure's Responses API (OpenAI's Responses input items), Gemini, Mistral and Bedrock: a big plain resume
    sends its old history as wire messages made from the file's lines, before the typed history is
    built, and the body is the one the typed path sends."""
    import importlib

    base, module_name, field = _MORE_APIS[api]
    module = importlib.import_module(f"pi_tui.ai.providers.{module_name}")
    plain, typed = _sessions(tmp_path)
    model = _MORE_MODELS.get(api, "more-fake")
    if api in ("mistral-conversations", "bedrock-converse-stream"):
        # Mistral: another model's tool calls would keep it on the typed path; Bedrock: signed thinking
        _answered_by(plain, api, model)
        _answered_by(typed, api, model)
    order: list[str] = []
    build = module.build_request
    complete = SessionManager.complete_history

    def building(*args: Any, **kwargs: Any) -> Any:
        order.append("request")
        return build(*args, **kwargs)

    def completing(self: SessionManager) -> None:
        if self.deferred_history is not None:
            order.append("history")
        complete(self)

    monkeypatch.setattr(module, "build_request", building)
    monkeypatch.setattr(SessionManager, "complete_history", completing)
    fake = FakeLLM(azure_deployments={model})
    fake.script([Reply([text("Done.")]), Reply([text("Done.")])])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        config = json.loads((agent_dir / "models.json").read_text())
        config["providers"]["fake-more"] = {
            "baseUrl": getattr(server, base),
            "api": api,
            "apiKey": "test-key",
            "models": [{"id": model, "contextWindow": 200_000, "maxTokens": 8192}],
        }
        (agent_dir / "models.json").write_text(json.dumps(config))
        assert await _answer(plain, tmp_path, model=f"fake-more/{model}") == (True, False, 0)
        assert order == ["request", "history"]
        assert await _answer(typed, tmp_path, model=f"fake-more/{model}") == (False, False, 0)
    first, second = fake.requests
    assert first.body == second.body
    assert len(first.body[field]) > 2_000
    assert fake.violations == []
