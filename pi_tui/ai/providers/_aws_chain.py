"""The AWS SDK's default credential chain after the environment's keys, as pi 0.87.1 gets it from the
AWS SDK for JavaScript v3 (blocking; run off the event loop).

1. The profile (``AWS_PROFILE``, else ``default``), resolved as the SDK resolves it:

   - ``role_arn`` with ``source_profile`` (or ``credential_source``): the source's credentials (a
     source profile's static keys win over its own role; chains of roles are followed, a cycle is an
     error), then STS ``AssumeRole`` (``role_session_name``, ``external_id``, ``duration_seconds``;
     the profile's ``region`` else the Bedrock region picks the STS endpoint). ``credential_source``
     is ``Environment``, ``Ec2InstanceMetadata`` or ``EcsContainer``. ``mfa_serial`` is refused: pi-tui
     cannot prompt for a code while it runs;
   - ``aws_access_key_id`` + ``aws_secret_access_key`` (+ ``aws_session_token``);
   - ``web_identity_token_file`` + ``role_arn``: STS ``AssumeRoleWithWebIdentity``;
   - ``credential_process``;
   - SSO (``sso_session`` or ``sso_start_url``, with ``sso_account_id`` and ``sso_role_name``).

2. Web identity from the environment: ``AWS_WEB_IDENTITY_TOKEN_FILE`` + ``AWS_ROLE_ARN``
   (``AWS_ROLE_SESSION_NAME``), the token file read again at each refresh (it rotates).
3. Container credentials (``AWS_CONTAINER_CREDENTIALS_FULL_URI`` / ``…_RELATIVE_URI``).
4. The EC2 instance metadata service, unless ``AWS_EC2_METADATA_DISABLED``.

Temporary credentials are kept until five minutes before they expire (`_aws_cache`). Unlike the SDK,
which moves on to the next source when a configured one fails and then reports only "Could not load
credentials from any providers", a profile that is configured but fails stops here with what failed
(STS's message, the process's stderr, the ``aws sso login`` to run).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypeVar

from ._aws_cache import Temporary, cached
from ._aws_files import AwsFiles, AwsSetupError
from ._aws_process import ProcessError, run_credential_process
from ._aws_remote import (
    ImdsUnavailable,
    RemoteError,
    container_credentials,
    container_uri,
    imds_credentials,
)
from ._aws_sso import SsoError, SsoProfile, sso_credentials
from ._aws_sts import (
    RoleRequest,
    StsError,
    assume_role,
    assume_role_with_web_identity,
    default_session_name,
    sts_endpoint,
)
from ._sigv4 import AwsCredentials

__all__ = ["NoCredentials", "resolve_chain"]

_T = TypeVar("_T")
_SSO_KEYS = ("sso_start_url", "sso_account_id", "sso_session", "sso_region", "sso_role_name")
_SOURCES = ("Environment", "Ec2InstanceMetadata", "EcsContainer")


class NoCredentials(AwsSetupError):
    """No source in the chain is configured (the message says what was looked at)."""


def _env(env: Mapping[str, str], name: str) -> str | None:
    value = env.get(name, "").strip()
    return value or None


class _Resolver:
    """One resolution of the chain for one environment and Bedrock region."""

    def __init__(self, env: Mapping[str, str], region: str) -> None:
        self.env = env
        self.region = region
        self.files = AwsFiles(env)

    # -- profiles -----------------------------------------------------------------------------------

    def profile(
        self, name: str, visited: frozenset[str] = frozenset(), via_source: bool = False
    ) -> Temporary | None:
        """The profile's credentials; None when it configures no credential source at all."""
        data = self.files.profile(name)
        if data is None:
            raise AwsSetupError(f"AWS profile '{name}' is not in {self.files.where()}")
        static = bool(data.get("aws_access_key_id") and data.get("aws_secret_access_key"))
        if visited and static:
            return self._static(data)
        if via_source or self._assumes_role(name, data):
            return self._assume(name, data, visited)
        if static:
            return self._static(data)
        if data.get("web_identity_token_file") and data.get("role_arn"):
            return self._web_identity(
                f"AWS profile '{name}'",
                data["web_identity_token_file"],
                data["role_arn"],
                data.get("role_session_name") or None,
            )
        if data.get("credential_process"):
            command = data["credential_process"]
            return self._wrap(
                lambda: cached(f"process|{name}|{command}", lambda: run_credential_process(name, command)),
                name,
            )
        if any(data.get(key) for key in _SSO_KEYS):
            return self._sso(name, data)
        if data.get("role_arn"):
            raise AwsSetupError(
                f"AWS profile '{name}' has role_arn but neither source_profile nor credential_source to assume it with"
            )
        return None

    @staticmethod
    def _static(data: Mapping[str, str]) -> Temporary:
        token = data.get("aws_session_token") or None
        return Temporary(AwsCredentials(data["aws_access_key_id"], data["aws_secret_access_key"], token))

    @staticmethod
    def _assumes_role(name: str, data: Mapping[str, str]) -> bool:
        if not data.get("role_arn"):
            return False
        source, credential_source = data.get("source_profile"), data.get("credential_source")
        if source and credential_source:
            raise AwsSetupError(
                f"AWS profile '{name}' sets both source_profile and credential_source: keep one of them"
            )
        return bool(source or credential_source)

    def _assume(self, name: str, data: Mapping[str, str], visited: frozenset[str]) -> Temporary:
        source_name = data.get("source_profile")
        if source_name:
            if source_name in visited:
                chain = " -> ".join([*sorted(visited), source_name])
                raise AwsSetupError(
                    f"AWS profile '{name}': the source_profile settings form a cycle ({chain})"
                )
            source_data = self.files.profile(source_name)
            if source_data is None:
                raise AwsSetupError(
                    f"AWS profile '{name}' names source_profile '{source_name}', which is not in {self.files.where()}"
                )
            via = not source_data.get("role_arn") and bool(source_data.get("credential_source"))
            source = self.profile(source_name, visited | {source_name}, via_source=via)
            if source is None:
                raise AwsSetupError(
                    f"AWS profile '{name}': its source_profile '{source_name}' has no credentials "
                    "(aws_access_key_id/aws_secret_access_key, a role, SSO or credential_process)"
                )
        else:
            source = self._credential_source(name, data.get("credential_source", ""))
        role_arn = data.get("role_arn")
        if not role_arn:
            return source
        if data.get("mfa_serial"):
            raise AwsSetupError(
                f"AWS profile '{name}' assumes a role that needs an MFA code (mfa_serial), which pi-tui cannot ask "
                "for while it runs: run `aws configure export-credentials --profile "
                f"{name} --format env` and use the AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY/AWS_SESSION_TOKEN it prints"
            )
        try:
            duration = int(data.get("duration_seconds") or "3600")
        except ValueError as exc:
            raise AwsSetupError(
                f"AWS profile '{name}': duration_seconds must be a number of seconds"
            ) from exc
        region = data.get("region") or self.region
        request = RoleRequest(
            role_arn=role_arn,
            session_name=data.get("role_session_name") or default_session_name(),
            duration_seconds=duration,
            external_id=data.get("external_id") or None,
        )
        key = "|".join(
            (
                "role",
                sts_endpoint(region, self.env),
                role_arn,
                data.get("role_session_name", ""),
                request.external_id or "",
                str(duration),
                source.credentials.access_key_id,
                source.credentials.session_token or "",
            )
        )

        def fetch() -> Temporary:
            try:
                return assume_role(source.credentials, request, region, self.env)
            except StsError as exc:
                raise AwsSetupError(f"AWS profile '{name}' cannot assume role {role_arn}: {exc}") from exc

        return cached(key, fetch)

    def _credential_source(self, name: str, kind: str) -> Temporary:
        if kind == "Environment":
            key, secret = _env(self.env, "AWS_ACCESS_KEY_ID"), _env(self.env, "AWS_SECRET_ACCESS_KEY")
            if not key or not secret:
                raise AwsSetupError(
                    f"AWS profile '{name}' takes its credentials from the environment (credential_source = "
                    "Environment), but AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY are not set"
                )
            return Temporary(AwsCredentials(key, secret, _env(self.env, "AWS_SESSION_TOKEN")))
        if kind == "EcsContainer":
            found = self._wrap(lambda: container_credentials(self.env), name)
            if found is None:
                raise AwsSetupError(
                    f"AWS profile '{name}' takes its credentials from the container (credential_source = "
                    "EcsContainer), but AWS_CONTAINER_CREDENTIALS_RELATIVE_URI/FULL_URI are not set"
                )
            return found
        if kind == "Ec2InstanceMetadata":
            try:
                return self._wrap(lambda: imds_credentials(self.env, self.files.profile(name) or {}), name)
            except ImdsUnavailable as exc:
                raise AwsSetupError(
                    f"AWS profile '{name}' takes its credentials from the EC2 instance metadata service "
                    f"(credential_source = Ec2InstanceMetadata), but {exc}"
                ) from exc
        raise AwsSetupError(
            f"AWS profile '{name}' has credential_source = {kind}: use one of {', '.join(_SOURCES)}"
        )

    def _web_identity(self, where: str, token_file: str, role_arn: str, session: str | None) -> Temporary:
        region = self.region
        request = RoleRequest(role_arn=role_arn, session_name=session or default_session_name())

        def fetch() -> Temporary:
            try:
                token = Path(token_file).expanduser().read_text(encoding="ascii").strip()
            except (OSError, UnicodeDecodeError) as exc:
                raise AwsSetupError(
                    f"{where}: cannot read the web identity token file {token_file}: {exc}"
                ) from exc
            try:
                return assume_role_with_web_identity(token, request, region, self.env)
            except StsError as exc:
                raise AwsSetupError(
                    f"{where}: cannot assume role {role_arn} with a web identity: {exc}"
                ) from exc

        key = "|".join(("web", sts_endpoint(region, self.env), role_arn, token_file, session or ""))
        return cached(key, fetch)

    def _sso(self, name: str, data: Mapping[str, str]) -> Temporary:
        session = data.get("sso_session") or None
        start_url, sso_region = data.get("sso_start_url", ""), data.get("sso_region", "")
        if session:
            found = self.files.sso_session(session)
            if found is None:
                raise AwsSetupError(
                    f"AWS profile '{name}' names sso_session '{session}', but {self.files.config_path} has no "
                    f"[sso-session {session}] section"
                )
            for key, value in (("sso_region", sso_region), ("sso_start_url", start_url)):
                if value and found.get(key) and value != found[key]:
                    raise AwsSetupError(
                        f"AWS profile '{name}' and sso-session '{session}' give different {key} values: keep one"
                    )
            start_url, sso_region = found.get("sso_start_url", ""), found.get("sso_region", "")
        missing = [
            key
            for key, value in (
                ("sso_start_url", start_url),
                ("sso_region", sso_region),
                ("sso_account_id", data.get("sso_account_id")),
                ("sso_role_name", data.get("sso_role_name")),
            )
            if not value
        ]
        if missing:
            raise AwsSetupError(
                f"AWS profile '{name}' is an SSO profile without {', '.join(missing)}: run `aws configure sso "
                f"--profile {name}` or add them"
            )
        sso = SsoProfile(
            profile=name,
            start_url=start_url,
            region=sso_region,
            account_id=data["sso_account_id"],
            role_name=data["sso_role_name"],
            session=session,
        )
        key = f"sso|{sso.cache_id}|{sso.region}|{sso.account_id}|{sso.role_name}|{_env(self.env, 'AWS_ENDPOINT_URL_SSO') or ''}"
        return self._wrap(lambda: cached(key, lambda: sso_credentials(sso, self.env)), name)

    @staticmethod
    def _wrap(fetch: Callable[[], _T], name: str) -> _T:
        try:
            return fetch()
        except (SsoError, ProcessError) as exc:
            raise AwsSetupError(str(exc)) from exc
        except RemoteError as exc:
            raise AwsSetupError(f"AWS profile '{name}': {exc}") from exc

    # -- the chain ----------------------------------------------------------------------------------

    def run(self, named: bool) -> tuple[AwsCredentials, str]:
        name = _env(self.env, "AWS_PROFILE") or "default"
        data = self.files.profile(name)
        # As in the SDK, a profile that is missing or holds no credential settings (only a region, say)
        # passes on to the sources below; one that was named is named again if none of them answers.
        problem = None
        if data is None:
            problem = f"AWS profile '{name}' is not in {self.files.where()}"
        else:
            found = self.profile(name)
            if found is not None:
                return found.credentials, f"AWS profile '{name}'"
            problem = (
                f"AWS profile '{name}' has no credentials (aws_access_key_id/aws_secret_access_key, role_arn, "
                f"sso_session, credential_process or web_identity_token_file) in {self.files.where()}"
            )
        token_file, role_arn = _env(self.env, "AWS_WEB_IDENTITY_TOKEN_FILE"), _env(self.env, "AWS_ROLE_ARN")
        if token_file and role_arn:
            found = self._web_identity(
                "AWS_WEB_IDENTITY_TOKEN_FILE", token_file, role_arn, _env(self.env, "AWS_ROLE_SESSION_NAME")
            )
            return found.credentials, "web identity"
        if container_uri(self.env) is not None:
            try:
                container = container_credentials(self.env)
            except RemoteError as exc:
                raise AwsSetupError(str(exc)) from exc
            assert container is not None
            return container.credentials, "container credentials"
        try:
            instance = imds_credentials(self.env, data or {})
        except ImdsUnavailable as exc:
            if named:
                raise AwsSetupError(f"{problem}, and {exc}: check AWS_PROFILE or the files") from exc
            hint = " (AWS_ROLE_ARN is not set next to AWS_WEB_IDENTITY_TOKEN_FILE)" if token_file else ""
            raise NoCredentials(
                "No AWS credentials for Amazon Bedrock: set AWS_BEARER_TOKEN_BEDROCK (a Bedrock API key), "
                "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE (a profile in ~/.aws/credentials "
                f"or ~/.aws/config){hint}; {exc}"
            ) from exc
        except RemoteError as exc:
            raise AwsSetupError(str(exc)) from exc
        return instance.credentials, "EC2 instance metadata"


def resolve_chain(env: Mapping[str, str], region: str, *, named: bool) -> tuple[AwsCredentials, str]:
    """The credentials the chain finds and a few words naming their source.

    ``named``: the profile was chosen (``AWS_PROFILE``), so when it is missing or empty and no later
    source answers, the error names it.

    Raises:
        NoCredentials: nothing is configured and no metadata service answered.
        AwsSetupError: a configured source failed; the message says what to run or fix.
    """
    return _Resolver(env, region).run(named)
