from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from pi_tui.testing import FakeLLM, Fault, Reply, text, tool_call

from .helpers import run_cli, write_models_json

pytestmark = pytest.mark.slow

BUGGY = "def add(a, b):\n    return a - b\n"


def _fix_script() -> list[Reply]:
    return [
        Reply([text("Let me look at the file."), tool_call("read", {"path": "calc.py"})]),
        Reply(
            [
                tool_call(
                    "edit",
                    {"path": "calc.py", "edits": [{"oldText": "return a - b", "newText": "return a + b"}]},
                )
            ]
        ),
        Reply([tool_call("bash", {"command": "python3 -c 'import calc; print(calc.add(2, 3))'"})]),
        Reply([text("Fixed: `add` used `-` instead of `+`; add(2, 3) now prints 5.")]),
    ]


@pytest.mark.parametrize("model", ["fake-anthropic/claude-fake", "fake-openai/gpt-fake"])
def test_print_mode_fixes_a_wrong_operator(model: str, tmp_path: Path, agent_dir: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "calc.py").write_text(BUGGY)
    fake = FakeLLM()
    fake.script(_fix_script())
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        run = run_cli(["--model", model, "-p", "The add function is wrong. Fix it."], repo)

    assert run.returncode == 0, run.stderr
    assert (repo / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert "add(2, 3) now prints 5" in run.stdout
    fake.assert_script_consumed()
    assert fake.violations == []
    last = fake.requests[-1]
    assert "5" in json.dumps(last.body)  # the bash output reached the model
    sessions = list((agent_dir / "sessions").rglob("*.jsonl"))
    assert len(sessions) == 1


def test_missing_key_is_one_clear_line_and_exit_1_as_pi(tmp_path: Path, agent_dir: Path) -> None:
    run = run_cli(["--model", "anthropic/claude-opus-4-6", "-p", "hi"], tmp_path)
    assert run.returncode == 1
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "ANTHROPIC_API_KEY" in lines[0] and "models.json" in lines[0]
    assert "Traceback" not in run.stderr


@pytest.mark.parametrize("mode", [["-p"], ["--mode", "json"]])
def test_no_model_at_all_exits_1_with_hint_as_pi(tmp_path: Path, agent_dir: Path, mode: list[str]) -> None:
    run = run_cli([*mode, "hi"], tmp_path)
    assert run.returncode == 1
    assert "ANTHROPIC_API_KEY" in run.stderr and "Traceback" not in run.stderr


def test_provider_failure_exits_1_with_the_reason(tmp_path: Path, agent_dir: Path) -> None:
    fake = FakeLLM()
    fake.script([Fault("auth")])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        run = run_cli(["--model", "fake-anthropic/claude-fake", "-p", "hi"], tmp_path)
    assert run.returncode == 1
    assert run.stderr.startswith("Error: ") and "401" in run.stderr
    assert run.stdout == ""


def test_rate_limit_is_retried_and_the_user_is_told(tmp_path: Path, agent_dir: Path) -> None:
    (agent_dir / "settings.json").parent.mkdir(parents=True, exist_ok=True)
    (agent_dir / "settings.json").write_text(json.dumps({"retry": {"baseDelayMs": 10}}))
    fake = FakeLLM()
    fake.script([Fault("rate_limit"), Reply([text("recovered")])])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        run = run_cli(["--model", "fake-openai/gpt-fake", "-p", "hi"], tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "recovered"
    assert "Retrying (1/3)" in run.stderr and "429" in run.stderr
    assert len(fake.requests) == 2 and fake.violations == []


def test_json_mode_prints_header_then_events(tmp_path: Path, agent_dir: Path) -> None:
    fake = FakeLLM()
    fake.script([Reply([text("hello")])])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        run = run_cli(["--model", "fake-responses/gpt-fake-r", "--mode", "json", "hi"], tmp_path)
    assert run.returncode == 0, run.stderr
    lines = [json.loads(line) for line in run.stdout.splitlines()]
    assert lines[0]["type"] == "session" and lines[0]["version"] == 3
    types = [line["type"] for line in lines[1:]]
    assert types[0] == "agent_start" and types[-2:] == ["agent_end", "agent_settled"]  # as pi 0.87.1
    assert "message_update" in types and "turn_end" in types
    deltas = [line["assistantMessageEvent"] for line in lines if line["type"] == "message_update"]
    assert any(d["type"] == "text_delta" for d in deltas)


def test_version_and_help_do_not_touch_the_network_or_fail(tmp_path: Path) -> None:
    assert run_cli(["--version"], tmp_path).stdout.strip() == "0.1.0"
    help_run = run_cli(["--help"], tmp_path)
    assert help_run.returncode == 0 and "--model" in help_run.stdout


def test_a_model_whose_api_is_not_spoken_says_so_in_one_line(tmp_path: Path, agent_dir: Path) -> None:
    odd = {
        "baseUrl": "http://127.0.0.1:9",
        "api": "openrouter-images",
        "apiKey": "k",
        "models": [{"id": "m1"}],
    }
    (agent_dir / "models.json").write_text(json.dumps({"providers": {"odd": odd}}))
    run = run_cli(["--model", "odd/m1", "-p", "hi"], tmp_path)
    assert run.returncode != 0
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, run.stderr
    assert "odd/m1 uses the openrouter-images API, which pi-tui does not support yet" in lines[0]


def test_radius_answers_with_a_tool_call_over_pis_own_protocol(
    tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Radius (pi's gateway) speaks pi-messages: its default model runs a tool loop with RADIUS_API_KEY."""
    fake = FakeLLM(api_key="radius-key", context_window=2_000_000, max_output_tokens=400_000)
    fake.script(
        [Reply([text("Reading."), tool_call("read", {"path": "a.txt"})]), Reply([text("It says hi.")])]
    )
    (tmp_path / "a.txt").write_text("hi\n")
    monkeypatch.setenv("RADIUS_API_KEY", "radius-key")
    with fake.serve() as server:
        providers = {"radius": {"baseUrl": server.pi_messages_base_url}}
        (agent_dir / "models.json").write_text(json.dumps({"providers": providers}))
        run = run_cli(["--provider", "radius", "-p", "what does a.txt say?"], tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "It says hi.\n"
    assert fake.violations == [] and [r.path for r in fake.requests] == ["/pi/v1/messages"] * 2
    result = fake.requests[1].body["context"]["messages"][-1]
    assert result["role"] == "toolResult" and result["content"] == [{"type": "text", "text": "hi\n"}]


def test_anthropic_auth_token_goes_as_a_bearer_header_before_the_api_key(
    tmp_path: Path, agent_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeLLM(api_key="proxy-token")  # a wrong x-api-key would win at the fake and fail
    fake.script([Reply([text("Through the proxy.")])])
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "proxy-token")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "not-this-one")
    with fake.serve() as server:
        config = {"providers": {"anthropic": {"baseUrl": server.anthropic_base_url}}}
        (agent_dir / "models.json").write_text(json.dumps(config))
        run = run_cli(["--provider", "anthropic", "--model", "claude-haiku-4-5", "-p", "hi"], tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "Through the proxy."
    assert fake.violations == []
    headers = fake.requests[-1].headers
    assert "authorization" in headers and "x-api-key" not in headers  # pi's header-only auth


def test_help_lists_every_providers_key_variables_as_the_no_model_message_says(tmp_path: Path) -> None:
    from pi_tui.ai.catalog import builtin_providers, provider_info
    from pi_tui.ai.no_model import KEY_HINT

    assert "pi-tui --help" in KEY_HINT
    help_text = run_cli(["--help"], tmp_path).stdout
    lines = help_text.splitlines()
    for provider in builtin_providers():
        info = provider_info(provider)
        assert info is not None
        if not info.env:
            continue
        row = next((line for line in lines if line.split()[:1] == [provider]), "")
        assert all(name in row for name in info.env), (provider, row)
    assert "AWS_SECRET_ACCESS_KEY" in help_text and "pi-tui login" in help_text


def test_piped_stdin_and_a_prompt_go_out_as_one_message(tmp_path: Path, agent_dir: Path) -> None:
    """``cat notes | pi-tui -p "summarise"``: the piped text and the prompt are one user message and one
    request (as current pi), not two turns where the model first answers the bare piped text."""
    fake = FakeLLM()
    fake.script([Reply([text("one answer")])])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        run = run_cli(["--model", "fake-anthropic/claude-fake", "-p", "summarise"], tmp_path,
                      stdin="line one\nline two\n")  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert run.stdout == "one answer\n"
    fake.assert_script_consumed()
    (request,) = fake.requests
    user = [m for m in request.body["messages"] if m["role"] == "user"]
    assert len(user) == 1
    sent = "".join(b["text"] for b in user[0]["content"] if b["type"] == "text")
    assert sent == "line one\nline two\n\nsummarise"


PNG_1X1 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
)


def test_an_image_file_argument_is_attached_and_a_text_file_inlined(tmp_path: Path, agent_dir: Path) -> None:
    """``pi-tui -p @shot.png @notes.txt "what is wrong"``: as pi, the image goes as an image block named by an
    empty ``<file>`` tag, and the text file (its byte-order mark dropped) is inlined."""
    (tmp_path / "shot.png").write_bytes(PNG_1X1)
    (tmp_path / "notes.txt").write_text("\ufeffthe button is red")
    fake = FakeLLM()
    fake.script([Reply([text("it is red")])])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        config = json.loads((agent_dir / "models.json").read_text())
        config["providers"]["fake-anthropic"]["models"][0]["input"] = ["text", "image"]
        (agent_dir / "models.json").write_text(json.dumps(config))
        run = run_cli(
            ["--model", "fake-anthropic/claude-fake", "-p", "@shot.png", "@notes.txt", "what is wrong"],
            tmp_path,
        )
    assert run.returncode == 0, run.stderr
    assert fake.violations == []
    (request,) = fake.requests
    [user] = [m for m in request.body["messages"] if m["role"] == "user"]
    images = [b for b in user["content"] if b["type"] == "image"]
    assert [b["source"]["data"] for b in images] == [base64.b64encode(PNG_1X1).decode()]
    sent = "".join(b["text"] for b in user["content"] if b["type"] == "text")
    shot, notes = tmp_path / "shot.png", tmp_path / "notes.txt"
    assert (
        sent
        == f'<file name="{shot}"></file>\n<file name="{notes}">\nthe button is red\n</file>\nwhat is wrong'
    )


def test_a_bmp_file_argument_is_attached_as_png_with_pis_note(tmp_path: Path, agent_dir: Path) -> None:
    """``@shot.bmp``: as pi, the picture goes as a PNG and its ``<file>`` tag holds the conversion note; a
    BMP that cannot be decoded (one claiming an embedded JPEG) is left out, the tag saying so and why."""
    from tests.tools.bmp_helpers import bmp, grid, png_pixels

    pixels = grid(6, 3)
    (tmp_path / "shot.bmp").write_bytes(bmp(pixels, 32))
    (tmp_path / "jpeg.bmp").write_bytes(bmp(pixels, 24, compression=4))
    fake = FakeLLM()
    fake.script([Reply([text("a pattern")])])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        config = json.loads((agent_dir / "models.json").read_text())
        config["providers"]["fake-anthropic"]["models"][0]["input"] = ["text", "image"]
        (agent_dir / "models.json").write_text(json.dumps(config))
        run = run_cli(
            ["--model", "fake-anthropic/claude-fake", "-p", "@shot.bmp", "@jpeg.bmp", "what is it"], tmp_path
        )
    assert run.returncode == 0, run.stderr
    (request,) = fake.requests
    [user] = [m for m in request.body["messages"] if m["role"] == "user"]
    [image] = [b for b in user["content"] if b["type"] == "image"]
    assert image["source"]["media_type"] == "image/png"
    assert png_pixels(base64.b64decode(image["source"]["data"])) == pixels
    sent = "".join(b["text"] for b in user["content"] if b["type"] == "text")
    assert sent == (
        f'<file name="{tmp_path / "shot.bmp"}">[Image converted from image/bmp to image/png.]</file>\n'
        f'<file name="{tmp_path / "jpeg.bmp"}">[Image omitted: could not be converted to a supported inline '
        "image format.]\nembedded JPEG-compressed BMP is not supported; save it uncompressed</file>\nwhat is it"
    )


def test_a_directory_file_argument_is_named_as_one(tmp_path: Path, agent_dir: Path) -> None:
    run = run_cli(["--provider", "faux", "-p", "@.", "hi"], tmp_path)
    assert run.returncode == 1 and run.stderr.strip() == "Not a file: . is a directory"


def test_a_wait_over_the_cap_is_retried_on_the_usual_schedule_and_told(
    tmp_path: Path, agent_dir: Path
) -> None:
    """A 429 asking for 120 s (over pi's 60 s cap) is retried after the agent's own backoff, as pi 0.87.1
    does, and stderr says when and why, instead of giving up at once."""
    (agent_dir / "settings.json").write_text(json.dumps({"retry": {"baseDelayMs": 10}}))
    fake = FakeLLM()
    fake.script([Fault("rate_limit", retry_after_ms=120_000), Reply([text("recovered")])])
    with fake.serve() as server:
        write_models_json(agent_dir, server)
        run = run_cli(["--model", "fake-anthropic/claude-fake", "-p", "hi"], tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "recovered"
    assert "Retrying (1/3) in 0.0s" in run.stderr and "120000 ms" in run.stderr
    assert len(fake.requests) == 2
