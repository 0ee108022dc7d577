from __future__ import annotations

import json
import runpy
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
CORPUS = Path(__file__).with_name("secret_corpus.json")
# A secret leaks when any 12 characters of it (all of it, when shorter) survive the masking.
WINDOW = 12


@pytest.fixture(scope="module")
def redactor() -> Any:
    module = runpy.run_path(str(REPO / "extensions" / "secret_redactor.py"))
    return module["Redactor"](lambda: [], [])


def leaked(secret: str, masked: str) -> bool:
    width = min(WINDOW, len(secret))
    return any(secret[i : i + width] in masked for i in range(len(secret) - width + 1))


def test_the_corpus_has_sixty_real_format_secrets_of_the_kinds_that_matter() -> None:
    cases = json.loads(CORPUS.read_text())
    kinds = {case["kind"].split("_")[0].split(":")[0] for case in cases}
    assert len(cases) >= 60
    assert {"aws", "azure", "gcp", "github", "gitlab", "slack", "stripe", "twilio", "jwt", "private"} <= kinds
    assert {"password", "postgres", "mysql", "mongodb", "redis"} <= kinds


def test_every_secret_of_the_corpus_is_masked_and_none_leaks(redactor: Any) -> None:
    cases = json.loads(CORPUS.read_text())
    leaks = [case["kind"] for case in cases if leaked(case["secret"], redactor.redact(case["text"]))]
    recall = 1 - len(leaks) / len(cases)
    assert leaks == [], f"recall {recall:.3f}; leaked: {leaks}"


def ordinary_files() -> list[Path]:
    """This repository's own code and prose, without the files that hold test secrets on purpose."""
    files = [*REPO.glob("pi_tui/**/*.py"), *REPO.glob("docs/**/*.md"), *REPO.glob("extensions/*.py")]
    return sorted(p for p in files if p.name not in ("_secrets.py", "secret_redactor.py"))


def test_ordinary_code_and_prose_are_left_alone(redactor: Any) -> None:
    lines = 0
    false_positives: list[str] = []
    for path in ordinary_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        lines += text.count("\n")
        if redactor.redact(text) != text:
            for before in text.splitlines():
                if redactor.redact(before) != before:
                    false_positives.append(f"{path.relative_to(REPO)}: {before.strip()[:100]}")
    assert lines > 20_000
    assert len(false_positives) <= lines / 10_000, false_positives


def test_the_issue_s_credentials_file_is_masked_whole(redactor: Any) -> None:
    text = (
        "[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\n"
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\nregion = eu-west-1\n"
    )
    assert redactor.redact(text) == (
        "[default]\naws_access_key_id = [REDACTED:aws_access_key]\n"
        "aws_secret_access_key = [REDACTED:secret]\nregion = eu-west-1\n"
    )


def test_masking_is_stable_and_idempotent(redactor: Any) -> None:
    text = "token: ghp_" + "Zq8Lm2Nx4Vb6Cd8Fg0Hj2Kl4Mn6Pq8Rs0Tu2Vw4" + "\n"
    once = redactor.redact(text)
    assert once == "token: [REDACTED:github_token]\n"
    assert redactor.redact(text) == once and redactor.redact(once) == once


def test_a_run_without_the_redactor_never_imports_detect_secrets(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from pi_tui.args import parse_args\n"
        "from pi_tui.runtime.factory import create_session\n"
        "create_session(parse_args(['--provider', 'faux', '-e', 'permission_gate', '-p', 'x']), __import__('pathlib').Path('.'))\n"
        "print('detect_secrets' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert out.stdout.strip() == "False", out.stderr


def test_inline_images_and_signed_thinking_in_a_request_body_are_left_alone(redactor: Any) -> None:
    noise = (
        "QUtJQUFBQUFBQUFBQUFBQUFBQUE" + "AKIAABCDEFGHIJKLMNOP" + "ZZZZ"
    )  # an access-key shape inside base64
    body = {
        "messages": [
            {"content": [{"type": "image_url", "image_url": {"url": f"data:image/png;base64,{noise}"}}]},
            {"content": [{"type": "thinking", "thinking": "AKIAABCDEFGHIJKLMNOP", "signature": noise}]},
            {"content": [{"type": "text", "text": "key AKIAABCDEFGHIJKLMNOP"}]},
        ]
    }
    opaque = runpy.run_path(str(REPO / "extensions" / "secret_redactor.py"))["_OPAQUE_KEYS"]
    masked = redactor.redact_data(body, skip=opaque)
    assert masked["messages"][:2] == body["messages"][:2]
    assert masked["messages"][2]["content"][0]["text"] == "key [REDACTED:aws_access_key]"
