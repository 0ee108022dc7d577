"""`FakeLLM`: the test-facing object that owns a script, a request log, a cache and a server."""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any

from pi_tui.util.json_types import JsonObject

from ._cache import FakeClock
from ._engine import Engine, Responder
from ._http import FakeServer
from ._limits import ModelLimits
from ._plan import Plan, json_plan
from ._records import CacheStats, RecordedRequest, Violation
from ._script import Fault, Reply, Turn, turns_from_json
from ._tokens import count_tokens as _count_tokens

__all__ = ["FakeLLM"]


class FakeLLM:
    """An offline stand-in for the Anthropic and OpenAI APIs, driven by a script.

    Args:
        context_window: default prompt limit in fake tokens (per-model overrides in ``model_limits``).
        max_output_tokens: default cap on Anthropic ``max_tokens``.
        min_cacheable_tokens: default Anthropic minimum cacheable prefix.
        model_limits: per model id (exact, else longest prefix) `ModelLimits`.
        api_key: when set, requests presenting another key get a real-shaped 401.
        strict: answer rule violations with the provider's 4xx (``False``: only record them).
        clock: the time source for cache TTLs; default a `FakeClock` at 0 that moves only when advanced.
        responder: ``(RecordedRequest) -> Reply | Fault | str | parts`` used once the script runs out.
        reasoning_field: Chat Completions delta field for thinking text (``None``: don't send thinking).
        openai_cache_ttl: OpenAI in-memory prefix cache lifetime in seconds (``24h`` retention: one day).
        aws_credentials: Bedrock: access key id -> secret access key; SigV4-signed requests must verify
            against them (``None``: signatures are not checked). A bearer token must equal ``api_key``.
        azure_deployments: Azure OpenAI (``server.azure_base_url``): the deployment names that exist; a
            request for another gets Azure's ``DeploymentNotFound`` 404 (``None``: every name exists).
    """

    def __init__(
        self,
        *,
        context_window: int = 200_000,
        max_output_tokens: int = 128_000,
        min_cacheable_tokens: int = 1024,
        model_limits: Mapping[str, ModelLimits] | None = None,
        api_key: str | None = None,
        strict: bool = True,
        clock: Callable[[], float] | None = None,
        responder: Responder | None = None,
        reasoning_field: str | None = "reasoning_content",
        openai_cache_ttl: float = 300.0,
        aws_credentials: Mapping[str, str] | None = None,
        azure_deployments: Collection[str] | None = None,
    ) -> None:
        self._clock = clock if clock is not None else FakeClock()
        self.engine = Engine(
            defaults=ModelLimits(context_window, max_output_tokens, min_cacheable_tokens),
            model_limits=model_limits or {},
            api_key=api_key,
            strict=strict,
            clock=self._clock,
            reasoning_field=reasoning_field,
            openai_cache_ttl=openai_cache_ttl,
            responder=responder,
            aws_credentials=aws_credentials,
        )
        # Azure OpenAI (``…/openai/v1/responses``): the deployment names that exist (None: any name).
        self.engine.azure_deployments = None if azure_deployments is None else frozenset(azure_deployments)
        self.server: FakeServer | None = None

    # -- script ----------------------------------------------------------------------------------

    def script(
        self,
        turns: Iterable[Turn | Callable[[RecordedRequest], Any]] | Turn | Callable[[RecordedRequest], Any],
        *,
        replace: bool = False,
    ) -> FakeLLM:
        """Append turns (one turn or an iterable of them; ``replace=True`` drops the unused ones first).

        A turn is a `Reply`, a `Fault`, or a callable ``(RecordedRequest) -> Reply | Fault | str | parts``
        that is called when its request arrives. Returns ``self``.
        """
        new: list[Turn | Callable[[RecordedRequest], Any]]
        if isinstance(turns, Reply | Fault) or callable(turns):
            new = [turns]
        else:
            new = list(turns)
        with self.engine.lock:
            if replace:
                del self.engine.turns[self.engine.cursor :]
            self.engine.turns.extend(new)
        return self

    def load_script(self, data: Any, *, replace: bool = True) -> int:
        """Load a script in its JSON form (a parsed document or a JSON string); returns the turn count."""
        if isinstance(data, str | bytes):
            data = json.loads(data)
        turns = turns_from_json(data)
        self.script(turns, replace=replace)
        return len(turns)

    @property
    def responder(self) -> Responder | None:
        """The callable that answers once the script is used up (``None``: exhaustion is an error)."""
        return self.engine.responder

    @responder.setter
    def responder(self, value: Responder | None) -> None:
        with self.engine.lock:
            self.engine.responder = value

    @property
    def remaining_turns(self) -> int:
        with self.engine.lock:
            return len(self.engine.turns) - self.engine.cursor

    @property
    def exhausted(self) -> bool:
        """True once a request arrived with no turn left and no responder."""
        with self.engine.lock:
            return any(r.response is not None and r.response.kind == "exhausted" for r in self.engine.records)

    @property
    def problems(self) -> list[str]:
        """Script exhaustion and responder failures, in order."""
        with self.engine.lock:
            return list(self.engine.problems)

    def assert_script_consumed(self) -> None:
        """Fail unless every scripted turn was used and nothing ran past the script.

        Raises:
            AssertionError: naming the unused turns and any exhaustion or responder failure.
        """
        with self.engine.lock:
            unused = self.engine.turns[self.engine.cursor :]
            problems = list(self.engine.problems)
        lines = []
        if unused:
            lines.append(f"{len(unused)} scripted turn(s) were never requested; next: {unused[0]!r}")
        lines.extend(problems)
        if lines:
            raise AssertionError("fake LLM script not consumed cleanly:\n  " + "\n  ".join(lines))

    def assert_no_violations(self) -> None:
        """Fail if any request broke a provider rule, listing them."""
        found = self.violations
        if found:
            listed = "\n  ".join(f"#{v.request_seq} {v.rule}: {v.message}" for v in found)
            raise AssertionError(f"{len(found)} provider rule violation(s):\n  {listed}")

    # -- log -------------------------------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received (generation and count_tokens), oldest first."""
        with self.engine.lock:
            return list(self.engine.records)

    @property
    def last_request(self) -> RecordedRequest:
        """The newest request.

        Raises:
            LookupError: when nothing was received yet.
        """
        with self.engine.lock:
            if not self.engine.records:
                raise LookupError("the fake LLM has not received any request yet")
            return self.engine.records[-1]

    def wait_for_delivery(self, seq: int | None = None, timeout: float = 5.0) -> RecordedRequest:
        """Block until the server has finished sending the answer to request ``seq`` (default: the newest).

        The client can see the end of a dropped or truncated stream a moment before the server thread
        records ``frames_sent``; call this before asserting on delivery details.

        Raises:
            TimeoutError: when the answer is not delivered within ``timeout`` seconds.
        """
        engine = self.engine

        def delivered() -> RecordedRequest | None:
            records = [r for r in engine.records if seq is None or r.seq == seq]
            record = records[-1] if records else None
            return record if record is not None and record.response and record.response.delivered else None

        with engine.delivered:
            if not engine.delivered.wait_for(lambda: delivered() is not None, timeout):
                raise TimeoutError(
                    f"the fake LLM did not finish answering request {seq or 'latest'} in {timeout}s"
                )
            found = delivered()
            assert found is not None
            return found

    @property
    def violations(self) -> list[Violation]:
        """Every rule violation over all requests, in order."""
        with self.engine.lock:
            return [v for r in self.engine.records for v in r.violations]

    def cache_stats(self) -> CacheStats:
        """Reported prompt usage per answered generation request, with sums and the hit ratio."""
        with self.engine.lock:
            return CacheStats.from_requests(self.engine.records)

    # -- tokens and time -------------------------------------------------------------------------

    @staticmethod
    def count_tokens(value: str | JsonObject, api: str = "anthropic") -> int:
        """The fake token count of a text, or the prompt total of a request body (see `pi_tui.testing`)."""
        return _count_tokens(value, api)

    @property
    def clock(self) -> Callable[[], float]:
        return self._clock

    def advance_clock(self, seconds: float) -> float:
        """Move the fake clock forward (e.g. past a cache TTL); returns the new time.

        Raises:
            TypeError: when the fake was built with a clock that cannot be advanced.
        """
        if not isinstance(self._clock, FakeClock):
            raise TypeError("advance_clock needs the default FakeClock; advance your own clock instead")
        return self._clock.advance(seconds)

    def reset(self) -> None:
        """Forget the script, the log, the cache and the counters (the server keeps running)."""
        self.engine.reset()

    # -- serving ---------------------------------------------------------------------------------

    def serve(self, host: str = "127.0.0.1", port: int = 0) -> FakeServer:
        """Start a loopback server in a background thread; use the result as a context manager."""
        self.server = FakeServer(self.engine, self._control, host, port)
        return self.server

    def _control(self, method: str, path: str, raw: bytes) -> Plan:
        """The ``/_fake/*`` control plane used by subprocess-driven tests and benchmarks."""
        route = path.split("?", 1)[0].rstrip("/")
        try:
            payload = json.loads(raw) if raw else {}
            if method == "POST" and route == "/_fake/script":
                append = isinstance(payload, dict) and bool(payload.get("append"))
                count = self.load_script(payload, replace=not append)
                return json_plan(200, {"loaded": count, "remaining_turns": self.remaining_turns})
            if method == "POST" and route == "/_fake/reset":
                self.reset()
                return json_plan(200, {"ok": True})
            if method == "POST" and route == "/_fake/clock/advance":
                return json_plan(200, {"now": self.advance_clock(float(payload.get("seconds", 0)))})
            if method == "GET" and route == "/_fake/log":
                return json_plan(200, {"requests": [r.to_dict() for r in self.requests]})
            if method == "GET" and route == "/_fake/violations":
                return json_plan(200, {"violations": [v.__dict__ for v in self.violations]})
            if method == "GET" and route == "/_fake/stats":
                return json_plan(200, self._stats())
        except (ValueError, TypeError, KeyError) as exc:
            return json_plan(400, {"error": f"{type(exc).__name__}: {exc}"})
        return json_plan(404, {"error": f"unknown control route {method} {route}"})

    def _stats(self) -> JsonObject:
        return {
            "requests": len(self.requests),
            "violations": len(self.violations),
            "remaining_turns": self.remaining_turns,
            "exhausted": self.exhausted,
            "problems": self.problems,
            "cache": self.cache_stats().to_dict(),
        }
