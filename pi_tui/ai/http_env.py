"""What the environment says about outgoing HTTPS: proxies and the trust store.

Kept apart from the HTTP client so the choice "direct or through a proxy" costs no import of an HTTP
library, and so both transports (`pi_tui.ai.http` and the ``httpx2`` fallback) share one answer.

- `proxy_for` names the proxy a request to a URL would go through, from ``HTTP_PROXY`` /
  ``HTTPS_PROXY`` / ``ALL_PROXY`` (and their lower-case forms, which win) minus ``NO_PROXY``, the way
  ``httpx2`` reads them. ``urllib.request`` (~15 ms to import) is only used where proxies can also come
  from the system settings (macOS, Windows).
- `verified_tls_context` builds, once, the verified TLS context ``httpx2.create_ssl_context(verify=True)``
  would: ``SSL_CERT_FILE`` or ``SSL_CERT_DIR`` when set, the OS trust store through ``truststore`` on
  macOS and Windows, OpenSSL's compiled-in CA paths (or a well-known bundle file) elsewhere; ``certifi``
  only when none of those exists.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import ssl

__all__ = ["environment_proxies", "proxy_for", "verified_tls_context"]

# Where Linux distributions keep their CA bundle when OpenSSL's compiled-in paths hold none
# (the same list httpcore2 and truststore fall back on).
_CA_FILE_CANDIDATES = (
    "/etc/ssl/cert.pem",
    "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
    "/etc/pki/tls/cert.pem",
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/ssl/ca-bundle.pem",
)


def environment_proxies() -> dict[str, str]:
    """The ``<scheme>_proxy`` settings, keyed by lower-case scheme (``http``, ``https``, ``all``, ``no``).

    Rules of ``urllib.request.getproxies_environment``: any spelling counts, a lower-case variable wins
    over the others (an empty lower-case one removes the setting), and ``HTTP_PROXY`` is ignored inside
    a CGI request (``REQUEST_METHOD`` set), where a client could have sent it as a ``Proxy:`` header.
    """
    if sys.platform in ("darwin", "win32"):  # proxies may also come from the system settings
        from urllib.request import getproxies

        return dict(getproxies())
    proxies: dict[str, str] = {}
    for name, value in os.environ.items():
        if value and name[-6:].lower() == "_proxy":
            proxies[name[:-6].lower()] = value
    if "REQUEST_METHOD" in os.environ:
        proxies.pop("http", None)
    for name, value in os.environ.items():
        if name[-6:] == "_proxy":
            if value:
                proxies[name[:-6].lower()] = value
            else:
                proxies.pop(name[:-6].lower(), None)
    return proxies


def proxy_for(url: str) -> str | None:
    """The proxy the environment configures for ``url``, or ``None`` when it goes direct.

    Errs towards a proxy: a ``NO_PROXY`` entry counts as bypassing only in the plain forms (``*``, a host
    name or address, ``.domain`` / ``*.domain`` / ``domain`` suffixes); anything subtler (ports, CIDR
    ranges, schemes) reports the proxy, and the caller's ``httpx2`` fallback applies its exact rules.
    """
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    proxies = environment_proxies()
    proxy = proxies.get(scheme) or proxies.get("all")
    if not proxy:
        return None
    host = (parts.hostname or "").lower()
    for entry in proxies.get("no", "").split(","):
        if _bypasses(entry.strip().lower(), host):
            return None
    return proxy


def _bypasses(entry: str, host: str) -> bool:
    if entry == "*":
        return True
    if not entry or "://" in entry or "/" in entry:
        return False
    if entry.startswith("[") and entry.endswith("]"):
        entry = entry[1:-1]
    elif ":" in entry and entry.count(":") == 1:  # host:port: only the fallback knows ports
        return False
    if entry.startswith("*."):
        entry = entry[1:]
    if entry.startswith("."):
        return host.endswith(entry)
    return host == entry or host.endswith("." + entry)


_tls_lock = threading.Lock()
_verified: ssl.SSLContext | None = None


def verified_tls_context() -> ssl.SSLContext:
    """The shared verified client context (HTTP/1.1 by ALPN), built on first use: loading the CA store
    costs ~25 ms, so a run that only talks plain http never pays for it."""
    global _verified
    with _tls_lock:
        if _verified is None:
            context = _trust_store_context()
            context.set_alpn_protocols(["http/1.1"])
            _verified = context
        return _verified


def _trust_store_context() -> ssl.SSLContext:
    import ssl

    if cafile := os.environ.get("SSL_CERT_FILE"):
        return ssl.create_default_context(cafile=cafile)
    if capath := os.environ.get("SSL_CERT_DIR"):
        return ssl.create_default_context(capath=capath)
    if sys.platform in ("darwin", "win32"):
        import truststore

        return truststore.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    # The compiled-in paths directly: set_default_verify_paths() would read SSL_CERT_* again.
    paths = ssl.get_default_verify_paths()
    cafile = paths.openssl_cafile if os.path.isfile(paths.openssl_cafile) else None
    capath = paths.openssl_capath if os.path.isdir(paths.openssl_capath) else None
    if capath and not cafile and not _has_hashed_certs(capath):
        capath = None
    if not cafile and not capath:
        cafile = next((path for path in _CA_FILE_CANDIDATES if os.path.isfile(path)), None)
    if not cafile and not capath:
        cafile = _certifi_bundle()
    if cafile or capath:
        context.load_verify_locations(cafile, capath)
    return context


def _has_hashed_certs(directory: str) -> bool:
    """True when ``directory`` holds OpenSSL's ``<hash>.<n>`` links (an empty dir verifies nothing)."""
    import re

    pattern = re.compile(r"[0-9a-fA-F]{8}\.\d")
    try:
        return any(pattern.fullmatch(name) for name in os.listdir(directory))
    except OSError:
        return False


def _certifi_bundle() -> str | None:
    try:
        import certifi
    except ImportError:
        return None
    return str(certifi.where())
