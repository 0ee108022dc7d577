"""The AWS credential chain past static keys (assumed roles, web identity, credential_process, SSO,
the EC2 instance metadata service) against loopback fakes of STS, the SSO portal and IMDS; botocore,
reading the same files against the same fakes, is the oracle for which credentials a profile yields."""

from __future__ import annotations

import hashlib
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import botocore.credentials
import botocore.session
import botocore.tokens
import pytest

from pi_tui.ai.providers import _aws_cache
from pi_tui.ai.providers._aws_credentials import AMBIENT, AwsSetupError, BedrockAuth, resolve_auth
from pi_tui.ai.providers._sigv4 import AwsCredentials

from .aws_fakes import FakeAws, derived, iso, serving

SOURCE_KEY, SOURCE_SECRET = "AKIDSOURCE", "source/secret"
ROLE = "arn:aws:iam::123456789012:role/bedrock-user"


@pytest.fixture(autouse=True)
def fresh_cache() -> Iterator[None]:
    _aws_cache.clear()
    yield
    _aws_cache.clear()


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAws]:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")  # botocore reads only this one
    # the fakes answer at once, but a loaded machine may be slower than IMDS's one-second default
    monkeypatch.setenv("AWS_METADATA_SERVICE_TIMEOUT", "30")
    with serving(FakeAws(users={SOURCE_KEY: SOURCE_SECRET})) as fake:
        monkeypatch.setenv("AWS_ENDPOINT_URL_STS", fake.url)
        monkeypatch.setenv("AWS_ENDPOINT_URL_SSO", fake.url)
        monkeypatch.setenv("AWS_ENDPOINT_URL_SSO_OIDC", fake.url)
        yield fake


def _files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, config: str, credentials: str = "") -> None:
    (tmp_path / "config").write_text(config)
    (tmp_path / "credentials").write_text(credentials)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))


async def _resolve(region: str = "eu-west-1") -> BedrockAuth:
    return await resolve_auth(AMBIENT, region=region)


def _botocore() -> AwsCredentials:
    frozen = botocore.session.Session().get_credentials().get_frozen_credentials()
    return AwsCredentials(frozen.access_key, frozen.secret_key, frozen.token)


SOURCE_FILES = f"[source]\naws_access_key_id = {SOURCE_KEY}\naws_secret_access_key = {SOURCE_SECRET}\n"


