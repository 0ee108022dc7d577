"""A pytest fixture for the fake LLM server. Not auto-registered; opt in with either::

    pytest_plugins = ["pi_tui.testing.pytest_plugin"]          # in a conftest.py

    from pi_tui.testing.pytest_plugin import fake_llm  # noqa: F401   # in a test module

``fake_llm`` is a serving `FakeLLM` (``fake_llm.server.anthropic_base_url`` / ``openai_base_url``);
the server is closed after the test. Assertions stay explicit: call ``fake_llm.assert_script_consumed()``
and check ``fake_llm.violations`` yourself.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ._fake import FakeLLM

__all__ = ["fake_llm"]


@pytest.fixture
def fake_llm() -> Iterator[FakeLLM]:
    """A `FakeLLM` with default limits, already serving on 127.0.0.1."""
    fake = FakeLLM()
    with fake.serve():
        yield fake
