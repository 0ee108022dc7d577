"""RS256 (RSASSA-PKCS1-v1_5 with SHA-256) signing in plain Python, for Google service-account JWTs.

A service-account key file holds an RSA private key in PEM (PKCS#8, or PKCS#1). Signing one JWT an hour
needs no crypto library: the key's numbers are read from its DER encoding and the signature is one
modular exponentiation (split by the Chinese remainder theorem: a few milliseconds for 2048 bits).
"""

from __future__ import annotations

import base64
import hashlib
import re
from dataclasses import dataclass

__all__ = ["RsaKey", "load_private_key", "sign_rs256"]

# DER of the DigestInfo header for SHA-256 (RFC 8017, section 9.2, note 1).
_SHA256_PREFIX = bytes.fromhex("3031300d060960864801650304020105000420")
_PEM = re.compile(r"-----BEGIN ([A-Z ]+)-----(.*?)-----END \1-----", re.DOTALL)


@dataclass(frozen=True)
class RsaKey:
    """The numbers of an RSA private key (with its CRT parameters)."""

    n: int
    e: int
    d: int
    p: int
    q: int
    dp: int
    dq: int
    qinv: int

    @property
    def size(self) -> int:
        """The modulus length in bytes."""
        return (self.n.bit_length() + 7) // 8


def _read_tlv(data: bytes, offset: int) -> tuple[int, int, int]:
    """(tag, start of value, end of value) of the DER element at ``offset``."""
    if offset + 2 > len(data):
        raise ValueError("truncated DER")
    tag = data[offset]
    length = data[offset + 1]
    offset += 2
    if length & 0x80:
        count = length & 0x7F
        if count == 0 or count > 4 or offset + count > len(data):
            raise ValueError("bad DER length")
        length = int.from_bytes(data[offset : offset + count], "big")
        offset += count
    end = offset + length
    if end > len(data):
        raise ValueError("truncated DER")
    return tag, offset, end


def _children(data: bytes, start: int, end: int) -> list[tuple[int, int, int]]:
    out = []
    while start < end:
        tag, value_start, value_end = _read_tlv(data, start)
        out.append((tag, value_start, value_end))
        start = value_end
    return out


def _pkcs1(der: bytes) -> RsaKey:
    tag, start, end = _read_tlv(der, 0)
    if tag != 0x30:
        raise ValueError("not an RSAPrivateKey sequence")
    fields = _children(der, start, end)
    if len(fields) < 9 or any(t != 0x02 for t, _, _ in fields[:9]):
        raise ValueError("not an RSAPrivateKey")
    numbers = [int.from_bytes(der[s:e], "big") for _, s, e in fields[1:9]]
    return RsaKey(*numbers)


def load_private_key(pem: str) -> RsaKey:
    """Read an RSA private key from PEM text (``PRIVATE KEY`` or ``RSA PRIVATE KEY``).

    Raises:
        ValueError: the text holds no RSA private key this reader understands (an encrypted key, an EC
            key, a damaged file).
    """
    match = _PEM.search(pem)
    if match is None:
        raise ValueError("no PEM private key found")
    label, body = match.group(1), match.group(2)
    try:
        der = base64.b64decode("".join(body.split()), validate=True)
    except ValueError:
        raise ValueError("the PEM body is not base64") from None
    if label == "RSA PRIVATE KEY":
        return _pkcs1(der)
    if label != "PRIVATE KEY":
        raise ValueError(f"unsupported PEM key type: {label}")
    tag, start, end = _read_tlv(der, 0)
    fields = _children(der, start, end) if tag == 0x30 else []
    if len(fields) < 3 or fields[2][0] != 0x04:
        raise ValueError("not a PKCS#8 private key")
    algorithm = der[fields[1][1] : fields[1][2]]
    if b"\x2a\x86\x48\x86\xf7\x0d\x01\x01\x01" not in algorithm:  # rsaEncryption OID 1.2.840.113549.1.1.1
        raise ValueError("the private key is not an RSA key")
    return _pkcs1(der[fields[2][1] : fields[2][2]])


def sign_rs256(key: RsaKey, message: bytes) -> bytes:
    """The RSASSA-PKCS1-v1_5 SHA-256 signature of ``message``."""
    digest_info = _SHA256_PREFIX + hashlib.sha256(message).digest()
    padding = key.size - len(digest_info) - 3
    if padding < 8:
        raise ValueError("the RSA key is too short for SHA-256 signatures")
    encoded = b"\x00\x01" + b"\xff" * padding + b"\x00" + digest_info
    m = int.from_bytes(encoded, "big")
    s1 = pow(m, key.dp, key.p)
    s2 = pow(m, key.dq, key.q)
    h = (key.qinv * (s1 - s2)) % key.p
    return (s2 + h * key.q).to_bytes(key.size, "big")
