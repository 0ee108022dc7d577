"""The AWS binary event-stream framing (``application/vnd.amazon.eventstream``), both ways.

Bedrock's ``ConverseStream`` answers with a sequence of binary messages, each framed as:

- a 12-byte prelude: total length (4 bytes, big endian), headers length (4), and a CRC-32 of those
  eight bytes (4);
- the headers: for each, a 1-byte name length, the name (UTF-8), a 1-byte value type and the value
  (bool true/false carry no bytes; byte, short, int, long are 1, 2, 4, 8 bytes signed big endian;
  byte arrays and strings a 2-byte length then the bytes; a timestamp 8 bytes of milliseconds;
  a UUID 16 bytes);
- the payload (JSON for Bedrock);
- a CRC-32 of everything before it.

`EventStreamDecoder` checks both CRCs and the lengths and raises `EventStreamError` on any mismatch
(a damaged stream must not be read as a shorter answer). `encode_message` builds a frame; the fake
server in `pi_tui.testing` uses it to speak Bedrock.
"""

from __future__ import annotations

import struct
import uuid
import zlib
from collections.abc import AsyncIterable, AsyncIterator, Iterator
from dataclasses import dataclass

__all__ = [
    "EventStreamError",
    "EventStreamDecoder",
    "Message",
    "decode_stream",
    "encode_message",
]

HeaderValue = bool | int | bytes | str | uuid.UUID

_PRELUDE = 12
_MAX_MESSAGE = 16 * 1024 * 1024  # Bedrock's frames are small; a larger length means a corrupt prelude
_MAX_HEADERS = 128 * 1024


class EventStreamError(ValueError):
    """The bytes are not a valid event stream (bad length, CRC or header)."""


@dataclass(frozen=True, slots=True)
class Message:
    """One decoded frame: its headers (name -> value) and its payload bytes."""

    headers: dict[str, HeaderValue]
    payload: bytes

    def header(self, name: str) -> str | None:
        """A string header's value (None when absent or not a string)."""
        value = self.headers.get(name)
        return value if isinstance(value, str) else None


def _crc(data: bytes | memoryview) -> int:
    return zlib.crc32(data) & 0xFFFFFFFF


def _parse_headers(data: bytes) -> dict[str, HeaderValue]:
    headers: dict[str, HeaderValue] = {}
    i, end = 0, len(data)
    try:
        while i < end:
            name_len = data[i]
            name = data[i + 1 : i + 1 + name_len].decode("utf-8")
            i += 1 + name_len
            kind = data[i]
            i += 1
            value: HeaderValue
            if kind == 0:
                value = True
            elif kind == 1:
                value = False
            elif kind in (2, 3, 4, 5):
                size = {2: 1, 3: 2, 4: 4, 5: 8}[kind]
                chunk = data[i : i + size]
                if len(chunk) != size:
                    raise EventStreamError("event stream header value is cut short")
                value = int.from_bytes(chunk, "big", signed=True)
                i += size
            elif kind in (6, 7):
                (length,) = struct.unpack_from(">H", data, i)
                raw = data[i + 2 : i + 2 + length]
                if len(raw) != length:
                    raise EventStreamError("event stream header value is cut short")
                value = raw.decode("utf-8") if kind == 7 else bytes(raw)
                i += 2 + length
            elif kind == 8:
                (value,) = struct.unpack_from(">q", data, i)
                i += 8
            elif kind == 9:
                raw = data[i : i + 16]
                if len(raw) != 16:
                    raise EventStreamError("event stream header value is cut short")
                value = uuid.UUID(bytes=bytes(raw))
                i += 16
            else:
                raise EventStreamError(f"unknown event stream header type {kind}")
            headers[name] = value
    except (IndexError, struct.error, UnicodeDecodeError) as exc:
        raise EventStreamError(f"malformed event stream headers: {exc}") from exc
    return headers


class EventStreamDecoder:
    """Feed bytes as they arrive; iterate the complete messages decoded so far."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    @property
    def pending(self) -> int:
        """Bytes received but not yet part of a complete message."""
        return len(self._buffer)

    def feed(self, data: bytes) -> Iterator[Message]:
        self._buffer += data
        while len(self._buffer) >= _PRELUDE:
            buffer = self._buffer
            total, headers_len, prelude_crc = struct.unpack_from(">III", buffer, 0)
            if _crc(memoryview(buffer)[:8]) != prelude_crc:
                raise EventStreamError("event stream prelude CRC mismatch (the stream is corrupt)")
            if total < _PRELUDE + 4 + headers_len or total > _MAX_MESSAGE or headers_len > _MAX_HEADERS:
                raise EventStreamError(f"event stream message has an impossible length ({total} bytes)")
            if len(buffer) < total:
                return
            frame = bytes(buffer[:total])
            del buffer[:total]
            (message_crc,) = struct.unpack_from(">I", frame, total - 4)
            if _crc(frame[: total - 4]) != message_crc:
                raise EventStreamError("event stream message CRC mismatch (the stream is corrupt)")
            headers = _parse_headers(frame[_PRELUDE : _PRELUDE + headers_len])
            yield Message(headers, frame[_PRELUDE + headers_len : total - 4])


async def decode_stream(chunks: AsyncIterable[bytes]) -> AsyncIterator[Message]:
    """The messages of a byte stream; raises `EventStreamError` if it ends inside a message."""
    decoder = EventStreamDecoder()
    async for chunk in chunks:
        for message in decoder.feed(chunk):
            yield message
    if decoder.pending:
        raise EventStreamError(
            f"event stream ended without completing its last message ({decoder.pending} bytes left over): "
            "the response was cut off"
        )


def _encode_header(name: str, value: HeaderValue) -> bytes:
    raw_name = name.encode("utf-8")
    head = bytes([len(raw_name)]) + raw_name
    if value is True:
        return head + b"\x00"
    if value is False:
        return head + b"\x01"
    if isinstance(value, int):
        return head + b"\x04" + struct.pack(">i", value)
    if isinstance(value, uuid.UUID):
        return head + b"\x09" + value.bytes
    if isinstance(value, bytes):
        return head + b"\x06" + struct.pack(">H", len(value)) + value
    raw = value.encode("utf-8")
    return head + b"\x07" + struct.pack(">H", len(raw)) + raw


def encode_message(headers: dict[str, HeaderValue], payload: bytes) -> bytes:
    """One event-stream frame with ``headers`` (strings, ints as 32-bit, bools, bytes, UUIDs)."""
    header_bytes = b"".join(_encode_header(name, value) for name, value in headers.items())
    total = _PRELUDE + len(header_bytes) + len(payload) + 4
    prelude = struct.pack(">II", total, len(header_bytes))
    prelude += struct.pack(">I", _crc(prelude))
    body = prelude + header_bytes + payload
    return body + struct.pack(">I", _crc(body))
