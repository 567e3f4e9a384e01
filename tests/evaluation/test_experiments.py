"""Langfuse experiments: the SDK's real requests, recorded by a server on 127.0.0.1 and checked
against the SDK's own API models (a Langfuse server cannot run here)."""

from __future__ import annotations

import gzip
import json
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

import pytest

from citewise.evaluation.experiments import dataset_name, export_run, item_id

langfuse = pytest.importorskip("langfuse")
from langfuse.api import (  # noqa: E402
    CreateDatasetItemRequest,
    CreateDatasetRequest,
    CreateScoreRequest,
    Dataset,
    DatasetItem,
    PaginatedDatasetItems,
)
from langfuse.api.core.pydantic_utilities import parse_obj_as  # noqa: E402

CASES = [
    {"id": "install", "messages": [{"role": "user", "content": "How do I install it?"}],
     "parts": [["getting-started/"]], "reply": None},
    {"id": "hello", "messages": [{"role": "user", "content": "Hello!"}], "parts": [],
     "reply": "small_talk"},
]  # fmt: skip


class LangfuseRecorder(BaseHTTPRequestHandler):
    """Answers the public API as a Langfuse server would, keeping every request."""

    requests: list[tuple[str, str, Any]]
    datasets: dict[str, dict[str, Any]]
    items: dict[str, dict[str, Any]]

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""

    def _send(self, payload: Any, status: int = 200) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        url = urlparse(self.path)
        self.requests.append(("GET", url.path, parse_qs(url.query)))
        now = datetime.now(UTC).isoformat()
        if url.path.startswith("/api/public/v2/datasets/"):
            name = unquote(url.path.removeprefix("/api/public/v2/datasets/"))
            self._send(self.datasets[name])
        elif url.path == "/api/public/dataset-items":
            name = parse_qs(url.query)["datasetName"][0]
            data = [i for i in self.items.values() if i["datasetName"] == name]
            meta = {"page": 1, "limit": 50, "totalItems": len(data), "totalPages": 1}
            self._send({"data": data, "meta": meta})
        elif url.path == "/api/public/projects":
            self._send({"data": [{"id": "project-1", "name": "p", "organization": {
                "id": "o", "name": "o"}, "metadata": {}, "createdAt": now}]})  # fmt: skip
        else:
            self._send({"message": "not found"}, 404)

    def do_POST(self) -> None:
        url = urlparse(self.path)
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if url.path.startswith("/api/public/otel/"):
            self.requests.append(("POST", url.path, body))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        payload = json.loads(body)
        self.requests.append(("POST", url.path, payload))
        now = datetime.now(UTC).isoformat()
        if url.path == "/api/public/v2/datasets":
            dataset = {"id": f"ds-{payload['name']}", "name": payload["name"],
                       "description": payload.get("description"),
                       "metadata": payload.get("metadata"), "projectId": "project-1",
                       "createdAt": now, "updatedAt": now}  # fmt: skip
            self.datasets[payload["name"]] = dataset
            self._send(dataset)
        elif url.path == "/api/public/dataset-items":
            dataset = self.datasets[payload["datasetName"]]
            item = {**payload, "status": "ACTIVE", "datasetId": dataset["id"],
                    "mediaReferences": [], "createdAt": now, "updatedAt": now}  # fmt: skip
            self.items[payload["id"]] = item
            self._send(item)
        elif url.path == "/api/public/scores":
            self._send({"message": "Accepted"})
        else:
            self._send({"message": "not found"}, 404)


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch) -> Iterator[type[LangfuseRecorder]]:
    handler = type("Recorder", (LangfuseRecorder,), {"requests": [], "datasets": {}, "items": {}})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", "pk-lf-test")
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", "sk-lf-test")
    monkeypatch.setenv("LANGFUSE_HOST", f"http://127.0.0.1:{server.server_address[1]}")
    monkeypatch.setenv("LANGFUSE_BASE_URL", f"http://127.0.0.1:{server.server_address[1]}")
    try:
        yield handler
    finally:
        server.shutdown()
        server.server_close()


