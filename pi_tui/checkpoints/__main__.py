"""``python -m pi_tui.checkpoints gc [--budget-mb N]``: collect the checkpoint store's garbage now."""

from __future__ import annotations

import argparse
import sys

from pi_tui.ai.paths import agent_dir

from .gc import collect_garbage
from .limits import CheckpointLimits
from .recorder import store_root


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pi_tui.checkpoints")
    parser.add_argument("command", choices=["gc"])
    parser.add_argument("--budget-mb", type=int, default=CheckpointLimits().budget_mb)
    args = parser.parse_args(argv)
    base = agent_dir()
    report = collect_garbage(store_root(base), [base / "sessions"], budget_bytes=args.budget_mb * 1024 * 1024)
    sys.stdout.write(
        f"Deleted {report.blobs_deleted} of {report.blobs_before} blobs, dropped {report.manifests_dropped} "
        f"snapshot baselines: {report.bytes_before / 1e6:.1f} MB -> {report.bytes_after / 1e6:.1f} MB\n"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
