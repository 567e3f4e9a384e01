"""The compose files as Docker Compose reads them: what they publish, mount, pass and wait for.

(`docker compose config` is not on every machine; the files are read with their ``${VAR:-x}``
defaults the way Compose interpolates them. docker/smoke.sh runs the install and start steps.)
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from citewise.server.auth import parse_keys

ROOT = Path(__file__).resolve().parents[1]


def compose(name: str, **env: str) -> dict[str, Any]:
    """A compose file with its variables interpolated from ``env`` and their defaults."""

    def value(match: re.Match[str]) -> str:
        return env.get(match.group(1)) or (match.group(2) or "")

    def interpolated(node: Any) -> Any:  # as Compose does: in values, after parsing
        if isinstance(node, str):
            return re.sub(r"\$\{(\w+)(?::-([^}]*))?\}", value, node)
        if isinstance(node, dict):
            return {key: interpolated(item) for key, item in node.items()}
        if isinstance(node, list):
            return [interpolated(item) for item in node]
        return node

    loaded: dict[str, Any] = interpolated(yaml.safe_load((ROOT / name).read_text()))
    return loaded


def test_by_default_citewise_is_published_on_loopback_with_no_docs_mounted() -> None:
    citewise = compose("compose.yaml")["services"]["citewise"]
    assert citewise["ports"] == ["127.0.0.1:8000:8000"]
    mounts = [volume.split(":")[0] for volume in citewise["volumes"]]
    assert "./docs" not in mounts  # citewise's own docs are not the user's
    docs = ROOT / mounts[1]
    assert docs.is_dir() and not [p for p in docs.iterdir() if not p.name.startswith(".")]
    environment = citewise["environment"]
    assert environment["CITEWISE_DOCS_VERSION"] == "" and "CITEWISE_SITE_URL" in environment
    # Open without keys only because it is on loopback, the admin API closed (no admin keys).
    assert environment["CITEWISE_INSECURE_NO_AUTH"] == "1"
    assert environment["CITEWISE_ADMIN_KEYS"] == ""
    assert citewise["healthcheck"]["start_period"] == "15m"


def test_open_webui_gets_one_key_that_citewise_accepts() -> None:
    services = compose(
        "compose.yaml", CITEWISE_WEBUI_KEY="sk-webui", CITEWISE_API_KEYS="sk-1,sk-2"
    )["services"]
    webui_key = services["open-webui"]["environment"]["OPENAI_API_KEY"]
    assert webui_key == "sk-webui"
    keys = parse_keys(services["citewise"]["environment"]["CITEWISE_API_KEYS"])
    assert keys == {"sk-webui", "sk-1", "sk-2"}
    assert services["open-webui"]["ports"] == ["127.0.0.1:3000:8080"]


def test_the_postgres_file_sets_the_store_and_waits_for_its_health() -> None:
    services = compose("compose.postgres.yaml", POSTGRES_PASSWORD="pw")["services"]
    citewise = services["citewise"]
    url = citewise["environment"]["CITEWISE_STORE_URL"]
    assert url == "postgresql://citewise:pw@postgres:5432/citewise"
    assert citewise["depends_on"] == {"postgres": {"condition": "service_healthy"}}
    assert "pg_isready" in " ".join(services["postgres"]["healthcheck"]["test"])


def test_the_image_installs_the_extras_the_compose_files_use() -> None:
    install = (ROOT / "docker" / "install.sh").read_text()
    assert 'extras="${CITEWISE_EXTRAS:-postgres,mcp}"' in install
    assert '"$source[$extras]"' in install
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert ".venv" in ignored and ".git" in ignored
