from __future__ import annotations

from pathlib import Path

from pi_tui.ai.stream import AbortSignal
from pi_tui.tools.find import create_find_tool

from .helpers import run, run_error, run_text


def _tree(root: Path, files: list[str]) -> None:
    for rel in files:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")


async def test_a_name_pattern_matches_at_any_depth(tmp_path: Path) -> None:
    _tree(tmp_path, ["a.py", "b.txt", "pkg/c.py", "pkg/deep/d.py"])
    text = await run_text(create_find_tool(tmp_path), {"pattern": "*.py"})
    assert text == "a.py\npkg/c.py\npkg/deep/d.py"


async def test_directories_keep_a_trailing_slash(tmp_path: Path) -> None:
    _tree(tmp_path, ["src/a.py", "lib/src/b.py"])
    assert await run_text(create_find_tool(tmp_path), {"pattern": "src"}) == "lib/src/\nsrc/"


async def test_a_pattern_with_a_slash_matches_the_path(tmp_path: Path) -> None:
    _tree(tmp_path, ["src/a.spec.ts", "src/x/y/b.spec.ts", "test/c.spec.ts", "src/d.ts"])
    text = await run_text(create_find_tool(tmp_path), {"pattern": "src/**/*.spec.ts"})
    assert text == "src/a.spec.ts\nsrc/x/y/b.spec.ts"


async def test_double_star_prefix_patterns(tmp_path: Path) -> None:
    _tree(tmp_path, ["a.json", "x/b.json"])
    assert await run_text(create_find_tool(tmp_path), {"pattern": "**/*.json"}) == "a.json\nx/b.json"


async def test_brace_alternatives(tmp_path: Path) -> None:
    _tree(tmp_path, ["a.ts", "b.tsx", "c.js"])
    assert await run_text(create_find_tool(tmp_path), {"pattern": "*.{ts,tsx}"}) == "a.ts\nb.tsx"


async def test_smart_case(tmp_path: Path) -> None:
    _tree(tmp_path, ["lower.md", "UPPER.MD"])
    tool = create_find_tool(tmp_path)
    assert await run_text(tool, {"pattern": "*.md"}) == "UPPER.MD\nlower.md"
    assert await run_text(tool, {"pattern": "*.MD"}) == "UPPER.MD"


async def test_the_path_argument_sets_the_root(tmp_path: Path) -> None:
    _tree(tmp_path, ["a/x.txt", "b/y.txt"])
    assert await run_text(create_find_tool(tmp_path), {"pattern": "*.txt", "path": "b"}) == "y.txt"


async def test_hidden_files_are_found_and_gitignore_respected(tmp_path: Path) -> None:
    _tree(tmp_path, [".env", ".github/workflows/ci.yml", "build/out.yml", ".git/config.yml", "app.yml"])
    (tmp_path / ".gitignore").write_text("build/\n")
    text = await run_text(create_find_tool(tmp_path), {"pattern": "*.yml"})
    assert text == ".github/workflows/ci.yml\napp.yml"
    assert await run_text(create_find_tool(tmp_path), {"pattern": ".env"}) == ".env"


async def test_result_limit_with_notice(tmp_path: Path) -> None:
    _tree(tmp_path, [f"f{i}.txt" for i in range(5)])
    result = await run(create_find_tool(tmp_path), {"pattern": "*.txt", "limit": 3})
    assert result.content[0].text == (
        "f0.txt\nf1.txt\nf2.txt\n\n[3 results limit reached. Use limit=6 for more, or refine pattern]"
    )
    assert result.details == {"resultLimitReached": 3}


async def test_the_default_limit_is_1000(tmp_path: Path) -> None:
    _tree(tmp_path, [f"d{i // 100:02d}/f{i:04d}.txt" for i in range(1001)])
    text = await run_text(create_find_tool(tmp_path), {"pattern": "*.txt"})
    body, notice = text.split("\n\n")
    assert len(body.split("\n")) == 1000
    assert notice == "[1000 results limit reached. Use limit=2000 for more, or refine pattern]"


async def test_no_files_found(tmp_path: Path) -> None:
    _tree(tmp_path, ["a.txt"])
    assert (
        await run_text(create_find_tool(tmp_path), {"pattern": "*.rs"}) == "No files found matching pattern"
    )


async def test_a_missing_path_is_an_error(tmp_path: Path) -> None:
    error = await run_error(create_find_tool(tmp_path), {"pattern": "*", "path": "missing"})
    assert str(error) == f"Path not found: {tmp_path / 'missing'}"


async def test_abort_ends_the_search(tmp_path: Path) -> None:
    signal = AbortSignal()
    signal.abort()
    error = await run_error(create_find_tool(tmp_path), {"pattern": "*"}, signal=signal)
    assert str(error) == "Operation aborted"
