#!/usr/bin/env bash
# What CI checks of the container's steps, outside a container: build the wheel, install it
# with docker/install.sh into a fresh environment, start it with docker/start.sh on citewise's
# own docs (plus one file that cannot be parsed, which must not stop it), then ask one
# question over HTTP and require a cited answer. With CITEWISE_TEST_PG_URL (CI's PostgreSQL,
# .ci/run) the same again with the store of compose.postgres.yaml: CITEWISE_STORE_URL.
set -euo pipefail
cd "$(dirname "$0")/.."
work="$(mktemp -d)"
server=""
cleanup() {
    local status=$?
    stop_server
    rm -rf "$work"
    exit "$status"
}
stop_server() {
    if [[ -n "$server" ]]; then
        kill "$server" 2>/dev/null || true
        wait "$server" 2>/dev/null || true  # a server we stopped exits 143: not our status
        server=""
    fi
}
trap cleanup EXIT
python3 -m pip wheel --quiet --no-deps --disable-pip-version-check --wheel-dir "$work/dist" .
bash docker/install.sh "$(ls "$work"/dist/citewise-*.whl)" "$work/venv"
cp -r docs "$work/docs"

# smoke NAME HOME [VAR=VALUE…]: start the container's way with those settings, ask, stop.
smoke() {
    local name="$1" home="$2"
    shift 2
    local port
    port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    env "$@" CITEWISE_VENV="$work/venv" CITEWISE_HOME="$work/home-$home" CITEWISE_DOCS="$work/docs" \
        CITEWISE_SITE_URL="https://citewise.example/" CITEWISE_DOCS_VERSION="1.0" \
        CITEWISE_HOST=127.0.0.1 CITEWISE_PORT="$port" \
        CITEWISE_LLM_MODEL="" bash docker/start.sh > "$work/server-$name.log" 2>&1 &
    server=$!
    for _ in $(seq 1 240); do
        python3 -c "import urllib.request as u; u.urlopen('http://127.0.0.1:$port/healthz', timeout=2)" \
            2>/dev/null && break
        kill -0 "$server" 2>/dev/null || { cat "$work/server-$name.log"; exit 1; }
        sleep 1
    done
    python3 - "http://127.0.0.1:$port/v1/responses" "$name" <<'PY'
import json
import sys
import urllib.request

question = {"model": "citewise-rag", "input": "How does citewise split long sections?"}
request = urllib.request.Request(
    sys.argv[1], json.dumps(question).encode(), {"Content-Type": "application/json"}
)
response = json.load(urllib.request.urlopen(request, timeout=120))
[message] = [item for item in response["output"] if item["type"] == "message"]
annotations = message["content"][0]["annotations"]
assert annotations, "the answer cites nothing"
assert all(a["url"].startswith("https://citewise.example/") for a in annotations), annotations
print(f"smoke ({sys.argv[2]}): cited answer with {len(annotations)} citations, "
      f"e.g. {annotations[0]['url']}")
PY
    stop_server
}

smoke sqlite sqlite
# A file that cannot be parsed is reported, and the container still serves what is stored.
printf '%%PDF-1.7\nnot really a PDF\n' > "$work/docs/broken.pdf"
smoke "sqlite, one unparsable file" sqlite
grep -q "broken.pdf" "$work/server-sqlite, one unparsable file.log" \
    || { echo "smoke: the unparsable file went unreported"; exit 1; }
rm "$work/docs/broken.pdf"
if [[ -n "${CITEWISE_TEST_PG_URL:-}" ]]; then
    # compose.postgres.yaml's settings, against CI's PostgreSQL; a KB name of its own.
    smoke postgres postgres CITEWISE_STORE_URL="$CITEWISE_TEST_PG_URL" CITEWISE_KB="smoke-$$"
else
    echo "smoke (postgres): skipped, CITEWISE_TEST_PG_URL is not set (.ci/run sets it)"
fi
