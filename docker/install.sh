#!/usr/bin/env bash
# Installs citewise into its own virtual environment: the step the container image runs, and
# the step CI runs outside a container (.ci/run), so both install the same way.
#   docker/install.sh WHEEL_OR_PROJECT [VENV]     (VENV default: $CITEWISE_VENV or /opt/citewise)
set -euo pipefail
source="${1:?usage: docker/install.sh WHEEL_OR_PROJECT [VENV]}"
venv="${2:-${CITEWISE_VENV:-/opt/citewise}}"
python3 -m venv "$venv"
# With the extras the compose files use: the PostgreSQL store and the MCP server.
extras="${CITEWISE_EXTRAS:-postgres,mcp}"
"$venv/bin/pip" install --quiet --no-cache-dir --disable-pip-version-check "$source[$extras]"
# The embedding model ships inside a package: load it once now, so an image that cannot
# embed fails at build time, not at the first question.
"$venv/bin/python" - <<'PY'
from citewise.embedding import get_embedder

vector = get_embedder("minilm").embed_query("citewise")
assert vector.shape == (384,), vector.shape
# What the compose files need is installed: the PostgreSQL store's driver and the MCP server.
import mcp.server  # noqa: F401
import pgvector.psycopg  # noqa: F401
import psycopg_pool  # noqa: F401
PY
"$venv/bin/citewise" --version
