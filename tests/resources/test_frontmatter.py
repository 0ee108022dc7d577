from __future__ import annotations

import math

import pytest

from pi_tui.resources.frontmatter import (
    FrontmatterError,
    parse_frontmatter,
    split_frontmatter,
    strip_frontmatter,
)


def test_keys_are_parsed_quotes_stripped_and_body_trimmed() -> None:
    parsed = parse_frontmatter(
        "---\nname: \"skill-name\"\ndescription: 'A desc'\nfoo-bar: value\n---\n\nBody text\n"
    )
    assert parsed.data == {"name": "skill-name", "description": "A desc", "foo-bar": "value"}
    assert parsed.body == "Body text"
    assert parsed.has_frontmatter


def test_crlf_line_endings_are_normalised() -> None:
    parsed = parse_frontmatter("---\r\nname: test\r\n---\r\nLine one\r\nLine two")
    assert parsed.data == {"name": "test"}
    assert parsed.body == "Line one\nLine two"


def test_literal_block_keeps_lines_and_one_trailing_newline() -> None:
    parsed = parse_frontmatter("---\ndescription: |\n  Line one\n  Line two\n---\n\nBody")
    assert parsed.data["description"] == "Line one\nLine two\n"
    assert parsed.body == "Body"


def test_literal_block_chomping_indicators() -> None:
    text = "---\nstrip: |-\n  a\n  b\n\nkeep: |+\n  a\n\nclip: |\n  a\n\n---\n"
    data = parse_frontmatter(text).data
    assert data == {"strip": "a\nb", "keep": "a\n\n", "clip": "a\n"}


def test_folded_block_joins_lines_and_keeps_paragraphs() -> None:
    data = parse_frontmatter("---\ndescription: >\n  one\n  two\n\n  three\n    indented\n---\n").data
    assert data["description"] == "one two\nthree\n  indented\n"


def test_block_scalar_with_explicit_indent_keeps_leading_spaces() -> None:
    data = parse_frontmatter("---\ncode: |2\n    indented\n  flush\n---\n").data
    assert data["code"] == "  indented\nflush\n"


def test_booleans_numbers_and_null_are_typed() -> None:
    data = parse_frontmatter(
        "---\na: true\nb: False\nc: 12\nd: -3.5\ne: null\nf: ~\ng:\nh: 0x1f\ni: 1.2.3\nj: .inf\nk: yes\n---\n"
    ).data
    assert data["a"] is True and data["b"] is False
    assert data["c"] == 12 and data["d"] == -3.5
    assert data["e"] is None and data["f"] is None and data["g"] is None
    assert data["h"] == 31
    assert data["i"] == "1.2.3"
    assert math.isinf(data["j"])
    assert data["k"] == "yes"


def test_quoted_values_are_not_typed_and_decode_escapes() -> None:
    data = parse_frontmatter(
        "---\na: \"true\"\nb: '42'\nc: \"tab\\there \\u00e9 \\\"q\\\"\"\nd: 'it''s'\n---\n"
    ).data
    assert data == {"a": "true", "b": "42", "c": 'tab\there é "q"', "d": "it's"}


def test_trailing_comments_and_comment_lines_are_ignored() -> None:
    data = parse_frontmatter("---\n# leading comment\nname: x # the name\nurl: http://a#b\n---\n").data
    assert data == {"name": "x", "url": "http://a#b"}


def test_multiline_plain_and_quoted_scalars_fold_into_one_string() -> None:
    text = '---\ndescription: first part\n  second part\n\n  new paragraph\ntitle: "a\n  b"\n---\n'
    data = parse_frontmatter(text).data
    assert data["description"] == "first part second part\nnew paragraph"
    assert data["title"] == "a b"


def test_nested_mappings_and_lists() -> None:
    text = (
        "---\n"
        "metadata:\n  author: me\n  version: 2\n"
        "tags:\n- a\n- b\n"
        "indented:\n  - x\n  - key: v\n    other: 3\n"
        'flow: [a, "b, c", 3, {k: v}]\n'
        "empty_flow: {}\n"
        "---\n"
    )
    data = parse_frontmatter(text).data
    assert data == {
        "metadata": {"author": "me", "version": 2},
        "tags": ["a", "b"],
        "indented": ["x", {"key": "v", "other": 3}],
        "flow": ["a", "b, c", 3, {"k": "v"}],
        "empty_flow": {},
    }


def test_empty_frontmatter_gives_empty_mapping() -> None:
    parsed = parse_frontmatter("---\n---\nbody")
    assert parsed.data == {}
    assert parsed.body == "body"
    assert parsed.has_frontmatter


def test_missing_frontmatter_returns_the_text_unchanged() -> None:
    parsed = parse_frontmatter("Just text\nsecond line")
    assert parsed.data == {}
    assert parsed.body == "Just text\nsecond line"
    assert not parsed.has_frontmatter


def test_unterminated_frontmatter_returns_the_text_unchanged() -> None:
    text = "---\nname: test\nBody without terminator"
    parsed = parse_frontmatter(text)
    assert parsed.data == {}
    assert parsed.body == text
    assert not parsed.has_frontmatter


def test_opening_line_with_other_text_is_not_frontmatter() -> None:
    assert split_frontmatter("--- title\nname: x\n---\n") == (None, "--- title\nname: x\n---\n")


@pytest.mark.parametrize(
    "yaml_text",
    [
        "foo: [bar",
        "just text",
        "- a\n- b",
        "a: 1\na: 2",
        'a: "unterminated',
        "a: b: c",
        "a: 1\n  b: 2",
        "a:\n\tb: 1",
        "a: *alias",
        "a: !tag x",
        'a: "x" trailing',
        "a: |x",
        "key: value\n- item",
    ],
)
def test_invalid_yaml_raises_frontmatter_error(yaml_text: str) -> None:
    with pytest.raises(FrontmatterError, match="line"):
        parse_frontmatter(f"---\n{yaml_text}\n---\nBody")


def test_strip_frontmatter_removes_block_and_trims_body() -> None:
    assert strip_frontmatter("---\nkey: value\n---\n\nBody\n") == "Body"


def test_strip_frontmatter_leaves_text_without_frontmatter_alone() -> None:
    assert strip_frontmatter("\n  No frontmatter body  \n") == "\n  No frontmatter body  \n"


def test_strip_frontmatter_does_not_parse_the_yaml() -> None:
    assert strip_frontmatter("---\nfoo: [bar\n---\nBody") == "Body"
