"""A prompt that names a lazy MCP server starts it early (while the model reads the request); the call that
follows must then be answered, not wait out the server's timeout (in print mode it hung until then: the
early start waited for the SDK session, which a print run loads only later)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from pi_tui.testing import FakeLLM, Reply, text, tool_call
from tests.e2e.helpers import write_models_json
from tests.safety.helpers import MODEL, start_cli

DEMO = Path(__file__).parent / "mcp_servers" / "demo.py"


def test_a_server_the_prompt_names_answers_the_first_call_in_print_mode(
    tmp_path: Path, agent_dir: Path
) -> None:
    server = {"command": sys.executable, "args": [str(DEMO)], "timeout": 20}
    (agent_dir / "mcp.json").write_text(json.dumps({"mcpServers": {"demo": server}}))
    fake = FakeLLM()
    fake.script(
        [Reply([tool_call("mcp", {"tool": "demo/add", "args": {"a": 1, "b": 2}})]), Reply([text("3")])]
    )
    with fake.serve() as served:
        write_models_json(agent_dir, served)
        proc = start_cli([*MODEL, "-e", "mcp", "-p", "add one and two with demo"], tmp_path)
        out, err = proc.communicate(timeout=50)
        results = [r.content for r in fake.requests[1].tool_results()]
    assert proc.returncode == 0, err
    assert results == ["3"]
