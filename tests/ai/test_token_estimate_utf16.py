"""pi's chars/4 token estimate counts a JavaScript string's length: UTF-16 code units, so a character
outside the Basic Multilingual Plane (most emoji) counts twice. Ours must agree on every such text."""

from __future__ import annotations

import json
import subprocess
from typing import Any

from pi_tui.ai.providers._openai_compat import context_room
from pi_tui.ai.tokens import count_message_tokens, estimate_tokens, js_length, message_chars
from pi_tui.ai.types import Model, UserMessage

from ..pi087 import Pi087

ROCKETS = "🚀" * 8  # 8 characters, 16 UTF-16 code units

MESSAGES: list[dict[str, Any]] = [
    {"role": "user", "content": "😀😀😀"},
    {"role": "user", "content": [{"type": "text", "text": f"ship it {ROCKETS}"}]},
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "héllo 🎉🎉🎉"},
            {"type": "thinking", "thinking": "𝔣𝔞𝔫𝔠𝔶 thoughts"},
            {"type": "toolCall", "id": "c1", "name": "write", "arguments": {"text": ROCKETS, "n": 1}},
        ],
    },
    {
        "role": "toolResult",
        "toolCallId": "c1",
        "toolName": "write",
        "content": [{"type": "text", "text": "✅🐍"}],
    },
    {"role": "bashExecution", "command": "echo 🐍", "output": "🐍\n"},
    {"role": "compactionSummary", "summary": "💡" * 5, "tokensBefore": 1},
    {"role": "user", "content": "plain ascii stays as it was"},
]


def test_js_length_counts_utf16_code_units() -> None:
    assert [js_length(s) for s in ("", "abc", "é", "€", "😀", "a😀b", "\ud83d")] == [0, 3, 1, 1, 2, 4, 1]


def test_emoji_estimate_counts_each_as_two_code_units() -> None:
    assert estimate_tokens(ROCKETS) == 4  # 16 code units / 4 (Python's len would say 2)
    assert estimate_tokens("😀") == 1
    assert message_chars(UserMessage(content="😀😀😀")) == 6
    assert count_message_tokens(UserMessage(content="😀😀😀😀😀")) == 3  # ceil(10 / 4)


def test_context_room_counts_the_system_prompt_in_code_units() -> None:
    model = Model(id="m", name="m", api="openai-completions", provider="p", context_window=10_000)
    plain = context_room(model, [], instructions="x" * 400)
    emoji = context_room(model, [], instructions="😀" * 200)  # 400 code units as well
    assert plain is not None and emoji == plain


def test_message_estimates_match_pi(pi087: Pi087) -> None:
    compaction = pi087.dir / "node_modules/@earendil-works/pi-coding-agent/dist/core/compaction/compaction.js"
    script = (
        f"const {{ estimateTokens }} = await import({json.dumps(compaction.as_uri())});"
        "let input = ''; for await (const chunk of process.stdin) input += chunk;"
        "console.log(JSON.stringify(JSON.parse(input).map((m) => estimateTokens(m))));"
    )
    run = subprocess.run(
        [str(pi087.node), "--input-type=module", "-e", script],
        input=json.dumps(MESSAGES, ensure_ascii=False),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=30,
        env=pi087.env(),
    )
    assert run.returncode == 0, run.stderr
    assert [count_message_tokens(m) for m in MESSAGES] == json.loads(run.stdout)
