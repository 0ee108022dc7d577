from __future__ import annotations

from pathlib import Path

from ..e2e.helpers import run_cli


def test_a_message_sent_during_agent_end_starts_another_run(tmp_path: Path, agent_dir: Path) -> None:
    ext = tmp_path / "nudge.py"
    ext.write_text(
        "state = {'sent': False}\n"
        "def register(pi):\n"
        "    @pi.on('agent_end')\n"
        "    def nudge(event, ctx):\n"
        "        if not state['sent']:\n"
        "            state['sent'] = True\n"
        "            pi.send_user_message('and one more thing', deliver_as='follow_up')\n"
    )
    run = run_cli(["--provider", "faux", "-e", str(ext), "-p", "hello"], tmp_path)
    assert run.returncode == 0, run.stderr
    assert "and one more thing" in run.stdout  # the queued message was answered, not left in the queue
