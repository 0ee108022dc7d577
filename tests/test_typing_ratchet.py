from __future__ import annotations

import ast
import functools
import io
import tokenize
from collections import Counter
from pathlib import Path

import pytest

# One worker of a run takes these tests, so the package is parsed once (`counts`).
pytestmark = pytest.mark.xdist_group("typing-ratchet-parse")

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "pi_tui"

# Where pi_tui looks an attribute up by a name it holds as data (`getattr`, `setattr`, `hasattr`), by
# (file, builtin): how many times, and why the name cannot be a typed attribute access. Anything else
# fails: when the type is known, use its attribute (a Protocol, a TypedDict, an `isinstance`). The counts
# are exact, so a new use fails and a removed one must come off this table.
DYNAMIC: dict[tuple[str, str], tuple[int, str]] = {
    ("pi_tui/args.py", "setattr"): (2, "the flag tables map a command-line flag to the Args field it sets"),
    ("pi_tui/args.py", "getattr"): (1, "the flag table maps a repeatable flag to the Args list it extends"),
    ("pi_tui/extensions/runner.py", "getattr"): (
        1,
        "an extension module loaded by path may define `register`",
    ),
    ("pi_tui/extensions/api.py", "getattr"): (
        2,
        "is_tool_call_event_type takes whatever an extension passes and reads its fields, as pi's does",
    ),
    ("pi_tui/extensions/api.py", "hasattr"): (
        2,
        "messages and tools an extension hands to a patch maker: a record is dumped, JSON is taken as is",
    ),
    ("pi_tui/extensions/ui.py", "getattr"): (
        2,
        "the front end's UI bridge may implement part of UIBridge (docs/extensions.md); the rest is the null one's",
    ),
    ("pi_tui/extensions/loop_hooks.py", "hasattr"): (1, "an extension's message result: a record or JSON"),
    ("pi_tui/extensions/convert.py", "hasattr"): (1, "an extension's value: a message record or JSON"),
    ("pi_tui/extensions/extension_api.py", "getattr"): (1, "pi's camelCase member names read from Python"),
    ("pi_tui/extensions/context.py", "getattr"): (1, "pi's camelCase member names read from Python"),
    ("pi_tui/context/patches.py", "hasattr"): (2, "messages an extension's patch carries: records or JSON"),
    ("pi_tui/context/hooks.py", "hasattr"): (1, "a context handler's result: a dict, or an object's fields"),
    ("pi_tui/agent/run.py", "getattr"): (
        1,
        "a provider stream is any async iterator: aclose() if it has one",
    ),
    ("pi_tui/ai/tokens.py", "getattr"): (1, "tiktoken_ext's encoding constructor, named by the caller"),
    ("pi_tui/ai/providers/_wire_cache.py", "getattr"): (1, "the C JSON encoder maker, absent from the stubs"),
    ("pi_tui/ai/providers/_common.py", "setattr"): (
        1,
        "rawArguments, an extra (undeclared) field of a record",
    ),
    ("pi_tui/ai/providers/faux.py", "setattr"): (1, "retryAfterMs, an extra (undeclared) field of a record"),
    ("pi_tui/ai/http.py", "hasattr"): (1, "select.poll exists on some platforms only"),
    ("pi_tui/ai/stream.py", "getattr"): (1, "an event's declared fields, walked by name"),
    ("pi_tui/ai/models_json.py", "getattr"): (1, "any record's declared fields, walked by name"),
    ("pi_tui/agent/events.py", "getattr"): (1, "a dataclass event's fields, walked by name"),
    ("pi_tui/util/lazy.py", "getattr"): (1, "a lazy export, named in the package's table"),
    ("pi_tui/util/record.py", "getattr"): (1, "the record machinery: a record's declared fields by name"),
    ("pi_tui/util/record.py", "setattr"): (1, "the record machinery: a field's default on its class"),
    ("pi_tui/util/record.py", "hasattr"): (1, "the record machinery: a class attribute or a field"),
    ("pi_tui/util/record_annotations.py", "getattr"): (1, "a dotted annotation resolved as Python would"),
    ("pi_tui/util/record_checks.py", "hasattr"): (2, "recognises a record class by the machinery's hooks"),
}

# How many of the other escapes from the type checker pi_tui holds. Lower a number when you remove some;
# raising one needs a reason in the commit (a library without types, JSON before validation).
CEILINGS = {
    "Any": 641,  # `typing.Any` named in code (JSON is spelled with pi_tui.util.json_types; left: the record machinery, extension callables, the modes)
    "type: ignore": 19,
    "cast": 22,
}