def results_for(runs: int) -> dict[str, Any]:
    def checks(passed: bool) -> dict[str, Any]:
        return {
            "searched": {"kind": "structural", "passed": passed, "detail": "" if passed else "x"},
            "part_0": {"kind": "structural", "passed": True, "detail": "page rank 1"},
            "shape": {"kind": "shape", "passed": None, "detail": ""},
        }

    def case(case_id: str, passed: bool) -> dict[str, Any]:
        judge = {"judge_grounded": {"kind": "judge", "passed": False, "detail": "not grounded"}}
        return {
            "case": case_id,
            "reply": f"reply to {case_id}",
            "checks": checks(passed) | judge,
            "runs": [
                {"checks": checks(passed), "latency_ms": 12.5, "queries": [case_id]}
                for _ in range(runs)
            ],
        }

    return {
        "provenance": {"model": "m", "judge": "m", "kb": "lgos", "cases_sha256": "abc"},
        "cases": [case("install", True), case("hello", False)],
    }


def test_an_evaluation_becomes_a_dataset_and_dataset_runs_with_its_scores(
    recorder: type[LangfuseRecorder], tmp_path: Path
) -> None:
    from langfuse import Langfuse

    cases_path = tmp_path / "dev-cases.json"
    cases_path.write_text(json.dumps(CASES))
    client = Langfuse()
    exported = export_run(results_for(runs=2), cases_path, run_name="nightly", client=client)
    client.shutdown()

    assert exported.dataset == dataset_name(cases_path) == "citewise/dev-cases"
    assert exported.runs == ("nightly run 1", "nightly run 2") and exported.items == 2
    posted = [(path, body) for method, path, body in recorder.requests if method == "POST"]
    # Every JSON request is one the SDK's own API models accept.
    (dataset,) = [
        parse_obj_as(CreateDatasetRequest, b) for p, b in posted if p.endswith("/datasets")
    ]
    assert dataset.name == "citewise/dev-cases"
    items = [parse_obj_as(CreateDatasetItemRequest, b) for p, b in posted if p.endswith("-items")]
    assert {item.id for item in items} == {item_id(dataset.name, c["id"]) for c in CASES}
    hello = next(item for item in items if item.metadata == {"case": "hello"})
    assert hello.expected_output == {"parts": [], "sections": [], "reply": "small_talk"}
    assert hello.input["messages"] == CASES[1]["messages"]
    # The server's answers parse as the SDK's response models.
    parse_obj_as(Dataset, recorder.datasets[dataset.name])
    parse_obj_as(PaginatedDatasetItems, 
        {"data": list(recorder.items.values()), "meta": {"page": 1, "limit": 50,
                                                          "totalItems": 2, "totalPages": 1}}
    )  # fmt: skip
    [parse_obj_as(DatasetItem, item) for item in recorder.items.values()]

    scores = [parse_obj_as(CreateScoreRequest, s) for p, b in posted if p == "/api/public/scores"
              for s in b]  # fmt: skip
    item_scores = [s for s in scores if s.trace_id]
    by_name: dict[str, list[Any]] = {}
    for score in item_scores:
        by_name.setdefault(score.name, []).append(score.value)
    # Two runs of two cases: each applicable check and the latency once per item and run; the
    # judge only on the first run; shape (not applicable) never.
    assert sorted(by_name["searched"]) == [0, 0, 1, 1]
    assert len(by_name["part_0"]) == 4 and len(by_name["latency_ms"]) == 4
    assert by_name["judge_grounded"] == [0, 0]
    assert "shape" not in by_name
    comments = {s.comment for s in item_scores if s.name == "searched"}
    assert "x" in comments
    run_scores = {s.name: s.value for s in scores if s.dataset_run_id}
    assert run_scores["searched_rate"] == 0.5 and run_scores["part_rate"] == 1.0
    # The traces themselves went out over OTLP (gzipped protobuf), linked to the items.
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    attributes: list[str] = []
    for _, path, body in recorder.requests:
        if path.startswith("/api/public/otel"):
            request = ExportTraceServiceRequest.FromString(gzip.decompress(body))
            for resource in request.resource_spans:
                for scope in resource.scope_spans:
                    for span in scope.spans:
                        attributes += [a.value.string_value for a in span.attributes]
    assert "nightly run 2" in attributes
    assert item_id(dataset.name, "hello") in attributes
    assert "reply to install" in " ".join(attributes)
