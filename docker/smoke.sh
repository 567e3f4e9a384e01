#!/usr/bin/env bash
# What CI checks of the container's steps, outside a container: build the wheel, install it
# with docker/install.sh into a fresh environment, start it with docker/start.sh on citewise's
# own docs, then ask one question over HTTP and require a cited answer.
set -euo pipefail
cd "$(dirname "$0")/.."
work="$(mktemp -d)"
server=""
cleanup() {
    local status=$?
    if [[ -n "$server" ]]; then
        kill "$server" 2>/dev/null || true
        wait "$server" 2>/dev/null || true  # a server we stopped exits 143: not our status
    fi
    rm -rf "$work"
    exit "$status"
}
trap cleanup EXIT
python3 -m pip wheel --quiet --no-deps --disable-pip-version-check --wheel-dir "$work/dist" .
bash docker/install.sh "$(ls "$work"/dist/citewise-*.whl)" "$work/venv"
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
CITEWISE_VENV="$work/venv" CITEWISE_HOME="$work/home" CITEWISE_DOCS="$PWD/docs" \
    CITEWISE_SITE_URL="https://citewise.example/" CITEWISE_HOST=127.0.0.1 CITEWISE_PORT="$port" \
    CITEWISE_LLM_MODEL="" bash docker/start.sh > "$work/server.log" 2>&1 &
server=$!
for _ in $(seq 1 120); do
    python3 -c "import urllib.request as u; u.urlopen('http://127.0.0.1:$port/healthz', timeout=2)" \
        2>/dev/null && break
    kill -0 "$server" 2>/dev/null || { cat "$work/server.log"; exit 1; }
    sleep 1
done
python3 - "http://127.0.0.1:$port/v1/responses" <<'PY'
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
print(f"smoke: cited answer with {len(annotations)} citations, e.g. {annotations[0]['url']}")
PY
