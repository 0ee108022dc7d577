from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from pi_tui.ai.stream import AbortSignal
from pi_tui.tools.edit import create_edit_tool, prepare_edit_arguments
from pi_tui.tools.edit_diff import generate_diff

from .helpers import run, run_error, text_of

NOT_FOUND_TAIL = "The old text must match exactly including all whitespace and newlines."


def _lines(count: int) -> str:
    return "".join(f"line{i}\n" for i in range(1, count + 1))


async def test_replaces_text_and_reports_the_block_count(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("alpha\nbeta\ngamma\n")
    result = await run(
        create_edit_tool(tmp_path), {"path": "f.txt", "edits": [{"oldText": "beta", "newText": "BETA"}]}
    )
    assert text_of(result) == "Successfully replaced 1 block(s) in f.txt."
    assert (tmp_path / "f.txt").read_text() == "alpha\nBETA\ngamma\n"


async def test_several_edits_all_match_against_the_original(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("one two three\n")
    edits = [{"oldText": "one", "newText": "two"}, {"oldText": "two", "newText": "2"}]
    result = await run(create_edit_tool(tmp_path), {"path": "f.txt", "edits": edits})
    assert text_of(result) == "Successfully replaced 2 block(s) in f.txt."
    # "two" refers to the original word, not the one the first edit produced.
    assert (tmp_path / "f.txt").read_text() == "two 2 three\n"


async def test_the_legacy_single_old_new_text_form_is_accepted(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("hello world\n")
    tool = create_edit_tool(tmp_path)
    raw = {"path": "f.txt", "oldText": "world", "newText": "there"}
    assert tool.prepare_arguments is not None
    assert tool.prepare_arguments(raw) == {
        "path": "f.txt",
        "edits": [{"oldText": "world", "newText": "there"}],
    }
    await run(tool, raw)
    assert (tmp_path / "f.txt").read_text() == "hello there\n"


def test_edits_sent_as_a_json_string_are_parsed() -> None:
    prepared = prepare_edit_arguments({"path": "f", "edits": '[{"oldText": "a", "newText": "b"}]'})
    assert prepared["edits"] == [{"oldText": "a", "newText": "b"}]


def test_legacy_fields_are_appended_after_existing_edits() -> None:
    prepared = prepare_edit_arguments(
        {"path": "f", "edits": [{"oldText": "a", "newText": "b"}], "oldText": "c", "newText": "d"}
    )
    assert prepared == {
        "path": "f",
        "edits": [{"oldText": "a", "newText": "b"}, {"oldText": "c", "newText": "d"}],
    }


async def test_no_match_is_an_error_with_pis_text(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("abc\n")
    error = await run_error(
        create_edit_tool(tmp_path), {"path": "f.txt", "edits": [{"oldText": "xyz", "newText": "1"}]}
    )
    assert str(error) == f"Could not find the exact text in f.txt. {NOT_FOUND_TAIL}"


async def test_no_match_in_a_multi_edit_names_the_edit(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("abc\n")
    edits = [{"oldText": "abc", "newText": "1"}, {"oldText": "xyz", "newText": "2"}]
    error = await run_error(create_edit_tool(tmp_path), {"path": "f.txt", "edits": edits})
    assert str(error) == f"Could not find edits[1] in f.txt. {NOT_FOUND_TAIL}"
    assert (tmp_path / "f.txt").read_text() == "abc\n"


async def test_multiple_matches_are_an_error(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("x = 1\nx = 1\n")
    error = await run_error(
        create_edit_tool(tmp_path), {"path": "f.txt", "edits": [{"oldText": "x = 1", "newText": "y"}]}
    )
    assert str(error) == (
        "Found 2 occurrences of the text in f.txt. The text must be unique. "
        "Please provide more context to make it unique."
    )


async def test_multiple_matches_in_a_multi_edit_name_the_edit(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("a\nb\nb\nb\n")
    edits = [{"oldText": "a", "newText": "A"}, {"oldText": "b", "newText": "B"}]
    error = await run_error(create_edit_tool(tmp_path), {"path": "f.txt", "edits": edits})
    assert str(error) == (
        "Found 3 occurrences of edits[1] in f.txt. Each oldText must be unique. "
        "Please provide more context to make it unique."
    )


async def test_overlapping_edits_are_an_error(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("abcdef\n")
    edits = [{"oldText": "abcd", "newText": "1"}, {"oldText": "cdef", "newText": "2"}]
    error = await run_error(create_edit_tool(tmp_path), {"path": "f.txt", "edits": edits})
    assert (
        str(error)
        == "edits[0] and edits[1] overlap in f.txt. Merge them into one edit or target disjoint regions."
    )
    assert (tmp_path / "f.txt").read_text() == "abcdef\n"


async def test_a_replacement_that_changes_nothing_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("same\n")
    error = await run_error(
        create_edit_tool(tmp_path), {"path": "f.txt", "edits": [{"oldText": "same", "newText": "same"}]}
    )
    assert str(error) == (
        "No changes made to f.txt. The replacement produced identical content. "
        "This might indicate an issue with special characters or the text not existing as expected."
    )


async def test_empty_old_text_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("x\n")
    error = await run_error(
        create_edit_tool(tmp_path), {"path": "f.txt", "edits": [{"oldText": "", "newText": "y"}]}
    )
    assert str(error) == "oldText must not be empty in f.txt."


async def test_an_empty_edit_list_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("x\n")
    error = await run_error(create_edit_tool(tmp_path), {"path": "f.txt", "edits": []})
    assert str(error) == "Edit tool input is invalid. edits must contain at least one replacement."


async def test_a_missing_file_is_an_error(tmp_path: Path) -> None:
    error = await run_error(
        create_edit_tool(tmp_path), {"path": "nope.txt", "edits": [{"oldText": "a", "newText": "b"}]}
    )
    assert str(error) == "File not found: nope.txt"


async def test_crlf_endings_and_bom_are_preserved(tmp_path: Path) -> None:
    target = tmp_path / "win.txt"
    target.write_bytes(b"\xef\xbb\xbfa\r\nb\r\nc\r\n")
    await run(
        create_edit_tool(tmp_path), {"path": "win.txt", "edits": [{"oldText": "b\nc", "newText": "B\nC"}]}
    )
    assert target.read_bytes() == b"\xef\xbb\xbfa\r\nB\r\nC\r\n"


async def test_old_text_with_crlf_matches_a_crlf_file(tmp_path: Path) -> None:
    target = tmp_path / "win.txt"
    target.write_bytes(b"a\r\nb\r\n")
    await run(
        create_edit_tool(tmp_path), {"path": "win.txt", "edits": [{"oldText": "a\r\nb", "newText": "x\r\ny"}]}
    )
    assert target.read_bytes() == b"x\r\ny\r\n"


async def test_lf_files_stay_lf(tmp_path: Path) -> None:
    target = tmp_path / "unix.txt"
    target.write_bytes(b"a\nb\n")
    await run(create_edit_tool(tmp_path), {"path": "unix.txt", "edits": [{"oldText": "a", "newText": "A"}]})
    assert target.read_bytes() == b"A\nb\n"


async def test_fuzzy_match_tolerates_smart_quotes_and_trailing_spaces(tmp_path: Path) -> None:
    target = tmp_path / "q.py"
    target.write_text("keep \u201cthis\u201d  \nprint(\u201chello\u201d)   \nend\n")
    await run(
        create_edit_tool(tmp_path),
        {"path": "q.py", "edits": [{"oldText": 'print("hello")', "newText": 'print("bye")'}]},
    )
    # Only the touched line is rewritten; the untouched line keeps its quotes and trailing spaces.
    assert target.read_text() == 'keep \u201cthis\u201d  \nprint("bye")\nend\n'


async def test_fuzzy_match_tolerates_unicode_dashes_and_special_spaces(tmp_path: Path) -> None:
    target = tmp_path / "d.txt"
    target.write_text("range 1\u20132\u00a0items\n")
    await run(
        create_edit_tool(tmp_path),
        {"path": "d.txt", "edits": [{"oldText": "1-2 items", "newText": "3-4 items"}]},
    )
    assert target.read_text() == "range 3-4 items\n"


async def test_fuzzy_match_tolerates_compatibility_forms(tmp_path: Path) -> None:
    target = tmp_path / "n.txt"
    target.write_text("x = \uff11\uff12\n")  # full-width digits
    await run(
        create_edit_tool(tmp_path), {"path": "n.txt", "edits": [{"oldText": "x = 12", "newText": "x = 13"}]}
    )
    assert target.read_text() == "x = 13\n"


async def test_uniqueness_is_checked_after_normalisation(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text('say \u201chi\u201d\nsay "hi"\n')
    error = await run_error(
        create_edit_tool(tmp_path), {"path": "f.txt", "edits": [{"oldText": 'say "hi"', "newText": "x"}]}
    )
    assert str(error).startswith("Found 2 occurrences of the text in f.txt.")


async def test_replacement_text_is_literal(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("value\n")
    await run(
        create_edit_tool(tmp_path),
        {"path": "f.txt", "edits": [{"oldText": "value", "newText": r"$1 $& \1 \n"}]},
    )
    assert (tmp_path / "f.txt").read_text() == "$1 $& \\1 \\n\n"


async def test_bytes_that_are_not_utf8_survive_an_edit(tmp_path: Path) -> None:
    target = tmp_path / "latin1.txt"
    target.write_bytes(b"caf\xe9\nchange me\n")
    await run(
        create_edit_tool(tmp_path),
        {"path": "latin1.txt", "edits": [{"oldText": "change me", "newText": "done"}]},
    )
    assert target.read_bytes() == b"caf\xe9\ndone\n"


async def test_details_carry_pis_diff_and_first_changed_line(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text(_lines(20))
    result = await run(
        create_edit_tool(tmp_path),
        {"path": "f.txt", "edits": [{"oldText": "line10\n", "newText": "LINE10\n"}]},
    )
    assert result.details["firstChangedLine"] == 10
    assert result.details["diff"] == "\n".join(
        [
            "    ...",
            "  6 line6",
            "  7 line7",
            "  8 line8",
            "  9 line9",
            "-10 line10",
            "+10 LINE10",
            " 11 line11",
            " 12 line12",
            " 13 line13",
            " 14 line14",
            "    ...",
        ]
    )
    assert result.details["patch"].startswith("--- f.txt\n+++ f.txt\n@@ -6,9 +6,9 @@\n")


def test_diff_between_distant_changes_skips_the_middle() -> None:
    old = _lines(20)
    new = old.replace("line3\n", "LINE3\n").replace("line17\n", "LINE17\n")
    lines = generate_diff(old, new).diff.split("\n")
    assert lines[:4] == ["  1 line1", "  2 line2", "- 3 line3", "+ 3 LINE3"]
    assert lines[4:9] == ["  4 line4", "  5 line5", "  6 line6", "  7 line7", "    ..."]
    assert lines[9:13] == [" 13 line13", " 14 line14", " 15 line15", " 16 line16"]


def test_diff_between_close_changes_shows_all_context() -> None:
    old = _lines(12)
    new = old.replace("line3\n", "LINE3\n").replace("line8\n", "LINE8\n")
    assert "..." not in generate_diff(old, new).diff.split("\n")[:10]
    assert "  7 line7" in generate_diff(old, new).diff


async def test_parallel_edits_to_one_file_lose_no_write(tmp_path: Path) -> None:
    target = tmp_path / "shared.txt"
    target.write_text("".join(f"token{i}\n" for i in range(30)))
    tool = create_edit_tool(tmp_path)
    await asyncio.gather(
        *(
            run(tool, {"path": "shared.txt", "edits": [{"oldText": f"token{i}\n", "newText": f"DONE{i}\n"}]})
            for i in range(30)
        )
    )
    assert target.read_text() == "".join(f"DONE{i}\n" for i in range(30))


async def test_an_aborted_signal_leaves_the_file_alone(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("a\n")
    signal = AbortSignal()
    signal.abort()
    error = await run_error(
        create_edit_tool(tmp_path),
        {"path": "f.txt", "edits": [{"oldText": "a", "newText": "b"}]},
        signal=signal,
    )
    assert str(error) == "Operation aborted"
    assert (tmp_path / "f.txt").read_text() == "a\n"


@pytest.mark.parametrize("bad", [[{"oldText": "a"}], ["a"], "not json"])
async def test_malformed_edits_are_rejected(tmp_path: Path, bad: object) -> None:
    (tmp_path / "f.txt").write_text("a\n")
    error = await run_error(create_edit_tool(tmp_path), {"path": "f.txt", "edits": bad})
    assert str(error).startswith("Edit tool input is invalid.")


@pytest.mark.parametrize(
    ("old", "new", "patch"),
    [  # what pi 0.87.1's jsdiff writes for the same change (createTwoFilesPatch, 4 lines of context)
        ("a\n", "b\n", "--- f\n+++ f\n@@ -1,1 +1,1 @@\n-a\n+b\n"),
        ("", "x\n", "--- f\n+++ f\n@@ -0,0 +1,1 @@\n+x\n"),
        ("x\n", "", "--- f\n+++ f\n@@ -1,1 +0,0 @@\n-x\n"),
        ("a\nb\nc\n", "a\nc\n", "--- f\n+++ f\n@@ -1,3 +1,2 @@\n a\n-b\n c\n"),
        (
            "a",
            "b",
            "--- f\n+++ f\n@@ -1,1 +1,1 @@\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n",
        ),
    ],
)
def test_unified_patch_is_written_as_pi_writes_it(old: str, new: str, patch: str) -> None:
    from pi_tui.tools.edit_diff import generate_unified_patch

    assert generate_unified_patch("f", old, new) == patch
