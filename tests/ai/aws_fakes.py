"""Loopback fakes of the AWS services the credential chain calls: STS (``AssumeRole`` with its SigV4
signature checked by botocore, ``AssumeRoleWithWebIdentity``), the SSO portal (``GetRoleCredentials``),
SSO OIDC (``CreateToken`` with a refresh token) and the EC2 instance metadata service (IMDSv2 token,
role listing, role credentials).

Credentials handed out are derived from what was asked (role and source key, SSO account and role), so
two clients that resolve a profile the same way get the same keys: the tests compare pi-tui with
botocore through that.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials


def derived(*parts: str) -> tuple[str, str, str]:
    """The (key id, secret, session token) the fake hands out for these inputs."""
    digest = hashlib.sha256("|".join(parts).encode()).hexdigest()
    return f"ASIA{digest[:16].upper()}", f"secret/{digest[16:40]}", f"token/{digest[40:]}=="


def iso(moment: float) -> str:
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Seen:
    """One request as the fake received it."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def form(self) -> dict[str, str]:
        return {k: v[0] for k, v in parse_qs(self.body.decode(), keep_blank_values=True).items()}


@dataclass
class FakeAws:
    """What the fake accepts; ``seen`` records every request."""

    users: dict[str, str] = field(default_factory=dict)  # access key id -> secret (STS callers)
    denied: dict[str, str] = field(default_factory=dict)  # role arn -> AccessDenied message
    web_tokens: set[str] = field(default_factory=set)
    sso_tokens: set[str] = field(default_factory=set)
    refresh_tokens: dict[str, str] = field(default_factory=dict)  # refresh token -> new access token
    lifetime: float = 3600.0  # seconds the credentials handed out live
    imds_role: str | None = "instance-role"
    imds_v2: bool = True
    imds_v1_allowed: bool = False  # answer a GET without the token even while tokens are handed out
    sso_forbidden: bool = False
    seen: list[Seen] = field(default_factory=list)
    url: str = ""

    def of(self, path_prefix: str) -> list[Seen]:
        return [s for s in self.seen if s.path.startswith(path_prefix)]

    def sts_calls(self, action: str) -> list[Seen]:
        return [s for s in self.seen if s.method == "POST" and s.form().get("Action") == action]

    # -- handlers ---------------------------------------------------------------------------------

    def handle(self, seen: Seen) -> tuple[int, dict[str, str], bytes]:
        self.seen.append(seen)
        path = urlsplit(seen.path).path
        if seen.method == "POST" and path == "/token":
            return self._oidc(seen)
        if seen.method == "POST":
            return self._sts(seen)
        if path == "/federation/credentials":
            return self._sso(seen)
        if path.startswith("/latest/"):
            return self._imds(seen, path)
        if path == "/container-credentials":
            key, secret, token = derived("container")
            body = {
                "AccessKeyId": key,
                "SecretAccessKey": secret,
                "Token": token,
                "Expiration": iso(time.time() + self.lifetime),
            }
            return 200, {"content-type": "application/json"}, json.dumps(body).encode()
        return 404, {}, b"not found"

    def _xml_error(self, status: int, code: str, message: str) -> tuple[int, dict[str, str], bytes]:
        body = (
            '<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender</Type>'
            f"<Code>{code}</Code><Message>{message}</Message></Error><RequestId>r-1</RequestId></ErrorResponse>"
        )
        return status, {"content-type": "text/xml"}, body.encode()

    def _credentials_xml(self, action: str, key: str, secret: str, token: str, duration: float) -> bytes:
        return (
            f'<{action}Response xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><{action}Result>'
            f"<Credentials><AccessKeyId>{key}</AccessKeyId><SecretAccessKey>{secret}</SecretAccessKey>"
            f"<SessionToken>{token}</SessionToken><Expiration>{iso(time.time() + duration)}</Expiration>"
            f"</Credentials><AssumedRoleUser><Arn>arn:aws:sts::1:assumed-role/x/y</Arn>"
            f"<AssumedRoleId>AROA:y</AssumedRoleId></AssumedRoleUser></{action}Result>"
            f"<ResponseMetadata><RequestId>r-2</RequestId></ResponseMetadata></{action}Response>"
        ).encode()

    def _verify(self, seen: Seen) -> str | None:
        """The caller's access key id when botocore computes the same SigV4 signature, else None."""
        auth = seen.headers.get("authorization", "")
        try:
            credential = auth.split("Credential=")[1].split(",")[0]
            key, day, region, service, _ = credential.split("/")
            signed = auth.split("SignedHeaders=")[1].split(",")[0].split(";")
            signature = auth.split("Signature=")[1].strip()
        except IndexError:
            return None
        secret = self.users.get(key)
        if secret is None or service != "sts":
            return None
        headers = {name: seen.headers[name] for name in signed if name != "host" and name in seen.headers}
        request = AWSRequest(
            method="POST", url=f"http://{seen.headers['host']}{seen.path}", data=seen.body, headers=headers
        )
        request.context["timestamp"] = seen.headers.get("x-amz-date", "")
        oracle = SigV4Auth(Credentials(key, secret, seen.headers.get("x-amz-security-token")), "sts", region)
        canonical = oracle.canonical_request(request)
        expected = oracle.signature(oracle.string_to_sign(request, canonical), request)
        return key if expected == signature and day == request.context["timestamp"][:8] else None

    def _sts(self, seen: Seen) -> tuple[int, dict[str, str], bytes]:
        form = seen.form()
        action = form.get("Action", "")
        duration = min(float(form.get("DurationSeconds", "3600")), self.lifetime)
        if action == "AssumeRole":
            caller = self._verify(seen)
            if caller is None:
                return self._xml_error(
                    403, "SignatureDoesNotMatch", "The request signature we calculated does not match"
                )
            role = form["RoleArn"]
            if role in self.denied:
                return self._xml_error(403, "AccessDenied", self.denied[role])
            key, secret, token = derived(role, caller)
            self.users[key] = secret  # a role can assume the next role of a chain
            return (
                200,
                {"content-type": "text/xml"},
                self._credentials_xml(action, key, secret, token, duration),
            )
        if action == "AssumeRoleWithWebIdentity":
            if "authorization" in seen.headers:
                return self._xml_error(400, "InvalidAction", "AssumeRoleWithWebIdentity is not signed")
            if form.get("WebIdentityToken") not in self.web_tokens:
                return self._xml_error(
                    400,
                    "InvalidIdentityToken",
                    "Couldn't retrieve verification key from your identity provider",
                )
            key, secret, token = derived(form["RoleArn"], "web")
            return (
                200,
                {"content-type": "text/xml"},
                self._credentials_xml(action, key, secret, token, duration),
            )
        return self._xml_error(400, "InvalidAction", f"Could not find operation {action}")

    def _sso(self, seen: Seen) -> tuple[int, dict[str, str], bytes]:
        token = seen.headers.get("x-amz-sso_bearer_token", "")
        if token not in self.sso_tokens:
            body = json.dumps({"message": "Session token not found or invalid"}).encode()
            return 401, {"x-amzn-errortype": "UnauthorizedException:http://internal.amazon.com/"}, body
        if self.sso_forbidden:
            return (
                403,
                {"x-amzn-errortype": "ForbiddenException"},
                json.dumps({"message": "No access"}).encode(),
            )
        query = {k: v[0] for k, v in parse_qs(urlsplit(seen.path).query).items()}
        key, secret, session = derived("sso", query["account_id"], query["role_name"])
        credentials = {
            "accessKeyId": key,
            "secretAccessKey": secret,
            "sessionToken": session,
            "expiration": int((time.time() + self.lifetime) * 1000),
        }
        return (
            200,
            {"content-type": "application/json"},
            json.dumps({"roleCredentials": credentials}).encode(),
        )

    def _oidc(self, seen: Seen) -> tuple[int, dict[str, str], bytes]:
        data = json.loads(seen.body)
        new = self.refresh_tokens.get(data.get("refreshToken", ""))
        if data.get("grantType") != "refresh_token" or new is None:
            return (
                400,
                {"x-amzn-errortype": "InvalidGrantException"},
                json.dumps({"error": "invalid_grant"}).encode(),
            )
        self.sso_tokens.add(new)
        answer = {"accessToken": new, "expiresIn": 28800, "refreshToken": "refresh-2", "tokenType": "Bearer"}
        return 200, {"content-type": "application/json"}, json.dumps(answer).encode()

    def _imds(self, seen: Seen, path: str) -> tuple[int, dict[str, str], bytes]:
        if path == "/latest/api/token":
            if seen.method != "PUT" or not self.imds_v2:
                return 403 if not self.imds_v2 else 405, {}, b""
            return 200, {}, b"imds-session-token"
        token = seen.headers.get("x-aws-ec2-metadata-token")
        if self.imds_v2 and token != "imds-session-token" and not (self.imds_v1_allowed and token is None):
            return 401, {}, b""
        prefix = "/latest/meta-data/iam/security-credentials/"
        if self.imds_role is None:
            return 404, {}, b""
        if path == prefix:
            return 200, {}, self.imds_role.encode()
        if path == prefix + self.imds_role:
            key, secret, token = derived("imds", self.imds_role)
            body = {
                "Code": "Success",
                "Type": "AWS-HMAC",
                "AccessKeyId": key,
                "SecretAccessKey": secret,
                "Token": token,
                "Expiration": iso(time.time() + self.lifetime),
            }
            return 200, {"content-type": "application/json"}, json.dumps(body).encode()
        return 404, {}, b""


@contextmanager
def serving(fake: FakeAws) -> Iterator[FakeAws]:
    """Serve ``fake`` on a loopback port (``fake.url``) for the duration of the block."""

    class Handler(BaseHTTPRequestHandler):
        def _any(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            seen = Seen(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            status, headers, payload = fake.handle(seen)
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = do_PUT = _any  # noqa: N815 (the stdlib's names)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    fake.url = f"http://127.0.0.1:{server.server_port}"
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
