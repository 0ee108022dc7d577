from __future__ import annotations

import gzip
import hashlib
import inspect
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from pi_tui.ai import tokens
from pi_tui.ai.tokens import (
    ENCODING_SHA256,
    TokenizerDataError,
    build_encoding,
    count_message_tokens,
    count_messages_tokens,
    count_tokens,
    estimate_tokens,
    get_encoding,
    message_chars,
    vocabulary_path,
)
from pi_tui.ai.types import (
    AssistantMessage,
    BashExecutionMessage,
    CompactionSummaryMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

SAMPLES = [
    "hello world",
    "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n",
    "Ünïcödé, 日本語のテキスト, emoji 🎉🚀 and   spaces\t\ttabs\r\n",
    "special markers stay text: <|endoftext|> <|endofprompt|>",
    "x" * 5000,
]

_REFERENCE_URLS = {
    "o200k_base": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
    "cl100k_base": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
}


@pytest.fixture(scope="module")
def reference_encodings(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """tiktoken's own loader, fed the same files through its documented cache (no network)."""
    import tiktoken
    import tiktoken.load
    from tiktoken_ext import openai_public

    cache = tmp_path_factory.mktemp("tiktoken-cache")
    for name, url in _REFERENCE_URLS.items():
        data = gzip.decompress(vocabulary_path(name).read_bytes())
        (cache / hashlib.sha1(url.encode()).hexdigest()).write_bytes(data)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TIKTOKEN_CACHE_DIR", str(cache))

        def no_network(path: str) -> bytes:
            raise AssertionError(f"tiktoken tried to fetch {path}")

        patch.setattr(tiktoken.load, "read_file", no_network)
        return {name: tiktoken.Encoding(**getattr(openai_public, name)()) for name in _REFERENCE_URLS}


@pytest.mark.parametrize("text", SAMPLES)
@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
def test_counts_equal_tiktoken_reference(
    text: str, encoding: str, reference_encodings: dict[str, Any]
) -> None:
    assert count_tokens(text, encoding) == len(reference_encodings[encoding].encode_ordinary(text))


def test_known_small_counts() -> None:
    assert count_tokens("") == 0
    assert count_tokens("hello world") == 2
    assert get_encoding("cl100k_base").encode("hello world") == [15339, 1917]


def test_encoding_is_built_once_and_shared_across_threads() -> None:
    results: list[object] = []
    barrier = threading.Barrier(4)

    def worker() -> None:
        barrier.wait()
        results.append(get_encoding("o200k_base"))

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 4
    assert all(result is results[0] for result in results)
    assert get_encoding() is results[0]


def test_tampered_vocabulary_is_refused(tmp_path: Path) -> None:
    data = gzip.decompress(vocabulary_path("cl100k_base").read_bytes())
    tampered = tmp_path / "cl100k_base.tiktoken.gz"
    tampered.write_bytes(gzip.compress(data.replace(b" 0\n", b" 1\n", 1)))
    with pytest.raises(TokenizerDataError, match="refusing the cl100k_base vocabulary.*SHA-256") as caught:
        build_encoding("cl100k_base", tampered)
    assert ENCODING_SHA256["cl100k_base"] in str(caught.value)


def test_vocabulary_swapped_for_another_encoding_is_refused() -> None:
    with pytest.raises(TokenizerDataError, match="refusing the o200k_base vocabulary"):
        build_encoding("o200k_base", vocabulary_path("cl100k_base"))


def test_unreadable_or_non_gzip_vocabulary_is_refused(tmp_path: Path) -> None:
    with pytest.raises(TokenizerDataError, match="cannot read"):
        build_encoding("o200k_base", tmp_path / "missing.gz")
    garbage = tmp_path / "garbage.gz"
    garbage.write_bytes(b"not gzip at all")
    with pytest.raises(TokenizerDataError, match="not valid gzip"):
        build_encoding("o200k_base", garbage)


def test_unknown_encoding_is_refused() -> None:
    with pytest.raises(TokenizerDataError, match="unknown encoding 'p50k_base'"):
        count_tokens("x", "p50k_base")


def test_pinned_hashes_are_the_ones_tiktoken_expects() -> None:
    from tiktoken_ext import openai_public

    for name, digest in ENCODING_SHA256.items():
        assert digest in inspect.getsource(getattr(openai_public, name))


def test_importing_tokens_does_not_import_tiktoken() -> None:
    code = "import sys, pi_tui.ai.tokens\nprint('tiktoken' in sys.modules, 'tiktoken_ext' in sys.modules)\n"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=30, check=True
    )
    assert result.stdout.split() == ["False", "False"]


def test_estimate_is_chars_over_four_rounded_up() -> None:
    assert [estimate_tokens(s) for s in ("", "a", "abcd", "abcde", "x" * 401)] == [0, 1, 1, 2, 101]


def test_message_estimates_follow_pi_rules() -> None:
    user = UserMessage(
        content=[TextContent(text="abcd" * 3), ImageContent(data="AAAA", mime_type="image/png")]
    )
    assert message_chars(user) == 12 + tokens.IMAGE_CHARS  # pi 0.76+ counts a user's images as a tool's
    assert message_chars(user.model_dump(by_alias=True, mode="json")) == 12 + tokens.IMAGE_CHARS
    assistant = AssistantMessage(
        content=[
            TextContent(text="hello"),
            ThinkingContent(thinking="hmm"),
            ToolCall(id="c1", name="read", arguments={"path": "a.txt"}),
        ]
    )
    assert message_chars(assistant) == 5 + 3 + 4 + len('{"path":"a.txt"}')
    result = ToolResultMessage(
        tool_call_id="c1",
        tool_name="read",
        content=[TextContent(text="file body"), ImageContent(data="AAAA", mime_type="image/png")],
    )
    assert message_chars(result) == 9 + tokens.IMAGE_CHARS
    bash = BashExecutionMessage(command="ls", output="a\nb\n")
    assert message_chars(bash) == 2 + 4
    summary = CompactionSummaryMessage(summary="s" * 10)
    assert count_message_tokens(summary) == 3
    assert count_messages_tokens([user, summary]) == 3 + tokens.IMAGE_CHARS // 4 + 3


def test_message_estimates_accept_camel_case_dicts() -> None:
    message = {
        "role": "toolResult",
        "toolCallId": "c",
        "toolName": "x",
        "content": [{"type": "text", "text": "abcde"}],
    }
    assert count_message_tokens(message) == 2
    assert count_message_tokens({"role": "user", "content": "abcdefgh"}) == 2
    assert count_message_tokens({"role": "unknown-role"}) == 0
