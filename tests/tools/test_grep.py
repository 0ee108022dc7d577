from __future__ import annotations

import asyncio
from pathlib import Path

from pi_tui.ai.stream import AbortSignal
from pi_tui.tools.grep import create_grep_tool

from .helpers import run, run_error, run_text


def _tree(root: Path, files: dict[str, str | bytes]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)


async def test_matches_are_listed_with_relative_paths_and_line_numbers(tmp_path: Path) -> None:
    _tree(tmp_path, {"a.txt": "nothing\nhello world\n", "sub/b.txt": "hello again\n"})
    text = await run_text(create_grep_tool(tmp_path), {"pattern": "hello"})
    assert text == "a.txt:2: hello world\nsub/b.txt:1: hello again"


async def test_a_single_file_search_uses_the_basename(tmp_path: Path) -> None:
    _tree(tmp_path, {"deep/dir/f.py": "x = 1\ny = 2\n"})
    text = await run_text(create_grep_tool(tmp_path), {"pattern": "y", "path": "deep/dir/f.py"})
    assert text == "f.py:2: y = 2"


async def test_the_path_argument_sets_the_root_of_relative_names(tmp_path: Path) -> None:
    _tree(tmp_path, {"src/pkg/m.py": "needle\n"})
    assert (
        await run_text(create_grep_tool(tmp_path), {"pattern": "needle", "path": "src"})
        == "pkg/m.py:1: needle"
    )


async def test_patterns_are_regular_expressions(tmp_path: Path) -> None:
    _tree(tmp_path, {"f.txt": "foo1\nfoo\nbar22\n"})
    assert (
        await run_text(create_grep_tool(tmp_path), {"pattern": r"\w+\d$"}) == "f.txt:1: foo1\nf.txt:3: bar22"
    )


async def test_literal_mode_escapes_the_pattern(tmp_path: Path) -> None:
    _tree(tmp_path, {"f.txt": "a.b\naxb\n"})
    assert await run_text(create_grep_tool(tmp_path), {"pattern": "a.b", "literal": True}) == "f.txt:1: a.b"


async def test_ignore_case(tmp_path: Path) -> None:
    _tree(tmp_path, {"f.txt": "Hello\nhello\n"})
    tool = create_grep_tool(tmp_path)
    assert await run_text(tool, {"pattern": "HELLO"}) == "No matches found"
    assert await run_text(tool, {"pattern": "HELLO", "ignoreCase": True}) == "f.txt:1: Hello\nf.txt:2: hello"


async def test_context_lines_use_dashes(tmp_path: Path) -> None:
    _tree(tmp_path, {"f.txt": "one\ntwo\nthree\nfour\nfive\n"})
    text = await run_text(create_grep_tool(tmp_path), {"pattern": "three", "context": 1})
    assert text == "f.txt-2- two\nf.txt:3: three\nf.txt-4- four"


async def test_context_stops_at_file_edges(tmp_path: Path) -> None:
    _tree(tmp_path, {"f.txt": "first\nsecond\n"})
    text = await run_text(create_grep_tool(tmp_path), {"pattern": "first", "context": 3})
    assert text == "f.txt:1: first\nf.txt-2- second"


async def test_glob_filters_file_names(tmp_path: Path) -> None:
    _tree(tmp_path, {"a.py": "hit\n", "b.js": "hit\n", "sub/c.py": "hit\n"})
    text = await run_text(create_grep_tool(tmp_path), {"pattern": "hit", "glob": "*.py"})
    assert text == "a.py:1: hit\nsub/c.py:1: hit"


async def test_glob_with_a_slash_matches_the_relative_path(tmp_path: Path) -> None:
    _tree(tmp_path, {"a.spec.ts": "hit\n", "src/x/b.spec.ts": "hit\n", "src/c.ts": "hit\n"})
    text = await run_text(create_grep_tool(tmp_path), {"pattern": "hit", "glob": "src/**/*.spec.ts"})
    assert text == "src/x/b.spec.ts:1: hit"


async def test_negated_glob_excludes(tmp_path: Path) -> None:
    _tree(tmp_path, {"a.md": "hit\n", "b.txt": "hit\n"})
    assert await run_text(create_grep_tool(tmp_path), {"pattern": "hit", "glob": "!*.md"}) == "b.txt:1: hit"


async def test_match_limit_stops_early_with_a_notice(tmp_path: Path) -> None:
    _tree(tmp_path, {"f.txt": "".join(f"match {i}\n" for i in range(150))})
    result = await run(create_grep_tool(tmp_path), {"pattern": "match"})
    body, notice = result.content[0].text.split("\n\n")
    assert len(body.split("\n")) == 100
    assert notice == "[100 matches limit reached. Use limit=200 for more, or refine pattern]"
    assert result.details == {"matchLimitReached": 100}


