#!/usr/bin/env bash
# Starts citewise the way the container does: index a mounted docs folder if it holds files,
# then serve the API and the chat page.
#   CITEWISE_VENV   the install (default /opt/citewise)
#   CITEWISE_DOCS   a docs folder to index first (optional), into CITEWISE_KB (default docs)
#   CITEWISE_SITE_URL, CITEWISE_DOCS_VERSION   where those docs are published (optional)
#   CITEWISE_HOST / CITEWISE_PORT   default 0.0.0.0:8000 (beyond loopback: serve refuses to
#                   start without CITEWISE_API_KEYS unless CITEWISE_INSECURE_NO_AUTH=1)
# Indexing runs before the server (the healthcheck's start period covers it); a failed index
# is reported and the server starts on what is stored, so one bad file never stops the
# container.
set -uo pipefail
venv="${CITEWISE_VENV:-/opt/citewise}"
docs="${CITEWISE_DOCS:-}"
if [[ -n "$docs" && -d "$docs" ]] && find "$docs" -mindepth 1 -not -name '.*' -print -quit | grep -q .; then
    args=(index "$docs" --kb "${CITEWISE_KB:-docs}" --quiet)
    [[ -n "${CITEWISE_SITE_URL:-}" ]] && args+=(--site-url "$CITEWISE_SITE_URL")
    [[ -n "${CITEWISE_DOCS_VERSION:-}" ]] && args+=(--version "$CITEWISE_DOCS_VERSION")
    echo "citewise: indexing $docs into ${CITEWISE_KB:-docs}" >&2
    if ! "$venv/bin/citewise" "${args[@]}"; then
        echo "citewise: indexing $docs failed (above); serving what is stored" >&2
    fi
elif [[ -n "$docs" ]]; then
    echo "citewise: nothing to index in $docs (mount your docs there)" >&2
fi
exec "$venv/bin/citewise" serve --host "${CITEWISE_HOST:-0.0.0.0}" --port "${CITEWISE_PORT:-8000}" "$@"
