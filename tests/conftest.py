"""Every test runs with a temporary home and agent dir and without provider credentials.

No test may read or write the real ``~/.pi`` or reach the network: the environment is scrubbed here,
once, for the whole suite.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_tui.ai.catalog import builtin_providers, provider_info
from pi_tui.testing import FakeLLM
from tests.ci_skips import pytest_runtest_makereport  # noqa: F401  (the hook: a skip fails under CI=true)
from tests.e2e.helpers import write_models_json
from tests.pi087 import Pi087, require_pi

# a test past its time limit fails at once and says where it was stuck, asyncio or not; the programs
# tests start take Ctrl+C as in a terminal even when pytest was started with it ignored
pytest_plugins = ["tests.timeouts", "tests.interrupts"]

_SCRUBBED_ENV = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_OAUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_CUSTOM_HEADERS",
    "ANTHROPIC_PROFILE",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_ORG_ID",
    "OPENAI_PROJECT_ID",
    "OPENAI_CUSTOM_HEADERS",
    "GEMINI_API_KEY",
    "GOOGLE_CLOUD_API_KEY",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "GOOGLE_CLOUD_PROJECT",
    "GCLOUD_PROJECT",
    "GOOGLE_CLOUD_LOCATION",
    "PI_CACHE_RETENTION",
    "PI_OFFLINE",
    "PI_CODING_AGENT_SESSION_DIR",
    "VISUAL",
    "EDITOR",
)
# every variable the catalog reads for a provider's credentials (GROQ_API_KEY, AWS_PROFILE, …), so a key
# in the developer's shell never makes a provider available in a test
_SCRUBBED_ENV += tuple(
    sorted({name for p in builtin_providers() if (info := provider_info(p)) for name in info.env})
)
_SCRUBBED_ENV += ("AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION", "AWS_DEFAULT_REGION")
# the rest of the AWS credential chain (files, roles, endpoints, metadata services): a developer's own
# ~/.aws settings or an EC2 host never take part in a test
_SCRUBBED_ENV += (
    "AWS_CONFIG_FILE",
    "AWS_SHARED_CREDENTIALS_FILE",
    "AWS_ROLE_ARN",
    "AWS_ROLE_SESSION_NAME",
    "AWS_ENDPOINT_URL",
    "AWS_ENDPOINT_URL_STS",
    "AWS_ENDPOINT_URL_SSO",
    "AWS_ENDPOINT_URL_SSO_OIDC",
    "AWS_EC2_METADATA_SERVICE_ENDPOINT",
    "AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE",
    "AWS_EC2_METADATA_V1_DISABLED",
    "AWS_METADATA_SERVICE_TIMEOUT",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
    "AWS_BEDROCK_SKIP_AUTH",
)
# the session's clipboard route (a display, a remote login): a copy in a test never reaches the real clipboard
_SCRUBBED_ENV += ("DISPLAY", "WAYLAND_DISPLAY", "TERMUX_VERSION", "SSH_CONNECTION", "SSH_CLIENT", "MOSH_CONNECTION")
_SCRUBBED_ENV += ("WSL_DISTRO_NAME", "WSLENV", "WT_SESSION")
# what the terminal is and can do (OSC 8 links, 24-bit colour): the developer's terminal never decides a test
_SCRUBBED_ENV += ("PI_HYPERLINKS", "PI_TRUE_COLOR", "TERM_PROGRAM", "KITTY_WINDOW_ID", "GHOSTTY_RESOURCES_DIR")
_SCRUBBED_ENV += ("WEZTERM_PANE", "WARP_SESSION_ID", "WARP_TERMINAL_SESSION_UUID", "ITERM_SESSION_ID", "TMUX")


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    environment = dict(os.environ)
    home = tmp_path_factory.mktemp("home")
    agent_dir = home / ".pi" / "agent"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent_dir))
    monkeypatch.setenv("ANTHROPIC_CONFIG_DIR", str(home / ".config" / "anthropic"))
    for name in _SCRUBBED_ENV:
        monkeypatch.delenv(name, raising=False)
    # the AWS credential chain ends at the EC2 metadata address (169.254.169.254): never in a test
    # unless the test points it at its own server
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    yield home
    # What the code under test put into this process's environment (a setting applied as a variable, as
    # httpProxy is) goes with the test: monkeypatch undoes only the variables it touched itself, and one
    # left behind changes every later test in this worker (a proxy for every fake server's request).
    if os.environ != environment:
        os.environ.clear()
        os.environ.update(environment)


@pytest.fixture
def agent_dir(isolated_home: Path) -> Path:
    path = isolated_home / ".pi" / "agent"
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture
def fake(agent_dir: Path) -> Iterator[FakeLLM]:
    """The fake LLM server, with a ``models.json`` whose providers point at it (see tests/e2e/helpers.py).

    Test folders that need another setup (no models.json, a scripted fake) define their own ``fake``."""
    llm = FakeLLM()
    with llm.serve() as server:
        write_models_json(agent_dir, server)
        yield llm


@pytest.fixture(scope="session")
def pi087() -> Pi087:
    """pi 0.87.1 on Node 24 (tests/pi087.py): installed into a cache folder on first use, then reused.

    Fails the test under ``CI=true`` when pi cannot be installed; skips it elsewhere."""
    return require_pi()


@pytest.hookimpl(trylast=True)  # after -k and -m have deselected theirs
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``slow`` (a subprocess, a longer scenario) run first, in their usual order.

    The two xdist workers take tests as they finish earlier ones: a long test near the end of the order
    kept one worker busy while the other had nothing left (mypy alone took a minute under load, among the
    last tenth of the tests). Long tests first, short ones last: the workers end close together.

    The structural guards run once: by their own files when the run has them, else through
    tests/test_code_quality.py (landing runs that file alone), which runs them in a pytest of its own.
    In the whole suite they ran twice, the second time in that pytest: up to a minute of one worker under
    load.
    """
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
    from tests.test_code_quality import GUARDS, GUARDS_TEST

    if {item.nodeid.split("::")[0] for item in items}.issuperset(GUARDS):
        repeated = [item for item in items if item.nodeid == GUARDS_TEST]
        if repeated:
            config.hook.pytest_deselected(items=repeated)
            items[:] = [item for item in items if item.nodeid != GUARDS_TEST]
