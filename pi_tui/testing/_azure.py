"""Azure OpenAI's v1 Responses endpoint (``POST /openai/v1/responses?api-version=v1``, key in ``api-key``):
the checks Azure makes before the request reaches the model, answered in Azure's error shape.

Past these checks a request is an ordinary Responses request (same rules, same stream).
"""

from __future__ import annotations

from collections.abc import Collection
from urllib.parse import parse_qs

from ._errors import base_headers
from ._plan import Plan, json_plan

__all__ = ["AZURE_PREFIX", "API_VERSIONS", "azure_refusal", "azure_unauthorized"]

AZURE_PREFIX = "/openai/v1/"
API_VERSIONS = frozenset({"v1", "preview"})  # what the v1 endpoint accepts
DEPLOYMENT_NOT_FOUND = (
    "The API deployment for this resource does not exist. If you created the deployment within the last 5 "
    "minutes, please wait a moment and try again."
)
UNAUTHORIZED = (
    "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key "
    "for an active subscription and use a correct regional API endpoint for your resource."
)


def _error(status: int, code: str, message: str, seq: int) -> Plan:
    return json_plan(status, {"error": {"code": code, "message": message}}, base_headers(seq), seq)


def azure_unauthorized(seq: int) -> Plan:
    """A missing or wrong ``api-key``."""
    return _error(401, "401", UNAUTHORIZED, seq)


def azure_refusal(query: str, model: object, deployments: Collection[str] | None, seq: int) -> Plan | None:
    """Azure's answer when the api-version or the deployment (the body's ``model``) is wrong, else None."""
    versions = parse_qs(query).get("api-version")
    if not versions:
        return _error(400, "BadRequest", "Missing required query parameter: api-version", seq)
    if versions[0] not in API_VERSIONS:
        return _error(400, "BadRequest", "API version not supported", seq)
    if deployments is not None and model not in deployments:
        return _error(404, "DeploymentNotFound", DEPLOYMENT_NOT_FOUND, seq)
    return None