_DYNAMIC_BUILTINS = ("getattr", "setattr", "hasattr")


def dynamic_calls(source: str, tree: ast.AST | None = None) -> Counter[str]:
    """How many times ``source`` (parsed: ``tree``) calls each of getattr, setattr and hasattr."""
    return Counter(
        node.func.id
        for node in ast.walk(tree or ast.parse(source))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _DYNAMIC_BUILTINS
    )


def _is_typing(node: ast.AST, name: str) -> bool:
    """``node`` is ``typing.<name>`` as written."""
    return (
        isinstance(node, ast.Attribute)
        and node.attr == name
        and isinstance(node.value, ast.Name)
        and node.value.id == "typing"
    )


def escapes(source: str, tree: ast.AST | None = None) -> Counter[str]:
    """How many times ``source`` (parsed: ``tree``) names ``Any`` (not counting its import), calls
    ``cast`` and says ``# type: ignore``."""
    found: Counter[str] = Counter()
    for node in ast.walk(tree or ast.parse(source)):
        if isinstance(node, ast.Name) and node.id == "Any":
            found["Any"] += 1
        elif _is_typing(node, "Any"):
            found["Any"] += 1
        elif isinstance(node, ast.Call) and (
            (isinstance(node.func, ast.Name) and node.func.id == "cast") or _is_typing(node.func, "cast")
        ):
            found["cast"] += 1
    # Comments are read by the tokenizer (the words in a string are not a comment); a file that does not
    # hold the words at all has none, and tokenizing costs more than the parse.
    if "type: ignore" in source:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.COMMENT and token.string.lstrip("# ").startswith("type: ignore"):
                found["type: ignore"] += 1
    return found


@functools.cache
def counts() -> tuple[dict[tuple[str, str], int], Counter[str]]:
    """The package's dynamic lookups by (file, builtin) and its escapes in total, read once per process."""
    dynamic: dict[tuple[str, str], int] = {}
    total: Counter[str] = Counter()
    for path in sorted(PACKAGE.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        rel = path.relative_to(ROOT).as_posix()
        tree = ast.parse(source)  # once for both counts: parsing is most of the time
        for name, n in dynamic_calls(source, tree).items():
            dynamic[rel, name] = n
        total += escapes(source, tree)
    return dynamic, total


def test_attributes_are_looked_up_by_name_only_where_the_name_is_data() -> None:
    found, _ = counts()
    unexpected = {key: n for key, n in found.items() if n > DYNAMIC.get(key, (0, ""))[0]}
    assert unexpected == {}, "use the typed attribute (a Protocol, a TypedDict, isinstance) instead"
    gone = {
        key: (allowed, found.get(key, 0))
        for key, (allowed, _) in DYNAMIC.items()
        if found.get(key, 0) < allowed
    }
    assert gone == {}, "fewer lookups by name than DYNAMIC allows: lower its counts (allowed, found)"
    for key, (_, reason) in DYNAMIC.items():
        assert len(reason.split()) >= 5, f"{key}: say why"


@pytest.mark.parametrize("escape", sorted(CEILINGS))
def test_escapes_from_the_type_checker_do_not_grow(escape: str) -> None:
    _, total = counts()
    assert total[escape] <= CEILINGS[escape], (
        f"{total[escape]} uses of {escape!r}, above the ceiling of {CEILINGS[escape]}: type it instead"
    )
    assert total[escape] == CEILINGS[escape], (
        f"{total[escape]} uses of {escape!r}, fewer than the ceiling: lower CEILINGS[{escape!r}] to it"
    )


def test_the_counters_see_what_they_count() -> None:
    source = (
        "from typing import Any, cast\nimport typing\n"
        "def f(x: Any, y: dict[str, typing.Any]) -> list[Any]:  # type: ignore[override]\n"
        "    z = cast(int, x)  # an Any in a comment is not counted\n"
        "    s = 'Any cast( getattr('\n"
        "    return [getattr(x, 'a'), hasattr(x, 'b'), setattr(x, 'c', 1), getattr(y, 'd', None)]\n"
    )
    assert escapes(source) == Counter({"Any": 3, "cast": 1, "type: ignore": 1})
    assert dynamic_calls(source) == Counter({"getattr": 2, "hasattr": 1, "setattr": 1})
