"""LGOS 0.12.0 from nothing, the way a user gets there: ``citewise index --environment --lazy``
(a bare virtualenv with langgraph-openai-serve 0.12.0 installed, its release served from
127.0.0.1), ``citewise serve``, then the first question through the official ``openai``
client: seconds to the first cited answer, seconds until the library's vectors are all
there (hybrid search), then ``citewise eval`` of the LGOS dev cases on the built library.

Usage: python benchmarks/first_answer_lgos.py SCRATCH-FOLDER LABEL SRC
(``SRC`` goes on PYTHONPATH: main's ``src`` or the branch's). Prints one JSON line; run it for
main and the branch one after the other, under /work/scratch/heavy.lock.
"""

import hashlib
import http.server
import io
import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import tarfile
import threading
import time
from pathlib import Path

from openai import OpenAI

DATA = Path("/work/shared/data")
RELEASE = DATA / "lgos-docs-0.12.0"
CASES = DATA / "lgos-dev-cases.json"
KB = "langgraph-openai-serve-0.12.0"
QUESTION = "How do I put LGOS behind LiteLLM?"
SITE = "https://ilkersigirci.github.io/langgraph-openai-serve/"

folder, label, src = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
root = folder / label
shutil.rmtree(root, ignore_errors=True)
root.mkdir(parents=True)
home = root / "home"


def archive() -> bytes:
    """The release as GitHub serves its tag's archive (one top folder), without the site."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for path in sorted(RELEASE.rglob("*")):
            relative = path.relative_to(RELEASE)
            if path.is_file() and relative.parts[0] != "_site_gh-pages":
                tar.add(path, f"langgraph-openai-serve-0.12.0/{relative.as_posix()}")
    return buffer.getvalue()


files = {
    "/ilkersigirci/langgraph-openai-serve/versions.json": (
        RELEASE / "_site_gh-pages" / "versions.json"
    ).read_bytes(),
    "/ilkersigirci/langgraph-openai-serve/archive/refs/tags/v0.12.0.tar.gz": archive(),
}


class Files(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802
        body = files.get(self.path)
        self.send_response(200 if body is not None else 404)
        self.send_header("Content-Length", str(len(body or b"")))
        self.end_headers()
        self.wfile.write(body or b"")

    def log_message(self, *args: object) -> None:
        pass


releases = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Files)
threading.Thread(target=releases.serve_forever, daemon=True).start()
base = f"http://127.0.0.1:{releases.server_address[1]}"

# A bare virtualenv holding the installed distribution's metadata, as pip writes it.
venv = root / "venv"
subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
python = str(venv / "bin" / "python")
where = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
purelib = subprocess.run([python, "-c", where], capture_output=True, text=True,
                         check=True).stdout.strip()  # fmt: skip
info = Path(purelib) / "langgraph_openai_serve-0.12.0.dist-info"
info.mkdir(parents=True)
(info / "METADATA").write_text(
    "Metadata-Version: 2.4\nName: langgraph-openai-serve\nVersion: 0.12.0\n"
    "Project-URL: Source, https://github.com/ilkersigirci/langgraph-openai-serve\n"
    f"Project-URL: Documentation, {SITE}\n"
)

env = {**os.environ, "PYTHONPATH": src, "CITEWISE_HOME": str(home)}
citewise = [sys.executable, "-m", "citewise"]
started = time.perf_counter()
subprocess.run(
    [*citewise, "index", "--environment", "--lazy", "--python", python, "-q",
     "--versions-url", base + "/{owner}/{repo}/versions.json",
     "--archive-url", base + "/{owner}/{repo}/archive/refs/tags/v{version}.tar.gz"],
    env=env, check=True, capture_output=True,
)  # fmt: skip
lazy_s = time.perf_counter() - started

with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
server = subprocess.Popen(
    [*citewise, "serve", "--port", str(port), "--log-level", "warning"],
    env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
)  # fmt: skip
try:
    client = OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="unused", max_retries=0)
    for _ in range(600):
        try:
            client.models.list()
            break
        except Exception:
            time.sleep(0.1)
    asked = time.perf_counter()
    first_event = None
    completed = None
    for event in client.responses.create(model="citewise-rag", input=QUESTION, stream=True):
        if first_event is None:
            first_event = time.perf_counter() - asked
        if event.type == "response.completed":
            completed = event.response
    answer_s = time.perf_counter() - asked
    assert completed is not None
    urls = [a.url for item in completed.output if item.type == "message"
            for part in item.content if part.type == "output_text"
            for a in part.annotations if a.type == "url_citation"]  # fmt: skip

    def statuses(response: object) -> list[str]:
        """The status lines (the reasoning item's summary parts)."""
        return [part.text for item in response.output if item.type == "reasoning"  # type: ignore[attr-defined]
                for part in item.summary]  # fmt: skip

    # A second question at once (the branch: still embedding, so keywords and a status).
    again = time.perf_counter()
    second = None
    for event in client.responses.create(
        model="citewise-rag", input="How do I configure the port?", stream=True
    ):
        if event.type == "response.completed":
            second = event.response
    second_s = time.perf_counter() - again
    # Until the library's vectors are all there (the branch embeds them after the answer).
    db = home / "kb" / f"{KB}.sqlite"
    while True:
        conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
        row = conn.execute("SELECT value FROM meta WHERE key = '_vectors_missing'").fetchone()
        conn.close()
        if row is None:
            break
        time.sleep(0.2)
    hybrid_s = time.perf_counter() - asked
finally:
    server.terminate()
    server.wait()

out_dir = root / "eval"
subprocess.run(
    [*citewise, "eval", str(CASES), "--kb", KB, "--retrieval-only", "--output", str(out_dir)],
    env=env, check=True, capture_output=True,
)  # fmt: skip
results = json.loads((out_dir / "results.json").read_text())
# The figures, and every part's ranks (a digest: identical ranks, identical digest).
figures = {
    mode: {**values["figures"], "ranks": hashlib.sha256(
        json.dumps([p["ranks"] for p in values["parts"]]).encode()).hexdigest()[:12]}
    for mode, values in results["modes"].items()
}  # fmt: skip
print(json.dumps({
    "label": label, "index_lazy_s": round(lazy_s, 2), "first_event_s": round(first_event or 0, 2),
    "first_cited_answer_s": round(answer_s, 2), "citations": len(urls),
    "cited_urls_in_site": all(u.startswith(SITE) for u in urls),
    "hybrid_ready_s": round(hybrid_s, 2), "eval": figures,
    "first_statuses": statuses(completed), "second_answer_s": round(second_s, 2),
    "second_statuses": statuses(second),
}, sort_keys=True))  # fmt: skip
