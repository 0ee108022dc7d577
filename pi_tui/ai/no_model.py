"""The stand-in model of a session that has none yet, and the line telling the user how to get one.

The full-screen app opens without a usable model (no key anywhere, as on a first run): the session holds
`no_model()` until ``/model`` picks a real one, and a prompt sent meanwhile is refused with
`no_model_message` instead of reaching a provider. pi 0.87.1 names the missing model ``unknown`` too.
"""

from __future__ import annotations

from pathlib import Path

from .types import Model

__all__ = [
    "KEY_HINT",
    "NO_MODEL_PROVIDER",
    "is_no_model",
    "no_model",
    "no_model_message",
    "no_models_startup_message",
]

NO_MODEL_PROVIDER = "unknown"

KEY_HINT = (
    "set a provider's API key (ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY, OPENROUTER_API_KEY, … "
    "'pi-tui --help' lists every provider's variables)"
)
"""How to get a model from the environment, for every message that says there is none."""
_NO_MODEL_API = "none"


def no_model() -> Model:
    """The placeholder: no provider serves it, so nothing is ever sent to it."""
    return Model(id="none", name="no model", api=_NO_MODEL_API, provider=NO_MODEL_PROVIDER)


def is_no_model(model: Model) -> bool:
    return model.provider == NO_MODEL_PROVIDER and model.api == _NO_MODEL_API


def _shown(path: Path) -> str:
    try:
        return "~/" + path.relative_to(Path.home()).as_posix()
    except ValueError:
        return str(path)


def no_model_message(agent_dir: Path, *, login: bool = False) -> str:
    """One line: which environment variables, which file, and ``/model`` (``/login`` when the mode has it).

    Args:
        agent_dir: Where ``models.json`` is.
        login: The mode offers ``/login`` (it is named first then).
    """
    models_file = _shown(agent_dir / "models.json")
    first = "log in with /login, or " if login else ""
    return (
        f"No model available: {first}{KEY_HINT} and restart, or add a provider "
        f"with its apiKey to {models_file} and pick it with /model (/model also offers the offline faux "
        "model, which needs no key)"
    )


def no_models_startup_message(agent_dir: Path) -> str:
    """One line for the command line (print and JSON modes, which have no ``/model``): how to get a model.

    Args:
        agent_dir: Where ``auth.json`` and ``models.json`` are.
    """
    return (
        f"No models available: {KEY_HINT}, log in with 'pi-tui login', add a key to "
        f"{agent_dir / 'auth.json'}, configure {agent_dir / 'models.json'}, or try --provider faux"
    )
