from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.e2e.helpers import run_cli

from .helpers import (
    ANTHROPIC,
    SUMMARY,
    Reader,
    file_body,
    first_user_text,
    requests_after_summaries,
    summary_requests,
    work_requests,
    write_data_files,
    write_settings,
)

WINDOW = 16_000
RESERVE = 4_000
FILES = 60


def test_one_prompt_whose_tool_outputs_exceed_the_window_four_times_finishes_in_print_mode(
    serve: Any, agent_dir: Path, project: Path
) -> None:
    write_data_files(project, FILES)
    write_settings(agent_dir, {"compaction": {"reserveTokens": RESERVE, "keepRecentTokens": 3_000}})
    reader = Reader(per_prompt=FILES)
    fake = serve(context_window=WINDOW, responder=reader)
    outputs = FILES * fake.count_tokens(file_body(0))
    assert outputs > 3.5 * WINDOW

    run = run_cli(["--model", ANTHROPIC, "-p", "Read every file in data/ one by one."], project, timeout=120)

    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == f"Read {FILES} files."
    assert fake.violations == []
    assert reader.read == FILES
    summaries = summary_requests(fake.requests)
    compactions = requests_after_summaries(fake.requests)
    assert len(compactions) >= 4
    assert run.stderr.count("[auto_compaction_end]") == len(compactions)
    assert run.stderr.count('[auto_compaction_start] {"reason": "threshold"}') == len(compactions)
    # the run went on from each summary: the next request starts with it and is well under the threshold
    for request in compactions:
        assert SUMMARY.splitlines()[1] in first_user_text(request)
        assert request.prompt_tokens < WINDOW - RESERVE
    assert all(r.prompt_tokens <= WINDOW for r in fake.requests)
    assert len(work_requests(fake.requests)) == FILES + 1
    # later summaries update the earlier ones
    assert any("<previous-summary>" in r.last_user_text() for r in summaries)
