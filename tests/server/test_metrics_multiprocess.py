"""Several server processes (``PROMETHEUS_MULTIPROC_DIR``): one scrape sums them all."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

# One worker process: serve, take two requests, print one scrape, exit.
WORKER = """
import sys, httpx
from pathlib import Path
from citewise.config import Settings
from citewise.server import ServerOptions, create_app
from citewise.server.testing import running

app = create_app(Settings(home=Path(sys.argv[1])), ServerOptions(), model_factory=lambda: None)
with running(app) as url:
    for _ in range(2):
        assert httpx.get(f"{url}/healthz").status_code == 200
    print(httpx.get(f"{url}/metrics").text)
"""


def healthz_requests(text: str) -> float:
    return sum(
        sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == "citewise_requests_total" and sample.labels["route"] == "/healthz"
    )


def test_a_scrape_sums_every_worker_process(tmp_path: Path) -> None:
    shared = tmp_path / "prometheus"
    shared.mkdir()
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(shared)}
    scrapes = [
        subprocess.run(
            [sys.executable, "-c", WORKER, str(tmp_path / "home")],
            env=env, capture_output=True, text=True, timeout=120, check=True,
        ).stdout
        for _ in range(2)
    ]  # fmt: skip
    assert healthz_requests(scrapes[0]) == 2
    assert healthz_requests(scrapes[1]) == 4  # the first worker's samples are in the sum
    assert len(list(shared.glob("*.db"))) >= 2