async def test_a_role_profile_assumes_the_role_with_a_signed_sts_call_and_keeps_the_keys(
    aws: FakeAws, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _files(
        tmp_path,
        monkeypatch,
        config=(
            "[profile dev]\nrole_arn = " + ROLE + "\nsource_profile = source\nrole_session_name = alice\n"
            "external_id = ext-42\nduration_seconds = 1800\nregion = us-west-2\n"
        ),
        credentials=SOURCE_FILES,
    )
    monkeypatch.setenv("AWS_PROFILE", "dev")
    auth = await _resolve()
    assert auth.credentials == AwsCredentials(*derived(ROLE, SOURCE_KEY))
    assert auth.source == "AWS profile 'dev'"
    [call] = aws.sts_calls("AssumeRole")  # signed with the source keys: the fake checks it with botocore
    assert call.form() == {
        "Action": "AssumeRole",
        "Version": "2011-06-15",
        "RoleArn": ROLE,
        "RoleSessionName": "alice",
        "ExternalId": "ext-42",
        "DurationSeconds": "1800",
    }
    assert "/us-west-2/sts/aws4_request" in call.headers["authorization"]  # the profile's region
    assert (await _resolve()).credentials == auth.credentials
    assert len(aws.sts_calls("AssumeRole")) == 1  # kept until five minutes before they expire
    assert _botocore() == auth.credentials


async def test_roles_chain_through_source_profiles_and_a_source_with_keys_uses_its_keys(
    aws: FakeAws, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = "arn:aws:iam::111111111111:role/first"
    _files(
        tmp_path,
        monkeypatch,
        config=(
            f"[profile top]\nrole_arn = {ROLE}\nsource_profile = middle\n"
            f"[profile middle]\nrole_arn = {first}\nsource_profile = source\n"
            # a source profile's own keys win over its role_arn (the SDK's rule)
            f"[profile source]\nrole_arn = arn:aws:iam::1:role/never\nsource_profile = source\n"
        ),
        credentials=SOURCE_FILES,
    )
    monkeypatch.setenv("AWS_PROFILE", "top")
    auth = await _resolve()
    middle_key = derived(first, SOURCE_KEY)[0]
    assert auth.credentials == AwsCredentials(*derived(ROLE, middle_key))
    assert [c.form()["RoleArn"] for c in aws.sts_calls("AssumeRole")] == [first, ROLE]
    assert _botocore() == auth.credentials


async def test_a_source_profile_cycle_and_a_refused_role_say_what_is_wrong(
    aws: FakeAws, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    aws.denied[ROLE] = (
        f"User: arn:aws:iam::1:user/alice is not authorized to perform: sts:AssumeRole on resource: {ROLE}"
    )
    _files(
        tmp_path,
        monkeypatch,
        config=(
            f"[profile a]\nrole_arn = {ROLE}\nsource_profile = b\n[profile b]\nrole_arn = {ROLE}\nsource_profile = a\n"
            f"[profile denied]\nrole_arn = {ROLE}\nsource_profile = source\n"
            f"[profile mfa]\nrole_arn = {ROLE}\nsource_profile = source\nmfa_serial = arn:aws:iam::1:mfa/alice\n"
            f"[profile both]\nrole_arn = {ROLE}\nsource_profile = source\ncredential_source = Environment\n"
        ),
        credentials=SOURCE_FILES,
    )
    monkeypatch.setenv("AWS_PROFILE", "a")
    with pytest.raises(AwsSetupError, match=r"form a cycle"):
        await _resolve()
    monkeypatch.setenv("AWS_PROFILE", "denied")
    with pytest.raises(AwsSetupError) as refused:
        await _resolve()
    assert str(refused.value) == (
        f"AWS profile 'denied' cannot assume role {ROLE}: AccessDenied: User: arn:aws:iam::1:user/alice is not "
        f"authorized to perform: sts:AssumeRole on resource: {ROLE} (HTTP 403)"
    )
    monkeypatch.setenv("AWS_PROFILE", "mfa")
    with pytest.raises(
        AwsSetupError, match=r"needs an MFA code \(mfa_serial\).*export-credentials --profile mfa"
    ):
        await _resolve()
    monkeypatch.setenv("AWS_PROFILE", "both")
    with pytest.raises(AwsSetupError, match="sets both source_profile and credential_source"):
        await _resolve()
    assert len(aws.sts_calls("AssumeRole")) == 1  # only the refused one reached STS


async def test_credential_source_environment_assumes_the_role_with_the_environment_keys(
    aws: FakeAws, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _files(
        tmp_path, monkeypatch, config=f"[profile ci]\nrole_arn = {ROLE}\ncredential_source = Environment\n"
    )
    monkeypatch.setenv("AWS_PROFILE", "ci")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", SOURCE_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SOURCE_SECRET)
    # as in pi, ambient keys win over an ambient AWS_PROFILE; a profile chosen at /login wins over them
    assert (await _resolve()).credentials == AwsCredentials(SOURCE_KEY, SOURCE_SECRET)
    auth = await resolve_auth(AMBIENT, stored_profile=True, region="ap-south-1")
    assert auth.credentials == AwsCredentials(*derived(ROLE, SOURCE_KEY))
    assert "/ap-south-1/sts/aws4_request" in aws.sts_calls("AssumeRole")[0].headers["authorization"]


async def test_credentials_near_expiry_are_fetched_again_and_a_failed_refresh_keeps_valid_ones(
    aws: FakeAws, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    aws.lifetime = 200  # inside the five-minute window from the start
    _files(
        tmp_path,
        monkeypatch,
        config=f"[profile dev]\nrole_arn = {ROLE}\nsource_profile = source\n",
        credentials=SOURCE_FILES,
    )
    monkeypatch.setenv("AWS_PROFILE", "dev")
    first = await _resolve()
    await _resolve()
    assert len(aws.sts_calls("AssumeRole")) == 2
    aws.denied[ROLE] = "temporarily refused"
    assert (await _resolve()).credentials == first.credentials  # still valid for 200 s: kept
    assert len(aws.sts_calls("AssumeRole")) == 3


async def test_web_identity_from_the_environment_and_from_a_profile(
    aws: FakeAws, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("eyJ.web.identity")
    aws.web_tokens.add("eyJ.web.identity")
    monkeypatch.setenv("AWS_WEB_IDENTITY_TOKEN_FILE", str(token_file))
    monkeypatch.setenv("AWS_ROLE_ARN", ROLE)
    monkeypatch.setenv("AWS_ROLE_SESSION_NAME", "pod-1")
    _files(tmp_path, monkeypatch, config="")
    auth = await _resolve()
    assert auth.credentials == AwsCredentials(*derived(ROLE, "web"))
    assert auth.source == "web identity"
    [call] = aws.sts_calls("AssumeRoleWithWebIdentity")
    assert "authorization" not in call.headers
    assert call.form() == {
        "Action": "AssumeRoleWithWebIdentity",
        "Version": "2011-06-15",
        "RoleArn": ROLE,
        "RoleSessionName": "pod-1",
        "WebIdentityToken": "eyJ.web.identity",
    }
    assert _botocore() == auth.credentials
    other = "arn:aws:iam::1:role/other"
    _files(
        tmp_path,
        monkeypatch,
        config=f"[profile web]\nweb_identity_token_file = {token_file}\nrole_arn = {other}\n",
    )
    monkeypatch.setenv("AWS_PROFILE", "web")
    assert (await _resolve()).credentials == AwsCredentials(*derived(other, "web"))
    token_file.write_text("rejected")
    _aws_cache.clear()
    with pytest.raises(AwsSetupError) as rejected:
        await _resolve()
    assert str(rejected.value) == (
        f"AWS profile 'web': cannot assume role {other} with a web identity: InvalidIdentityToken: Couldn't "
        "retrieve verification key from your identity provider (HTTP 400)"
    )


def _script(tmp_path: Path, name: str, body: str) -> str:
    path = tmp_path / name
    path.write_text(body)
    return f"{sys.executable} {path}"


async def test_credential_process_output_is_used_and_its_failure_shows_its_stderr(
    aws: FakeAws, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    counter = tmp_path / "runs"
    good = _script(
        tmp_path,
        "good.py",
        "import json, pathlib\n"
        f"p = pathlib.Path({str(counter)!r}); p.write_text(p.read_text() + 'x' if p.exists() else 'x')\n"
        "print(json.dumps({'Version': 1, 'AccessKeyId': 'AKIDPROC', 'SecretAccessKey': 'proc/secret',"
        f" 'SessionToken': 'proc-token', 'Expiration': {iso(time.time() + 3600)!r}}}))\n",
    )
    bad = _script(
        tmp_path,
        "bad.py",
        "import sys\nsys.stderr.write('the vault is locked: unlock it first\\n')\nsys.exit(3)\n",
    )
    junk = _script(tmp_path, "junk.py", "print('hello')\n")
    _files(
        tmp_path,
        monkeypatch,
        config=(
            f"[profile proc]\ncredential_process = {good}\n[profile broken]\ncredential_process = {bad}\n"
            f"[profile junk]\ncredential_process = {junk}\n"
        ),
    )
    monkeypatch.setenv("AWS_PROFILE", "proc")
    auth = await _resolve()
    assert auth.credentials == AwsCredentials("AKIDPROC", "proc/secret", "proc-token")
    await _resolve()
    assert counter.read_text() == "x"  # ran once, kept until shortly before the expiry it printed
    assert _botocore() == auth.credentials
    monkeypatch.setenv("AWS_PROFILE", "broken")
    with pytest.raises(AwsSetupError) as failed:
        await _resolve()
    assert str(failed.value) == (
        f"AWS profile 'broken': credential_process `{bad}` failed with exit code 3: the vault is locked: unlock it first"
    )
    monkeypatch.setenv("AWS_PROFILE", "junk")
    with pytest.raises(AwsSetupError, match="did not print JSON credentials"):
        await _resolve()


def _sso_cache(name: str, **token: object) -> Path:
    path = Path.home() / ".aws" / "sso" / "cache" / f"{hashlib.sha1(name.encode()).hexdigest()}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(token))
    return path


SSO_CONFIG = (
    "[profile corp]\nsso_session = corp\nsso_account_id = 123456789012\nsso_role_name = Developer\n"
    "[sso-session corp]\nsso_start_url = https://corp.awsapps.com/start\nsso_region = eu-central-1\n"
    "sso_registration_scopes = sso:account:access\n"
    "[profile legacy]\nsso_start_url = https://old.awsapps.com/start\nsso_region = us-east-1\n"
    "sso_account_id = 210987654321\nsso_role_name = ReadOnly\n"
)


async def test_sso_profiles_trade_the_cached_token_for_role_credentials(
    aws: FakeAws, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # botocore fixes its token cache directory when it is imported: point it at this test's home
    cache_dir = str(Path.home() / ".aws" / "sso" / "cache")
    monkeypatch.setattr(botocore.tokens.SSOTokenProvider, "_SSO_TOKEN_CACHE_DIR", cache_dir)
    monkeypatch.setattr(botocore.credentials.SSOProvider, "_SSO_TOKEN_CACHE_DIR", cache_dir)
    aws.sso_tokens.update({"sso-access", "legacy-access"})
    _files(tmp_path, monkeypatch, config=SSO_CONFIG)
    _sso_cache("corp", accessToken="sso-access", expiresAt=iso(time.time() + 3600), region="eu-central-1")
    _sso_cache(
        "https://old.awsapps.com/start", accessToken="legacy-access", expiresAt=iso(time.time() + 3600)
    )
    monkeypatch.setenv("AWS_PROFILE", "corp")
    auth = await _resolve()
    assert auth.credentials == AwsCredentials(*derived("sso", "123456789012", "Developer"))
    [call] = aws.of("/federation/credentials")
    assert call.path == "/federation/credentials?account_id=123456789012&role_name=Developer"
    assert call.headers["x-amz-sso_bearer_token"] == "sso-access"
    assert _botocore() == auth.credentials
    monkeypatch.setenv("AWS_PROFILE", "legacy")
    assert (await _resolve()).credentials == AwsCredentials(*derived("sso", "210987654321", "ReadOnly"))
    assert _botocore() == AwsCredentials(*derived("sso", "210987654321", "ReadOnly"))


async def test_an_expired_or_missing_sso_sign_in_says_to_run_aws_sso_login(
    aws: FakeAws, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _files(tmp_path, monkeypatch, config=SSO_CONFIG)
    monkeypatch.setenv("AWS_PROFILE", "corp")
    with pytest.raises(
        AwsSetupError, match=r"no SSO sign-in cached for it .*: run `aws sso login --profile corp`"
    ):
        await _resolve()
    _sso_cache("corp", accessToken="old", expiresAt="2020-01-01T00:00:00UTC")
    with pytest.raises(AwsSetupError) as expired:
        await _resolve()
    assert str(expired.value) == (
        "The AWS SSO session of profile 'corp' expired at 2020-01-01 00:00 UTC: run `aws sso login --profile corp`"
    )
    _sso_cache("corp", accessToken="revoked", expiresAt=iso(time.time() + 3600))
    with pytest.raises(AwsSetupError) as revoked:
        await _resolve()
    assert str(revoked.value) == (
        "AWS SSO no longer accepts the sign-in of profile 'corp' (UnauthorizedException: Session token not "
        "found or invalid): run `aws sso login --profile corp`"
    )
    assert aws.of("/token") == []  # no refresh token cached: nothing to refresh with


async def test_an_sso_token_about_to_expire_is_refreshed_and_written_back(
    aws: FakeAws, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    aws.refresh_tokens["refresh-1"] = "sso-renewed"
    _files(tmp_path, monkeypatch, config=SSO_CONFIG)
    cache = _sso_cache(
        "corp",
        accessToken="stale",
        expiresAt=iso(time.time() + 60),
        clientId="client-1",
        clientSecret="client-secret",
        refreshToken="refresh-1",
        region="eu-central-1",
    )
    monkeypatch.setenv("AWS_PROFILE", "corp")
    auth = await _resolve()
    assert auth.credentials == AwsCredentials(*derived("sso", "123456789012", "Developer"))
    [refresh] = aws.of("/token")
    assert json.loads(refresh.body) == {
        "clientId": "client-1",
        "clientSecret": "client-secret",
        "grantType": "refresh_token",
        "refreshToken": "refresh-1",
    }
    assert aws.of("/federation/credentials")[0].headers["x-amz-sso_bearer_token"] == "sso-renewed"
    stored = json.loads(cache.read_text())
    assert stored["accessToken"] == "sso-renewed" and stored["refreshToken"] == "refresh-2"
    assert stored["clientId"] == "client-1"


async def test_the_instance_metadata_service_is_asked_with_an_imdsv2_token(
    aws: FakeAws, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _files(tmp_path, monkeypatch, config="")
    monkeypatch.delenv("AWS_EC2_METADATA_DISABLED")
    monkeypatch.setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", aws.url)
    auth = await _resolve()
    assert auth.credentials == AwsCredentials(*derived("imds", "instance-role"))
    assert auth.source == "EC2 instance metadata"
    token, listing, role = aws.of("/latest/")
    assert (token.method, token.path, token.headers["x-aws-ec2-metadata-token-ttl-seconds"]) == (
        "PUT",
        "/latest/api/token",
        "21600",
    )
    assert listing.path == "/latest/meta-data/iam/security-credentials/"
    assert role.path == "/latest/meta-data/iam/security-credentials/instance-role"
    assert (
        listing.headers["x-aws-ec2-metadata-token"]
        == role.headers["x-aws-ec2-metadata-token"]
        == "imds-session-token"
    )
    await _resolve()
    assert len(aws.of("/latest/")) == 3  # kept
    assert _botocore() == auth.credentials


async def test_imds_falls_back_to_v1_unless_disabled_and_is_skipped_when_metadata_is_off(
    aws: FakeAws, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _files(tmp_path, monkeypatch, config="")
    aws.imds_v2 = False
    monkeypatch.setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", aws.url)
    with pytest.raises(
        AwsSetupError, match=r"No AWS credentials for Amazon Bedrock.*disabled \(AWS_EC2_METADATA_DISABLED\)"
    ):
        await _resolve()
    assert aws.seen == []
    monkeypatch.delenv("AWS_EC2_METADATA_DISABLED")
    assert (await _resolve()).credentials == AwsCredentials(*derived("imds", "instance-role"))
    assert [s.method for s in aws.seen] == ["PUT", "GET", "GET"]
    assert "x-aws-ec2-metadata-token" not in aws.seen[1].headers
    _aws_cache.clear()
    monkeypatch.setenv("AWS_EC2_METADATA_V1_DISABLED", "true")
    with pytest.raises(AwsSetupError, match="IMDSv1 fallback is disabled"):
        await _resolve()


async def test_without_an_instance_metadata_service_the_error_comes_promptly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket

    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(name, raising=False)
    _files(tmp_path, monkeypatch, config="")
    monkeypatch.delenv("AWS_EC2_METADATA_DISABLED")
    # a listener that never answers (the connection waits in its backlog), like a black-holed address
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    try:
        monkeypatch.setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", f"http://127.0.0.1:{silent.getsockname()[1]}")
        started = time.monotonic()
        with pytest.raises(
            AwsSetupError,
            match=r"No AWS credentials for Amazon Bedrock.*no EC2 instance metadata service answered",
        ):
            await _resolve()
        assert time.monotonic() - started < 20  # two one-second waits, not the minutes of a default timeout
    finally:
        silent.close()


async def test_a_bedrock_request_is_signed_with_the_assumed_role_credentials(
    aws: FakeAws, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pi_tui.ai.providers.bedrock import stream_bedrock
    from pi_tui.ai.stream import LlmRequest, StreamOptions
    from pi_tui.ai.types import Model, UserMessage
    from pi_tui.testing import FakeLLM, Reply, text

    from .provider_streams import collect

    key, secret, token = derived(ROLE, SOURCE_KEY)
    _files(
        tmp_path,
        monkeypatch,
        config=f"[profile dev]\nrole_arn = {ROLE}\nsource_profile = source\n",
        credentials=SOURCE_FILES,
    )
    monkeypatch.setenv("AWS_PROFILE", "dev")
    fake = FakeLLM(aws_credentials={key: secret})  # only the assumed role's keys verify
    fake.script([Reply([text("signed by the role")])])
    with fake.serve():
        assert fake.server is not None
        model = Model(
            id="us.anthropic.claude-sonnet-4-5-20250929-v1:0",
            name="Claude",
            api="bedrock-converse-stream",
            provider="amazon-bedrock",
            base_url=fake.server.bedrock_base_url,
        )
        request = LlmRequest("Be terse.", [UserMessage(content="hi")], [])
        _, message = await collect(stream_bedrock(model, request, StreamOptions(api_key=AMBIENT)))
    assert message.stop_reason == "stop", message.error_message
    assert "signed by the role" in str(message.content)
    sent = fake.last_request.headers
    assert sent["x-amz-security-token"] == token
    # and the fake verified the SigV4 signature with the role's secret, the only one it knows
    [assumed] = aws.sts_calls("AssumeRole")
    assert "/eu-west-1/sts/aws4_request" in assumed.headers["authorization"]  # the Bedrock region


async def test_a_named_profile_without_credentials_passes_on_to_the_instance_role_as_in_the_sdk(
    aws: FakeAws, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _files(
        tmp_path,
        monkeypatch,
        config=(
            "[profile ec2]\nregion = eu-west-1\n"
            f"[profile viaimds]\nrole_arn = {ROLE}\ncredential_source = Ec2InstanceMetadata\n"
        ),
    )
    monkeypatch.setenv("AWS_PROFILE", "typo")
    with pytest.raises(AwsSetupError) as missing:
        await _resolve()
    assert str(missing.value) == (
        f"AWS profile 'typo' is not in {tmp_path / 'credentials'} or {tmp_path / 'config'}, and the EC2 instance "
        "metadata service is disabled (AWS_EC2_METADATA_DISABLED): check AWS_PROFILE or the files"
    )
    monkeypatch.delenv("AWS_EC2_METADATA_DISABLED")
    monkeypatch.setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", aws.url)
    monkeypatch.setenv("AWS_PROFILE", "ec2")
    instance = AwsCredentials(*derived("imds", "instance-role"))
    assert (await _resolve()).credentials == instance
    assert _botocore() == instance
    aws.users[instance.access_key_id] = instance.secret_access_key
    monkeypatch.setenv("AWS_PROFILE", "viaimds")
    auth = await _resolve()
    assert auth.credentials == AwsCredentials(*derived(ROLE, instance.access_key_id))
    [call] = aws.sts_calls("AssumeRole")
    assert call.headers["x-amz-security-token"] == instance.session_token  # signed with the instance's keys


async def test_an_sso_role_the_user_may_not_use_shows_the_portals_message(
    aws: FakeAws, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    aws.sso_tokens.add("sso-access")
    aws.sso_forbidden = True
    _files(tmp_path, monkeypatch, config=SSO_CONFIG)
    _sso_cache("corp", accessToken="sso-access", expiresAt=iso(time.time() + 3600))
    monkeypatch.setenv("AWS_PROFILE", "corp")
    with pytest.raises(AwsSetupError) as refused:
        await _resolve()
    assert str(refused.value) == (
        "AWS SSO refused role 'Developer' in account 123456789012 for profile 'corp': ForbiddenException: "
        "No access (HTTP 403)"
    )


async def test_requests_starting_together_share_one_sts_call(
    aws: FakeAws, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import asyncio

    _files(
        tmp_path,
        monkeypatch,
        config=f"[profile dev]\nrole_arn = {ROLE}\nsource_profile = source\n",
        credentials=SOURCE_FILES,
    )
    monkeypatch.setenv("AWS_PROFILE", "dev")
    results = await asyncio.gather(*(_resolve() for _ in range(4)))
    assert {r.credentials for r in results} == {AwsCredentials(*derived(ROLE, SOURCE_KEY))}
    assert len(aws.sts_calls("AssumeRole")) == 1


async def test_credential_source_ecs_container_assumes_the_role_with_the_task_credentials(
    aws: FakeAws, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    task = AwsCredentials(*derived("container"))
    aws.users[task.access_key_id] = task.secret_access_key
    _files(
        tmp_path, monkeypatch, config=f"[profile task]\nrole_arn = {ROLE}\ncredential_source = EcsContainer\n"
    )
    monkeypatch.setenv("AWS_PROFILE", "task")
    with pytest.raises(
        AwsSetupError, match="credential_source = EcsContainer.*RELATIVE_URI/FULL_URI are not set"
    ):
        await _resolve()
    monkeypatch.setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", aws.url + "/container-credentials")
    monkeypatch.setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN", "task-auth")
    auth = await _resolve()
    assert auth.credentials == AwsCredentials(*derived(ROLE, task.access_key_id))
    [fetched] = aws.of("/container-credentials")
    assert fetched.headers["authorization"] == "task-auth"


async def test_a_container_uri_the_sdk_refuses_gets_no_request_and_says_why(
    aws: FakeAws, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As the AWS SDK: plain http only to loopback or the ECS/EKS agents. 0.0.0.0 reaches this machine's
    loopback fake, yet it is no loopback address: the token must not be sent there."""
    from pi_tui.ai.providers._aws_remote import container_uri

    _files_missing(monkeypatch)
    port = aws.url.rsplit(":", 1)[1]
    monkeypatch.setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN", "task-auth")
    monkeypatch.setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", f"http://0.0.0.0:{port}/container-credentials")
    with pytest.raises(AwsSetupError, match=r"0\.0\.0\.0.* is not accepted .*https.*loopback.*169\.254\.170\.23"):
        await _resolve()
    assert aws.of("/container-credentials") == []
    monkeypatch.setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", f"http://localhost:{port}/container-credentials")
    auth = await _resolve()
    assert auth.credentials == AwsCredentials(*derived("container"))
    [fetched] = aws.of("/container-credentials")
    assert fetched.headers["authorization"] == "task-auth"
    # the relative URI wins over the full one, as in the SDK
    both = {"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "/v2/creds", "AWS_CONTAINER_CREDENTIALS_FULL_URI": aws.url}
    assert container_uri(both) == "http://169.254.170.2/v2/creds"


def _files_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    """No AWS config or credentials files: the chain reaches the container source."""
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/config")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials")
