from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY_AT_STARTUP = {"textual", "anthropic", "openai", "httpx2", "pydantic", "tiktoken", "rich"}
UI_ONLY = {"textual", "rich", "prompt_toolkit"}


def _modules_after(code: str, cwd: Path) -> tuple[set[str], str]:
    script = f"import json, sys\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    env = dict(os.environ)
    env.pop("PYTEST_CURRENT_TEST", None)
    proc = subprocess.run(
        [sys.executable, "-c", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=30
    )
    assert proc.returncode == 0, proc.stderr
    *output, modules = proc.stdout.splitlines()
    return {name.split(".")[0] for name in json.loads(modules)}, "\n".join(output)


@pytest.mark.parametrize("flag", ["--version", "--help"])
def test_version_and_help_load_no_sdk_ui_or_validation_library(flag: str, tmp_path: Path) -> None:
    loaded, output = _modules_after(f"from pi_tui.cli import main\nmain([{flag!r}])", tmp_path)
    assert output.strip()  # it did answer
    assert loaded & HEAVY_AT_STARTUP == set()


def test_the_runtime_does_not_load_a_user_interface(tmp_path: Path) -> None:
    loaded, _ = _modules_after("import pi_tui.runtime.agent_session", tmp_path)
    assert "pi_tui" in loaded
    assert loaded & UI_ONLY == set()
