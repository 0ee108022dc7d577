"""`rank_paths`: the ``@`` mention's paths in pi's order, shared by the TUI menu and the line mode."""

from __future__ import annotations

from pi_tui.util.path_rank import PATH_SUGGESTIONS, rank_paths

PATHS = [
    "README.md",
    "calc.py",
    "src/",
    "src/util.py",
    "src/calc_test.py",
    "docs/",
    "docs/calc.md",
    "notes/",
]


def test_file_mentions_rank_and_match_names_as_pi_does() -> None:
    # no query: everything, shallowest and shortest first
    assert rank_paths("", PATHS)[:4] == ["src/", "docs/", "notes/", "calc.py"]
    # the name must hold the query (scattered letters do not match: "sutil" is not src/util.py)
    assert rank_paths("calc", PATHS) == ["calc.py", "docs/calc.md", "src/calc_test.py"]
    assert rank_paths("sutil", PATHS) == []
    # a folder before a file of the same kind of match; an exact name first
    assert rank_paths("c", ["src/", "calc.py", "ac.txt"]) == ["calc.py", "src/", "ac.txt"]
    assert rank_paths("util.py", PATHS) == ["src/util.py"]
    # "folder/query" looks in that folder only
    assert rank_paths("src/c", PATHS) == ["src/calc_test.py"]
    assert rank_paths("src/", PATHS) == ["src/util.py", "src/calc_test.py"]


def test_a_capital_letter_must_match_as_typed() -> None:
    """pi's file finder is smart-case: ``@Calc`` finds ``Calc.py`` only, ``@calc`` both."""
    paths = ["Calc.py", "calc.md"]
    assert rank_paths("Calc", paths) == ["Calc.py"]
    assert rank_paths("calc", paths) == ["calc.md", "Calc.py"]


def test_at_most_twenty_paths_as_pi() -> None:
    paths = [f"file{i:02}.txt" for i in range(30)]
    assert PATH_SUGGESTIONS == 20
    assert rank_paths("file", paths) == paths[:20]
