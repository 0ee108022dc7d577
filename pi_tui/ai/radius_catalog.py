"""Radius's own model list: what the gateway serves beyond the models pi 0.87.1 ships, shared with pi.

pi keeps catalogs it fetches in ``<agent dir>/models-store.json`` (``{"<provider>": {"models": [...],
"checkedAt": <ms>}}``, written whole under the same lock as auth.json). For Radius the list comes from the
gateway, ``GET https://radius.pi.dev/v1/config`` with the login's token as Bearer, answering
``{"baseUrl", "models": [...]}``; each model becomes a ``pi-messages`` model of ``radius`` at that base URL.
Those models replace the bundled ones of the same id and add the others, as pi merges them.

pi-tui reads the stored list (one pi fetched works here too) and fetches it after a Radius login (not with
``PI_OFFLINE``); a failed fetch keeps what was stored.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

from pi_tui.util.json_types import JsonObject

from .types import Model

__all__ = [
    "GATEWAY",
    "STORE_FILE",
    "models_from_config",
    "refresh_radius_catalog",
    "store_radius_models",
    "stored_radius_models",
]

log = logging.getLogger(__name__)

GATEWAY = "https://radius.pi.dev"
STORE_FILE = "models-store.json"
PROVIDER = "radius"
_REQUIRED = {"id": str, "name": str, "reasoning": bool, "input": list, "cost": dict}


def _is_gateway_model(value: object) -> bool:
    """pi's check of one gateway model: the fields a model needs, of the right kinds."""
    if not isinstance(value, dict):
        return False
    if not all(isinstance(value.get(k), kind) for k, kind in _REQUIRED.items()):
        return False
    numbers = (value.get("contextWindow"), value.get("maxTokens"))
    return all(isinstance(n, int | float) and not isinstance(n, bool) for n in numbers)


def models_from_config(config: object) -> list[JsonObject] | None:
    """The gateway's models as pi stores them (``pi-messages`` models of ``radius`` at the config's base
    URL); None when ``config`` is not a gateway config."""
    if not isinstance(config, dict):
        return None
    base_url, models = config.get("baseUrl"), config.get("models")
    if not isinstance(base_url, str) or not isinstance(models, list):
        return None
    return [
        {**model, "api": "pi-messages", "provider": PROVIDER, "baseUrl": base_url}
        for model in models
        if _is_gateway_model(model)
    ]


def _read_store(path: Path) -> JsonObject:
    try:
        text = path.read_text(encoding="utf-8").lstrip("\ufeff")
    except FileNotFoundError:
        return {}
    data = json.loads(text) if text.strip() else {}
    return data if isinstance(data, dict) else {}


def stored_radius_models(agent_dir: Path) -> list[Model]:
    """The Radius models in ``models-store.json`` (none when there is no usable entry)."""
    try:
        entry = _read_store(agent_dir / STORE_FILE).get(PROVIDER)
    except (OSError, ValueError) as exc:
        log.warning("%s: cannot read the stored Radius models: %s", agent_dir / STORE_FILE, exc)
        return []
    raw = entry.get("models") if isinstance(entry, dict) else None
    found: list[Model] = []
    for item in raw if isinstance(raw, list) else []:
        if not (_is_gateway_model(item) and item.get("provider") == PROVIDER):
            continue
        try:
            found.append(Model.model_validate(item))
        except ValueError:
            continue  # a field pi-tui cannot read: skip that model, keep the others
    return found


def refresh_radius_catalog(agent_dir: Path, token: str) -> int:
    """Fetch the gateway's model list with ``token`` and store it for pi and pi-tui; returns how many
    models it has.

    Raises:
        OSError: the gateway could not be reached, refused, or answered something else than a config; or
            the store could not be written. The stored list is left as it was.
    """
    from .oauth._http import get_json

    answer = get_json(f"{GATEWAY}/v1/config", headers={"Authorization": f"Bearer {token}"})
    if not answer.ok:
        detail = answer.text.strip()[:512]
        raise OSError(f"Could not load Radius config from {GATEWAY}: {answer.status}: {detail}")
    models = models_from_config(answer.body)
    if models is None:
        raise OSError(f"Invalid Radius config from {GATEWAY}")
    store_radius_models(agent_dir, models)
    return len(models)


def store_radius_models(agent_dir: Path, models: list[JsonObject]) -> None:
    """Put ``models`` as Radius's list into ``models-store.json``, keeping the other providers' lists.

    The file is read and replaced whole under the auth.json-style lock pi takes on it; the replace is
    atomic (`pi_tui.util.atomic_file`), so a killed or failed write leaves the old file and no temporary.

    Raises:
        OSError: the store cannot be written, or holds something that is not a JSON object (it is then
            left as it was, rather than replaced by a file without its other entries).
    """
    from pi_tui.util.atomic_file import replace_file_bytes  # writers only: off start-up

    from .auth_lock import hold_lock

    path = agent_dir / STORE_FILE
    agent_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    with hold_lock(path):
        try:
            text = path.read_text(encoding="utf-8").lstrip("\ufeff")
        except FileNotFoundError:
            text = ""
        try:
            current = json.loads(text) if text.strip() else {}
        except ValueError as exc:
            raise OSError(
                f"{path} is not valid JSON ({exc}); move it away to store the Radius models"
            ) from None
        if not isinstance(current, dict):
            raise OSError(f"{path} does not hold a JSON object; move it away to store the Radius models")
        current[PROVIDER] = {"models": models, "checkedAt": int(time.time() * 1000)}
        replace_file_bytes(path, json.dumps(current, indent=2, ensure_ascii=False).encode("utf-8"))
