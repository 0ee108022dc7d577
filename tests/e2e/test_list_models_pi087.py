"""``--list-models`` side by side with pi 0.87.1: with a dummy value in every variable of every provider,
both list the same rows (provider, model, context, max-out, thinking, images) in the same order; pi-tui
adds only its offline ``faux`` model."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pi_tui.ai.catalog import builtin_providers, provider_info

from ..pi087 import Pi087

pytestmark = pytest.mark.slow


def _dummy_keys() -> dict[str, str]:
    names = {name for p in builtin_providers() if (info := provider_info(p)) for name in info.env}
    names.discard("AWS_PROFILE")  # a profile that does not exist would make the AWS SDK complain
    names |= {"AWS_SECRET_ACCESS_KEY"}
    return dict.fromkeys(sorted(names), "dummy")


def _rows(argv: list[str], tmp_path: Path) -> list[list[str]]:
    home = tmp_path / "home"
    agent = home / ".pi" / "agent"
    agent.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}
    env |= {"HOME": str(home), "PI_CODING_AGENT_DIR": str(agent), "PI_OFFLINE": "1", **_dummy_keys()}
    # into a file, not a pipe: Node may exit before a long output has gone through a pipe
    out = tmp_path / f"list-{len(list(tmp_path.glob('list-*')))}.txt"
    with out.open("w") as handle:
        run = subprocess.run(
            [*argv, "--list-models"],
            cwd=tmp_path,
            env=env,
            stdout=handle,
            stderr=subprocess.PIPE,
            text=True,
            timeout=50,
        )
    assert run.returncode == 0, run.stderr
    lines = out.read_text().splitlines()
    assert lines[0].split() == ["provider", "model", "context", "max-out", "thinking", "images"]
    return [line.split() for line in lines[1:] if line.strip()]


def test_list_models_matches_pi_with_a_key_for_every_provider(tmp_path: Path, pi087: Pi087) -> None:
    theirs = _rows(pi087.argv(), tmp_path)
    ours = [row for row in _rows([sys.executable, "-m", "pi_tui"], tmp_path) if row[0] != "faux"]
    assert len({row[0] for row in ours}) == 40  # every provider but the login-only openai-codex
    missing = [row for row in theirs if row not in ours]
    extra = [row for row in ours if row not in theirs]
    assert (missing[:5], extra[:5], len(missing), len(extra)) == ([], [], 0, 0)
    assert ours == theirs
