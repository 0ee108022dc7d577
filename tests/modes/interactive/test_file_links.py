"""The ``file://`` addresses tool cards link their paths to, written as pi 0.87.1 writes them (Node's
``pathToFileURL`` of the path resolved against the working directory)."""

from __future__ import annotations

import json
from pathlib import Path

from rich.style import Style

from pi_tui.ai.providers.faux import FauxScript, faux_reply, faux_tool_call
from pi_tui.modes.interactive.blocks import ToolBlock
from pi_tui.modes.interactive.file_links import LINKED_PATH_TOOLS, file_url

from .helpers import make_app, type_text, until

CWD = Path("/home/u/proj")


def test_a_relative_path_is_made_absolute_with_an_empty_host() -> None:
    assert file_url("src/app.py", CWD) == "file:///home/u/proj/src/app.py"
    assert file_url("./a/../b.txt", CWD) == "file:///home/u/proj/b.txt"  # "." and ".." folded, as Node does
    assert file_url("/etc/hosts", CWD) == "file:///etc/hosts"
    assert file_url("//srv//x/", CWD) == "file:///srv/x"


def test_spaces_and_non_ascii_are_percent_encoded_utf8() -> None:
    # The addresses Node 24's pathToFileURL gives for these paths
    assert file_url("notes dir/été.md", CWD) == "file:///home/u/proj/notes%20dir/%C3%A9t%C3%A9.md"
    assert file_url("/tmp/日本.txt", CWD) == "file:///tmp/%E6%97%A5%E6%9C%AC.txt"
    assert file_url("/tmp/x%y#z?w.txt", CWD) == "file:///tmp/x%25y%23z%3Fw.txt"
    assert file_url("/tmp/a\tb\nc", CWD) == "file:///tmp/a%09b%0Ac"
    assert file_url('/tmp/[x]{y}|`^"<>\\.txt', CWD) == "file:///tmp/%5Bx%5D%7By%7D%7C%60%5E%22%3C%3E%5C.txt"
    # Node keeps these as they are, but writes "~" as %7E
    assert file_url("/tmp/~!$&'()*+,;=:@_-.txt", CWD) == "file:///tmp/%7E!$&'()*+,;=:@_-.txt"
    assert file_url("/t/\ud800x", CWD) == "file:///t/%EF%BF%BDx"  # a lone surrogate is U+FFFD


def test_home_and_file_addresses_are_read_as_pis_tools_read_them() -> None:
    home = Path.home()  # the test's own temporary home (tests/conftest.py)
    assert file_url("~/x y", CWD) == f"file://{home.as_posix()}/x%20y"
    assert file_url("~", CWD) == f"file://{home.as_posix()}"
    assert file_url("file:///tmp/a%20b", CWD) == "file:///tmp/a%20b"


def test_only_pis_path_tools_link_their_titles() -> None:
    assert LINKED_PATH_TOOLS == {"read", "edit", "write", "ls"}  # grep and find name theirs as plain text


def _links(block: ToolBlock) -> list[tuple[str, str]]:
    """The text each link in a card's lines covers, with its address."""
    drawn = block.render()
    return [
        (drawn.plain[span.start : span.end], span.style.link)
        for span in drawn.spans
        if isinstance(span.style, Style) and span.style.link
    ]


async def test_edit_and_write_titles_link_their_path_and_grep_does_not(tmp_path: Path, agent_dir: Path) -> None:
    (agent_dir / "settings.json").write_text(json.dumps({"terminal": {"hyperlinks": True}}))
    (tmp_path / "a b.py").write_text("x = 1\n")
    calls = [
        faux_tool_call("write", {"path": "new é.txt", "content": "x"}, id="w"),
        faux_tool_call("edit", {"path": "a b.py", "edits": [{"oldText": "1", "newText": "2"}]}, id="e"),
        faux_tool_call("grep", {"pattern": "x", "path": "."}, id="g"),
    ]
    script = FauxScript(faux_reply(*calls), faux_reply("done"))
    app = make_app(tmp_path, agent_dir, script)
    async with app.run_test() as pilot:
        await until(pilot, app.ready.is_set)
        await type_text(pilot, "go")
        await pilot.press("enter")
        await until(pilot, lambda: script.call_count == 2 and not app._busy)
        tools = app.chat.tools
        assert _links(tools["w"]) == [("new é.txt", f"file://{tmp_path.as_posix()}/new%20%C3%A9.txt")]
        assert _links(tools["e"]) == [("a b.py", f"file://{tmp_path.as_posix()}/a%20b.py")]
        assert _links(tools["g"]) == []  # pi names grep's and find's directory as plain text
