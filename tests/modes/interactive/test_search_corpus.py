"""The transcript's text for search: what each item shows, folded, and matches counted and found in it."""

from __future__ import annotations

from pi_tui.ai.types import AssistantMessage, TextContent, ThinkingContent, ToolCall, UserMessage
from pi_tui.modes.interactive.search_corpus import SearchCorpus, TextSettings, fold, item_text
from pi_tui.modes.interactive.search_marks import find_in_lines

OUTPUT = "\n".join(f"output line {i}" for i in range(1, 31))


def _answer() -> AssistantMessage:
    return AssistantMessage(
        content=[
            ThinkingContent(thinking="a Secret   plan"),
            TextContent(text="Here it\nIS"),
            ToolCall(id="c1", name="grep", arguments={"pattern": "needle"}),
        ],
        provider="faux",
        model="faux-1",
    )


def _results(call_id: str) -> tuple[str, bool, object] | None:
    return (OUTPUT, False, None) if call_id == "c1" else None


def test_an_item_shows_its_words_as_the_chat_draws_them() -> None:
    collapsed = item_text(_answer(), _results, TextSettings())
    assert "output line 15" in collapsed and "output line 16" not in collapsed  # grep's 15-line preview
    assert "grep needle" in collapsed and "a Secret   plan" in collapsed
    assert "output line 30" in item_text(_answer(), _results, TextSettings(tools_expanded=True))
    hidden = item_text(_answer(), _results, TextSettings(thinking_hidden=True, hidden_thinking_label="Pondering"))
    assert "Secret" not in hidden and "Pondering" in hidden


def test_matches_ignore_case_and_runs_of_whitespace_but_never_span_two_items() -> None:
    corpus = SearchCorpus()
    items = [UserMessage(content="the end"), _answer(), UserMessage(content="Start here")]
    assert corpus.refresh(items, _results, TextSettings())
    assert corpus.count(fold("SECRET plan")) == 1
    assert corpus.count(fold("it is")) == 1  # a line break is a space
    assert corpus.count(fold("end start")) == 0  # the end of one item and the start of the next
    at = corpus.find(fold("here"))
    assert corpus.item_at(at) == 1
    assert corpus.item_at(corpus.find(fold("here"), at + 1)) == 2
    assert corpus.item_at(corpus.rfind(fold("here"), at)) == 2  # before the first: wraps to the last
    assert not corpus.refresh(items, _results, TextSettings())  # nothing changed: nothing folded again
    items.append(UserMessage(content="one more plan"))
    assert corpus.refresh(items, _results, TextSettings())
    assert corpus.count("plan") == 2


def test_drawn_lines_mark_a_match_over_a_wrapped_line_and_wide_characters() -> None:
    lines = ["  the quick", "brown fox 日本 fox"]
    matches = find_in_lines(lines, "quick brown")
    assert matches == [[(0, 6, 11), (1, 0, 5)]]
    assert find_in_lines(lines, "fox") == [[(1, 6, 9)], [(1, 15, 18)]]  # 日本 is four cells wide
