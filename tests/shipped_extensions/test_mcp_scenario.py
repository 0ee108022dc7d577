"""The cost scenario on the fake LLM: three servers with 60 tools in all.

- Request overhead: what the first request costs with the servers behind the proxy, with them all direct,
  and with no MCP at all.
- A 30-call session in which a third server is connected only at call 15 (lazy, first used there): with
  the proxy the cached prefix is never touched, so the cache-read ratio stays ≥ 0.95.

The figures are printed (``-s``) and recorded in docs/performance.md.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from pi_tui.testing import FakeLLM, Reply, text, tool_call

from .helpers import MODEL, ext, model_requests, open_session

MANY = Path(__file__).parent / "mcp_servers" / "many.py"
SERVERS = {"browser": 25, "devtools": 20, "tracker": 15}
VERBS = ["click", "type", "hover", "drag", "select", "upload", "scroll", "wait", "read", "capture"]


def write_mcp(agent_dir: Path, direct: bool) -> None:
    servers = {
        name: {"command": sys.executable, "args": [str(MANY), str(count), name], "directTools": direct}
        for name, count in SERVERS.items()
    }
    (agent_dir / "mcp.json").write_text(json.dumps({"mcpServers": servers}))


async def first_request_tokens(fake: FakeLLM, project: Path, argv: list[str]) -> int:
    fake.reset()
    fake.script([Reply([text("ok")])])
    async with open_session(argv, project, model=MODEL) as session:
        await session.prompt("hello")
    return fake.cache_stats().requests[0].total


async def test_request_overhead_and_the_cache_ratio_of_a_session_connecting_a_server_mid_way(
    fake: FakeLLM, agent_dir: Path, project: Path
) -> None:
    baseline = await first_request_tokens(fake, project, [])
    write_mcp(agent_dir, direct=False)
    proxied = await first_request_tokens(fake, project, ext("mcp"))
    write_mcp(agent_dir, direct=True)
    direct = await first_request_tokens(fake, project, ext("mcp"))

    write_mcp(agent_dir, direct=False)
    fake.reset()
    # Calls 1–15 use the browser server; from call 16 on, every other call goes to the tracker server,
    # which starts only then.
    calls = [f"browser/browser_{VERBS[i % 10]}_{i}" for i in range(15)]
    calls += [
        f"tracker/tracker_{VERBS[i % 10]}_{i}" if i % 2 else "browser/browser_type_1" for i in range(15)
    ]
    replies = [
        Reply([tool_call("mcp", {"tool": name, "args": {"selector": f"#b{i}"}})])
        for i, name in enumerate(calls)
    ]
    fake.script([*replies, Reply([text("done")])])
    async with open_session(ext("mcp"), project, model=MODEL) as session:
        await session.prompt("work through the page")
    requests = model_requests(fake)
    stats = fake.cache_stats()
    results = [r.content for r in requests[-1].tool_results()]

    print(
        f"\nfirst request: no MCP {baseline} tokens, proxy {proxied} (+{proxied - baseline}), "
        f"direct {direct} (+{direct - baseline}); 30-call session: cache-read ratio {stats.hit_ratio:.3f} "
        f"over {len(stats.requests)} requests"
    )
    assert len(results) == 30 and all(" done on #b" in r for r in results), results[:3]
    assert results[16].startswith("tracker tool")  # the third server started mid-session
    assert len({json.dumps(r.body["tools"]) for r in requests}) == 1
    assert stats.hit_ratio >= 0.95
    assert proxied - baseline < 400 < direct - baseline
