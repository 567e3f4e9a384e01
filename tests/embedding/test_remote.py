"""Tests for the OpenAI-compatible embedder against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import numpy as np
import pytest

from citewise.embedding import Embedder, get_embedder
from citewise.embedding.remote import OpenAIEmbedder
from citewise.errors import EmbeddingError

DIM = 8


def raw_vector(text: str) -> list[float]:
    """Deterministic, deliberately not unit-length, so re-normalisation is observable."""
    digest = hashlib.sha256(text.encode()).digest()
    return [(b - 128) / 10 for b in digest[:DIM]]


def unit(text: str) -> np.ndarray[Any, np.dtype[np.float32]]:
    v = np.array(raw_vector(text), dtype=np.float32)
    return v / np.linalg.norm(v)


@dataclass
class FakeServer:
    url: str
    requests: list[dict[str, Any]] = field(default_factory=list)
    # Statuses to answer with before behaving; each (status, body, headers).
    script: list[tuple[int, dict[str, Any], dict[str, str]]] = field(default_factory=list)
    drop_one: bool = False


@pytest.fixture
def server() -> Iterator[FakeServer]:
    state = FakeServer(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state.requests.append(
                {"path": self.path, "auth": self.headers.get("Authorization"), "body": body}
            )
            if state.script:
                status, payload, headers = state.script.pop(0)
                self._send(status, payload, headers)
                return
            inputs = body["input"]
            items = [
                {"object": "embedding", "index": i, "embedding": raw_vector(t)}
                for i, t in enumerate(inputs)
            ]
            items.reverse()  # servers may answer out of order; index is the truth
            if state.drop_one:
                items = items[1:]
            self._send(200, {"object": "list", "data": items, "model": body["model"]}, {})

        def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for key, value in headers.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def make(server: FakeServer, **options: Any) -> OpenAIEmbedder:
    settings: dict[str, Any] = {
        "base_url": server.url,
        "api_key": "sk-test",
        "model": "tiny",
        "dimensions": DIM,
        "backoff": 0.01,
    }
    settings.update(options)
    return OpenAIEmbedder(**settings)


def test_batches_in_order_with_auth_and_normalised(server: FakeServer) -> None:
    texts = [f"text {i}" for i in range(7)]
    with make(server, batch_size=3) as embedder:
        vectors = embedder.embed_documents(texts)
    assert [len(r["body"]["input"]) for r in server.requests] == [3, 3, 1]
    assert [t for r in server.requests for t in r["body"]["input"]] == texts
    assert {r["path"] for r in server.requests} == {"/v1/embeddings"}
    assert {r["auth"] for r in server.requests} == {"Bearer sk-test"}
    assert server.requests[0]["body"]["model"] == "tiny"
    assert server.requests[0]["body"]["dimensions"] == DIM
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(vectors, np.stack([unit(t) for t in texts]), atol=1e-6)


def test_query_and_identity(server: FakeServer) -> None:
    with make(server, window_chars=1234) as embedder:
        assert isinstance(embedder, Embedder)
        assert embedder.model_id == f"openai:tiny@{DIM}"
        assert (embedder.dim, embedder.window_chars) == (DIM, 1234)
        query = embedder.embed_query("hello")
        assert embedder.embed_documents([]).shape == (0, DIM)
    assert query.shape == (DIM,)
    np.testing.assert_allclose(query, unit("hello"), atol=1e-6)


def test_unknown_model_size_is_probed_once(server: FakeServer) -> None:
    with make(server, dimensions=None, model="local-model") as embedder:
        assert embedder.dim == DIM
        assert embedder.model_id == "openai:local-model"
        assert len(server.requests) == 1
        assert "dimensions" not in server.requests[0]["body"]


def test_no_key_sends_no_auth_header(server: FakeServer) -> None:
    with make(server, api_key="") as embedder:
        embedder.embed_documents(["a"])
    assert server.requests[0]["auth"] is None


def test_settings_default_to_environment(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CITEWISE_EMBEDDING_BASE_URL", server.url + "/")
    monkeypatch.setenv("CITEWISE_EMBEDDING_API_KEY", "sk-env")
    monkeypatch.setenv("CITEWISE_EMBEDDING_MODEL", "env-model")
    embedder = get_embedder("openai", dimensions=DIM)
    assert isinstance(embedder, OpenAIEmbedder)
    with embedder:
        embedder.embed_documents(["a"])
    assert server.requests[0]["auth"] == "Bearer sk-env"
    assert server.requests[0]["body"]["model"] == "env-model"
    assert server.requests[0]["path"] == "/v1/embeddings"


def test_retries_a_503_then_succeeds(server: FakeServer) -> None:
    server.script = [(503, {"error": {"message": "overloaded"}}, {})]
    with make(server) as embedder:
        vectors = embedder.embed_documents(["a", "b"])
    assert len(server.requests) == 2
    np.testing.assert_allclose(vectors, np.stack([unit("a"), unit("b")]), atol=1e-6)


def test_retries_a_429_honouring_retry_after(server: FakeServer) -> None:
    server.script = [(429, {"error": {"message": "slow down"}}, {"Retry-After": "0"})]
    with make(server) as embedder:
        embedder.embed_documents(["a"])
    assert len(server.requests) == 2


def test_gives_up_after_the_retries(server: FakeServer) -> None:
    server.script = [(503, {"error": {"message": "down"}}, {})] * 5
    with make(server, retries=2) as embedder, pytest.raises(EmbeddingError) as info:
        embedder.embed_documents(["a"])
    assert len(server.requests) == 3
    assert "HTTP 503" in str(info.value)
    assert server.url in str(info.value)


def test_401_fails_at_once_with_a_clear_error(server: FakeServer) -> None:
    server.script = [(401, {"error": {"message": "Incorrect API key provided"}}, {})]
    with make(server) as embedder, pytest.raises(EmbeddingError) as info:
        embedder.embed_documents(["a"])
    message = str(info.value)
    assert len(server.requests) == 1
    assert f"{server.url}/embeddings" in message
    assert "HTTP 401" in message
    assert "Incorrect API key provided" in message
    assert "sk-test" not in message


def test_wrong_number_of_vectors_is_an_error(server: FakeServer) -> None:
    server.drop_one = True
    with make(server) as embedder, pytest.raises(EmbeddingError, match="1 vectors for 2 inputs"):
        embedder.embed_documents(["a", "b"])


def test_unreachable_endpoint_names_it() -> None:
    probe = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    port = probe.server_address[1]
    probe.server_close()  # nothing listens on this port now
    embedder = OpenAIEmbedder(
        base_url=f"http://127.0.0.1:{port}/v1", model="tiny", dimensions=DIM, retries=1,
        backoff=0.01,
    )  # fmt: skip
    with embedder, pytest.raises(EmbeddingError, match=f"127.0.0.1:{port}/v1/embeddings"):
        embedder.embed_documents(["a"])


def test_injected_client_is_used_and_left_open() -> None:
    seen: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        inputs = json.loads(request.content)["input"]
        data = [{"index": i, "embedding": raw_vector(t)} for i, t in enumerate(inputs)]
        return httpx.Response(200, json={"data": data})

    client = httpx.Client(transport=httpx.MockTransport(handle))
    with OpenAIEmbedder(
        base_url="http://example.test/v1", model="m", dimensions=DIM, client=client
    ):
        pass
    embedder = OpenAIEmbedder(
        base_url="http://example.test/v1", model="m", dimensions=DIM, client=client
    )
    embedder.embed_documents(["x"])
    assert str(seen[0].url) == "http://example.test/v1/embeddings"
    assert not client.is_closed
    client.close()
