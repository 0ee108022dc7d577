"""The MCP SDK is loaded client half only: its package ``__init__`` (which imports the server half) runs
only when somebody else asks the package for something, and then everything still works.

Each check runs in a fresh interpreter: the point is what one process imports.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

PRELOAD_ALL = """
import json, sys
from pi_tui.bundled_extensions.mcp import sdk
sdk.preload(["stdio", "http", "sse"]).result()
from pi_tui.bundled_extensions.mcp import oauth, oauth_login  # noqa: F401
import mcp.client.auth, mcp.shared.auth  # what an OAuth login imports
"""


def run(code: str) -> dict[str, object]:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_preloading_every_transport_imports_no_part_of_the_sdks_server_half() -> None:
    # An SDK version whose client modules need the server half (or the package __init__) fails here:
    # the load would still work, only ~140 ms of CPU slower.
    seen = run(PRELOAD_ALL + """
print(json.dumps({
    "server": sorted(m for m in sys.modules if m == "mcp.server" or m.startswith("mcp.server.")),
    "shells": [sdk.is_shell("mcp"), sdk.is_shell("mcp.client")],
    "jsonschema": "jsonschema" in sys.modules,
}))
""")
    assert seen == {"server": [], "shells": [True, True], "jsonschema": False}


def test_the_package_still_works_for_everyone_else_once_the_client_half_is_loaded() -> None:
    seen = run(PRELOAD_ALL + """
import mcp
from mcp import ClientSession, stdio_server
from mcp.client import Client
from mcp.server.mcpserver import MCPServer
import mcp.client.session
print(json.dumps({
    "same": ClientSession is mcp.client.session.ClientSession and mcp.ClientSession is ClientSession,
    "client": Client.__module__, "server": MCPServer.__module__, "stdio": stdio_server.__module__,
    "types": mcp.types.Tool.__name__, "shells": [sdk.is_shell("mcp"), sdk.is_shell("mcp.client")],
    "all": sorted(mcp.__all__) == sorted(set(mcp.__all__)) and "ClientSession" in mcp.__all__,
}))
""")
    assert seen == {"same": True, "client": "mcp.client.client", "server": "mcp.server.mcpserver.server",
                    "stdio": "mcp.server.stdio", "types": "Tool", "shells": [False, False],
                    "all": True}  # fmt: skip


def test_a_server_imported_in_process_while_the_client_loads_works() -> None:
    # An SDK server in the same process (as some tests run theirs) imports the package while the
    # preload thread is importing the client: both finish and see the same modules.
    seen = run("""
import json, sys
from pi_tui.bundled_extensions.mcp import sdk
loading = sdk.preload(["stdio", "http"])
from mcp.server.mcpserver import MCPServer
from mcp import ClientSession
loading.result(timeout=30)
import mcp.client.session
print(json.dumps({"same": ClientSession is mcp.client.session.ClientSession, "server": MCPServer.__name__}))
""")
    assert seen == {"same": True, "server": "MCPServer"}


def test_an_sdk_imported_before_the_extension_is_used_as_it_is() -> None:
    seen = run("""
import json
import mcp
from pi_tui.bundled_extensions.mcp import sdk
sdk.preload(["stdio"]).result()
print(json.dumps({"shell": sdk.is_shell("mcp"), "same": mcp is __import__("sys").modules["mcp"]}))
""")
    assert seen == {"shell": False, "same": True}


def test_jsonschema_is_loaded_after_the_client_once_a_server_starts() -> None:
    seen = run(PRELOAD_ALL + """
before = "jsonschema.validators" in sys.modules
sdk.prefetch_when_loaded(["stdio"]).result(timeout=30)
print(json.dumps({"before": before, "after": "jsonschema.validators" in sys.modules}))
""")
    assert seen == {"before": False, "after": True}


def test_the_load_runs_no_cyclic_collection_and_leaves_the_collector_on() -> None:
    # The protocol types are hundreds of thousands of objects that all stay alive: collections during
    # the load (and the first one after it, over all of them) were ~50 ms of its ~280 ms of CPU.
    seen = run("""
import gc, json
from pi_tui.bundled_extensions.mcp import sdk
# Counted from an empty young generation: had the start-up left it a few objects short of its
# threshold, the few made before the load's thread pauses the collector set off one collection
# (which of them comes first depends on the threads' timing: it failed once in a loaded full run).
gc.collect()
runs = []
gc.callbacks.append(lambda phase, info: runs.append(info["generation"]) if phase == "start" else None)
sdk.preload(["stdio"]).result(timeout=30)
during = len(runs)
sdk.prefetch_when_loaded(["stdio"]).result(timeout=30)
prefetch = len(runs) - during
for _ in range(20000):
    cycle = []
    cycle.append(cycle)
print(json.dumps({"during": during, "prefetch": prefetch, "enabled": gc.isenabled(),
                  "collects_after": len(runs) > during + prefetch}))
""")
    assert seen == {"during": 0, "prefetch": 0, "enabled": True, "collects_after": True}


def test_a_collector_held_off_by_the_caller_stays_off() -> None:
    seen = run("""
import gc, json
from pi_tui.bundled_extensions.mcp import sdk
gc.disable()
sdk.preload(["stdio"]).result(timeout=30)
print(json.dumps({"enabled": gc.isenabled()}))
""")
    assert seen == {"enabled": False}


def test_the_wire_models_of_both_protocol_eras_are_built_on_first_use_and_still_validate() -> None:
    # Building the validators of every model of both protocol eras at import was ~45 ms of CPU each;
    # a session uses a handful of them: the load builds the few a first call checks results against
    # (and the models inside them), the rest are built on first use.
    seen = run(PRELOAD_ALL + """
import mcp_types._v2025_11_25 as old, mcp_types._v2026_07_28 as new
from mcp_types import methods
from pydantic import BaseModel, ValidationError
models = [v for m in (old, new) for v in vars(m).values()
          if isinstance(v, type) and issubclass(v, BaseModel) and v.__module__ == m.__name__]
built = sum(1 for model in models if model.__pydantic_complete__)
checked = []
for version, extra in (("2025-11-25", {}), ("2026-07-28", {"resultType": "complete"})):
    methods.validate_server_result("tools/call", version, {"content": [{"type": "text", "text": "x"}], **extra})
    try:
        methods.validate_server_result("tools/call", version, {"content": "x"})
        checked.append("accepted")
    except ValidationError:
        checked.append("rejected")
for model in models:
    model.model_rebuild(force=True)  # every one of them can still be built
print(json.dumps({"models": len(models) > 250, "built at load": built <= 10, "bad result": checked}))
""")
    assert seen == {"models": True, "built at load": True, "bad result": ["rejected", "rejected"]}



def test_the_wire_models_a_first_call_checks_are_built_with_the_load() -> None:
    # Built on first use, they were built inside a first call's handshake (~1 ms each, after the server
    # had answered); now at the end of the load, in its thread.
    seen = run("""
import json
from pi_tui.bundled_extensions.mcp import sdk
sdk.preload(["stdio"]).result()
from mcp_types.methods import SERVER_REQUESTS, SERVER_RESULTS
methods = ("initialize", "tools/list", "prompts/list", "resources/list", "ping", "tools/call")
models = {SERVER_RESULTS[(method, "2025-11-25")] for method in methods}
models.add(SERVER_REQUESTS[("roots/list", "2025-11-25")])  # the roots the reference filesystem server asks for
print(json.dumps({"models": len(models), "built": sum(model.__pydantic_complete__ for model in models)}))
""")
    assert seen["built"] == seen["models"]
