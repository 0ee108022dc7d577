"""Under ``CI=true`` a skipped test is a failure.

A test skips when something it needs is missing (pi 0.87.1, the shared pi fixtures, bubblewrap, a
reference MCP server). On a developer's machine that is a fair skip; in CI it means the suite did not
test what it claims to, so the report turns each skip into a failure that names the reason. An expected
failure (``xfail``) is left as it is.
"""

from __future__ import annotations

import os
from collections.abc import Generator

import pytest


def ci_forbids_skips() -> bool:
    """Whether this run is CI, where no test may skip."""
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()  # type: ignore[attr-defined]
    if report.skipped and ci_forbids_skips() and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"skipped under CI=true, which counts as a failure: {reason}"
