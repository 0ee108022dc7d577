"""Saving a provider's API key through ``/login``, with what else pi 0.87.1 asks for it.

Most providers need only the key. Cloudflare also needs its account id (and the AI Gateway its gateway
id): pi asks for them after the key and stores them beside it, ``{"type": "api_key", "key", "env":
{"CLOUDFLARE_ACCOUNT_ID", "CLOUDFLARE_GATEWAY_ID"}}``, which requests then read before the environment.
Amazon Bedrock and Google Vertex AI first ask how to authenticate: a bearer token, an AWS profile (stored
as ``env.AWS_PROFILE``) or the existing AWS credential chain (an entry with nothing in it); a Google
Cloud API key, or application-default credentials / a service-account file with the project and location
(stored in ``env``).
"""

from __future__ import annotations

from collections.abc import Callable

from .oauth.types import AuthEvent, AuthPrompt, Credential, Interaction, OAuthError, PromptOption

__all__ = ["api_key_login"]

# provider -> (variable, question) of each id asked after the key, in pi's order and words
_EXTRA_FIELDS: dict[str, tuple[tuple[str, str], ...]] = {
    "cloudflare-workers-ai": (("CLOUDFLARE_ACCOUNT_ID", "Enter Cloudflare account ID"),),
    "cloudflare-ai-gateway": (
        ("CLOUDFLARE_ACCOUNT_ID", "Enter Cloudflare account ID"),
        ("CLOUDFLARE_GATEWAY_ID", "Enter Cloudflare AI Gateway ID"),
    ),
}


_AWS_DOCS = "https://docs.aws.amazon.com/sdkref/latest/guide/standardized-credentials.html"
_ADC_DOCS = "https://cloud.google.com/docs/authentication/provide-credentials-adc"


def _ask(io: Interaction, question: str, *, secret: bool = False) -> str:
    value = io.prompt(AuthPrompt("secret" if secret else "text", f"{question}:")).strip()
    if not value:
        raise OAuthError(f"Nothing was entered for: {question}")
    return value


def _bedrock(io: Interaction) -> Credential:
    method = io.prompt(
        AuthPrompt(
            "select",
            "Select Amazon Bedrock authentication method:",
            options=(
                PromptOption("bearer-token", "Bearer token"),
                PromptOption("aws-profile", "AWS profile"),
                PromptOption("credential-chain", "Existing AWS credential chain"),
            ),
        )
    )
    if method == "bearer-token":
        return {"type": "api_key", "key": _ask(io, "Enter Amazon Bedrock bearer token", secret=True)}
    if method not in ("aws-profile", "credential-chain"):
        raise OAuthError(f"Unknown Amazon Bedrock auth method: {method}")
    io.notify(
        AuthEvent(
            "info",
            message="Amazon Bedrock supports AWS profiles, IAM credentials, and role-based credentials "
            f"(AWS credential provider chain: {_AWS_DOCS}).",
        )
    )
    if method == "aws-profile":
        return {"type": "api_key", "env": {"AWS_PROFILE": _ask(io, "Enter AWS profile name")}}
    io.prompt(AuthPrompt("text", "Configure AWS credentials, then press Enter to continue"))
    return {"type": "api_key"}


def _vertex(io: Interaction) -> Credential:
    method = io.prompt(
        AuthPrompt(
            "select",
            "Select Google Vertex AI authentication method:",
            options=(
                PromptOption("api-key", "Google Cloud API key"),
                PromptOption("adc", "Application Default Credentials"),
                PromptOption("service-account", "Service account credentials file"),
            ),
        )
    )
    if method == "api-key":
        return {"type": "api_key", "key": _ask(io, "Enter Google Cloud API key", secret=True)}
    if method not in ("adc", "service-account"):
        raise OAuthError(f"Unknown Google Vertex AI auth method: {method}")
    what = (
        "Run `gcloud auth application-default login`, then provide the project and location."
        if method == "adc"
        else "Provide a service account credentials file, project, and location."
    )
    io.notify(AuthEvent("info", message=f"{what} (Application Default Credentials: {_ADC_DOCS})"))
    env = {
        "GOOGLE_CLOUD_PROJECT": _ask(io, "Enter Google Cloud project ID"),
        "GOOGLE_CLOUD_LOCATION": _ask(io, "Enter Google Cloud location"),
    }
    if method == "service-account":
        env["GOOGLE_APPLICATION_CREDENTIALS"] = _ask(io, "Enter service account credentials file path")
    return {"type": "api_key", "env": env}


def api_key_login(provider: str, key_name: str) -> Callable[[Interaction], Credential]:
    """The flow that asks for ``provider``'s key (called ``key_name``) and what else it needs.

    The flow raises `OAuthError` when an answer is blank.
    """
    if provider == "amazon-bedrock":
        return _bedrock
    if provider == "google-vertex":
        return _vertex

    def flow(io: Interaction) -> Credential:
        key = io.prompt(AuthPrompt("secret", f"Enter {key_name}:")).strip()
        if not key:
            raise OAuthError("No key was entered")
        credential: Credential = {"type": "api_key", "key": key}
        env: dict[str, str] = {}
        for variable, question in _EXTRA_FIELDS.get(provider, ()):
            env[variable] = _ask(io, question)
        if env:
            credential["env"] = env
        return credential

    return flow