async def test_a_custom_limit_is_honoured(tmp_path: Path) -> None:
    _tree(tmp_path, {"f.txt": "x\n" * 10})
    text = await run_text(create_grep_tool(tmp_path), {"pattern": "x", "limit": 3})
    assert (
        text
        == "f.txt:1: x\nf.txt:2: x\nf.txt:3: x\n\n[3 matches limit reached. Use limit=6 for more, or refine pattern]"
    )


async def test_long_lines_are_cut_to_500_chars(tmp_path: Path) -> None:
    _tree(tmp_path, {"f.txt": "needle" + "x" * 600 + "\n"})
    result = await run(create_grep_tool(tmp_path), {"pattern": "needle"})
    line, notice = result.content[0].text.split("\n\n")
    assert line == "f.txt:1: " + ("needle" + "x" * 600)[:500] + "... [truncated]"
    assert notice == "[Some lines truncated to 500 chars. Use read tool to see full lines]"
    assert result.details == {"linesTruncated": True}


async def test_output_over_50kb_is_cut_and_notices_are_joined(tmp_path: Path) -> None:
    _tree(tmp_path, {"f.txt": "".join(f"needle {i:04d} " + "y" * 590 + "\n" for i in range(200))})
    result = await run(create_grep_tool(tmp_path), {"pattern": "needle", "limit": 150})
    text = result.content[0].text
    assert text.endswith(
        "\n\n[150 matches limit reached. Use limit=300 for more, or refine pattern. 50.0KB limit reached. "
        "Some lines truncated to 500 chars. Use read tool to see full lines]"
    )
    assert len(text.split("\n\n")[0].encode()) <= 50 * 1024
    assert result.details["truncation"]["truncatedBy"] == "bytes"


async def test_no_matches(tmp_path: Path) -> None:
    _tree(tmp_path, {"f.txt": "abc\n"})
    assert await run_text(create_grep_tool(tmp_path), {"pattern": "zzz"}) == "No matches found"


async def test_gitignored_files_are_skipped_but_hidden_files_searched(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        {
            ".gitignore": "dist/\n*.log\n",
            "dist/out.js": "needle\n",
            "debug.log": "needle\n",
            ".config/settings.json": "needle\n",
            ".git/HEAD": "needle\n",
            "src/main.py": "needle\n",
        },
    )
    text = await run_text(create_grep_tool(tmp_path), {"pattern": "needle"})
    assert text == ".config/settings.json:1: needle\nsrc/main.py:1: needle"


async def test_binary_files_are_skipped(tmp_path: Path) -> None:
    _tree(tmp_path, {"blob.bin": b"needle\x00\x01\x02", "text.txt": "needle\n"})
    assert await run_text(create_grep_tool(tmp_path), {"pattern": "needle"}) == "text.txt:1: needle"


async def test_carriage_returns_are_not_shown(tmp_path: Path) -> None:
    _tree(tmp_path, {"win.txt": b"first\r\nneedle here\r\n"})
    assert await run_text(create_grep_tool(tmp_path), {"pattern": "needle"}) == "win.txt:2: needle here"


async def test_a_missing_path_is_an_error(tmp_path: Path) -> None:
    error = await run_error(create_grep_tool(tmp_path), {"pattern": "x", "path": "nope"})
    assert str(error) == f"Path not found: {tmp_path / 'nope'}"


async def test_an_invalid_regex_is_an_error(tmp_path: Path) -> None:
    error = await run_error(create_grep_tool(tmp_path), {"pattern": "(unclosed"})
    assert str(error).startswith("regex parse error")


async def test_the_search_does_not_block_the_event_loop(tmp_path: Path) -> None:
    _tree(tmp_path, {f"f{i:02d}.txt": "".join(f"line {n} needle\n" for n in range(3000)) for i in range(20)})
    ticks = 0
    done = asyncio.Event()

    async def heartbeat() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            await asyncio.sleep(0.001)

    beat = asyncio.create_task(heartbeat())
    text = await run_text(create_grep_tool(tmp_path), {"pattern": "needle$", "limit": 100000})
    done.set()
    await beat
    assert text.startswith("f00.txt:1: line 0 needle")
    # A search that held the event loop would let the heartbeat run at most once, after it finished.
    assert ticks >= 2


async def test_abort_ends_the_search(tmp_path: Path) -> None:
    _tree(tmp_path, {"f.txt": "needle\n"})
    signal = AbortSignal()
    signal.abort()
    error = await run_error(create_grep_tool(tmp_path), {"pattern": "needle"}, signal=signal)
    assert str(error) == "Operation aborted"
