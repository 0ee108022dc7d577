from __future__ import annotations

from pathlib import Path

import pytest

from pi_tui.args import ArgsError, parse_args, resolve_flag_words

from ..e2e.helpers import run_cli


def test_flags_files_and_messages() -> None:
    args = parse_args(
        ["-p", "--model", "sonnet:high", "@a.py", "first", "--tools", "read,bash", "second", "-c"]
    )
    assert args.print_mode and args.continue_session
    assert args.model == "sonnet:high" and args.tools == ["read", "bash"]
    assert args.files == ["a.py"] and args.messages == ["first", "second"]


def test_value_flag_without_value_is_an_error() -> None:
    with pytest.raises(ArgsError, match="--model needs a value"):
        parse_args(["--model"])


def test_inline_values_and_repeatable_extensions() -> None:
    args = parse_args(["--model=gpt-5.4", "-e", "a.py", "--extension", "b.py"])
    assert args.model == "gpt-5.4" and args.extensions == ["a.py", "b.py"]


def test_unknown_flag_word_is_resolved_by_the_flag_type() -> None:
    args = parse_args(["--plan", "hi", "--mode-x", "val", "there"])
    assert args.messages == ["there"]
    resolve_flag_words(args, {"plan": "boolean", "mode-x": "string"})
    assert args.messages == ["hi", "there"]
    assert args.unknown_flags == {"plan": True, "mode-x": "val"}


def test_unclaimed_unknown_flag_gives_its_word_back_and_is_dropped() -> None:
    args = parse_args(["--nope", "hello"])
    resolve_flag_words(args, {})
    assert args.messages == ["hello"] and args.unknown_flags == {}


def test_extension_boolean_flag_does_not_swallow_the_prompt(tmp_path: Path) -> None:
    ext = tmp_path / "planflag.py"
    ext.write_text(
        "def register(pi):\n"
        "    pi.register_flag('plan', type='boolean')\n"
        "    @pi.on('input')\n"
        "    def tag(event, ctx):\n"
        "        return {'action': 'transform', 'text': f\"{event.text} [plan={pi.get_flag('plan')}]\"}\n"
    )
    run = run_cli(["--provider", "faux", "-e", str(ext), "-p", "--plan", "hello"], tmp_path)
    assert run.returncode == 0, run.stderr
    assert "hello [plan=True]" in run.stdout
    assert "Unknown option" not in run.stderr


def test_an_option_no_extension_claims_stops_the_run_as_in_pi(tmp_path: Path) -> None:
    run = run_cli(["--provider", "faux", "-p", "--bogus-flag", "hello"], tmp_path)
    assert run.returncode == 1
    assert run.stderr.strip().splitlines()[-1] == "Error: Unknown option: --bogus-flag"
    assert run.stdout == "" and "Traceback" not in run.stderr
    assert not (Path.home() / ".pi" / "agent" / "sessions").exists()  # nothing was run or saved


def test_several_unknown_options_are_named_together(tmp_path: Path) -> None:
    run = run_cli(["--provider", "faux", "--mode", "json", "--one", "-z", "hello"], tmp_path)
    assert run.returncode == 1
    assert run.stderr.strip().splitlines()[-1] == "Error: Unknown options: --one, -z"
