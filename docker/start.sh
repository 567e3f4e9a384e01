#!/usr/bin/env bash
# Starts citewise the way the container does: index a mounted docs folder if one is given,
# then serve the API and the chat page.
#   CITEWISE_VENV   the install (default /opt/citewise)
#   CITEWISE_DOCS   a docs folder to index first (optional), into CITEWISE_KB (default docs)
#   CITEWISE_SITE_URL, CITEWISE_DOCS_VERSION   where those docs are published (optional)
#   CITEWISE_HOST / CITEWISE_PORT   default 0.0.0.0:8000
set -euo pipefail
venv="${CITEWISE_VENV:-/opt/citewise}"
if [[ -n "${CITEWISE_DOCS:-}" ]]; then
    args=(index "$CITEWISE_DOCS" --kb "${CITEWISE_KB:-docs}" --quiet)
    [[ -n "${CITEWISE_SITE_URL:-}" ]] && args+=(--site-url "$CITEWISE_SITE_URL")
    [[ -n "${CITEWISE_DOCS_VERSION:-}" ]] && args+=(--version "$CITEWISE_DOCS_VERSION")
    "$venv/bin/citewise" "${args[@]}"
fi
exec "$venv/bin/citewise" serve --host "${CITEWISE_HOST:-0.0.0.0}" --port "${CITEWISE_PORT:-8000}" "$@"
