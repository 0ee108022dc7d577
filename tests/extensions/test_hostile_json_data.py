from __future__ import annotations

import json
from pathlib import Path

from .helpers import Events, module, open_session, write_extension

DEEP = "[" * 100_000 + "]" * 100_000

STATEFUL = f"""
import json
from pi_tui.extensions.api import decode_json

SEEN = {{}}


def register(pi):
    async def save(args, ctx):
        try:
            SEEN["decode"] = decode_json({DEEP!r})
        except json.JSONDecodeError as exc:
            SEEN["decode"] = exc.msg
        deep = "leaf"
        for _ in range(100_000):
            deep = [deep]
        try:
            pi.append_entry("my-state", deep)
        except Exception as exc:
            SEEN["too deep"] = str(exc)
        SEEN["kept"] = pi.append_entry("my-state", {{"count": 1}})

    pi.register_command("save", handler=save)
"""


async def test_an_extension_decodes_and_saves_deep_data_with_an_error_it_can_catch(tmp_path: Path) -> None:
    path = write_extension(tmp_path / "ext", "stateful", STATEFUL)
    async with open_session(["-e", str(path)], tmp_path) as session:
        events = Events(session)
        await session.prompt("/save")
        seen = module(session, "stateful").SEEN
        assert seen["decode"] == "JSON nested deeper than 256 levels"
        assert "Not saved" in seen["too deep"] and "deeper than 272 levels" in seen["too deep"]
        assert events.errors() == []
        await session.prompt("hello")  # the session goes on
        file = session.session_manager.path
    assert file is not None
    entries = [json.loads(line) for line in Path(file).read_text().splitlines()[1:]]
    custom = [e for e in entries if e["type"] == "custom"]
    assert [(e["id"], e["data"]) for e in custom] == [(seen["kept"], {"count": 1})]
