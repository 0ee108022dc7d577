"""Side by side with pi 0.87.1 on the AWS credential chain: an assumed role, web identity,
``credential_process``, an SSO profile and the EC2 instance role (a profile holding only a region, so
the chain passes on to IMDS), each against its own loopback fakes of STS, the SSO portal and IMDS
(``AWS_ENDPOINT_URL_STS`` / ``_SSO``, ``AWS_EC2_METADATA_SERVICE_ENDPOINT``). pi gets these from the AWS
SDK for JavaScript; both must ask the same services the same things and sign the Bedrock request with
the same temporary credentials (the fake LLM knows only their secret). Deliberate difference: the role
session's default name (``aws-sdk-js-<ms>`` / ``pi-tui-<ms>``).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pi_tui.testing import FakeLLM, Reply, text

from ..ai.aws_fakes import FakeAws, Seen, derived, iso, serving
from ..pi087 import Pi087
from .side_by_side import run_in_home, run_pair

pytestmark = pytest.mark.slow

ROLE = "arn:aws:iam::123456789012:role/bedrock-user"
MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
CASES = {
    "role": derived(ROLE, "AKIDSOURCE"),
    "web": derived(ROLE, "web"),
    "proc": ("AKIDPROC", "proc/secret", "proc-token"),
    "corp": derived("sso", "123456789012", "Developer"),
    "ec2": derived("imds", "instance-role"),
}


def _aws_files(root: Path) -> dict[str, str]:
    """Write the AWS files (and the SSO sign-in) under ``root``; the variables that point at them."""
    aws = root / "home" / ".aws"
    (aws / "sso" / "cache").mkdir(parents=True)
    (aws / "credentials").write_text(
        "[source]\naws_access_key_id = AKIDSOURCE\naws_secret_access_key = source/secret\n"
    )
    process = root / "process.py"
    process.write_text(
        "import json\nprint(json.dumps({'Version': 1, 'AccessKeyId': 'AKIDPROC', 'SecretAccessKey': "
        "'proc/secret', 'SessionToken': 'proc-token'}))\n"
    )
    (aws / "config").write_text(
        f"[profile role]\nrole_arn = {ROLE}\nsource_profile = source\nregion = ap-south-1\n"
        f"[profile proc]\ncredential_process = {sys.executable} {process}\n"
        "[profile corp]\nsso_session = corp\nsso_account_id = 123456789012\nsso_role_name = Developer\n"
        "[sso-session corp]\nsso_start_url = https://corp.awsapps.com/start\nsso_region = eu-central-1\n"
        "[profile ec2]\nregion = eu-west-1\n"
    )
    token = {"accessToken": "sso-access", "expiresAt": iso(time.time() + 3600)}
    (aws / "sso" / "cache" / f"{hashlib.sha1(b'corp').hexdigest()}.json").write_text(json.dumps(token))
    (root / "web-token").write_text("eyJ.web.identity")
    return {"AWS_CONFIG_FILE": str(aws / "config"), "AWS_SHARED_CREDENTIALS_FILE": str(aws / "credentials")}


def _asked(seen: list[Seen]) -> list[tuple[str, str, dict[str, str], str]]:
    """What each request to the fake services asked: method, path, form (but the session's name) and
    the signing scope's region and service. Compared sorted: a call handled late by the fake's thread
    may be recorded after the next one."""
    asked = []
    for request in seen:
        form = request.form() if request.method == "POST" else {}
        form.pop("RoleSessionName", None)
        scope = request.headers.get("authorization", "").split("Credential=")[-1].split(",")[0]
        asked.append((request.method, request.path, form, "/".join(scope.split("/")[2:4])))
    return asked


@pytest.mark.parametrize("case", list(CASES))
def test_pi_and_pi_tui_get_the_same_credentials_from_the_same_setup(
    tmp_path: Path, pi087: Pi087, case: str
) -> None:
    key, secret, token = CASES[case]
    asked: dict[str, list[Seen]] = {}

    def run(argv: list[str], root: Path, fake: FakeLLM) -> subprocess.CompletedProcess[str]:
        assert fake.server is not None
        env = _aws_files(root)
        with serving(
            FakeAws(
                users={"AKIDSOURCE": "source/secret"},
                sso_tokens={"sso-access"},
                web_tokens={"eyJ.web.identity"},
                # pi's SDK waits one second for the token (no setting changes it); should a loaded
                # machine make it give up, its tokenless fallback still gets the same credentials
                imds_v1_allowed=True,
            )
        ) as aws:
            env.update(
                AWS_ENDPOINT_URL_STS=aws.url,
                AWS_ENDPOINT_URL_SSO=aws.url,
                AWS_EC2_METADATA_SERVICE_ENDPOINT=aws.url,
                AWS_REGION="eu-west-1",
                AWS_BEDROCK_FORCE_HTTP1="1",
                AWS_METADATA_SERVICE_TIMEOUT="30",  # pi-tui's (and the AWS CLI's) wait for IMDS
            )
            if case == "web":
                env.update(AWS_WEB_IDENTITY_TOKEN_FILE=str(root / "web-token"), AWS_ROLE_ARN=ROLE)
            else:
                env["AWS_PROFILE"] = case
            if case != "ec2":
                env["AWS_EC2_METADATA_DISABLED"] = "true"
            done = run_in_home(
                argv,
                root,
                providers={"amazon-bedrock": {"baseUrl": fake.server.bedrock_base_url}},
                args=["--provider", "amazon-bedrock", "--model", MODEL, "-p", "say hi"],
                env=env,
                drop_env_prefix="AWS_",
            )
            asked[root.name] = list(aws.seen)
        return done

    pi_fake, pi_run, tui_fake, tui_run = run_pair(
        pi087, tmp_path, lambda: FakeLLM(aws_credentials={key: secret}), lambda: [Reply([text("ok")])], run
    )
    assert pi_run.returncode == 0, pi_run.stderr + pi_run.stdout
    assert tui_run.returncode == 0, tui_run.stderr + tui_run.stdout
    for fake in (pi_fake, tui_fake):  # each signature verified with the temporary secret
        assert [r.headers.get("x-amz-security-token") for r in fake.requests] == [token]
    assert sorted(_asked(asked["tui"])) == sorted(_asked(asked["pi"]))
    if case == "role":
        assert _asked(asked["tui"])[0][3] == "ap-south-1/sts"  # the profile's region picks STS
